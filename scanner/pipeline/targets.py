"""What the user asked to scan: parse TARGET into a package identity (npm, PyPI, local folder or archive)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sandbox.core.archive import SKIP_DIRS
from sandbox.core.tree import entries_below
from sandbox.core.untrusted import cap_text
from scanner.errors import UsageError
from scanner.pipeline.target_text import refuse_blank_target

NPM_NAME = re.compile(r"^(@[a-z0-9~-][a-z0-9._~-]*/)?[a-z0-9~-][a-z0-9._~-]*$")
PYPI_NAME = re.compile(r"^([A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$")
VERSION_TEXT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.+_-]*$")
MAX_NAME = 214
MAX_MANIFEST_BYTES = 1 << 20  # a folder's package.json or pyproject.toml over 1 MiB is refused, not read
TARGET_HELP = "use npm:NAME[@VERSION], pypi:NAME[==VERSION], or a path to a folder, .tgz, .whl or .tar.gz"


@dataclass(frozen=True)
class Target:
    kind: Literal["npm", "pypi", "folder", "archive"]
    ecosystem: Literal["npm", "pypi"]
    name: str
    requested: str
    version_spec: str | None = None
    path: Path | None = None

    @property
    def is_local(self) -> bool:
        return self.path is not None


def parse_target(text: str) -> Target:
    refuse_blank_target(text)
    text = text.strip()
    if text.startswith("npm:"):
        return _parse_npm(text)
    if text.startswith("pypi:"):
        return _parse_pypi(text)
    path = Path(text).expanduser()
    if _exists(path):
        return _parse_local(text, path)
    raise UsageError(f"{cap_text(repr(text), 300)} is neither a registry target nor an existing path; "
                     f"{target_hint(text) or TARGET_HELP}")


def _exists(path: Path) -> bool:
    """Whether the path exists; one that cannot name a file at all (too long: ENAMETOOLONG) does not."""
    try:
        return path.exists()
    except OSError:
        return False


LAUNCHERS = {"npx", "pnpx", "bunx", "npm", "pnpm", "yarn", "uvx", "uv", "pipx", "python", "python3"}


def target_hint(text: str) -> str | None:
    """What a bare `@scope/name`, `name`, `name==1.0` or launcher most likely meant, as a "did you mean"."""
    if text.lower() in LAUNCHERS:
        return f"to scan a launch command, put it after --: mcp-sandbox scan -- {text} …"
    at = text.find("@", 1)
    name, version = (text[:at], text[at + 1:]) if at > 0 else (text, "")
    if (name.startswith("@") or at > 0) and NPM_NAME.match(name) and (not version or VERSION_TEXT.match(version)):
        return f"did you mean npm:{text}?"
    name, sep, version = text.partition("==")
    if sep and PYPI_NAME.match(name) and VERSION_TEXT.match(version):
        return f"did you mean pypi:{text}?"
    if not sep and NPM_NAME.match(text) and "/" not in text:
        return f"did you mean npm:{text} or pypi:{text}? ({TARGET_HELP})"
    if not sep and PYPI_NAME.match(text):
        return f"did you mean pypi:{text}? ({TARGET_HELP})"
    return None


def _parse_npm(text: str) -> Target:
    spec = text[len("npm:"):]
    at = spec.find("@", 1)
    name, version = (spec[:at], spec[at + 1:]) if at > 0 else (spec, None)
    if not name or len(name) > MAX_NAME or not NPM_NAME.match(name):
        raise UsageError(f"{name!r} is not a valid npm package name (lowercase, optional @scope/); {TARGET_HELP}")
    if version is not None and not VERSION_TEXT.match(version):
        raise UsageError(f"npm version {version!r} of {name} must be an exact version or a dist-tag (e.g. 1.2.3)")
    return Target("npm", "npm", name, text, version or None)


def _parse_pypi(text: str) -> Target:
    spec = text[len("pypi:"):]
    name, sep, version = spec.partition("==")
    if any(op in name for op in ("<", ">", "~", "!", "=", "@", ";", "[", " ")):
        raise UsageError(f"pypi target {spec!r}: give an exact version with == (e.g. pypi:mcp-server-time==1.0.0)")
    if not name or len(name) > MAX_NAME or not PYPI_NAME.match(name):
        raise UsageError(f"{name!r} is not a valid PyPI project name; {TARGET_HELP}")
    if sep and not VERSION_TEXT.match(version):
        raise UsageError(f"PyPI version {version!r} of {name} must be an exact version (e.g. 1.2.3)")
    return Target("pypi", "pypi", name, text, version or None)


def _parse_local(text: str, path: Path) -> Target:
    path = path.resolve()
    if path.is_dir():
        has_npm = (path / "package.json").is_file()
        has_py = (path / "pyproject.toml").is_file()
        if has_npm and has_py:
            raise UsageError(f"{path} has both package.json and pyproject.toml; pass the archive you want instead")
        if has_npm:
            return Target("folder", "npm", _npm_folder_name(path / "package.json"), text, path=path)
        if has_py:
            return Target("folder", "pypi", _python_folder_name(path / "pyproject.toml"), text, path=path)
        if (path / ".claude-plugin" / "plugin.json").exists():
            raise UsageError(f"{path} is a Claude Code plugin (.claude-plugin/plugin.json), neither a package folder nor "
                             "an Agent Plugins package (plugin.json at its root): scan the servers of its .mcp.json "
                             "with --config-file; its hooks, commands and skills are not vetted")
        raise UsageError(f"{path} has no package.json or pyproject.toml; point at a package folder or archive")
    name = path.name
    if name.endswith(".tgz"):
        return Target("archive", "npm", _npm_archive_name(path), text, path=path)
    if name.endswith(".whl"):
        return Target("archive", "pypi", name.split("-")[0], text, path=path)
    if name.endswith(".tar.gz"):
        return Target("archive", "pypi", name[: -len(".tar.gz")].rsplit("-", 1)[0], text, path=path)
    raise UsageError(f"{path}: unknown archive type; expected .tgz (npm), .whl or .tar.gz (Python)")


def _manifest_text(manifest: Path) -> str:
    """A folder's package.json or pyproject.toml, read up to MAX_MANIFEST_BYTES: one of gigabytes (a sparse file in a
    plugin's bundled package) was read whole, a MemoryError before anything ran."""
    with manifest.open("rb") as handle:
        data = handle.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise UsageError(f"{manifest} is over {MAX_MANIFEST_BYTES} bytes: too big to be a package manifest")
    return data.decode("utf-8")


