"""The scan command as a user runs it: bad input, interruption, SIGKILL + gc, and real registry packages."""

from __future__ import annotations

import json
import signal
import subprocess
import time

import pytest

from tests.sandbox_helpers import CLI, REPO, ZOO, labelled_containers, run_cli

pytestmark = pytest.mark.docker


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("npm:Not_A_Valid_Name", "not a valid npm package name"),
        ("pypi:mcp>=1.0", "exact version"),
        ("./no/such/path", "neither a registry target nor an existing path"),
        ("tests", "no package.json or pyproject.toml"),
        # Unknown packages on the real registries: exit 2 before any container.
        pytest.param("pypi:mcp-sandbox-no-such-project-7f3a", "was not found", marks=pytest.mark.registry),
        pytest.param("npm:@modelcontextprotocol/server-everything@999.0.0", "has no version or tag '999.0.0'",
                     marks=pytest.mark.registry),
    ],
)
def test_bad_targets_exit_2_with_one_line(target, expected, docker_client, no_leftovers):
    result = run_cli("scan", target)
    assert result.returncode == 2
    assert expected in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "Traceback" not in result.stderr


def test_an_unwritable_report_path_is_refused_before_the_install(tmp_path, docker_client, no_leftovers):
    result = run_cli("scan", str(ZOO), "--command", "zoo-inspector", "--json", str(tmp_path / "missing" / "r.json"),
                     timeout=60)
    # "the folder … does not exist" is the check before the work; a failed write after a scan says "No such file".
    assert result.returncode == 2 and "cannot write the JSON report" in result.stderr
    assert "the folder" in result.stderr and "does not exist" in result.stderr
    assert result.stderr.strip().count("\n") == 0, result.stderr


def test_ambiguous_commands_are_listed(docker_client, no_leftovers):
    result = run_cli("scan", str(ZOO))
    assert result.returncode == 2
    assert "installs several commands; choose one with --command NAME: zoo-bad-answers, " in result.stderr
    assert " more" in result.stderr and result.stderr.strip().count("\n") == 0  # the zoo has over 20 commands


def _wait_for_run_container(docker_client, process: subprocess.Popen[str], timeout: float = 120) -> str:
    """The session of `process`'s own running server (never another scan's that happens to run too, nor a container
    a killed scanner left with the same pid: pids are reused, so only one created after `process` started)."""
    spawned = int(time.time()) - 1  # the engine's `Created` is whole seconds
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        running = [c for c in labelled_containers(docker_client)
                   if c["Labels"].get("io.mcp-sandbox.role") == "run" and c["State"] == "running"
                   and c["Labels"].get("io.mcp-sandbox.pid") == str(process.pid) and c["Created"] >= spawned]
        if running:
            return running[0]["Labels"]["io.mcp-sandbox.session"]
        time.sleep(0.2)
    raise AssertionError("the scan never started its server")


