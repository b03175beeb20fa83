"""Skill discovery (§7.1): each immediate child folder of skills/ holding a regular file named exactly SKILL.md is
one skill; clients never search deeper. A SKILL.md anywhere else in the plugin (directly in skills/, deeper below it,
or outside skills/ altogether) is invisible to every conformant client: reported, not an error. Extension folders
(a top-level folder named after a reverse-domain namespace, §8.2) and dependency/VCS folders are not searched."""

from __future__ import annotations

import os
import re
from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.plugins.containment import inside
from scanner.plugins.model import EnvelopeResult

SKILL_FILE = "SKILL.md"
NOT_SEARCHED = {".git", "node_modules", "__pycache__", ".venv", "venv"}
NAMESPACE = re.compile(r"^[a-z0-9-]+(\.[a-z0-9-]+)+$")  # com.example.client: an extension folder (§8.2)
MAX_FILES = 20_000  # a walk stops here (said in a finding) rather than reading a huge tree
MAX_DEPTH = 64  # nor goes deeper (os.walk recurses: a tree thousands of folders deep was a RecursionError)


def check_skills(result: EnvelopeResult, root: Path) -> None:
    seen = 0
    for folder, dirs, files in os.walk(root):  # never follows a symlinked folder
        here = Path(folder)
        relative = here.relative_to(root)
        dirs[:] = sorted(d for d in dirs if d not in NOT_SEARCHED and not (relative == Path(".") and
                                                                          NAMESPACE.match(d)))
        if len(relative.parts) >= MAX_DEPTH and dirs:
            dirs.clear()
            result.add("PLUGIN_SKILL_LAYOUT", ".", 1, f"stopped looking for misplaced SKILL.md {MAX_DEPTH} folders "
                       "deep: the folders below were not searched")
        seen += len(files)
        if seen > MAX_FILES:
            result.add("PLUGIN_SKILL_LAYOUT", ".", 1, f"stopped looking for misplaced SKILL.md after {MAX_FILES} "
                       "files: the rest of the plugin was not searched")
            return
        if SKILL_FILE in files:
            _check_one(result, root, here / SKILL_FILE, relative)
        for name in dirs:
            if (here / name).is_symlink() and (here / name / SKILL_FILE).exists():
                _check_one(result, root, here / name / SKILL_FILE, relative / name)


def _check_one(result: EnvelopeResult, root: Path, path: Path, folder: Path) -> None:
    shown = escape_for_terminal((folder / SKILL_FILE).as_posix(), 300)
    parts = folder.parts
    if len(parts) == 2 and parts[0] == "skills":
        if not inside(root, path):
            result.add("PLUGIN_SKILL_LAYOUT", shown, 1, f"{shown} resolves outside the plugin folder (a symlink "
                       "points out of it): a client that loads it reads a file the plugin does not contain")
        elif path.is_file():
            result.skills += 1
        return
    if parts[:1] == ("skills",):
        where = ("sits directly in skills/: skills live one level down, at skills/<name>/SKILL.md" if len(parts) == 1
                 else f"sits {len(parts) - 2} level(s) deeper than an immediate child of skills/")
    else:
        where = "is outside skills/: clients discover skills only at skills/<name>/SKILL.md"
    result.add("PLUGIN_SKILL_LAYOUT", shown, 1, f"{shown} {where}, so no conformant client finds it")
