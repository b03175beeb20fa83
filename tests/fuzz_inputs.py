"""Generators of hostile inputs for the offline commands (`check`, `lock --from`, `check-config`), seeded so a failure
is reproducible: each case is (name, bytes) and the same seed always gives the same cases.

The classes (issue 11, section 7): deep nesting, long strings, NaN/Infinity, integers too long to convert, lone
surrogates, invalid UTF-8, ANSI/OSC/C1/bidi controls anywhere, duplicate keys, wrong types in every field, empty and
binary files, a saved report with fields removed, configs with large argument arrays and credential-bearing URLs."""

from __future__ import annotations

import copy
import json
import random
import string
from collections.abc import Iterator
from typing import Any

HOSTILE_TEXT = [
    "\x1b[2J\x1b[31mred", "\x1b]0;title\x07", "\x1b]8;;https://evil.invalid\x1b\\link\x1b]8;;\x1b\\", "\x9b31m",
    "\x9d0;osc\x9c", "\x85next", "\u202eevil\u202c", "\u2066iso\u2069", "\u200b\u200d\ufeff", "\U000e0041\U000e0042",
    "\ud800", "\udfff lone", "\ud83d", "a\x00b", "\x7f\x08", "\u2028\u2029", "é ü 漢字 😀",
]
WRONG_TYPES: list[Any] = [None, True, 0, -1, 1.5, 10**30, "", "x", [], [1, "a"], {}, {"k": "v"}]
SECRET_PREFIX = "Zq"


def secret(rng: random.Random) -> str:
    """A planted credential: short and plain (so only structure, not its shape, can hide it) and unique."""
    return SECRET_PREFIX + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(10))


def token(rng: random.Random) -> str:
    """A planted token of a well-known shape."""
    body = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    return rng.choice(["ghp_", "github_pat_11A", "sk-proj-", "xoxb-1234-", "glpat-"]) + body


def credential_urls(rng: random.Random, planted: str) -> list[str]:
    """Every spelling of a credential in a URL-ish argument that the issue lists, around `planted`."""
    host = rng.choice(["github.com", "git.example.invalid", "registry.example.invalid:8443"])
    return [
        f"git+https://user:{planted}@{host}/o/r", f"git+https://{planted}@{host}/o/r@v1",
        f"//user:{planted}@{host}/x", f"git+https:\\\\user:{planted}@{host}\\o\\r", f"https:user:{planted}@{host}/x",
        f"git+https://user%3A{planted}@{host}/x", f"git+https://{planted.replace('q', '%71')}@{host}/x",
        f"https://{planted}:x-oauth-basic@{host}/o/r", f"{planted}:x-oauth-basic@{host}:o/r",
        f"git+https://user;{planted}@{host}/x", f"  git+https://user:{planted}@{host}/x  ",
        f"https://{host}/pkg.whl?token={planted}", f"https://{host}/x;session={planted}/y",
        f"pkg @ git+https://u:{planted}@{host}/r", f"@scope/pkg@https://u:{planted}@{host}/x.tgz",
        f"github:{planted}@o/r", f"HTTPS://U:{planted}@{host.upper()}/x.tgz", f"u:{planted}@{host}/img:1",
    ]


def tools_seed() -> dict[str, Any]:
    return {
        "protocolVersion": "2025-06-18", "serverInfo": {"name": "seed", "version": "1.0.0"},
        "instructions": "Use these tools to read notes.",
        "capabilities": {"tools": {"listChanged": True}},
        "tools": [
            {"name": "read_note", "title": "Read note", "description": "Read one note by its id and return its text.",
             "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "description": "Note id."},
                                                              "limit": {"type": "integer", "minimum": 1}},
                             "required": ["id"]},
             "annotations": {"readOnlyHint": True, "openWorldHint": False}},
            {"name": "write_note", "description": "Write a note; returns the id of the note written.",
             "inputSchema": {"type": "object", "properties": {"text": {"type": "string"},
                                                              "tags": {"type": "array", "items": {"type": "string"}}}},
             "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
             "annotations": {"destructiveHint": False}},
        ],
        "prompts": [{"name": "summarise", "description": "Summarise notes.",
                     "arguments": [{"name": "topic", "required": True}]}],
        "resources": [{"uri": "note://1", "name": "first"}],
    }


