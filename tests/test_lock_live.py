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