def _npm_folder_name(manifest: Path) -> str:
    try:
        data = json.loads(_manifest_text(manifest))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{manifest} is not valid JSON: {exc}") from None
    except RecursionError:  # nested past json's depth: json.loads raises this, not JSONDecodeError
        raise UsageError(f"{manifest} is not valid JSON: nested too deep to read") from None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not NPM_NAME.match(name):
        raise UsageError(f"{manifest} has no valid \"name\"; add one")
    return name


def _npm_archive_name(path: Path) -> str:
    try:
        with tarfile.open(path, "r:gz") as tar:
            member = tar.extractfile("package/package.json")
            data = json.loads(member.read()) if member else {}
    except (tarfile.TarError, KeyError, json.JSONDecodeError, OSError) as exc:
        raise UsageError(f"{path} is not an npm package archive (no package/package.json): {exc}") from None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str) or not NPM_NAME.match(name):
        raise UsageError(f"{path}: package/package.json has no valid \"name\"")
    return name


def _python_folder_name(manifest: Path) -> str:
    import tomllib  # a local folder's pyproject.toml only: a package scan does not load the parser

    try:
        project = tomllib.loads(_manifest_text(manifest)).get("project")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{manifest} is not valid TOML: {exc}") from None
    except RecursionError:  # nested past tomllib's depth
        raise UsageError(f"{manifest} is not valid TOML: nested too deep to read") from None
    name = project.get("name") if isinstance(project, dict) else None
    if not isinstance(name, str) or not PYPI_NAME.match(name):
        raise UsageError(f"{manifest} has no valid [project].name; add one")
    return name


def content_hash(path: Path) -> str:
    """SHA-256 of what the install is given, which keys its cached image: an archive's bytes, or every entry of a
    folder that sandbox.core.archive.pack_path packs (build/VCS folders skipped) by relative name, kind, permission
    bits as packed, and bytes or link target. Each field is length-prefixed: folders the install is given differently
    (one file holding another's name and bytes, a link pointing elsewhere, an executable bit) never share a hash, so a
    scan of one never reuses the other's installed image."""
    digest = hashlib.sha256()
    if path.is_file():
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    for entry in entries_below(path):
        relative = entry.relative_to(path)
        if any(part in SKIP_DIRS for part in relative.parts):
            continue
        for field in _packed_entry(entry, relative):
            digest.update(len(field).to_bytes(8, "big") + field)
    return digest.hexdigest()


def _packed_entry(entry: Path, relative: Path) -> tuple[bytes, ...]:
    """The fields of one folder entry as pack_path packs it: kind, name, permission bits (& 0o755), bytes or link
    target (links are packed as links, never followed)."""
    name = os.fsencode(relative)
    if entry.is_symlink():
        return b"l", name, os.fsencode(os.readlink(entry))
    mode = f"{entry.lstat().st_mode & 0o755:o}".encode()
    if entry.is_dir():
        return b"d", name, mode
    if entry.is_file():
        return b"f", name, mode, entry.read_bytes()
    return b"o", name, mode  # a fifo or device: packed as such, without content


