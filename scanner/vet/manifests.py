"""Which MCP SDK major a file is written against, from the nearest manifest above it: package.json and
its lockfiles (package-lock.json, pnpm-lock.yaml, yarn.lock: read when package.json names no MCP package or a range
with no major) for TypeScript (`@modelcontextprotocol/sdk` is v1, the split `@modelcontextprotocol/server`, `client`,
`core` packages are v2), uv.lock / poetry.lock / pyproject.toml / requirements*.txt for Python (`mcp`). The walk up
stops at the repository boundary (a folder holding `.git`) and at the filesystem root. The answer is "1", "2", "both"
or "undetermined": the gate of the PY_SDK_V1_* / TS_SDK_V1_* advisory groups (scanner/vet/sdk_gate.py). With it, the
two facts those groups read off the same manifest folder: whether Python's `httpx` is a direct dependency, and the
declared `zod` range when it admits a version below 4.2.0."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

TS_V1 = "@modelcontextprotocol/sdk"
TS_V2 = ("@modelcontextprotocol/server", "@modelcontextprotocol/client", "@modelcontextprotocol/core")
PY_FILES = ("uv.lock", "poetry.lock", "pyproject.toml")
REPRESENTATIVE = {"1": "1.99", "2": "2.99"}
TS_LOCKS = ("package-lock.json", "pnpm-lock.yaml", "yarn.lock")
ZOD_FLOOR = (4, 2, 0)
# A yarn.lock entry's version: each line of its block is one indented line, matched one way only (`\s+[^\n]*\n`
# split a run of blank indented lines every way there is, so a lockfile of them backtracked for hours).
YARN_ENTRY = r'^"?%s@[^\n]*:\n(?:[ \t][^\n]*\n)*?[ \t]+version:?[ \t]+"?(\d[^"\s]*)'


def _table(data: object, *keys: str) -> dict[str, Any]:
    """data[key][key]… when each step is a table, else {}: a manifest is the package's own text, of any shape."""
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _array(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(frozen=True)
class Declaration:
    """What the nearest manifest says: the SDK major, the file saying it, and the facts the advisories read."""

    major: str
    manifest: Path
    httpx_declared: bool = False
    zod_below_floor: str = ""  # the declared zod range, when it admits a version below 4.2.0


def majors_of_spec(spec: str) -> set[str]:
    """The SDK majors (1, 2) a version range admits ("^1.2", ">=2,<3", "==1.26.0", "1.x")."""
    spec = spec.strip().lstrip("v")
    caret = re.fullmatch(r"(?:[\^~]|==|===)?\s*(\d+)(?:\.[\dx*]+)*", spec)
    if caret:
        return {caret.group(1)} & set(REPRESENTATIVE)
    try:  # ValueError: InvalidSpecifier, or a version past int's 4,300 digits (the package's own text)
        allowed = SpecifierSet(spec.replace(" ", ","))
        return {m for m, v in REPRESENTATIVE.items() if allowed.contains(v, prereleases=True)} if spec else set()
    except ValueError:
        return set()


def _answer(majors: set[str]) -> str:
    return "both" if majors == {"1", "2"} else next(iter(majors)) if majors else "undetermined"


def npm_floor(spec: str) -> tuple[int, int, int] | None:
    """The lowest version an npm range admits ("^3.25 || ^4.0" -> 3.25.0); None for `*`, a tag, a git/file spec."""
    if not spec.strip() or re.match(r"(\*|x|latest|next|[a-z+]+:)", spec.strip(), re.I):
        return None
    floors = []
    for alternative in spec.split("||"):
        match = re.search(r"(?:^|\s)(\^|~>?|>=|>|<=|<|=)?\s*v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?",
                          alternative.strip())
        if match is None:
            continue
        if match.group(1) in ("<", "<=") or match.group(2) in "xX*":
            floors.append((0, 0, 0))
            continue
        floors.append(tuple(int(p) if p and p.isdigit() else 0 for p in match.group(2, 3, 4)))
    return min(floors) if floors else None  # type: ignore[return-value]


def _npm_deps(manifest: Path) -> dict[str, str]:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested past json's depth (the package's text)
        return {}
    deps: dict[str, str] = {}
    for section in ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies"):
        if isinstance(data, dict) and isinstance(data.get(section), dict):
            deps.update({k: str(v) for k, v in data[section].items()})
    return deps


def _locked_npm(here: Path, name: str) -> str | None:
    """The version of `name` a lockfile in `here` resolves (package-lock v1-v3; pnpm and yarn read as text)."""
    for lock in TS_LOCKS:
        path = here / lock
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8-sig")
            if lock == "package-lock.json":
                data = json.loads(text)
                found = (data.get("packages", {}).get(f"node_modules/{name}", {}).get("version") or
                         data.get("dependencies", {}).get(name, {}).get("version"))
            else:
                match = re.search(re.escape(name) + r"[@/](\d+\.\d+\.\d+)", text) or re.search(YARN_ENTRY % re.escape(
                    name), text, re.M)
                found = match.group(1) if match else None
        except (OSError, ValueError, AttributeError, RecursionError):
            continue
        if isinstance(found, str):
            return found
    return None


