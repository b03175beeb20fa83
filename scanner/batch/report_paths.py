"""Where a target's report goes: DIR/reports/<ecosystem>/<name>/<version>.json (and .sarif / .md beside it).

Every component comes from untrusted text (a package name, a version a registry or a manifest gave), so each is
reduced to a safe file name: letters, digits and `._+@-`, no leading dot (so never `.` or `..`), no separator,
capped; a scoped npm name `@scope/name` is two folders. The final path is checked to be inside the reports folder,
whatever the components held.

No two rows share a file. The plain `<version>.json` is only for a registry target as published (no command or
arguments) whose ecosystem, name and version fit the components unchanged, and only while no other row has it;
every other report (a folder's or an archive's, whose name and version are what its own manifest claims; a name or
version cut or changed to fit; a target with its own command or arguments; a second row resolving to the same
release) gets a short hash of its row's key in the name, `<version>+<hash>.json` (`+<command>-<hash>` with a
command), and the whole hash should even that be another row's.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from pathlib import Path

from scanner.batch.targets import BatchTarget, registry_release

UNSAFE = re.compile(r"[^A-Za-z0-9._+@-]+")
MAX_COMPONENT = 80
MAX_VERSION = 48  # of a file name: the hash after it is never cut off
SHORT_HASH = 12
MAX_LABEL = 24
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


def variant(target: BatchTarget, length: int = SHORT_HASH) -> str:
    """`+<hash>` of the row's key, `+<command>-<hash>` when the line gives a command (`args-` for arguments alone)."""
    digest = hashlib.sha256(target.key.encode()).hexdigest()[:length]
    label = target.command or ("args" if target.server_args else "")
    return "+" + (f"{safe_component(label)[:MAX_LABEL]}-" if label else "") + digest


def report_path(root: Path, target: BatchTarget, ecosystem: str | None, name: str | None, version: str | None,
                taken: Callable[[str], bool] = lambda _path: False) -> Path:
    """The JSON report's path under `root` (the batch directory), the first of its names (see the module's
    docstring) that `taken` (given the path relative to root) says no other row has; ValueError if it would leave
    root/reports, or every name is taken."""
    root = root.resolve()
    base = root / REPORTS
    folders = [safe_component(ecosystem or "unknown"), *name_components(ecosystem or "", name or "unknown")]
    stem = safe_component(version or "unknown")[:MAX_VERSION].rstrip(".") or "_"
    names = [f"{stem}.json"] if _plain(target, ecosystem, name, version, folders) else []
    names += [f"{stem}{variant(target)}.json", f"{stem}{variant(target, 64)}.json"]
    for file_name in names:
        path = base.joinpath(*folders, file_name)
        if not path.resolve().is_relative_to(base.resolve()):
            raise ValueError(f"report path {path} is outside {base}")
        if not taken(path.relative_to(root).as_posix()):
            return path
    raise ValueError(f"every report path of {target.display} is another row's")


def _plain(target: BatchTarget, ecosystem: str | None, name: str | None, version: str | None,
           folders: list[str]) -> bool:
    """Whether the report may have the plain name: a registry target as published, of this package, whose
    components are its ecosystem, name and version unchanged."""
    if target.command or target.server_args or not ecosystem or not name or not version:
        return False
    if not registry_release(target.target, ecosystem, name):
        return False
    return "/".join(folders[1:]) == name and safe_component(version) == version and len(version) <= MAX_VERSION
