"""I11: files an install step wrote outside the install tree (sandbox/install/writes.py records them per step), one
finding per step, its severity by place: a persistence place (a shell start-up file, autostart, a scheduled job, ssh,
a git or package-manager config, an executable on PATH, a Python start-up hook, an MCP client config) is an error,
anything else (a marker in /tmp, another file in HOME) a warning."""

from __future__ import annotations

import re
from collections.abc import Iterable

from scanner.report.model import Finding, InstallStepWrites, Severity
from scanner.rules.behavior import persistence_kind
from scanner.rules.provenance import finding, step_actor
from sandbox.core.untrusted import cap_text

MAX_PATHS_IN_MESSAGE = 8
# Shared scratch folders: nothing written there runs later by itself (a .pth or mcp.json there is only a marker).
TEMPORARY_PLACES = ("/tmp/", "/var/tmp/", "/dev/shm/", "/dev/mqueue/", "/run/lock/", "/var/lock/")
# Persistence an install adds to the run phase's list (scanner.rules.behavior): what later installs and shells read.
INSTALL_PERSISTENCE: tuple[tuple[str, re.Pattern[str]], ...] = tuple((label, re.compile(pattern)) for label, pattern in (
    ("package-manager config", r"^~/\.(?:npmrc|yarnrc(?:\.yml)?|pypirc|condarc|pydistutils\.cfg)$|"
                               r"^~/\.(?:config/)?pip/pip\.conf$|^~/\.config/uv/uv\.toml$|^~/\.bunfig\.toml$"),
    ("executable on PATH", r"^~/(?:\.local/)?bin/[^/]+$"),
    ("Python user site", r"^~/\.local/lib/python[^/]*/site-packages/.+"),
))


def place(path: str) -> tuple[Severity, str | None]:
    """How bad a write to `path` (HOME as ~) is: error with the kind of persistence place, or warning."""
    if path.startswith(TEMPORARY_PLACES):
        return "warning", None
    for label, pattern in INSTALL_PERSISTENCE:
        if pattern.search(path):
            return "error", label
    kind = persistence_kind(path)
    return ("error", kind) if kind is not None else ("warning", None)


def write_findings(records: Iterable[InstallStepWrites]) -> list[Finding]:
    """One I11 per install step that wrote outside the install tree."""
    return [found for found in map(step_finding, records) if found is not None]


def step_finding(record: InstallStepWrites) -> Finding | None:
    paths = [*record.created, *record.modified]
    if not (paths or record.more or record.unreadable or record.truncated):
        return None
    placed = [(path, *place(path)) for path in paths]
    severity: Severity = "error" if any(level == "error" for _, level, _ in placed) else "warning"
    # Persistence places first: they are what a reader must see.
    placed.sort(key=lambda item: item[1] != "error")
    shown = [f"{path} ({label})" if label else path for path, _, label in placed]
    listed = ", ".join(shown[:MAX_PATHS_IN_MESSAGE])
    left = len(shown) - min(len(shown), MAX_PATHS_IN_MESSAGE) + record.more
    notes = [f"and {left} more"] if left else []
    if record.unreadable:
        notes.append(f"{record.unreadable} folder{'s' if record.unreadable != 1 else ''} it made unreadable")
    if record.truncated:
        notes.append("the listing was cut at its size cap")
    what = ", ".join(part for part in (listed, *notes) if part)
    actor = step_actor(record.package, record.script)
    return finding("I11", cap_text(f"{actor} wrote outside the install tree: {what}", 1_000),
                   evidence=cap_text("\n".join(shown), 4_000), severity=severity)
