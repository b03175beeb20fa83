"""Attestations: sign a lock and a report, verify signature then each file's digest, and fail on any 1-byte change
to any of the three files, naming which."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from scanner.lock import ProvenancePins, build_lock, write_lock
from scanner.report.model import AppliedPolicy, Finding, InstallInfo, Report, SandboxInfo, Score, TargetInfo
from scanner.signing import (Signer, VerificationFailed, attestation_path, load_private_key_file, load_public_key,
                             verify_attestation, write_attestation, write_keypair)
from scanner.signing.statement import PREDICATE_TYPE, package_subjects, purl
from tests.cli_helpers import run_cli

POLICY = AppliedPolicy(network_mode="none", read_only_rootfs=True, cap_drop=["ALL"], cap_add=[],
                       no_new_privileges=True, privileged=False, user="65534", pids_limit=64, memory_bytes=2**29,
                       memory_swap_bytes=2**29, nano_cpus=10**9, init=True, restart_policy="no", tmpfs={},
                       mounts=[], env_names=[], image="mcp-sandbox/install:1", image_id="sha256:" + "a" * 64)
PINS = ProvenancePins(ecosystem="npm", package="@scope/files", version="1.2.3",
                      integrity="sha512-" + base64.b64encode(bytes(range(64))).decode())


def sample_report() -> Report:
    return Report(
        target=TargetInfo(kind="npm", name="@scope/files", requested="npm:@scope/files@1.2.3", version="1.2.3",
                          ecosystem="npm"),
        verdict="review", score=Score(value=88, tokens=900, wasted_tokens=400),
        findings=[Finding(rule_id="S1", rule_name="short-description", severity="warning", category="ergonomics",
                          message="short"),
                  Finding(rule_id="S11", rule_name="dangerous-capability", severity="warning",
                          category="security", message="fs-write")],
        tools=[{"name": "write_file", "description": "Write a file in the workspace."}],
        install=InstallInfo(image="mcp-sandbox/install:1", image_id="sha256:" + "a" * 64,
                            runtime_image="mcp-sandbox/node:22", cached=False, command=["node", "x.js"]),
        sandbox=SandboxInfo(session="s", applied=POLICY),
    )


@pytest.fixture()
def signed(tmp_path: Path) -> dict[str, Path]:
    private, public, _ = write_keypair(tmp_path / "key", "ed25519")
    report = sample_report()
    lock = build_lock(report, provenance=PINS)
    lock_path, report_path = tmp_path / "mcp-sandbox.lock", tmp_path / "report.json"
    write_lock(lock, lock_path)
    report_path.write_text(report.model_dump_json(indent=2))
    envelope = write_attestation(Signer(load_private_key_file(private)), tmp_path / "scan.intoto.json",
                                 lock_path=lock_path, report_path=report_path, report=report, lock=lock,
                                 provenance=PINS)
    return {"envelope": envelope, "lockfile": lock_path, "report": report_path, "public": public,
            "private": private}


def statement_of(envelope: Path) -> dict[str, Any]:
    return json.loads(base64.b64decode(json.loads(envelope.read_text())["payload"]))


def test_statement_subjects_and_predicate(signed: dict[str, Path]) -> None:
    statement = statement_of(signed["envelope"])
    assert statement["_type"] == "https://in-toto.io/Statement/v1" and statement["predicateType"] == PREDICATE_TYPE
    by_role = {s["annotations"]["mcp-sandbox.role"]: s for s in statement["subject"]}
    assert by_role["package"] == {"name": "pkg:npm/%40scope/files@1.2.3",
                                  "digest": {"sha512": bytes(range(64)).hex()},
                                  "annotations": {"mcp-sandbox.role": "package"}}
    for role in ("lockfile", "report"):
        assert by_role[role]["digest"]["sha256"] == hashlib.sha256(signed[role].read_bytes()).hexdigest()
        assert by_role[role]["name"] == signed[role].name
    predicate = statement["predicate"]
    assert predicate["verdict"] == "review" and predicate["score"] == 88
    assert predicate["findings"] == {"error": 0, "warning": 2, "info": 0}
    assert predicate["sandbox_policy"]["network_mode"] == "none" and predicate["image_digest"] == "sha256:" + "a" * 64
    assert predicate["scanner"]["version"]


def test_purl_forms() -> None:
    assert purl("npm", "@scope/name", "1.0.0") == "pkg:npm/%40scope/name@1.0.0"
    assert purl("pypi", "MCP_Server.Git", "0.6") == "pkg:pypi/mcp-server.git@0.6"
    assert package_subjects(ProvenancePins(ecosystem="pypi", package="x")) == []  # no digest known: no subject


def test_pypi_package_subjects_are_one_per_installed_file() -> None:
    pins = ProvenancePins(ecosystem="pypi", package="mcp-server-git", version="0.6.2",
                          sha256={"mcp_server_git-0.6.2-py3-none-any.whl": "AB" * 32})
    assert [(s["name"], s["digest"]) for s in package_subjects(pins)] == [
        ("pkg:pypi/mcp-server-git@0.6.2?file_name=mcp_server_git-0.6.2-py3-none-any.whl", {"sha256": "ab" * 32})]


def test_sign_then_verify(signed: dict[str, Path]) -> None:
    result = verify_attestation(signed["envelope"], load_public_key(signed["public"]), {})
    assert result.ok and {c.role for c in result.checks} == {"lockfile", "report"}


def test_wrong_key_fails(signed: dict[str, Path], tmp_path: Path) -> None:
    _, other, _ = write_keypair(tmp_path / "other", "ecdsa-p256")
    with pytest.raises(VerificationFailed, match="no signature verifies"):
        verify_attestation(signed["envelope"], load_public_key(other), {})


def _flip(path: Path, index: int, bit: int) -> bytes:
    original = path.read_bytes()
    data = bytearray(original)
    data[index] ^= bit
    path.write_bytes(bytes(data))
    return original


@pytest.mark.parametrize("bit", [0x01, 0x20])
def test_every_one_byte_change_to_the_envelope_fails(signed: dict[str, Path], bit: int) -> None:
    key = load_public_key(signed["public"])
    size = signed["envelope"].stat().st_size
    for index in range(size):
        original = _flip(signed["envelope"], index, bit)
        with pytest.raises(VerificationFailed, match="envelope"):
            verify_attestation(signed["envelope"], key, {})
        signed["envelope"].write_bytes(original)
    assert verify_attestation(signed["envelope"], key, {}).ok


def test_newline_turned_into_carriage_return_fails(signed: dict[str, Path]) -> None:
    data = signed["envelope"].read_bytes()
    signed["envelope"].write_bytes(data.replace(b"\n", b"\r", 1))
    with pytest.raises(VerificationFailed, match="re-formatted"):
        verify_attestation(signed["envelope"], load_public_key(signed["public"]), {})


@pytest.mark.parametrize("role", ["lockfile", "report"])
def test_every_one_byte_change_to_a_signed_file_fails_naming_it(signed: dict[str, Path], role: str) -> None:
    key = load_public_key(signed["public"])
    path = signed[role]
    for index in range(0, path.stat().st_size, 7):
        original = _flip(path, index, 0x01)
        result = verify_attestation(signed["envelope"], key, {})
        assert [c.role for c in result.failures] == [role] and str(path) in result.failures[0].detail
        path.write_bytes(original)


def test_explicit_paths_and_missing_files(signed: dict[str, Path], tmp_path: Path) -> None:
    key = load_public_key(signed["public"])
    moved = tmp_path / "elsewhere.lock"
    signed["lockfile"].rename(moved)
    result = verify_attestation(signed["envelope"], key, {})
    assert [c.role for c in result.failures] == ["lockfile"] and "does not exist" in result.failures[0].detail
    assert verify_attestation(signed["envelope"], key, {"lockfile": moved}).ok


def test_a_file_the_envelope_does_not_sign_fails(tmp_path: Path) -> None:
    private, public, _ = write_keypair(tmp_path / "key", "ed25519")
    lock_path = tmp_path / "only.lock"
    write_lock(build_lock(sample_report()), lock_path)
    envelope = write_attestation(Signer(load_private_key_file(private)), attestation_path(lock_path),
                                 lock_path=lock_path)
    report_path = tmp_path / "report.json"
    report_path.write_text("{}")
    result = verify_attestation(envelope, load_public_key(public), {"report": report_path})
    assert [c.role for c in result.failures] == ["report"] and "signs no report" in result.failures[0].detail


def test_cli_verify_ok_and_tampered(signed: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(monkeypatch, capsys, "verify", signed["envelope"], "--key", signed["public"],
                        "--lock", signed["lockfile"], "--report", signed["report"])
    assert code == 0 and "verified with key" in out and "verdict review" in out
    _flip(signed["report"], 10, 0x01)
    code, out = run_cli(monkeypatch, capsys, "verify", signed["envelope"], "--key", signed["public"])
    assert code == 1 and "verification failed: report" in out and str(signed["report"]) in out


def test_cli_verify_wrong_key_and_user_errors(signed: dict[str, Path], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    _, other, _ = write_keypair(tmp_path / "other", "ed25519")
    code, out = run_cli(monkeypatch, capsys, "verify", signed["envelope"], "--key", other)
    assert code == 1 and "FAIL" in out and str(signed["envelope"]) in out
    code, out = run_cli(monkeypatch, capsys, "verify", tmp_path / "none.json", "--key", signed["public"])
    assert code == 2 and out.startswith("error:") and "does not exist" in out
    code, out = run_cli(monkeypatch, capsys, "verify", signed["envelope"], "--key", signed["private"])
    assert code == 2 and "is a private key" in out
    assert "PRIVATE KEY" not in out


def test_cli_verify_an_envelope_with_a_huge_number_is_a_failed_verification(
        signed: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """An integer past Python's 4,300-digit limit raised ValueError, not JSONDecodeError: exit 3 "internal error"."""
    envelope = tmp_path / "big.intoto.json"
    envelope.write_bytes(signed["envelope"].read_bytes()[:-2] + b', "n": ' + b"1" * 5000 + b"}\n")
    code, out = run_cli(monkeypatch, capsys, "verify", envelope, "--key", signed["public"])
    assert code == 1 and f"envelope {envelope}: not valid JSON" in out and "internal error" not in out


