"""Which files `vet` reads under a root: the source extensions of TypeScript, JavaScript and Python; never
node_modules, .git or __pycache__ below the root, nor dist/build unless --include-built (the root itself is always
read, so `vet node_modules/@scope/pkg/dist` scans that folder), nor a Python environment below the root (a folder
holding pyvenv.cfg or conda-meta: `.venv`, `venv`, `.tox/py312`, whatever its name), the Python counterpart of
node_modules: the installed dependencies, the mcp SDK among them, are not the server's code; --ignore globs and the root's `.mcpvetignore`
(gitignore-style: `*`, `**`, `?`, a leading `/` anchors, a trailing `/` is a folder); files over --max-file-size are
skipped. Everything skipped for a reason the user may not expect is returned as a note, never dropped silently.
Symbolic links are not followed (a link could lead out of the tree): each one skipped is counted in a note."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.core import tree
from scanner.vet.globs import Glob, compile_glob
from scanner.vet.model import Language

LANGUAGES: dict[str, Language] = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
                                  ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
                                  ".cjs": "javascript", ".py": "python"}
ALWAYS_SKIPPED = frozenset({"node_modules", ".git", "__pycache__"})
BUILT = frozenset({"dist", "build"})
ENVIRONMENT_MARKERS = ("pyvenv.cfg", "conda-meta")  # what makes a folder a Python environment
IGNORE_FILE = ".mcpvetignore"
DEFAULT_MAX_KB = 1536


@dataclass(frozen=True)
class WalkOptions:
    max_file_kb: int = DEFAULT_MAX_KB  # 0: no limit
    include_built: bool = False
    ignore: tuple[str, ...] = ()


@dataclass
class Walked:
    files: list[tuple[Path, Language]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def ignore_lines(root: Path, extra: Iterable[str]) -> list[str]:
    lines = list(extra)
    ignore_file = root / IGNORE_FILE
    if ignore_file.is_file():
        lines += ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    return lines


def ignore_patterns(lines: list[str]) -> list[Glob]:
    """The globs of the lines; a `!` re-include is not supported (the walk notes it), so it is no glob."""
    return [g for g in (compile_glob(line) for line in lines if not line.strip().startswith("!")) if g is not None]


def _dir_skipped(folder: Path, rel: str, options: WalkOptions, patterns: list[Glob]) -> str | None:
    """Why a folder below the root is not walked ("built", "environment", "link", or "quiet" for the dependency
    and cache folders and --ignore matches, which need no note), or None to walk it."""
    name = folder.name
    if name in ALWAYS_SKIPPED or any(p.match(rel) for p in patterns):
        return "quiet"
    if name in BUILT and not options.include_built:
        return "built"
    if folder.is_symlink():
        return "link"
    return "environment" if is_environment(folder) else None


def is_environment(folder: Path) -> bool:
    """A Python virtual or conda environment: it holds pyvenv.cfg or conda-meta."""
    return any(os.path.lexists(folder / marker) for marker in ENVIRONMENT_MARKERS)


def _kind(path: Path, options: WalkOptions) -> str:
    """"read", "big", "special" (a FIFO, socket or device: opening a FIFO blocks until a writer comes, a device may
    never end, so neither is read) or "unreadable" (it cannot even be stat'ed). Symbolic links never get here."""
    try:
        info = path.lstat()
    except OSError:
        return "unreadable"
    if not stat.S_ISREG(info.st_mode):
        return "special"
    return "big" if options.max_file_kb > 0 and info.st_size > options.max_file_kb * 1024 else "read"


def _skipped_note(what: str, rels: list[str]) -> list[str]:
    return [f"skipped {len(rels)} {what}: {rels[0]}{' …' if len(rels) > 1 else ''}"] if rels else []


def walk(root: Path, options: WalkOptions) -> Walked:
    """The files to read under `root` (a file root is read when its extension is known), in sorted order."""
    out = Walked()
    if root.is_file():
        language = LANGUAGES.get(root.suffix.lower())
        if language is not None:
            out.files.append((root, language))
        return out
    lines = ignore_lines(root, options.ignore)
    patterns = ignore_patterns(lines)
    if any(line.strip().startswith("!") for line in lines):
        out.notes += _skipped_note("re-include pattern(s) of --ignore / .mcpvetignore (`!` is not supported: what "
                                   "the other patterns name stays skipped)",
                                   [line.strip() for line in lines if line.strip().startswith("!")])
    skipped: dict[str, list[str]] = {"built": [], "environment": [], "link": [], "big": [], "special": [],
                                     "unreadable": []}

    def unlisted(exc: OSError) -> None:  # a folder the walk cannot list: said, not dropped
        skipped["unreadable"].append(os.path.relpath(exc.filename, root))

    for folder, dirs, names in tree.walk(root, onerror=unlisted):
        here = Path(folder)
        relative_dir = here.relative_to(root).as_posix()
        kept = []
        for name in sorted(dirs):
            rel = name if relative_dir == "." else f"{relative_dir}/{name}"
            why = _dir_skipped(here / name, rel, options, patterns)
            if why is None:
                kept.append(name)
            elif why in skipped:
                skipped[why].append(rel)
        dirs[:] = kept
        for name in sorted(names):
            path, rel = here / name, (name if relative_dir == "." else f"{relative_dir}/{name}")
            language = LANGUAGES.get(path.suffix.lower())
            if language is None or any(p.match(rel) for p in patterns):
                continue
            kind = "link" if path.is_symlink() else _kind(path, options)
            if kind == "read":
                out.files.append((path, language))
            else:
                skipped[kind].append(rel)
    if skipped["built"]:
        shown = ", ".join(skipped["built"][:5]) + (" …" if len(skipped["built"]) > 5 else "")
        out.notes.append(f"skipped built output ({shown}): --include-built scans it")
    out.notes += _skipped_note("Python environment(s) (installed dependencies, not the server's code; name one "
                               "to vet it)", skipped["environment"])
    out.notes += _skipped_note("symbolic link(s) (never followed: a link can lead out of the tree; vet its target "
                               "by name)", skipped["link"])
    out.notes += _skipped_note(f"file(s) over --max-file-size {options.max_file_kb} KB", skipped["big"])
    out.notes += _skipped_note("special file(s) (a FIFO, socket or device: never opened)", skipped["special"])
    out.notes += _skipped_note("unreadable file(s) or folder(s)", skipped["unreadable"])
    return out
