"""Each crash class the fuzzing of issue 11 found, as its own case: refused with one line (exit 2), or accepted and
shown escaped; an internal error exits 3 with one line; no C1 control reaches any output raw."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from scanner.provenance.client_config import strip_jsonc
from sandbox.core.untrusted import escape_json_text
from tests.cli_helpers import run_main

TOOL = {"name": "read_note", "description": "Read one note by its id.",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Any:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MCP_SANDBOX_DEBUG", raising=False)
    return lambda *args: run_main(monkeypatch, capsys, *args)


def _one_error_line(err: str, *phrases: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for phrase in phrases:
        assert phrase in lines[0]
    assert "Traceback" not in err


def _outputs(tmp_path: Path) -> list[str]:
    return ["--json", str(tmp_path / "r.json"), "--sarif", str(tmp_path / "r.sarif"), "--markdown",
            str(tmp_path / "r.md"), "--github-annotations"]


def _files(tmp_path: Path) -> dict[str, str]:
    return {p.name: p.read_bytes().decode("utf-8") for p in tmp_path.glob("r.*")}


@pytest.mark.parametrize("command", [["check"], ["lock", "--lock", "x.lock", "--from"]])
def test_an_integer_too_long_to_convert_is_one_line(cli: Any, tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "t.json").write_text('{"tools": [{"name": "a", "inputSchema": {"maximum": %s}}]}' % ("9" * 5000))
    code, _, err = cli(*command, "t.json")
    assert code == 2
    _one_error_line(err, "t.json is not valid JSON: a number has more than 4,300 digits")


def test_check_config_refuses_long_integers_and_deep_nesting_in_one_line(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "long.json").write_text('{"mcpServers": {"a": {"command": "npx", "args": [%s]}}}' % ("9" * 5000))
    (tmp_path / "deep.json").write_text('{"mcpServers": {"a": ' + '{"x": ' * 10_000 + "1" + "}" * 10_001 + "}")
    (tmp_path / "deep_jsonc.json").write_text('// c\n{"mcpServers": ' + "[" * 600 + "]" * 600 + ",}")
    for name, phrase in (("long.json", "more than 4,300 digits"), ("deep.json", "nested too deeply"),
                         ("deep_jsonc.json", "nested too deeply")):
        code, _, err = cli("check-config", name)
        assert code == 2, name
        _one_error_line(err, f"client config {name}", phrase)


def test_a_json_syntax_error_names_its_place_once(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('{"tools": [{"name": "a\x01"}]}')
    code, _, err = cli("check", "t.json")
    assert code == 2
    _one_error_line(err, "Invalid control character at line 1 column")


def test_check_config_reads_past_wrong_types_in_its_slots(cli: Any, tmp_path: Path) -> None:
    """`projects` a list, a project's settings null, its `mcpServers` a number: those hold no servers; the servers
    that are there are still linted (before: AttributeError)."""
    config = {"mcpServers": {"ok": {"command": "npx", "args": ["left-pad"]}},
              "projects": [1, 2]}
    (tmp_path / "a.json").write_text(json.dumps(config))
    (tmp_path / "b.json").write_text(json.dumps({"projects": {"/p": None, "/q": {"mcpServers": 5},
                                                               "/r": {"mcpServers": {"s": {"command": ["npx"]}}}}}))
    code, out, err = cli("check-config", "a.json", "b.json")
    assert code == 0, err
    assert "a.json (mcp-json): 1 server(s)" in out and "left-pad" in out
    assert "b.json (claude-code): 1 server(s)" in out and "Unreadable server entry" in out


def test_a_lone_surrogate_is_data_shown_escaped_in_every_output(cli: Any, tmp_path: Path) -> None:
    tool = dict(TOOL, name="read\\ud800", description="Reads \\udfff one note by its id.")
    (tmp_path / "t.json").write_text(json.dumps({"tools": [tool]}).replace("\\\\u", "\\u"))
    code, out, err = cli("check", "t.json", *_outputs(tmp_path))
    assert code in (0, 1) and "Traceback" not in err
    assert "read\\ud800" in out
    files = _files(tmp_path)
    assert set(files) == {"r.json", "r.sarif", "r.md"}
    assert json.loads(files["r.json"])["tools"][0]["name"] == "read\\ud800"  # the escape's text, as data
    code, _, err = cli("lock", "--from", "t.json", "--lock", "t.lock")
    assert code == 0, err
    assert json.loads((tmp_path / "t.lock").read_text())["tools"][0]["name"] == "read\\ud800"


def test_check_config_shows_a_lone_surrogate_escaped(cli: Any, tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text('{"mcpServers": {"a\\ud800": {"command": "npx", "args": ["x\\udc00"]}}}')
    code, out, err = cli("check-config", "c.json", *_outputs(tmp_path))
    assert code in (0, 1), err
    assert "a\\ud800" in out
    assert len(_files(tmp_path)) == 3


def test_an_internal_error_exits_3_with_one_line(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug is not a finding: never exit 1, never a traceback; MCP_SANDBOX_DEBUG=1 lets the traceback through."""
    import scanner.cli.check as check

    def broken(*_: Any, **__: Any) -> None:
        raise RuntimeError("the rules fell over")

    monkeypatch.setattr(check, "build_report", broken)
    (tmp_path / "t.json").write_text(json.dumps({"tools": [TOOL]}))
    code, _, err = cli("check", "t.json")
    assert code == 3
    _one_error_line(err, "error: internal error: RuntimeError: the rules fell over (please report this")
    monkeypatch.setenv("MCP_SANDBOX_DEBUG", "1")
    with pytest.raises(RuntimeError, match="the rules fell over"):
        cli("check", "t.json")


