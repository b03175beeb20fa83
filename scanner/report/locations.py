"""Where a finding points, for SARIF physical locations and GitHub annotations: a file in the repository (a URI
relative to the working directory, and the line where each definition starts in it) or, for a registry package with
no file, a stable package URL (purl, `pkg:npm/%40scope/name@1.2.3`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from scanner.report.model import Report

_JSON_STRING = r'"(?:[^"\\\n]|\\.)*"'
TOOL_NAME = re.compile(r'"name"\s*:\s*(' + _JSON_STRING + ")")  # `"name": "read_file"` in a tools/list or lock
OBJECT_KEY = re.compile("(" + _JSON_STRING + r")\s*:\s*\{")  # `"postmark": {` in a client config
_TOOLS_ARRAY = re.compile(r'"tools"\s*:\s*\[')


@dataclass(frozen=True)
class Artifact:
    """The file or package results are about, and the line each named definition starts on (1 when unknown)."""

    uri: str
    file: str | None = None  # the local path, for annotations; None for a package URL
    lines: Mapping[str, int] = field(default_factory=dict)

    def line(self, key: str | None) -> int:
        return self.lines.get(key, 1) if key is not None else 1


def artifact_uri_for(path: str) -> str:
    """The URI a SARIF result names a local file by: relative to the working directory (in CI, the repository root,
    which is what code scanning resolves against) when the file is inside it, else an absolute `file:` URI."""
    local = Path(path.replace("\\", "/"))
    if local.is_absolute():
        try:
            local = local.resolve().relative_to(Path.cwd().resolve())
        except (OSError, ValueError):
            return local.as_uri()
    return quote(local.as_posix(), safe="/._-~")


def first_lines(text: str, pattern: re.Pattern[str], start: int = 0) -> dict[str, int]:
    """For each JSON string the pattern's group 1 matches from `start` on, the 1-based line it first appears on."""
    lines: dict[str, int] = {}
    line, position = 1 + text.count("\n", 0, start), start
    for match in pattern.finditer(text, start):
        line += text.count("\n", position, match.start())
        position = match.start()
        try:
            key = json.loads(match.group(1))
        except ValueError:  # an escape JSON does not know; such a key is not found, so it points at line 1
            continue
        lines.setdefault(key, line)
    return lines


def tool_lines(text: str) -> dict[str, int]:
    """Where each tool's `"name": …` is, searched from the first `"tools": [` (a saved report names other things
    first)."""
    tools = _TOOLS_ARRAY.search(text)
    return first_lines(text, TOOL_NAME, tools.start() if tools else 0)


def file_artifact(path: str, lines: Mapping[str, int] | None = None) -> Artifact:
    return Artifact(uri=artifact_uri_for(path), file=path, lines=dict(lines or {}))


def purl(ecosystem: str, package: str, version: str | None) -> str:
    """A package URL: pkg:npm/%40scope/name@version or pkg:pypi/name@version (PyPI names lowercased with `-` for
    `_`, as the purl spec says)."""
    if ecosystem == "pypi":
        package = package.lower().replace("_", "-")
    parts = [quote(p, safe="") for p in package.split("/")]
    return f"pkg:{ecosystem}/{'/'.join(parts)}" + (f"@{quote(version, safe='')}" if version else "")


def report_artifact(report: Report) -> Artifact:
    """Where a report's results point when no file was given: the package URL of a registry target or a container
    image (`pkg:docker/mcp/time@sha256%3A…`), the origin of a remote server (`https://host`: no file of the
    repository, so no annotation names it as one), else the local path that was scanned or checked."""
    target = report.target
    if target.kind in ("npm", "pypi"):
        return Artifact(uri=purl(target.kind, target.name, target.version))
    if target.kind == "image":
        version = target.image.digest if target.image is not None else None
        return Artifact(uri=purl("docker", target.name, version))
    if target.kind == "remote":
        return Artifact(uri=target.requested)
    return file_artifact(target.requested)
