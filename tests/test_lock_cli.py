"""`mcp-sandbox lock`: write, --check, --fail-on, --json, --accept, --sign/--sign-env, --key, and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.signing import write_keypair
from tests.cli_helpers import run_cli

TOOLS: dict[str, Any] = {
    "tools": [{"name": "read_file", "description": "Read a file inside the workspace.",
               "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
               "annotations": {"readOnlyHint": True}}],
    "instructions": "Use read_file.",
}


@pytest.fixture()
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    return lambda *args: run_cli(monkeypatch, capsys, *args)


def write_tools(path: Path, edit: Any = None) -> Path:
    document = json.loads(json.dumps(TOOLS))
    if edit:
        edit(document)
    path.write_text(json.dumps(document))
    return path


def test_lock_then_unchanged_check_passes(tmp_path: Path, cli: Any) -> None:
    tools, lock = write_tools(tmp_path / "tools.json"), tmp_path / "mcp-sandbox.lock"
    code, out = cli("lock", "--from", tools, "--lock", lock)
    assert code == 0 and "wrote" in out and lock.is_file()
    code, out = cli("lock", "--check", "--from", tools, "--lock", lock)
    assert code == 0 and "no changes" in out


def test_default_lock_path_is_mcp_sandbox_lock(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli("lock", "--from", write_tools(tmp_path / "t.json"))[0] == 0
    assert (tmp_path / "mcp-sandbox.lock").is_file()


def test_check_exit_codes_follow_fail_on(tmp_path: Path, cli: Any) -> None:
    lock = tmp_path / "l.lock"
    cli("lock", "--from", write_tools(tmp_path / "t.json"), "--lock", lock)
    changed = write_tools(tmp_path / "t2.json", lambda d: d["tools"][0].update(description="Read any file at all."))
    code, out = cli("lock", "--check", "--from", changed, "--lock", lock)
    assert code == 1 and "description_changed" in out and "Read any file at all." in out
    assert cli("lock", "--check", "--from", changed, "--lock", lock, "--fail-on", "error")[0] == 1  # an error kind
    assert cli("lock", "--check", "--from", changed, "--lock", lock, "--fail-on", "never")[0] == 0
    riskier = write_tools(tmp_path / "t4.json", lambda d: d["tools"][0].update(annotations={"readOnlyHint": False}))
    assert cli("lock", "--check", "--from", riskier, "--lock", lock)[0] == 1
    assert cli("lock", "--check", "--from", riskier, "--lock", lock, "--fail-on", "error")[0] == 0
    info_only = write_tools(tmp_path / "t3.json", lambda d: d["tools"][0].update(_meta={"x": 1}))
    assert cli("lock", "--check", "--from", info_only, "--lock", lock)[0] == 0
    assert cli("lock", "--check", "--from", info_only, "--lock", lock, "--fail-on", "info")[0] == 1


def test_check_writes_changes_as_json(tmp_path: Path, cli: Any) -> None:
    lock, report = tmp_path / "l.lock", tmp_path / "changes.json"
    cli("lock", "--from", write_tools(tmp_path / "t.json"), "--lock", lock)
    renamed = write_tools(tmp_path / "t2.json", lambda d: d["tools"][0].update(name="read_any", description="\u202e"))
    code, _ = cli("lock", "--check", "--from", renamed, "--lock", lock, "--json", report)
    document = json.loads(report.read_text())
    assert code == 1 and document["failed"] is True and document["counts"] == {"error": 1, "warning": 0, "info": 1}
    assert sorted(c["kind"] for c in document["changes"]) == ["tool_added", "tool_removed"]
    assert any(f["rule_id"] == "S8" and f["tool"] == "read_any" for f in document["findings"])
    assert document["finding_counts"]["error"] >= 1
    report.read_bytes().decode("ascii")  # hidden characters are escaped in the JSON too


def test_hidden_characters_are_escaped_in_the_terminal(tmp_path: Path, cli: Any) -> None:
    lock = tmp_path / "l.lock"
    cli("lock", "--from", write_tools(tmp_path / "t.json"), "--lock", lock)
    hidden = write_tools(tmp_path / "t2.json", lambda d: d.update(instructions="ok\x1b[2J\u202e"))
    code, out = cli("lock", "--check", "--from", hidden, "--lock", lock)
    assert code == 1 and "\x1b" not in out and "\u202e" not in out and "\\u001b[2J\\u202e" in out


def test_refreshing_a_lock_with_error_changes_needs_accept(tmp_path: Path, cli: Any) -> None:
    lock, tools = tmp_path / "l.lock", write_tools(tmp_path / "t.json", lambda d: d["tools"][0].update(annotations={}))
    cli("lock", "--from", tools, "--lock", lock)
    before = lock.read_bytes()
    safer = write_tools(tmp_path / "t2.json", lambda d: d["tools"][0].update(annotations={"readOnlyHint": True}))
    code, out = cli("lock", "--from", safer, "--lock", lock)
    assert code == 1 and "annotations_changed" in out and "--accept" in out and lock.read_bytes() == before
    code, out = cli("lock", "--from", safer, "--lock", lock, "--accept")
    assert code == 0 and "annotations_changed" in out and lock.read_bytes() != before
    assert cli("lock", "--check", "--from", safer, "--lock", lock)[0] == 0


def test_refreshing_with_only_warnings_shows_them_and_writes(tmp_path: Path, cli: Any) -> None:
    lock = tmp_path / "l.lock"
    cli("lock", "--from", write_tools(tmp_path / "t.json"), "--lock", lock)
    riskier = write_tools(tmp_path / "t2.json", lambda d: d["tools"][0].update(annotations={"readOnlyHint": False}))
    code, out = cli("lock", "--from", riskier, "--lock", lock)
    assert code == 0 and "annotations_changed" in out and "WARNING" in out and "wrote" in out


def test_sign_then_check_with_key(tmp_path: Path, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    private, public, key_id = write_keypair(tmp_path / "k", "ed25519")
    tools, lock = write_tools(tmp_path / "t.json"), tmp_path / "l.lock"
    code, out = cli("lock", "--from", tools, "--lock", lock, "--sign", private)
    assert code == 0 and key_id in out and (tmp_path / "l.lock.intoto.json").is_file()
    assert "PRIVATE" not in out
    code, out = cli("lock", "--check", "--from", tools, "--lock", lock, "--key", public)
    assert code == 0 and "verified" in out
    monkeypatch.setenv("MCP_SANDBOX_TEST_SIGNING_KEY", private.read_text())
    assert cli("lock", "--from", tools, "--lock", lock, "--sign-env", "MCP_SANDBOX_TEST_SIGNING_KEY")[0] == 0
    assert cli("verify", tmp_path / "l.lock.intoto.json", "--key", public)[0] == 0


def test_check_with_key_refuses_a_tampered_or_unsigned_lock(tmp_path: Path, cli: Any) -> None:
    private, public, _ = write_keypair(tmp_path / "k", "ed25519")
    tools, lock = write_tools(tmp_path / "t.json"), tmp_path / "l.lock"
    cli("lock", "--from", tools, "--lock", lock, "--sign", private)
    data = bytearray(lock.read_bytes())
    data[-3] ^= 1
    lock.write_bytes(bytes(data))
    code, out = cli("lock", "--check", "--from", tools, "--lock", lock, "--key", public)
    assert code == 1 and "cannot be trusted" in out and str(lock) in out
    unsigned = tmp_path / "u.lock"
    cli("lock", "--from", tools, "--lock", unsigned)
    code, out = cli("lock", "--check", "--from", tools, "--lock", unsigned, "--key", public)
    assert code == 1 and "is not signed" in out


def test_refresh_without_sign_warns_that_the_old_envelope_is_stale(tmp_path: Path, cli: Any) -> None:
    private, _, _ = write_keypair(tmp_path / "k", "ed25519")
    lock = tmp_path / "l.lock"
    cli("lock", "--from", write_tools(tmp_path / "t.json"), "--lock", lock, "--sign", private)
    code, out = cli("lock", "--from", write_tools(tmp_path / "t2.json", lambda d: d.update(instructions="y")),
                    "--lock", lock, "--accept")
    assert code == 0 and "no longer matches" in out


@pytest.mark.parametrize("args,words", [
    (["lock", "npm:some-server", "--from", "{tools}"], "not both"),
    (["lock"], "give a TARGET to scan"),
    (["lock", "--from", "{missing}"], "does not exist"),
    (["lock", "--from", "{tools}", "--fail-on", "loud"], "--fail-on must be one of"),
    (["lock", "--check", "--from", "{tools}", "--accept"], "--check only compares"),
    (["lock", "--from", "{tools}", "--key", "{tools}"], "use it with --check"),
    (["lock", "--check", "--from", "{tools}", "--lock", "{missing}"], "no lock at"),
    (["lock", "--from", "{tools}", "--sign", "{missing}"], "does not exist"),
    (["lock", "--from", "{tools}", "--sign-env", "MCP_SANDBOX_SURELY_UNSET_VAR"], "is not set"),
    (["lock", "--from", "{tools}", "--sign", "{tools}", "--sign-env", "X"], "not both"),
    (["lock", "--from", "{bad}"], "not valid JSON"),
    (["lock", "--check", "--from", "{tools}", "--lock", "{bad}"], "not valid JSON"),
])
def test_user_errors_exit_2_with_one_line(tmp_path: Path, cli: Any, args: list[str], words: str) -> None:
    tools = write_tools(tmp_path / "t.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    paths = {"{tools}": str(tools), "{missing}": str(tmp_path / "missing"), "{bad}": str(bad)}
    code, out = cli(*[paths.get(a, a) for a in args])
    assert code == 2 and out.startswith("error:") and words in out and "Traceback" not in out


def test_a_failed_sign_leaves_no_lock_behind(tmp_path: Path, cli: Any) -> None:
    lock = tmp_path / "l.lock"
    assert cli("lock", "--from", write_tools(tmp_path / "t.json"), "--lock", lock, "--sign", tmp_path / "nokey")[0] == 2
    assert not lock.exists()


@pytest.mark.parametrize("outputs", [["--lock", "{lock}", "--json", "{key}"], ["--lock", "{stem}"]])
def test_no_output_of_a_signing_lock_overwrites_the_private_key(tmp_path: Path, cli: Any, outputs: list[str]) -> None:
    """`--sign KEY` was not counted as an input: `--json KEY` replaced the key with the changes JSON, and `--lock L`
    with `--sign L.intoto.json` with the envelope: the only copy of the signing key gone, exit 0."""
    private, _, _ = write_keypair(tmp_path / "ci.intoto.json", "ed25519")
    key = private.read_bytes()
    paths = {"{key}": str(private), "{stem}": str(tmp_path / "ci"), "{lock}": str(tmp_path / "l.lock")}
    code, out = cli("lock", "--from", write_tools(tmp_path / "t.json"), "--sign", private,
                    *[paths.get(a, a) for a in outputs])
    assert code == 2 and "it is an input of this command" in out
    assert private.read_bytes() == key


def test_check_with_key_verifies_before_scanning_a_live_target(tmp_path: Path, cli: Any) -> None:
    """The key was loaded and the envelope checked only after the live scan (minutes, an install in the sandbox):
    a mistyped --key or an unsigned lock was reported at the end. Now neither starts a scan (nothing here could)."""
    _, public, _ = write_keypair(tmp_path / "k", "ed25519")
    unsigned = tmp_path / "u.lock"
    cli("lock", "--from", write_tools(tmp_path / "t.json"), "--lock", unsigned)
    target = "npm:surely-not-a-package.invalid"
    code, out = cli("lock", "--check", target, "--lock", unsigned, "--key", tmp_path / "missing.pub")
    assert code == 2 and "public key" in out and "does not exist" in out
    code, out = cli("lock", "--check", target, "--lock", unsigned, "--key", public)
    assert code == 1 and "is not signed" in out and "cannot be trusted" in out


def test_check_reads_the_lock_before_scanning_a_live_target(tmp_path: Path, cli: Any) -> None:
    """A malformed lock was read after the live scan, so it failed only at the end (and the lock compared with a
    verified envelope was read again minutes after the check)."""
    bad = tmp_path / "bad.lock"
    bad.write_text("{oops")
    code, out = cli("lock", "--check", "npm:surely-not-a-package.invalid", "--lock", bad)
    assert code == 2 and f"lock {bad} is not valid JSON" in out


def test_the_changes_json_and_the_envelope_on_one_path_are_refused(tmp_path: Path, cli: Any) -> None:
    """`--json L.intoto.json` with `--sign`: the changes were written, then replaced by the envelope (exit 0)."""
    private, _, _ = write_keypair(tmp_path / "k", "ed25519")
    lock = tmp_path / "l.lock"
    code, out = cli("lock", "--from", write_tools(tmp_path / "t.json"), "--lock", lock, "--sign", private,
                    "--json", tmp_path / "l.lock.intoto.json")
    assert code == 2 and "would both be written to the same file" in out and not lock.exists()


def test_check_without_key_says_the_envelope_beside_the_lock_went_unchecked(tmp_path: Path, cli: Any) -> None:
    """A signed lock checked without --key was trusted without a word about its envelope (edited lock included)."""
    private, _, _ = write_keypair(tmp_path / "k", "ed25519")
    tools, lock = write_tools(tmp_path / "t.json"), tmp_path / "l.lock"
    assert cli("lock", "--from", tools, "--lock", lock)[0] == 0
    code, out = cli("lock", "--check", "--from", tools, "--lock", lock)
    assert code == 0 and "was not checked" not in out  # no envelope: nothing to say
    assert cli("lock", "--from", tools, "--lock", lock, "--sign", private)[0] == 0
    code, out = cli("lock", "--check", "--from", tools, "--lock", lock)
    assert code == 0 and "l.lock.intoto.json is beside the lock and was not checked; --key PUB verifies" in out