@pytest.mark.skipif(not Path("/proc/self/mem").is_file(), reason="needs Linux /proc")
def test_cli_verify_an_unreadable_file_is_one_line_never_an_internal_error(
        signed: dict[str, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that exists but cannot be read (here reading /proc/self/mem at 0 fails with EIO; for a user, EACCES)
    ended in exit 3 "internal error: OSError" wherever it was given."""
    unreadable = Path("/proc/self/mem")
    code, out = run_cli(monkeypatch, capsys, "verify", unreadable, "--key", signed["public"])
    assert code == 2 and f"cannot read envelope {unreadable}" in out and "internal error" not in out
    code, out = run_cli(monkeypatch, capsys, "verify", signed["envelope"], "--key", unreadable)
    assert code == 2 and f"cannot read public key {unreadable}" in out and "internal error" not in out
    code, out = run_cli(monkeypatch, capsys, "verify", signed["envelope"], "--key", signed["public"],
                        "--lock", unreadable)
    assert code == 1 and f"lockfile cannot read {unreadable}" in out and "internal error" not in out


def test_cli_keygen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(monkeypatch, capsys, "keygen", "--out", tmp_path / "ci", "--algorithm", "ecdsa-p256")
    assert code == 0 and "keyid" in out and "BEGIN" not in out
    assert (tmp_path / "ci").stat().st_mode & 0o777 == 0o600 and (tmp_path / "ci.pub").is_file()
    code, out = run_cli(monkeypatch, capsys, "keygen", "--out", tmp_path / "ci")
    assert code == 2 and "already exists" in out
    code, out = run_cli(monkeypatch, capsys, "keygen", "--out", tmp_path / "x", "--algorithm", "rsa")
    assert code == 2 and "--algorithm must be one of ed25519, ecdsa-p256" in out
