"""Which files `vet` reads under a root: the source extensions of TypeScript, JavaScript and Python; never
node_modules, .git or __pycache__ below the root, nor dist/build unless --include-built (the root itself is always
read, so `vet node_modules/@scope/pkg/dist` scans that folder); --ignore globs and the root's `.mcpvetignore`
(gitignore-style: `*`, `**`, `?`, a leading `/` anchors, a trailing `/` is a folder); files over --max-file-size are
skipped. Everything skipped for a reason the user may not expect is returned as a note, never dropped silently.
Symbolic links are not followed (a link could lead out of the tree)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from scanner.vet.model import Language

LANGUAGES: dict[str, Language] = {".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
                                  ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript",
                                  ".cjs": "javascript", ".py": "python"}
ALWAYS_SKIPPED = frozenset({"node_modules", ".git", "__pycache__"})
BUILT = frozenset({"dist", "build"})
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


def glob_regex(pattern: str) -> re.Pattern[str] | None:
    """A gitignore-style pattern as a regex over a posix path relative to the root (None for a blank/comment)."""
    p = pattern.strip()
    if not p or p.startswith("#"):
        return None
    anchored = p.startswith("/")
    p = p.strip("/")
    if not p:
        return None
    out, i = [], 0
    while i < len(p):
        if p.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif p.startswith("**", i):
            out.append(".*")
            i += 2
        else:
            out.append("[^/]*" if p[i] == "*" else "[^/]" if p[i] == "?" else re.escape(p[i]))
            i += 1
    body = "".join(out)
    return re.compile(f"^{body}(?:/.*)?$" if anchored or "/" in p else f"(?:^|.*/){body}(?:/.*)?$")


def ignore_patterns(root: Path, extra: Iterable[str]) -> list[re.Pattern[str]]:
    lines = list(extra)
    ignore_file = root / IGNORE_FILE
    if ignore_file.is_file():
        lines += ignore_file.read_text(encoding="utf-8", errors="replace").splitlines()
    return [r for r in (glob_regex(line) for line in lines) if r is not None]


def _skip_dir(name: str, options: WalkOptions) -> bool:
    return name in ALWAYS_SKIPPED or (name in BUILT and not options.include_built)


def _too_big(path: Path, options: WalkOptions) -> bool:
    return options.max_file_kb > 0 and path.stat().st_size > options.max_file_kb * 1024


def walk(root: Path, options: WalkOptions) -> Walked:
    """The files to read under `root` (a file root is read when its extension is known), in sorted order."""
    out = Walked()
    if root.is_file():
        language = LANGUAGES.get(root.suffix.lower())
        if language is not None:
            out.files.append((root, language))
        return out
    patterns = ignore_patterns(root, options.ignore)
    built_skipped, big = [], []
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        relative_dir = here.relative_to(root).as_posix()
        kept = []
        for name in sorted(dirs):
            rel = name if relative_dir == "." else f"{relative_dir}/{name}"
            if _skip_dir(name, options):
                if name in BUILT:
                    built_skipped.append(rel)
            elif not any(p.match(rel) for p in patterns):
                kept.append(name)
        dirs[:] = kept
        for name in sorted(names):
            path, rel = here / name, (name if relative_dir == "." else f"{relative_dir}/{name}")
            language = LANGUAGES.get(path.suffix.lower())
            if language is None or path.is_symlink() or any(p.match(rel) for p in patterns):
                continue
            if _too_big(path, options):
                big.append(rel)
                continue
            out.files.append((path, language))
    if built_skipped:
        shown = ", ".join(built_skipped[:5]) + (" …" if len(built_skipped) > 5 else "")
        out.notes.append(f"skipped built output ({shown}): --include-built scans it")
    if big:
        out.notes.append(f"skipped {len(big)} file(s) over --max-file-size {options.max_file_kb} KB: {big[0]}"
                         f"{' …' if len(big) > 1 else ''}")
    return out