def _start_slow_scan() -> subprocess.Popen[str]:
    return subprocess.Popen([*CLI, "scan", str(ZOO), "--command", "zoo-slowlist", "--startup-timeout", "300"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_sigterm_mid_scan_tears_everything_down(docker_client):
    process = _start_slow_scan()
    session = _wait_for_run_container(docker_client, process)
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=60)
    assert process.returncode != 0
    assert labelled_containers(docker_client, session) == []


def test_sigint_mid_scan_tears_everything_down(docker_client):
    process = _start_slow_scan()
    session = _wait_for_run_container(docker_client, process)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    stderr = process.stderr.read()
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr
    assert labelled_containers(docker_client, session) == []


def test_sigkill_leaves_work_for_gc_only(docker_client):
    process = _start_slow_scan()
    session = _wait_for_run_container(docker_client, process)
    process.kill()
    process.wait(timeout=30)
    assert labelled_containers(docker_client, session) != []  # nothing could clean up...
    result = run_cli("gc")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("removed ")
    assert labelled_containers(docker_client, session) == []  # ...until gc (or another scan's sweep)


@pytest.mark.registry
def test_real_npm_server_end_to_end(tmp_path, docker_client, no_leftovers):
    out = tmp_path / "report.json"
    result = run_cli("scan", "npm:@modelcontextprotocol/server-everything", "--json", str(out), "--fail-on",
                     "never", "--", "stdio", timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["target"]["version"]
    assert report["server"]["name"] and report["server"]["protocol_version"]
    assert "echo" in {t["name"] for t in report["tools"]}
    assert report["prompts"] and report["resources"]
    assert report["sandbox"]["network"] == "observe"
    assert report["sandbox"]["applied"]["network_mode"].startswith("container:")  # the egress sink's namespace
    assert report["sandbox"]["teardown"]["complete"] is True
    assert report["install"]["command"][-1] == "stdio"
    package = report["provenance"]["packages"][0]
    outcomes = {c["name"]: c["outcome"] for c in package["checks"]}
    assert outcomes["integrity"] == "verified" and outcomes["installed-integrity"] == "verified"
    assert outcomes["registry-signature"] in ("verified", "unavailable")  # this network strips signatures
    assert report["provenance"]["dependency_tree"]["total"] > 10


@pytest.mark.registry
def test_real_pypi_server_end_to_end(tmp_path, docker_client, no_leftovers):
    out = tmp_path / "report.json"
    osv = tmp_path / "osv"
    osv.mkdir()
    (osv / "GHSA-test.json").write_text(json.dumps({"id": "GHSA-test", "summary": "every release", "affected": [
        {"package": {"ecosystem": "PyPI", "name": "mcp-server-time"},
         "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}]}]}]}))
    result = run_cli("scan", "pypi:mcp-server-time", "--json", str(out), "--fail-on", "never", "--advisories",
                     str(osv), timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(out.read_text())
    assert {"get_current_time", "convert_time"} <= {t["name"] for t in report["tools"]}
    outcomes = {c["name"]: c["outcome"] for c in report["provenance"]["packages"][0]["checks"]}
    assert outcomes["file-hashes"] == "verified" and outcomes["yanked"] == "verified"
    assert outcomes["advisories"] == "failed"
    tree = report["provenance"]["dependency_tree"]  # installed with --require-hashes from a compiled, hashed tree
    assert tree["total"] > 5 and all(d["integrity"].startswith("sha256:") for d in tree["dependencies"])
    assert [f["evidence"] for f in report["findings"] if f["rule_id"] == "I10"] == ["GHSA-test"]
    assert report["verdict"] in ("pass", "review", "block") and report["score"] is not None
    assert report["sandbox"]["teardown"]["complete"] is True


def test_known_bad_release_is_refused_before_any_container(tmp_path):
    out = tmp_path / "report.json"
    # No engine at all: a scan that tried to create anything would fail with exit 3, not finish with exit 1.
    result = run_cli("scan", "npm:postmark-mcp@1.0.16", "--json", str(out),
                     env={"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"})
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text())
    assert report["verdict"] == "block"
    assert [f["rule_id"] for f in report["findings"]] == ["I8"]
    assert report["sandbox"] is None and report["install"] is None


def test_an_install_script_phoning_home_is_refused_and_reported_as_i7(tmp_path, docker_client, no_leftovers):
    out = tmp_path / "report.json"
    result = run_cli("scan", str(REPO / "tests" / "servers" / "npm-phone-home"), "--no-probes", "--quiet",
                     "--json", str(out))
    assert result.returncode == 1, result.stderr
    report = json.loads(out.read_text())
    assert report["verdict"] == "block"
    egress = report["provenance"]["egress"]
    assert {"host": "phone-home.example.invalid", "allowed": False} in [
        {"host": e["host"], "allowed": e["allowed"]} for e in egress]
    i7 = [f for f in report["findings"] if f["rule_id"] == "I7"]
    assert [f["message"] for f in i7] == [
        "install script postinstall of mcp-zoo-phone-home@0.1.0 tried to reach phone-home.example.invalid (refused)"]
    assert {(e["package"], e["script"]) for e in egress if not e["allowed"]} == {
        ("mcp-zoo-phone-home@0.1.0", "postinstall")}
    assert any(f["rule_id"] == "I5" and "mcp-zoo-phone-home" in f["message"] for f in report["findings"])
    assert [t["name"] for t in report["tools"]] == ["ping_home"]


@pytest.mark.registry
def test_real_filesystem_server_is_probed_write_tools_included(tmp_path, docker_client, no_leftovers):
    out = tmp_path / "report.json"
    result = run_cli("scan", "npm:@modelcontextprotocol/server-filesystem", "--json", str(out), "--fail-on", "never",
                     "--quiet", "--", "/workspace", timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(out.read_text())
    write = next(p for p in report["probes"] if p["tool"] == "write_file" and p["label"] == "generated")
    assert write["status"] == "ok"  # the write tool really wrote, inside the throwaway workspace
    written = next(b for b in report["behavior"] if b["tool"] == "write_file" and b["label"] == "generated")
    assert written["files"]["created"] == [write["arguments"]["path"]]
    findings = {(f["rule_id"], f["tool"]) for f in report["findings"]}
    assert {("P1", "read_text_file"), ("P3", "read_text_file")} <= findings  # the 20,000-line read is caught
    assert not [f for f in report["findings"] if f["rule_id"].startswith("B")]  # honest annotations, nothing leaks
    assert all(b["egress"] == [] for b in report["behavior"])
    assert report["sandbox"]["teardown"]["complete"] is True


def test_what_to_do_comes_before_a_long_list_of_commands():
    """The error line is capped: --command comes first, then at most 20 names and how many more."""
    from sandbox.core.errors import UserInputError
    from scanner.pipeline.launch import choose_command

    many = {f"cmd-{index:02d}": f"/bin/cmd-{index:02d}" for index in range(45)}
    with pytest.raises(UserInputError) as raised:
        choose_command("pkg", many, None, [])
    message = str(raised.value)
    assert message.startswith("pkg installs several commands; choose one with --command NAME: cmd-00, cmd-01")
    assert message.endswith("cmd-19 and 25 more")
    two = {"a": "/bin/a", "b": "/bin/b"}
    with pytest.raises(UserInputError, match=r"--command NAME: a, b$"):
        choose_command("pkg", two, None, [])
