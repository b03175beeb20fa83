"""Where a target's report goes: DIR/reports/<ecosystem>/<name>/<version>.json (and .sarif / .md beside it).

Every component comes from untrusted text (a package name, a version a registry or a manifest gave), so each is
reduced to a safe file name: letters, digits and `._+@-`, no leading dot (so never `.` or `..`), no separator,
capped; a scoped npm name `@scope/name` is two folders. A target scanned with its own command or arguments (one
package, several servers) gets a suffix from them, so two rows never share a file. The final path is checked to be
inside the reports folder, whatever the components held.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from scanner.batch.targets import BatchTarget

UNSAFE = re.compile(r"[^A-Za-z0-9._+@-]+")
MAX_COMPONENT = 80
REPORTS = "reports"


def safe_component(text: str | None) -> str:
    """One path component from untrusted text; `_` when nothing is left of it."""
    cleaned = UNSAFE.sub("_", text or "").lstrip(".")[:MAX_COMPONENT].rstrip(".")
    return cleaned or "_"


def name_components(ecosystem: str, name: str) -> list[str]:
    """`@scope/name` (npm) is two folders, `@scope` and `name`; any other separator is replaced."""
    if ecosystem == "npm" and name.startswith("@") and name.count("/") == 1:
        scope, _, bare = name.partition("/")
        return [safe_component(scope), safe_component(bare)]
    return [safe_component(name)]


def variant(target: BatchTarget) -> str:
    """`` for a target scanned as published; `+<command>-<hash>` when the line gives a command or arguments."""
    if not target.command and not target.server_args:
        return ""
    digest = hashlib.sha256(target.key.encode()).hexdigest()[:8]
    return "+" + safe_component(f"{target.command or 'args'}-{digest}")


def report_path(root: Path, target: BatchTarget, ecosystem: str | None, name: str | None,
                version: str | None) -> Path:
    """The JSON report's path under `root` (the batch directory); ValueError if it would leave root/reports."""
    base = (root / REPORTS).resolve()
    folders = [safe_component(ecosystem or "unknown"), *name_components(ecosystem or "", name or "unknown")]
    file_name = safe_component(f"{version or 'unknown'}{variant(target)}")[:MAX_COMPONENT] + ".json"
    path = base.joinpath(*folders, file_name)
    if not path.resolve().is_relative_to(base):
        raise ValueError(f"report path {path} is outside {base}")
    return path
