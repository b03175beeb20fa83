"""Which packages of an installed npm tree have install scripts, and the order to run them in, one package per step.

Read from the lockfile npm wrote while fetching the tree with `--ignore-scripts`, i.e. before any package's code ran.
A package's scripts run after those of every package it depends on (directly or through packages without scripts,
resolved the way Node resolves them: its own node_modules first, then each enclosing one); among packages that do
not depend on each other, deeper folders first, then by path, so the order is the same every time. npm itself runs
the scripts of a tree in parallel; one at a time is what lets each attempt be given to one package.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sandbox.install.windows import untrusted_label

LIFECYCLE = ("preinstall", "install", "postinstall")  # what `npm rebuild` runs for an installed package, in order
NODE_MODULES = "node_modules/"
MAX_NAME_CHARS = 214  # npm's own limit on a package name
MAX_VERSION_CHARS = 64


@dataclass(frozen=True)
class ScriptPackage:
    path: str  # the lockfile key, e.g. node_modules/a/node_modules/@scope/b
    name: str  # as installed (an alias keeps the real name in the lockfile's "name")
    version: str
    optional: bool

    @property
    def label(self) -> str:
        """name@version, capped and escaped: both come from registry data the package's author controls."""
        return f"{untrusted_label(self.name, MAX_NAME_CHARS)}@{untrusted_label(self.version, MAX_VERSION_CHARS)}"


def script_packages(lockfile: Mapping[str, Any]) -> list[ScriptPackage]:
    """The installed packages with install scripts (`hasInstallScript`), dependencies before dependents."""
    packages = _installed(lockfile)
    scripted = [path for path, meta in packages.items() if meta.get("hasInstallScript") is True]
    before = {path: _scripted_dependencies(packages, path, set(scripted)) for path in scripted}
    return [_script_package(path, packages[path]) for path in _order(scripted, before)]


def script_names(package_json: Mapping[str, Any]) -> tuple[str, ...]:
    """The install scripts a package.json declares, in the order npm runs them. None declared but the lockfile says
    there is one: npm's implicit `install` (node-gyp rebuild, for a package with a binding.gyp)."""
    scripts = package_json.get("scripts")
    declared = tuple(name for name in LIFECYCLE
                     if isinstance(scripts, Mapping) and isinstance(scripts.get(name), str) and scripts[name].strip())
    return declared or ("install",)


def _installed(lockfile: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Lockfile entries that are on disk: not the root, not links (their target has its own entry), not dev ones
    (the install omits them)."""
    entries = lockfile.get("packages")
    if not isinstance(entries, Mapping):
        return {}
    return {str(path): meta for path, meta in entries.items()
            if isinstance(meta, Mapping) and _plain_folder(str(path)) and not meta.get("link") and not meta.get("dev")}


def _plain_folder(path: str) -> bool:
    """A key naming a folder under node_modules and nothing else (no `..`, no absolute or empty parts): each one
    becomes a path the host hands to npm, and to `rm -rf` for a failed optional package."""
    parts = path.split("/")
    return path.startswith(NODE_MODULES) and all(part not in ("", ".", "..") and "\\" not in part for part in parts)


def _script_package(path: str, meta: Mapping[str, Any]) -> ScriptPackage:
    folder_name = path[path.rfind(NODE_MODULES) + len(NODE_MODULES):]
    name = meta.get("name") if isinstance(meta.get("name"), str) else folder_name
    version = meta.get("version") if isinstance(meta.get("version"), str) else "?"
    return ScriptPackage(path=path, name=str(name), version=str(version), optional=bool(meta.get("optional")))


def _dependency_names(meta: Mapping[str, Any]) -> list[str]:
    names: list[str] = []
    for field in ("dependencies", "optionalDependencies", "peerDependencies"):
        value = meta.get(field)
        if isinstance(value, Mapping):
            names.extend(str(name) for name in value)
    return names


def _enclosing(path: str) -> str:
    """The folder whose node_modules holds `path` ("" for the root): node_modules/a/node_modules/b -> node_modules/a."""
    index = path.rfind(NODE_MODULES)
    return path[:index].rstrip("/") if index > 0 else ""


def _resolve(packages: Mapping[str, Any], from_path: str, name: str) -> str | None:
    """Where Node finds `name` required from the package at `from_path`."""
    folder = from_path
    while True:
        candidate = f"{folder}/{NODE_MODULES}{name}" if folder else f"{NODE_MODULES}{name}"
        if candidate in packages:
            return candidate
        if not folder:
            return None
        folder = _enclosing(folder)


def _scripted_dependencies(packages: Mapping[str, Mapping[str, Any]], start: str, scripted: set[str]) -> set[str]:
    """The packages with scripts that `start` depends on, directly or through packages without scripts."""
    found: set[str] = set()
    seen = {start}
    pending = [start]
    while pending:
        path = pending.pop()
        for name in _dependency_names(packages[path]):
            target = _resolve(packages, path, name)
            if target is None or target in seen:
                continue
            seen.add(target)
            if target in scripted:
                found.add(target)
            pending.append(target)
    found.discard(start)
    return found


def _order(paths: list[str], before: Mapping[str, set[str]]) -> list[str]:
    """Dependencies first; ties (and dependency cycles, which npm allows) broken by depth, deepest first, then
    path."""
    def rank(path: str) -> tuple[int, str]:
        return (-path.count(NODE_MODULES), path)

    remaining = set(paths)
    ordered: list[str] = []
    while remaining:
        ready = [p for p in remaining if not (before[p] & remaining)]
        chosen = min(ready or remaining, key=rank)
        ordered.append(chosen)
        remaining.discard(chosen)
    return ordered
