"""Read a batch's INPUT into targets: a text file of targets, a JSON export of the official MCP registry, or an MCP
client config (told apart by content, not by name).

A text file is one target a line, in the `scan` grammar:

    # comments and blank lines are ignored
    npm:@modelcontextprotocol/server-filesystem@2025.8.21 -- /workspace
    pypi:mcp-server-time==0.6.2
    ./servers/zoo --command zoo-plain          # a local path is relative to the input file's folder

The user wrote it, so a bad line is exit 2 naming the line. Registry exports and client configs are other people's
data: an entry that cannot be scanned (an OCI image, a remote server, a malformed name) is recorded as unsupported,
with the reason, and the batch goes on.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from scanner.batch.config_targets import config_targets
from scanner.batch.registry_export import export_targets, is_registry_export
from scanner.batch.targets import BatchTarget, at_latest, unique, unpassable
from scanner.errors import UsageError
from scanner.json_input import parse_json
from scanner.pipeline.targets import parse_target

MAX_INPUT_BYTES = 64 * 1024 * 1024
LINE_HELP = "a line is TARGET [--command CMD] [-- SERVER ARGS...]"


def read_input(path: Path, *, latest: bool = False) -> list[BatchTarget]:
    """Every target of INPUT, each once, in input order (`latest`: registry versions dropped)."""
    text = _read_text(path)
    if text.lstrip().startswith(("{", "[")):
        targets = _json_targets(path, text)
    else:
        targets = text_targets(text, base=path.parent, name=str(path))
    if not targets:
        raise UsageError(f"{path} names no target; {LINE_HELP}, or give a registry export or a client config")
    return unique([at_latest(t) for t in targets] if latest else targets)


def _read_text(path: Path) -> str:
    if not path.is_file():
        what = "not a regular file (a folder, a pipe or a device)" if path.exists() else "no such file"
        raise UsageError(f"{path}: {what}; give a text file of targets, a registry export or a client config")
    if path.stat().st_size > MAX_INPUT_BYTES:
        raise UsageError(f"{path}: larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; split the batch")
    try:
        return path.read_text("utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read as UTF-8 text ({exc.__class__.__name__})") from None


def _json_targets(path: Path, text: str) -> list[BatchTarget]:
    data: Any = parse_json(f"batch input {path}", text)
    if is_registry_export(data):
        return export_targets(data)
    if isinstance(data, dict):
        return config_targets(path)
    raise UsageError(f"{path}: a JSON list that is not a registry export (expected server.json entries with "
                     "`packages`)")


def text_targets(text: str, *, base: Path, name: str) -> list[BatchTarget]:
    """The targets of a text file; a line that is not one is a UsageError naming it."""
    targets: list[BatchTarget] = []
    for number, line in enumerate(text.splitlines(), start=1):
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise UsageError(f"{name}:{number}: cannot be split into words ({exc}); {LINE_HELP}") from None
        if words and (why := unpassable(words)) is not None:
            raise UsageError(f"{name}:{number}: {why}; {LINE_HELP}")
        if words:
            targets.append(_line_target(words, base, f"{name}:{number}"))
    return targets


def _line_target(words: list[str], base: Path, where: str) -> BatchTarget:
    target, command, args = words[0], None, ()
    rest = words[1:]
    while rest:
        word = rest.pop(0)
        if word == "--":
            args = tuple(rest)
            break
        if word == "--command" and rest:
            command = rest.pop(0)
        elif word.startswith("--command="):
            command = word.partition("=")[2]
        else:
            raise UsageError(f"{where}: unexpected {word!r}; {LINE_HELP}")
    if command is not None and not command.strip():
        raise UsageError(f"{where}: --command needs a command; {LINE_HELP}")
    return BatchTarget(_checked_target(target, base, where), command, args, origin=where)


def _checked_target(text: str, base: Path, where: str) -> str:
    """The target as the scan takes it: a registry target as written, a local path made absolute against `base`;
    checked now, so a typo stops the batch before anything runs."""
    if not text.startswith(("npm:", "pypi:")):
        try:
            path = Path(text).expanduser()
        except RuntimeError:  # `~name/...` of a user this system does not know
            raise UsageError(f"{where}: {text!r}: no such user's home folder; {LINE_HELP}") from None
        text = str(path if path.is_absolute() else (base / path).resolve())
    try:
        parse_target(text)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return text
