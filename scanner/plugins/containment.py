"""Whether a plugin path stays inside its root. Symlinks are followed (a link pointing out of the plugin folder
escapes it, though the text of the path does not), and only a whole `..` segment climbs: a folder named `..cache`
is a name like any other."""

from __future__ import annotations

import posixpath
from pathlib import Path

ROOT_VAR = "${PLUGIN_ROOT}"
DATA_VAR = "${PLUGIN_DATA}"


def inside(root: Path, path: Path) -> bool:
    """True when `path` (resolved, symlinks followed) is `root` (resolved) or below it. A path that cannot be
    resolved (a symlink loop: RuntimeError on Python 3.11, OSError later) leads to no file of the plugin: False."""
    base = root.resolve()
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):
        return False
    return resolved == base or base in resolved.parents


def climbs_out(relative: str) -> bool:
    """True when a /-separated relative path leaves its base by its `..` segments (no file system involved)."""
    normal = posixpath.normpath(relative or ".")
    return normal == ".." or normal.startswith("../") or posixpath.isabs(normal)


def cwd_problem(root: Path, cwd: str) -> str | None:
    """Why a cwd leaves its root (None when it stays inside). The prefix itself is the schema's business."""
    if cwd.startswith(DATA_VAR):
        rest = cwd[len(DATA_VAR):].lstrip("/")
        return "climbs out of ${PLUGIN_DATA} by its .. segments" if climbs_out(rest) else None
    rest = cwd[len(ROOT_VAR):].lstrip("/") if cwd.startswith(ROOT_VAR) else cwd
    if climbs_out(rest):
        return "climbs out of the plugin folder by its .. segments"
    if not inside(root, root / rest):
        return "resolves outside the plugin folder (a symlink on the way points out of it)"
    return None
