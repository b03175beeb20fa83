"""The two variables Agent Plugins 1.0 defines for a server entry (mcp.schema.json reserves their names in `env` and
roots `cwd` at them): `${PLUGIN_ROOT}`, the plugin's installed folder, and `${PLUGIN_DATA}`, its writable data
folder. A client expands them in a stdio server's arguments and sets them in its environment; so does the sandbox for
a bundled server, with the paths they have inside the run container:

    ${PLUGIN_ROOT}   the bundled package folder's copy (/opt/src/pkg), when the package folder is the plugin's root;
                     ${PLUGIN_ROOT}/SUB/… where SUB is the package folder inside the plugin
    ${PLUGIN_DATA}   /tmp, the sandbox's scratch folder (empty at start, writable, thrown away)

Only the package folder is copied into the sandbox, so a path under the plugin root but outside that folder has no
place there: it is passed unexpanded and said in a note, as are both variables for a server fetched from a registry
(the plugin folder is not in its sandbox)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.plugins.containment import DATA_VAR, ROOT_VAR

SANDBOX_DATA = "/tmp"
PATH_TEXT = re.compile(r"[^\s:;,]*")  # the path after a variable, up to a separator of a list of paths


@dataclass
class Expanded:
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)  # PLUGIN_ROOT / PLUGIN_DATA, as a client sets them
    notes: list[str] = field(default_factory=list)


def sandbox_package_path(package: Path) -> str:
    """Where a local package folder's copy sits inside the install and run containers."""
    from sandbox.install.request import local_source

    return local_source(package)


def expand_bundled(args: list[str], root: Path, package: Path) -> Expanded:
    """A bundled server's arguments with the plugin variables replaced by their sandbox paths (and what was not)."""
    sub = package.resolve().relative_to(root.resolve()).as_posix()
    installed = sandbox_package_path(package)
    env = {"PLUGIN_DATA": SANDBOX_DATA}
    if sub == ".":
        env["PLUGIN_ROOT"] = installed
    out, left = [], []
    for arg in args:
        expanded = _expand_root(arg, sub, installed).replace(DATA_VAR, SANDBOX_DATA)
        if ROOT_VAR in expanded:
            left.append(arg)
        out.append(expanded)
    result = Expanded(out, env)
    if left:
        result.notes.append(f"{len(left)} argument(s) name {ROOT_VAR} outside the package folder ./{sub}, the only "
                            "part of the plugin copied into the sandbox: passed unexpanded")
    return result


def _expand_root(arg: str, sub: str, installed: str) -> str:
    """`${PLUGIN_ROOT}/REST` → the installed path when REST lies in the package folder `sub` (else unchanged)."""
    out, rest = "", arg
    while ROOT_VAR in rest:
        before, _, after = rest.partition(ROOT_VAR)
        tail = PATH_TEXT.match(after).group()  # type: ignore[union-attr]
        relative = posixpath.normpath(tail.lstrip("/") or ".")
        inside = sub == "." and not relative.startswith("..") or relative == sub or relative.startswith(sub + "/")
        if not inside:
            out, rest = out + before + ROOT_VAR, after
            continue
        within = relative if sub == "." else posixpath.relpath(relative, sub)
        path = installed if within == "." else f"{installed}/{within}"
        out, rest = out + before + path, after[len(tail):]
    return out + rest


def registry_note(args: list[str]) -> list[str]:
    """The note for a registry server whose arguments name a plugin variable: nothing of the plugin is there."""
    if any(v in a for a in args for v in (ROOT_VAR, DATA_VAR)):
        return [f"arguments naming {ROOT_VAR} or {DATA_VAR} are passed unexpanded: a server fetched from a registry "
                "runs without the plugin folder"]
    return []


def cwd_note(cwd: str | None) -> list[str]:
    """The note for a declared `cwd`: the sandbox starts every server in its seeded /workspace."""
    if not cwd:
        return []
    return [f"cwd {escape_for_terminal(cwd, 200)} not applied: in the sandbox the server runs in its seeded "
            "/workspace"]
