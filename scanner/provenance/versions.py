"""Versions and version specs of npm (semver, ranges) and PyPI (PEP 440): normalise, and decide whether a spec could
resolve to a given version. The ecosystems (scanner.ecosystems) answer with these for their own packages.

"Could resolve" is deliberately conservative: a tag (latest, next), an empty spec or a spec that cannot be parsed
could resolve to any version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import Version

_SEMVER = re.compile(
    r"^\s*[v=]*\s*(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\s*$"
)
_PARTIAL = re.compile(r"^[v=]*(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")
_COMPARATOR = re.compile(r"^(<=|>=|<|>|=|\^|~>?)?\s*(.*)$")
MAX_NUMBER_DIGITS = 4_300  # Python's int() limit on decimal strings


@dataclass(frozen=True, order=True)
class SemVer:
    major: int
    minor: int
    patch: int
    release: int  # 1 for a release, 0 for a prerelease (a prerelease sorts before its release)
    pre: tuple[tuple[int, int | str], ...] = ()

    def __str__(self) -> str:
        base = f"{self.major}.{self.minor}.{self.patch}"
        return base if self.release else base + "-" + ".".join(str(p[1]) for p in self.pre)


def parse_semver(text: str) -> SemVer | None:
    """An exact npm version (leading v/= allowed, build metadata ignored), or None."""
    m = _SEMVER.match(text)
    if not m:
        return None
    try:
        pre = tuple((0, int(p)) if p.isdigit() else (1, p) for p in m.group(4).split(".")) if m.group(4) else ()
        return SemVer(int(m.group(1)), int(m.group(2)), int(m.group(3)), 0 if pre else 1, pre)
    except ValueError:  # a number past int's 4,300 digits: no version npm could publish either
        return None


def npm_normalise(version: str) -> str | None:
    """The canonical form of an exact npm version, or None when it is not one."""
    parsed = parse_semver(version)
    return str(parsed) if parsed else None


def npm_could_resolve(spec: str, version: str) -> bool:
    """True when installing name@spec could give `version` (tags, empty and unparseable specs: True)."""
    target = parse_semver(version)
    if target is None:
        return True
    sets = _npm_range(spec.strip())
    if sets is None:  # a dist-tag or something we cannot read: it could be anything
        return True
    return any(all(_holds(op, bound, target) for op, bound in comparators) for comparators in sets)


def pypi_normalise(version: str) -> str | None:
    """The canonical (PEP 440) form of an exact PyPI version, or None when it is not one."""
    try:
        return str(Version(version.strip()))
    except ValueError:  # InvalidVersion, or past int's 4,300 digits
        return None


def pypi_exact(spec: str) -> str | None:
    """The version a PyPI spec pins exactly (`==1.2.3` / `===1.2.3` / bare `1.2.3`), or None."""
    spec = spec.strip()
    for prefix in ("===", "=="):
        if spec.startswith(prefix):
            rest = spec[len(prefix):].strip()
            return None if "*" in rest or "," in rest else pypi_normalise(rest)
    return pypi_normalise(spec)


def pypi_could_resolve(spec: str, version: str) -> bool:
    """True when installing name==spec (a PEP 440 specifier) could give `version`."""
    spec = spec.strip()
    try:
        target = Version(version)
    except ValueError:  # InvalidVersion, or past int's 4,300 digits
        return True
    if not spec:
        return True
    if spec[0].isdigit():
        spec = "==" + spec
    try:
        return SpecifierSet(spec).contains(target, prereleases=True)
    except ValueError:  # InvalidSpecifier, or a bound past int's 4,300 digits
        return True


_Comparator = tuple[str, SemVer]


def _npm_range(spec: str) -> list[list[_Comparator]] | None:
    """Desugar an npm range into OR-ed lists of AND-ed comparators, or None when it is not a range."""
    result: list[list[_Comparator]] = []
    for part in spec.split("||"):
        comparators = _npm_set(part.strip())
        if comparators is None:
            return None
        result.append(comparators)
    return result


def _npm_set(text: str) -> list[_Comparator] | None:
    hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", text)
    if hyphen:
        low, high = _partial(hyphen.group(1)), _partial(hyphen.group(2))
        if low is None or high is None:
            return None
        return _lower_bound(low) + _upper_inclusive(high)
    out: list[_Comparator] = []
    tokens = re.sub(r"(<=|>=|<|>|=|\^|~>?)\s+", r"\1", text).split()
    for token in tokens or ["*"]:
        desugared = _comparator(token)
        if desugared is None:
            return None
        out.extend(desugared)
    return out


_Partial = tuple[int | None, int | None, int | None, str | None]


def _partial(text: str) -> _Partial | None:
    if text in ("", "*", "x", "X"):
        return (None, None, None, None)
    if len(text) > MAX_NUMBER_DIGITS:  # a number in it may be past int's 4,300 digits: not a version npm reads
        return None
    m = _PARTIAL.match(text)
    if not m:
        return None
    nums: list[int | None] = []
    for g in m.group(1, 2, 3):
        nums.append(None if g is None or g in "xX*" else int(g))
    for i in range(1, 3):  # 1.x.3 means 1.x
        if nums[i - 1] is None:
            nums[i] = None
    return (nums[0], nums[1], nums[2], m.group(4))


def _semver(major: int, minor: int, patch: int, pre: str | None = None) -> SemVer:
    parsed = parse_semver(f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else ""))
    assert parsed is not None
    return parsed


def _lower_bound(p: _Partial) -> list[_Comparator]:
    major, minor, patch, pre = p
    if major is None:
        return []
    return [(">=", _semver(major, minor or 0, patch or 0, pre if patch is not None else None))]


def _upper_inclusive(p: _Partial) -> list[_Comparator]:
    major, minor, patch, pre = p
    if major is None:
        return []
    if minor is None:
        return [("<", _semver(major + 1, 0, 0, "0"))]
    if patch is None:
        return [("<", _semver(major, minor + 1, 0, "0"))]
    return [("<=", _semver(major, minor, patch, pre))]


def _comparator(token: str) -> list[_Comparator] | None:
    m = _COMPARATOR.match(token)
    if not m:
        return None
    op, rest = m.group(1) or "", m.group(2)
    p = _partial(rest)
    if p is None:
        return None
    major, minor, patch, pre = p
    if op in ("", "="):
        return _lower_bound(p) + _upper_inclusive(p) if patch is None else [("=", _semver(major, minor, patch, pre))]
    if op.startswith("~"):
        if major is None:
            return []
        upper = _semver(major + 1, 0, 0, "0") if minor is None else _semver(major, minor + 1, 0, "0")
        return _lower_bound(p) + [("<", upper)]
    if op == "^":
        if major is None:
            return []
        if major > 0 or minor is None:
            upper = _semver(major + 1, 0, 0, "0")
        elif minor > 0 or patch is None:
            upper = _semver(0, minor + 1, 0, "0")
        else:
            upper = _semver(0, 0, patch + 1, "0")
        return _lower_bound(p) + [("<", upper)]
    if major is None:  # >* , <* …
        return [] if op in (">=", "<=") else [("<", _semver(0, 0, 0, "0"))]
    if op == ">":
        if minor is None:
            return [(">=", _semver(major + 1, 0, 0))]
        if patch is None:
            return [(">=", _semver(major, minor + 1, 0))]
        return [(">", _semver(major, minor, patch, pre))]
    if op == ">=":
        return _lower_bound(p)
    if op == "<":
        return [("<", _semver(major, minor or 0, patch or 0, pre if patch is not None else "0"))]
    return _upper_inclusive(p)  # "<="


def _holds(op: str, bound: SemVer, v: SemVer) -> bool:
    return {"<": v < bound, "<=": v <= bound, ">": v > bound, ">=": v >= bound, "=": v == bound}[op]
