"""Reading a plugin's JSON files: the value (objects remember the keys given twice, which json.loads would drop
silently), and the line a key path sits on, for the report."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

from scanner.plugins.containment import inside

MAX_JSON_BYTES = 1 << 20  # a manifest or mcp.json over 1 MiB is refused, not parsed


class JsonObject(dict):  # type: ignore[type-arg]
    """A JSON object that remembers which of its keys were given more than once (the last value wins, as in JSON)."""

    duplicates: list[str]


def _pairs(pairs: list[tuple[str, Any]]) -> JsonObject:
    obj = JsonObject()
    obj.duplicates = []
    for key, value in pairs:
        if key in obj:
            obj.duplicates.append(key)
        obj[key] = value
    return obj


def _read_bytes(path: Path, root: Path) -> bytes:
    """At most MAX_JSON_BYTES + 1 bytes of a regular file inside `root`. The plugin folder is hostile: a link out of
    it (to the user's own ~/.cursor/mcp.json) is not read, a FIFO is not opened (that blocks until a writer comes)
    nor a device read (/dev/zero never ends), and a sparse file of gigabytes is not loaded whole."""
    if not inside(root, path):
        raise ValueError("is a symbolic link to a file outside the plugin folder: not read (a client that follows it "
                         "loads a file the plugin does not contain)")
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise ValueError("is not a regular file (a FIFO, socket or device): not read")
        with path.open("rb") as handle:
            return handle.read(MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot be read ({exc.strerror or exc})") from None


def read_json(path: Path, root: Path) -> tuple[Any, str]:
    """The parsed value and the text; ValueError (one line) when the file is unreadable, outside `root` (the plugin
    folder), not a regular file, too big or not JSON."""
    return parse_json(_read_bytes(path, root))


def parse_json(data: bytes) -> tuple[Any, str]:
    """The parsed value and the text of a file's bytes; ValueError (one line) when they are too many or not JSON."""
    if len(data) > MAX_JSON_BYTES:
        raise ValueError(f"is over the {MAX_JSON_BYTES}-byte limit")
    try:
        text = data.decode("utf-8")
        return json.loads(text, object_pairs_hook=_pairs), text
    except UnicodeDecodeError:
        raise ValueError("is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except RecursionError:  # nested past json's depth: json.loads raises this, not JSONDecodeError
        raise ValueError("is not valid JSON (nested too deep to read)") from None


def line_of(text: str, keys: list[str]) -> int:
    """The line of the last of `keys` found in document order (each searched after the one before); 1 if none is."""
    index, found = 0, -1
    for key in keys:
        match = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(text, index)
        if match is None:
            break
        found, index = match.start(), match.end()
    return text.count("\n", 0, found) + 1 if found >= 0 else 1


def type_name(value: Any) -> str:
    """The JSON type of a value, as the messages name it."""
    if value is None:
        return "null"
    for kind, name in ((bool, "boolean"), (str, "string"), (int, "number"), (float, "number"), (list, "array"),
                       (dict, "object")):
        if isinstance(value, kind):
            return name
    return type(value).__name__
