"""Lock and sign a live scan, then detect a changed server on a later run (rug pull) — real containers."""

from __future__ import annotations

import json

import pytest

from tests.sandbox_helpers import ZOO, run_cli

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    folder = tmp_path_factory.mktemp("locked")
    assert run_cli("keygen", "--out", str(folder / "key")).returncode == 0
    result = run_cli("scan", str(ZOO), "--command", "zoo-plain", "--quiet", "--json", str(folder / "report.json"),
                     "--lock", str(folder / "server.lock"), "--sign", str(folder / "key"))
    assert result.returncode == 0, result.stderr
    return folder


def test_scan_writes_a_signed_lock_and_report_that_verify(locked):
    lock = json.loads((locked / "server.lock").read_text())
    assert [t["name"] for t in lock["tools"]] == ["echo_text"]
    assert (locked / "server.lock").read_bytes().isascii()
    result = run_cli("verify", str(locked / "report.json.intoto.json"), "--key", str(locked / "key.pub"),
                     "--report", str(locked / "report.json"), "--lock", str(locked / "server.lock"))
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_one_byte_change_to_the_report_fails_verification(locked, tmp_path):
    tampered = tmp_path / "report.json"
    data = bytearray((locked / "report.json").read_bytes())
    data[len(data) // 2] ^= 0x01
    tampered.write_bytes(bytes(data))
    result = run_cli("verify", str(locked / "report.json.intoto.json"), "--key", str(locked / "key.pub"),
                     "--report", str(tampered))
    assert result.returncode == 1
    assert "report" in result.stdout + result.stderr


def test_an_unchanged_server_matches_its_lock(locked):
    result = run_cli("lock", "--check", str(ZOO), "--command", "zoo-plain", "--lock", str(locked / "server.lock"),
                     "--key", str(locked / "key.pub"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no changes" in result.stdout


def test_a_server_serving_other_tools_is_caught(locked, tmp_path):
    changes = tmp_path / "changes.json"
    result = run_cli("lock", "--check", str(ZOO), "--command", "zoo-paged", "--lock", str(locked / "server.lock"),
                     "--json", str(changes))
    assert result.returncode == 1, result.stdout + result.stderr
    kinds = {c["kind"] for c in json.loads(changes.read_text())["changes"]}
    assert {"tool_removed", "tool_added"} <= kinds


def test_a_refused_lock_refresh_still_signs_the_new_report_without_the_old_lock(locked, tmp_path):
    """`scan --lock --sign` of a server that now serves other tools: the refresh is refused (exit 1) and the report
    was left unsigned, beside the earlier run's envelope (signing the old report) and with no word about it."""
    for name in ("key", "key.pub", "server.lock", "server.lock.intoto.json", "report.json", "report.json.intoto.json"):
        (tmp_path / name).write_bytes((locked / name).read_bytes())
    (tmp_path / "key").chmod(0o600)
    result = run_cli("scan", str(ZOO), "--command", "zoo-paged", "--quiet", "--json", str(tmp_path / "report.json"),
                     "--lock", str(tmp_path / "server.lock"), "--sign", str(tmp_path / "key"))
    assert result.returncode == 1 and "lock not updated" in result.stderr, result.stderr
    assert (tmp_path / "server.lock").read_bytes() == (locked / "server.lock").read_bytes()
    assert "not the lock" in result.stderr
    verified = run_cli("verify", str(tmp_path / "report.json.intoto.json"), "--key", str(tmp_path / "key.pub"))
    assert verified.returncode == 0 and "ok    report" in verified.stdout and "lockfile" not in verified.stdout, (
        verified.stdout)


def test_a_refused_lock_refresh_ends_with_the_exit_line(locked, tmp_path):
    """`scan --lock` whose refresh was refused exited 1 before the scan's last line was written: no `exit 1: …` said
    why, and a scan that did not complete exited 1 rather than 3 (exit_reason.decide now weighs the refusal)."""
    (tmp_path / "server.lock").write_bytes((locked / "server.lock").read_bytes())
    result = run_cli("scan", str(ZOO), "--command", "zoo-paged", "--no-probes", "--lock", str(tmp_path / "server.lock"))
    assert result.returncode == 1 and "lock not updated" in result.stderr, result.stderr
    assert result.stderr.strip().splitlines()[-1] == ("exit 1: the lock was not updated (error-level changes; review "
                                                      "them and re-run with --accept)")