def _npm_major(version: str | None) -> str:
    match = re.match(r"\D*(\d+)", version or "")
    return "undetermined" if match is None else "2" if int(match.group(1)) >= 2 else "1"


def _ts_majors(here: Path, deps: dict[str, str]) -> set[str]:
    """package.json decides (a declaration is the intent); the lockfiles pin a range that names no major, or answer
    alone when package.json names no MCP package (the SDK may have come in transitively)."""
    if TS_V1 in deps or deps.keys() & set(TS_V2):
        majors = {"2"} if deps.keys() & set(TS_V2) else set()
        if TS_V1 in deps:
            floor = npm_floor(deps[TS_V1])
            majors.add(_npm_major(f"{floor[0]}") if floor else _npm_major(_locked_npm(here, TS_V1)))
        return majors
    majors = {"2"} if any(_locked_npm(here, name) for name in TS_V2) else set()
    locked = _locked_npm(here, TS_V1)
    return majors | {_npm_major(locked)} if locked else majors


def ts_sdk(folder: Path) -> Declaration | None:
    """The nearest package.json (or its lockfiles) naming an MCP SDK package."""
    for here in _upwards(folder):
        manifest = here / "package.json"
        deps = _npm_deps(manifest) if manifest.is_file() else {}
        locks = [here / name for name in TS_LOCKS if (here / name).is_file()]
        majors = _ts_majors(here, deps) if manifest.is_file() or locks else set()
        if not majors:
            continue
        floor = npm_floor(deps["zod"]) if "zod" in deps else None
        source = manifest if deps.keys() & {TS_V1, *TS_V2} else locks[0]
        return Declaration(_answer(majors - {"undetermined"}), source,
                           zod_below_floor=deps["zod"] if floor is not None and floor < ZOD_FLOOR else "")
    return None


def _python_lock_version(path: Path) -> set[str]:
    data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    if path.name == "pyproject.toml":
        found: set[str] = set()
        for line in _array(_table(data, "project").get("dependencies")):
            found |= _requirement_majors(str(line))
        poetry = _table(data, "tool", "poetry", "dependencies")
        if isinstance(poetry.get("mcp"), str):
            found |= majors_of_spec(poetry["mcp"])
        return found
    for package in _array(data.get("package")):
        if isinstance(package, dict) and package.get("name") == "mcp":
            try:
                return {str(Version(str(package.get("version"))).major)}
            except ValueError:  # InvalidVersion, or past int's 4,300 digits
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


def _names_httpx(path: Path) -> bool:
    """Is httpx a direct dependency in this pyproject.toml / requirements file (a lockfile's transitive one is not)?"""
    try:
        text = path.read_text(encoding="utf-8-sig")
        if path.name == "pyproject.toml":
            data = tomllib.loads(text)
            project = _table(data, "project")
            lines = [*_array(project.get("dependencies")),
                     *(d for group in _table(project, "optional-dependencies").values() for d in _array(group))]
            if "httpx" in _table(data, "tool", "poetry", "dependencies"):
                return True
        else:
            lines = _requirement_lines(path, text)
    except (OSError, ValueError, RecursionError):  # RecursionError: a TOML nested past tomllib's depth
        return False
    return any(re.match(r"\s*httpx\b(?![-_.\w])", str(line)) for line in lines)


def _requirement_lines(path: Path, text: str) -> list[str]:
    """The requirement lines of a requirements file, or of a wheel's METADATA (its `Requires-Dist:` headers)."""
    if path.name != "METADATA":
        return text.splitlines()
    return [line.split(":", 1)[1] for line in text.splitlines() if line.startswith("Requires-Dist:")]


def _metadata(here: Path) -> list[Path]:
    """The METADATA of the one distribution in `here` (a wheel or an unpacked package; a folder holding several
    dist-info directories, such as site-packages, says nothing about any one file's package)."""
    found = list(here.glob("*.dist-info/METADATA"))
    return found if len(found) == 1 else []


def py_sdk(folder: Path) -> Declaration | None:
    """The nearest uv.lock, poetry.lock, pyproject.toml, requirements*.txt or wheel METADATA naming mcp."""
    for here in _upwards(folder):
        candidates = [here / name for name in PY_FILES] + sorted(here.glob("requirements*.txt")) + _metadata(here)
        for path in candidates:
            if not path.is_file():
                continue
            try:
                lines = [] if path.suffix in (".lock", ".toml") else \
                    _requirement_lines(path, path.read_text(encoding="utf-8-sig"))
                majors = _python_lock_version(path) if path.suffix in (".lock", ".toml") else \
                    set().union(*(_requirement_majors(line) for line in lines))
            except (OSError, ValueError, RecursionError):  # RecursionError: a TOML nested past tomllib's depth
                continue
            if majors:
                declares = [c for c in candidates if c.is_file() and c.suffix != ".lock"]
                return Declaration(_answer(majors - {"undetermined"}), path,
                                   httpx_declared=any(_names_httpx(c) for c in declares))
    return None


def _upwards(folder: Path) -> list[Path]:
    """`folder` and its parents up to and including the first one holding `.git` (the repository boundary)."""
    chain = []
    for here in [folder, *folder.parents]:
        chain.append(here)
        if (here / ".git").exists():
            break
    return chain