def config_seed(rng: random.Random, planted: str, tokens: list[str]) -> dict[str, Any]:
    urls = credential_urls(rng, planted)
    return {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem@2025.1.14", "/tmp"],
                  "env": {"API_KEY": planted}},
        "git": {"command": "uvx", "args": ["--from", rng.choice(urls), "mcp-server-git"]},
        "npm": {"command": "npx", "args": [rng.choice(urls)]},
        "pip": {"command": "pip", "args": ["install", rng.choice(urls)]},
        "docker": {"command": "docker", "args": ["run", "-i", "--rm", rng.choice(urls)]},
        "shell": {"command": "sh", "args": ["-c", f"npx {rng.choice(urls)} && uvx --from {rng.choice(urls)} x"]},
        "remote": {"url": rng.choice(urls)},
        "token": {"command": "npx", "args": [tokens[0], f"https://h.example.invalid/{tokens[1]}/x.tgz"]},
    }}


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*path, index))


def _set(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return document


def mutate(document: Any, rng: random.Random, planted: str) -> Any:
    """One structural mutation: a value of the wrong type, hostile text, a long string or a credential anywhere."""
    document = copy.deepcopy(document)
    path = rng.choice(list(_paths(document)))
    choice = rng.randrange(5)
    if choice == 0:
        return _set(document, path, copy.deepcopy(rng.choice(WRONG_TYPES)))
    if choice == 1:
        return _set(document, path, rng.choice(HOSTILE_TEXT) + str(rng.random()) + rng.choice(HOSTILE_TEXT))
    if choice == 2:
        return _set(document, path, rng.choice(HOSTILE_TEXT) * rng.choice([1_000, 20_000]))
    if choice == 3 and isinstance(document, dict) and path and isinstance(path[-1], str):
        parent = document
        for key in path[:-1]:
            parent = parent[key]
        if isinstance(parent, dict):
            parent.pop(path[-1], None)  # a field removed
            return document
    return _set(document, path, rng.choice(credential_urls(rng, planted)))


def encode(document: Any) -> bytes:
    """JSON as a hostile writer would: lone surrogates as escapes (ensure_ascii), NaN and Infinity allowed."""
    return json.dumps(document, ensure_ascii=True).encode()


def text_level(data: bytes, rng: random.Random) -> bytes:
    """Mutations below JSON: nesting, numbers, duplicate keys, raw controls, invalid UTF-8, truncation."""
    choice = rng.randrange(9)
    if choice == 0:
        depth = rng.choice([600, 10_000])
        return data.replace(b'"type": "object"', b'"type": ' + b"[" * depth + b"]" * depth, 1)
    if choice == 1:
        return data.replace(b'"minimum": 1', b'"minimum": ' + b"9" * rng.choice([4_400, 20_000]), 1)
    if choice == 2:
        return data.replace(b'"minimum": 1', b'"minimum": ' + rng.choice([b"NaN", b"Infinity", b"-Infinity"]), 1)
    if choice == 3:
        return b'{"tools": [], ' + data.replace(b'{"name": ', b'{"name": "dup", "name": ', 1)[1:]
    if choice == 4:
        return data.replace(b"note", "note\u009b\x1b[2J\u202e".encode(), 2)
    if choice == 5:
        at = rng.randrange(max(1, len(data)))
        return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]) + data[at:]
    if choice == 6:
        return data[: rng.randrange(max(1, len(data)))]
    if choice == 7:
        return rng.choice([b"", b"\xef\xbb\xbf", bytes(rng.randrange(256) for _ in range(2_000)), b"null", b"[]"])
    return data.replace(b'"description": ', b'"description": ' + b'{"a": ' * 50 + b"1" + b"}" * 50 + b', "x": ', 1)


def tools_cases(seed: int, count: int) -> Iterator[tuple[str, bytes]]:
    rng = random.Random(seed)
    base = tools_seed()
    for index in range(count):
        planted = secret(rng)
        document = base
        for _ in range(rng.randrange(1, 4)):
            document = mutate(document, rng, planted)
        data = encode(document)
        if rng.random() < 0.4:
            data = text_level(data, rng)
        yield f"tools-{seed}-{index}", data


def config_cases(seed: int, count: int) -> Iterator[tuple[str, bytes, list[str]]]:
    """(name, bytes, credentials planted in it): no output may carry any of them."""
    rng = random.Random(seed)
    for index in range(count):
        planted, tokens = secret(rng), [token(rng), token(rng)]
        document: Any = config_seed(rng, planted, tokens)
        if rng.random() < 0.15:
            document["mcpServers"]["big"] = {"command": "npx", "args": ["x@1.0.0"] * rng.choice([10_000, 50_000])}
        for _ in range(rng.randrange(0, 3)):
            document = mutate(document, rng, planted)
        data = encode(document)
        if rng.random() < 0.25:
            data = text_level(data, rng)
        yield f"config-{seed}-{index}", data, [planted, *tokens]
