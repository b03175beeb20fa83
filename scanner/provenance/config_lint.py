"""Findings for each server of a client config: I1 launch lint, I8 known-bad, I9 typosquats."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from scanner.provenance.client_config import ClientConfig, ServerEntry
from scanner.provenance.launch import analyse_launch
from scanner.provenance.shell_words import command_segments, program_name
from scanner.provenance.redact import redact_secrets
from scanner.rules.provenance import finding
from scanner.report.model import Finding, SuppressedFinding
from sandbox.core.untrusted import cap_text


class ServerResult(BaseModel):
    """What check-config reports for one server. Holds no argument, env value, remote URL path, user info, query
    or token-shaped text (scanner.provenance.redact)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    scope: str | None = Field(default=None, description="Project path for Claude Code project entries.")
    transport: str
    runner: str | None = None
    packages: list[str] = Field(default_factory=list, description="What the launch would fetch (redacted).")
    remote: str | None = Field(default=None, description="scheme://host of a remote server.")
    env_names: list[str] = Field(default_factory=list)
    disabled: bool = False
    not_checked: str | None = Field(default=None, description="Why the launch was not linted: its program is no "
                                    "package runner I1 reads (a local program or script).")
    findings: list[Finding] = Field(default_factory=list)
    suppressed: list[SuppressedFinding] = Field(default_factory=list, description="Findings the config (--config, "
                                                "or one discovered in the working directory) suppressed: shown, "
                                                "never counted.")


class ConfigResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str
    format: str
    servers: list[ServerResult]


def lint_config(config: ClientConfig) -> ConfigResult:
    return ConfigResult(path=config.path, format=config.format, servers=[lint_entry(e) for e in config.servers])


def lint_entry(entry: ServerEntry) -> ServerResult:
    # Every string here is the config's (its keys, its launch's words): capped as a scan report's are.
    result = ServerResult(name=cap_text(entry.name), scope=None if entry.scope is None else cap_text(entry.scope),
                          transport=entry.transport, remote=None if entry.remote is None else cap_text(entry.remote),
                          env_names=[cap_text(name) for name in entry.env_names], disabled=entry.disabled)
    if entry.problem:
        result.findings.append(finding("I1", f"Unreadable server entry: {entry.problem}.", evidence=entry.problem))
        return result
    if entry.transport != "stdio" or entry.command is None:
        return result
    analysis = analyse_launch(entry.command, entry.args)
    result.runner = analysis.runner
    result.packages = [cap_text(redact_secrets(p.display)) for p in analysis.packages]
    result.findings = [_redacted(f) for f in analysis.findings]
    if analysis.runner is None and not analysis.findings:
        result.not_checked = _not_checked(entry.command, entry.args)
    return result


def _not_checked(command: str, args: list[str]) -> str:
    """The program of a launch I1 does not read, named (its basename, redacted; never its arguments)."""
    segments = command_segments(command, args)  # parsed once already: analyse_launch found it parseable
    programs = sorted({redact_secrets(program_name(segment[0])) for segment in segments})
    named = ", ".join(f"`{p}`" for p in programs) or "nothing"
    return cap_text(f"{named} is no package runner I1 reads (npx, uvx, pipx run, pip install, docker run, …)")


def _redacted(found: Finding) -> Finding:
    """A launch finding quotes the spec it is about: never with a credential in it, whatever its spelling."""
    evidence = cap_text(redact_secrets(found.evidence)) if found.evidence is not None else None
    return found.model_copy(update={"message": cap_text(redact_secrets(found.message)), "evidence": evidence})