C1 = "\u009b31m\u0085\u009d0;t\u009c"


def _c1_free(where: str, text: str) -> None:
    found = [f"U+{ord(c):04X}" for c in text if 0x80 <= ord(c) <= 0x9F]
    assert not found, f"raw C1 {found[:5]} in {where}"


def test_no_c1_control_reaches_any_output_of_check(cli: Any, tmp_path: Path) -> None:
    tool = {"name": "t" + C1, "title": C1, "description": "Reads a note" + C1 + " by id.",
            "inputSchema": {"type": "object", "properties": {"q" + C1: {"type": "string", "description": C1}}},
            "annotations": {"title": C1}}
    document = {"tools": [tool], "instructions": "Use" + C1, "serverInfo": {"name": "s" + C1, "version": C1},
                "prompts": [{"name": "p" + C1, "description": C1}]}
    (tmp_path / "t.json").write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    code, out, err = cli("check", "t.json", *_outputs(tmp_path))
    assert code in (0, 1), err
    for where, text in {"stdout": out, "stderr": err, **_files(tmp_path)}.items():
        _c1_free(where, text)
    assert "\\u009b" in _files(tmp_path)["r.json"] and "\\x9b" in out  # shown, as an escape


def test_no_c1_control_reaches_any_output_of_check_config(cli: Any, tmp_path: Path) -> None:
    config = {"mcpServers": {"s" + C1: {"command": "docker", "args": ["run", "--", "img" + C1 + ":latest"]},
                             "n" + C1: {"command": "npx", "args": ["pkg" + C1 + "@latest"]}}}
    (tmp_path / "c.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    code, out, err = cli("check-config", "c.json", *_outputs(tmp_path))
    assert code in (0, 1), err
    for where, text in {"stdout": out, "stderr": err, **_files(tmp_path)}.items():
        _c1_free(where, text)


@pytest.mark.parametrize("value", ["\u009b[2J", "a\u202eb\u2066", "\u2028\u2029", "\ud800x\udfff",
                                   "tag\U000e0041\U000e007f", "del\x7f", "é 漢字 😀 ✓"])
def test_json_text_escapes_read_back_to_the_same_value(value: str) -> None:
    document = {value: [value, {"k": value}]}
    text = escape_json_text(json.dumps(document, ensure_ascii=False, indent=2))
    assert json.loads(text) == document
    text.encode("utf-8")  # always writable
    assert not [c for c in text if 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF or c in "\u202e\u2066"]
    if value.startswith("é"):
        assert value in text  # printable Unicode stays readable


def test_jsonc_stripping_is_linear_on_hostile_text() -> None:
    """Every quote once (the old stripper rescanned from each one); a few MB in well under a second or two."""
    hostile = ['"' + '\\"' * 1_000_000, '"' * 2_000_000, "/*" * 1_000_000, "," * 2_000_000 + "]",
               '{"a": "' + "x" * 5_000_000 + '"}']
    for text in hostile:
        started = time.monotonic()
        strip_jsonc(text)
        assert time.monotonic() - started < 3, text[:20]
    assert json.loads(strip_jsonc('{"a": "x // y /* z */", /* c */ "b": [1, 2,], // e\n}')) == {
        "a": "x // y /* z */", "b": [1, 2]}
