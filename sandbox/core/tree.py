"""Walking a folder tree that may be hostile, without recursion. On Python 3.11 `os.walk`, `Path.rglob` and
`tarfile.add` each recurse once per folder level, so a package or plugin folder a thousand levels deep (cheap to make,
and a path of 2,000 characters is still legal) ended a scan or a vet with an internal RecursionError."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path


def walk(root: str | os.PathLike[str],
         onerror: Callable[[OSError], None] | None = None) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(root, onerror=onerror)`, top-down, in the same order: each folder as (path, folder names, other
    names), a symlinked folder named among the folders but never entered; a caller may prune the folder names in
    place. A folder that cannot be listed goes to `onerror` (when given) and is left out."""
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as listing:
                entries = list(listing)
        except OSError as exc:
            if onerror is not None:
                onerror(exc)
            continue
        dirs, others = [], []
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirs if is_dir else others).append(entry.name)
        yield top, dirs, others
        stack.extend(path for path in (os.path.join(top, name) for name in reversed(dirs)) if not os.path.islink(path))


def entries_below(root: Path) -> list[Path]:
    """Every path below `root`, as `sorted(root.rglob("*"))` gives them (symlinked folders listed, not entered)."""
    return sorted(Path(folder, name) for folder, dirs, others in walk(root) for name in [*dirs, *others])
