"""What the envelope check found: findings (each citing its spec section), the servers mcp.json declares, and the
plugin's identity. Plain data; views.py renders it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.plugins.catalogue import FAILING, plugin_rules, rank


@dataclass(frozen=True)
class PluginFinding:
    rule_id: str
    file: str  # relative to the plugin folder, / separated
    line: int
    message: str  # built from escaped, capped text only
    section: str = ""  # the spec section cited; the rule's own when empty
    server: str | None = None  # the mcp.json server entry it concerns

    @property
    def tier(self) -> str:
        return plugin_rules()[self.rule_id].tier

    @property
    def cited(self) -> str:
        return self.section or plugin_rules()[self.rule_id].section

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule_id, "tier": self.tier, "section": self.cited, "file": self.file,
                "line": self.line, "server": self.server, "message": self.message}


@dataclass
class DeclaredServer:
    """One entry of mcp.json's mcpServers, as declared (only the fields a launch needs)."""

    name: str
    transport: str  # stdio | streamable-http | sse | "" (missing or unknown)
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env_names: list[str] = field(default_factory=list)
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)  # a remote entry's URL: for `scan` only, never printed
    header_names: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Unvetted:
    """A part of the plugin folder a client loads that nothing here vets (scanner/plugins/unvetted.py)."""

    file: str  # relative to the plugin folder, / separated (a folder ends in /)
    what: str
    runs: bool  # a client starts a process or runs a shell command from it: the scan cannot pass the plugin

    def as_json(self) -> dict[str, Any]:
        return {"file": self.file, "what": self.what, "runs": self.runs}


@dataclass
class EnvelopeResult:
    root: Path
    name: str | None = None
    has_mcp_json: bool = False
    skills: int = 0
    findings: list[PluginFinding] = field(default_factory=list)
    servers: list[DeclaredServer] = field(default_factory=list)
    unvetted: list[Unvetted] = field(default_factory=list)

    def add(self, rule_id: str, file: str, line: int, message: str, section: str = "",
            server: str | None = None) -> None:
        finding = PluginFinding(rule_id, file, line, message, section, server)
        if finding not in self.findings:
            self.findings.append(finding)

    def sorted_findings(self) -> list[PluginFinding]:
        return sorted(self.findings, key=lambda f: (f.file, f.line, rank(f.tier), f.rule_id, f.message))

    @property
    def failing(self) -> bool:
        return any(f.tier in FAILING for f in self.findings)

    @property
    def runs_unvetted(self) -> list[Unvetted]:
        """The parts a client runs that nothing here vetted: `scan PLUGIN` is incomplete while there are any."""
        return [u for u in self.unvetted if u.runs]

    def rejected(self, server: str) -> list[PluginFinding]:
        """The findings that make a conformant client refuse this server entry."""
        return [f for f in self.findings if f.server == server and f.tier in FAILING]

    def as_json(self) -> dict[str, Any]:
        return {"plugin": self.name, "has_mcp_json": self.has_mcp_json, "skills": self.skills,
                "servers": [{"name": s.name, "type": s.transport} for s in self.servers],
                "findings": [f.as_json() for f in self.sorted_findings()],
                "not_vetted": [u.as_json() for u in self.unvetted]}
