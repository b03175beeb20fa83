"""Which distributions of a hash-pinned Python tree must be built from source here, and the requirement line of each,
so every source build can run as its own install step and what its build backend tries is given to that package.

uv resolves the tree into requirements.txt (`--generate-hashes`), then, offline and from the same resolution,
writes it as a PEP 751 lock (`pylock.toml`), which lists per package the wheels that fit this interpreter and
platform and the sdist: a package with an sdist and no fitting wheel is built. Both files are uv's output, written
before any build of the install step runs (a build backend that ran during resolution, for an sdist's metadata, is
the one exception: see README limitations).
"""

from __future__ import annotations

import re
import tarfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from sandbox.install.windows import untrusted_label

_REQUIREMENT_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)")
MAX_NAME_CHARS = 200
MAX_VERSION_CHARS = 64
# Where uv unpacks a registry sdist it builds (its cache, in the step's own HOME): sdists-vN/pypi/NAME/VERSION/ID/src.
SETUP_PY_IN_UV_CACHE = "~/.cache/uv/sdists-v*/pypi/*/src/setup.py"
MAX_ARCHIVE_MEMBERS = 100_000


@dataclass(frozen=True)
class BuiltFromSource:
    """A package the install built from source (its build backend ran code at install time); `setup_py`: the source
    had a top-level setup.py, which setuptools (the backend of a source without pyproject.toml too) executes.
    `package` None: the local target itself."""

    package: str | None
    setup_py: bool


def local_setup_py(path: Path | None) -> bool | None:
    """Whether a local Python target, built from source at install time, has a top-level setup.py (read on the host,
    from the user's copy); None when it is not built (a wheel) or not a local target."""
    if path is None or path.name.endswith(".whl"):
        return None
    if path.is_dir():
        return (path / "setup.py").is_file()
    try:
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                return _top_level_setup_py(archive.namelist()[:MAX_ARCHIVE_MEMBERS])
        with tarfile.open(path) as archive:
            names = []
            for member in archive:  # streamed: a member count bound, not the whole index in memory
                names.append(member.name)
                if len(names) >= MAX_ARCHIVE_MEMBERS:
                    break
            return _top_level_setup_py(names)
    except (OSError, tarfile.TarError, zipfile.BadZipFile):
        return False


def _top_level_setup_py(names: list[str]) -> bool:
    """An sdist's setup.py is at its root folder (NAME-VERSION/setup.py) or, unusually, at the archive's root."""
    return any(name.lstrip("./").count("/") <= 1 and name.rsplit("/", 1)[-1] == "setup.py" for name in names)


@dataclass(frozen=True)
class SourceBuild:
    name: str  # normalised (PEP 503)
    version: str
    requirement: str  # its requirements.txt entry on one line: name==version --hash=sha256:… …

    @property
    def label(self) -> str:
        return f"{untrusted_label(self.name, MAX_NAME_CHARS)}@{untrusted_label(self.version, MAX_VERSION_CHARS)}"


def source_builds(pylock: bytes, requirements: str) -> list[SourceBuild] | None:
    """The packages to build from an sdist, sorted by name; None when the lock cannot be read (then no step may
    assume that nothing is built)."""
    import tomllib  # a fresh install's lock only: a scan of an installed server does not load the parser

    try:
        data = tomllib.loads(pylock.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    packages = data.get("packages")
    if not isinstance(packages, list):
        return None
    lines = requirement_lines(requirements)
    builds: list[SourceBuild] = []
    for package in packages:
        if not isinstance(package, Mapping) or not _built_from_source(package):
            continue
        name = canonicalize_name(str(package.get("name", "")))
        if name not in lines:
            return None  # the two files disagree: trust neither to split the install
        builds.append(SourceBuild(name=name, version=str(package.get("version", "?")), requirement=lines[name]))
    return sorted(builds, key=lambda b: b.name)


def requirement_lines(requirements: str) -> dict[str, str]:
    """Each entry of a uv requirements.txt (`name==version \\` then `--hash=…` continuation lines and `# via`
    comments) as one line, by normalised name."""
    entries: dict[str, str] = {}
    current: list[str] = []

    def flush() -> None:
        if current:
            match = _REQUIREMENT_NAME.match(current[0])
            if match:
                entries[canonicalize_name(match[1])] = " ".join(current)
            current.clear()

    for raw in requirements.splitlines():
        text = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not text:
            continue
        if not raw[:1].isspace():
            flush()
        current.append(text.rstrip("\\").strip())
    flush()
    return entries


def _built_from_source(package: Mapping[str, Any]) -> bool:
    return not package.get("wheels") and bool(package.get("sdist"))
