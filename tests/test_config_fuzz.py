"""Hostile config files (issue 11, section 7): wrong types in every slot, deep nesting, huge values, controls, bad
bytes. Each one is a config that loads or one `error: …` line with exit 2: never a traceback, never a raw control
character. Seeded and bounded, so it runs in the fast suite."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from scanner.config import MAX_CONFIG_BYTES, Config, load
from scanner.errors import UsageError
from tests.cli_helpers import run_main

SEED = 20251111
CASES = 400
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
TOOLS = {"tools": [{"name": "t", "description": "Reads one row by its id and returns every column.",
                    "inputSchema": {"type": "object"}}]}
HOSTILE_TEXT = ["S1", "s8", "hidden-instructions", "S8:*", "S7:list_users", "", ":", "S8:", ":tool", "S99",
                "\u009b31mS1", "\x1b[2JS1", "S1\u202e", "S8:\u009b\x07", "\\ud800", "\\u0000", "a" * 5_000,
                "S7:" + "x" * 5_000, "\u00a0S1", "S1\r\n"]


def _string(rng: random.Random) -> str:
    """A TOML basic string holding hostile text, raw (JSON's string escapes are TOML's too)."""
    return json.dumps(rng.choice(HOSTILE_TEXT), ensure_ascii=False)


def _value(rng: random.Random, depth: int = 0) -> str:
    kinds: list[Callable[[], str]] = [
        lambda: _string(rng), lambda: str(rng.randint(-2**63, 2**63 - 1)), lambda: "9" * rng.choice((10, 5_000)),
        lambda: rng.choice(("nan", "inf", "-inf", "1e999", "true", "false", "1979-05-27T07:32:00Z", "0x" + "f" * 99)),
        lambda: '"\\ud800"', lambda: "'literal \u009b'",
    ]
    if depth == 0:  # lists of strings, the right type with hostile content, weighted to reach the rule lookups
        kinds += [lambda: "[" + ", ".join(_string(rng) for _ in range(rng.randint(1, 4))) + "]"] * 6
    if depth < 3:
        kinds += [lambda: "[" + ", ".join(_value(rng, depth + 1) for _ in range(rng.randint(0, 4))) + "]",
                  lambda: "{ k = " + _value(rng, depth + 1) + " }"]
    return rng.choice(kinds)()


def _nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def _document(rng: random.Random) -> tuple[str, bytes]:
    """(file name, bytes) of one hostile config: mcp-sandbox.toml or a pyproject.toml with a hostile table."""
    key = rng.choice(("disable", "ignore", "disable", "ignore", "frobnicate", '"\u009b"', "tool"))
    value = _nested(rng.choice((50, 2_000, 10_000))) if rng.random() < 0.1 else _value(rng)
    body = f"{key} = {value}\n"
    if rng.random() < 0.3:
        slot = rng.choice(("[tool.mcp-sandbox]\n" + body, f"tool = {value}\n", f"[tool]\nmcp-sandbox = {value}\n"))
        return "pyproject.toml", ('[project]\nname = "x"\n' + slot).encode("utf-8", "surrogatepass")
    return "mcp-sandbox.toml", body.encode("utf-8", "surrogatepass")


FIXED: list[tuple[str, bytes]] = [
    ("mcp-sandbox.toml", b""),
    ("mcp-sandbox.toml", b"\xff\xfe\x00disable = []"),
    ("mcp-sandbox.toml", bytes(range(256))),
    ("mcp-sandbox.toml", b"disable = [\x00]"),
    ("mcp-sandbox.toml", ("disable = " + _nested(10_000)).encode()),
    ("mcp-sandbox.toml", b'ignore = ["S7:' + b"x" * (MAX_CONFIG_BYTES + 1) + b'"]'),
    ("mcp-sandbox.toml", ("disable = [" + ", ".join(['"S1"'] * 20_000) + "]").encode()),
    ("mcp-sandbox.toml", b"disable = " + b"9" * 5_000),
    ("pyproject.toml", b'tool = "x"'),
    ("pyproject.toml", b"[tool]\nmcp-sandbox = 1"),
    ("pyproject.toml", b"[[tool.mcp-sandbox]]\ndisable = []"),
    ("pyproject.toml", b"[tool.mcp-sandbox]\ndisable = [1, 2]"),
    ("pyproject.toml", b"[tool.mcp-sandbox]\nignore = [[]]"),
    ("pyproject.toml", b'[tool.mcp-sandbox]\n"\xc2\x9b" = 1'),
]


def _cases() -> list[tuple[str, bytes]]:
    rng = random.Random(SEED)
    return FIXED + [_document(rng) for _ in range(CASES)]


def _assert_one_clean_line(message: str) -> None:
    assert "\n" not in message.strip() and not RAW_CONTROL.search(message), repr(message[:300])
    assert "Traceback" not in message and len(message) < 1_500, message[:300]


def test_every_hostile_config_loads_or_is_one_usage_error(tmp_path: Path) -> None:
    outcomes = {"loaded": 0, "refused": 0}
    for index, (name, data) in enumerate(_cases()):
        folder = tmp_path / str(index)
        folder.mkdir()
        (folder / name).write_bytes(data)
        for explicit in (True, False):
            try:
                config = load(folder / name) if explicit else load(cwd=folder)
            except UsageError as exc:
                _assert_one_clean_line(str(exc))
                outcomes["refused"] += 1
            else:
                assert isinstance(config, Config)
                assert all(isinstance(rule_id, str) for rule_id in config.disabled)
                outcomes["loaded"] += 1
    assert outcomes["loaded"] and outcomes["refused"] > CASES  # both branches exercised, most inputs hostile


@pytest.mark.parametrize("index", range(len(FIXED)))
def test_check_with_a_hostile_config_exits_2_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                             index: int) -> None:
    name, data = FIXED[index]
    (tmp_path / name).write_bytes(data)
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS))
    monkeypatch.chdir(tmp_path)
    for args in (("--config", name), ()):  # given, and discovered
        code, out, err = run_main(monkeypatch, capsys, "check", "tools.json", "-q", *args)
        if data == b"":
            assert code == 0 and err == "", err  # an empty config is a valid one
            continue
        assert code == 2 and out == "" and err.startswith("error: "), (args, code, err[:300])
        _assert_one_clean_line(err)
