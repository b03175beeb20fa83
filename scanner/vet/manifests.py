"""Which MCP SDK major a file is written against, from the nearest manifest above it: package.json and
package-lock.json for TypeScript (`@modelcontextprotocol/sdk` is v1, the split `@modelcontextprotocol/server`,
`client`, `core` packages are v2), uv.lock / poetry.lock / pyproject.toml / requirements*.txt for Python (`mcp`). The
walk up stops at the repository boundary (a folder holding `.git`) and at the vetted root's filesystem parent chain
end. The answer is "1", "2", "both" or "undetermined": the gate of the PY_SDK_V1_* / TS_SDK_V1_* advisory groups."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

TS_V1 = "@modelcontextprotocol/sdk"
TS_V2 = ("@modelcontextprotocol/server", "@modelcontextprotocol/client", "@modelcontextprotocol/core")
PY_FILES = ("uv.lock", "poetry.lock", "pyproject.toml")
REPRESENTATIVE = {"1": "1.99", "2": "2.99"}


def majors_of_spec(spec: str) -> set[str]:
    """The SDK majors (1, 2) a version range admits ("^1.2", ">=2,<3", "==1.26.0", "1.x")."""
    spec = spec.strip().lstrip("v")
    caret = re.fullmatch(r"(?:[\^~]|==|===)?\s*(\d+)(?:\.[\dx*]+)*", spec)
    if caret:
        return {caret.group(1)} & set(REPRESENTATIVE)
    try:
        allowed = SpecifierSet(spec.replace(" ", ","))
    except InvalidSpecifier:
        return set()
    return {m for m, v in REPRESENTATIVE.items() if allowed.contains(v, prereleases=True)} if spec else set()


def _answer(majors: set[str]) -> str:
    return "both" if majors == {"1", "2"} else next(iter(majors)) if majors else "undetermined"


def ts_sdk(folder: Path) -> tuple[str, Path] | None:
    """(major, manifest) from the nearest package.json naming an MCP SDK package."""
    for here in _upwards(folder):
        manifest = here / "package.json"
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        deps: dict[str, str] = {}
        for section in ("dependencies", "devDependencies", "peerDependencies"):
            if isinstance(data.get(section), dict):
                deps.update({k: str(v) for k, v in data[section].items()})
        majors = set()
        if TS_V1 in deps:
            majors |= majors_of_spec(deps[TS_V1]) or {"1"}
        if any(name in deps for name in TS_V2):
            majors.add("2")
        if TS_V1 in deps or majors:
            return _answer(majors), manifest
    return None


def _python_lock_version(path: Path) -> set[str]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if path.name == "pyproject.toml":
        found: set[str] = set()
        for line in data.get("project", {}).get("dependencies", []):
            found |= _requirement_majors(str(line))
        poetry = data.get("tool", {}).get("poetry", {}).get("dependencies", {})
        if isinstance(poetry.get("mcp"), str):
            found |= majors_of_spec(poetry["mcp"])
        return found
    for package in data.get("package", []):
        if package.get("name") == "mcp":
            try:
                return {str(Version(str(package.get("version"))).major)}
            except InvalidVersion:
                return set()
    return set()


def _requirement_majors(line: str) -> set[str]:
    try:
        requirement = Requirement(line.split("#", 1)[0].strip())
    except InvalidRequirement:
        return set()
    if requirement.name.lower() != "mcp":
        return set()
    return majors_of_spec(str(requirement.specifier)) or {"undetermined"}


def py_sdk(folder: Path) -> tuple[str, Path] | None:
    """(major, manifest) from the nearest uv.lock, poetry.lock, pyproject.toml or requirements*.txt naming mcp."""
    for here in _upwards(folder):
        candidates = [here / name for name in PY_FILES] + sorted(here.glob("requirements*.txt"))
        for path in candidates:
            if not path.is_file():
                continue
            try:
                majors = (_python_lock_version(path) if path.suffix in (".lock", ".toml") else
                          set().union(*(_requirement_majors(l) for l in path.read_text(encoding="utf-8").splitlines())))
            except (OSError, ValueError):
                continue
            if majors:
                return _answer(majors - {"undetermined"}), path
    return None


def _upwards(folder: Path) -> list[Path]:
    """`folder` and its parents up to and including the first one holding `.git` (the repository boundary)."""
    chain = []
    for here in [folder, *folder.parents]:
        chain.append(here)
        if (here / ".git").exists():
            break
    return chain
