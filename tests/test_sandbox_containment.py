"""The sandbox, proven from inside: a zoo server reports what it sees, and the tests assert on that evidence."""

from __future__ import annotations

import os
import re

import pytest

from sandbox.run.canaries import ENV_CANARY_NAMES
from sandbox.run.policy import RunPolicy
from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from tests.sandbox_helpers import ZOO, evidence_from_stderr, labelled_containers

pytestmark = pytest.mark.docker

HOST_SECRET = "MCP_SANDBOX_TEST_HOST_SECRET"
VIRTUAL_FS = {"overlay", "proc", "tmpfs", "sysfs", "cgroup", "cgroup2", "mqueue", "devpts", "shm"}
# Files the engine itself bind-mounts (read-only init binary; per-container hostname/hosts/resolv.conf).
DOCKER_MANAGED = {"/etc/hosts", "/etc/hostname", "/etc/resolv.conf", "/usr/sbin/docker-init"}


@pytest.fixture(scope="module", params=["none", "observe"])
def inspected(request, docker_client):
    """The inspector's evidence in both network modes: every containment claim holds in each."""
    os.environ[HOST_SECRET] = "host-value-that-must-not-leak"
    try:
        report = run_scan(ScanOptions(target=str(ZOO), command="zoo-inspector", timeouts=Timeouts(startup=60),
                                      network=request.param))
    finally:
        del os.environ[HOST_SECRET]
    return report, evidence_from_stderr(report.sandbox.stderr)


def test_server_runs_as_the_unprivileged_run_user(inspected):
    _, seen = inspected
    assert (seen["uid"], seen["gid"], seen["euid"]) == (10002, 10002, 10002)


def test_no_capabilities_and_no_new_privileges(inspected):
    _, seen = inspected
    assert int(seen["cap_eff"], 16) == 0
    assert int(seen["cap_bnd"], 16) == 0
    assert seen["no_new_privs"] == "1"


def test_no_network_but_loopback(inspected):
    report, seen = inspected
    assert seen["interfaces"] == ["lo"]
    if report.sandbox.network == "none":
        assert seen["dns_example_invalid"].startswith("error")
    else:  # the sink answered the lookup, logged it, and the scan reports it (B2)
        assert seen["dns_example_invalid"] == "resolved"
        assert any(f.rule_id == "B2" and "sandbox-check.example.invalid" in f.message for f in report.findings)


def test_environment_is_only_what_the_sandbox_sets(inspected):
    _, seen = inspected
    # Besides these, only the probe phase's canaries (fresh fake secrets, never the host's values).
    assert set(seen["env"]) <= {"PATH", "HOME", "LANG", "HOSTNAME", "USER", "LOGNAME", "SHELL", *ENV_CANARY_NAMES}
    assert all(seen["env"][name] != os.environ.get(name) for name in ENV_CANARY_NAMES if name in seen["env"])
    assert HOST_SECRET not in seen["env"]
    assert seen["env"]["HOME"] == "/home/mcp"


def test_no_docker_socket_and_no_host_mounts(inspected):
    _, seen = inspected
    assert seen["docker_socket"] is False
    host_backed = [m.split()[1] for m in seen["mounts"] if m.split()[2] not in VIRTUAL_FS]
    assert set(host_backed) <= DOCKER_MANAGED, host_backed


def test_root_and_code_are_read_only_scratch_is_writable(inspected):
    _, seen = inspected
    writable = seen["writable"]
    for path in ("/", "/opt/server", "/opt/server/venv/lib", "/usr", "/etc", "/var/tmp"):
        assert writable[path] is False, path
    for path in ("/home/mcp", "/tmp", "/workspace"):
        assert writable[path] is True, path


def test_scratch_areas_are_noexec_tmpfs(inspected):
    _, seen = inspected
    mounts = {m.split()[1]: m.split() for m in seen["mounts"]}
    for path in ("/tmp", "/home/mcp", "/workspace"):
        device, mountpoint, fstype, options = mounts[path][:4]
        assert fstype == "tmpfs", path
        assert {"noexec", "nosuid", "nodev"} <= set(options.split(",")), path


def test_resource_limits_are_visible_inside(inspected):
    _, seen = inspected
    assert int(seen["memory_limit"]) == 512 * 1024 * 1024
    assert seen["pids_limit"] == "128"
    assert int(seen["cpu_quota"].split()[0]) == 100_000  # 1 CPU at the default 100 ms period
    assert "docker-init" in seen["pid1"]


def test_the_host_name_is_a_plausible_machine_name_not_the_container_id(inspected):
    _, seen = inspected
    hostname = seen["hostname"]
    assert re.fullmatch(r"[a-z]+-[a-z]+", hostname), hostname  # e.g. lena-thinkpad (observe: the sink's, the same)
    assert not re.search(r"sandbox|scan|probe|mcp", hostname)  # nor Docker's default: 12 hex digits, no hyphen
    assert seen["env"].get("HOSTNAME") == hostname


def test_report_records_policy_as_applied_and_teardown(inspected, docker_client):
    report, _ = inspected
    applied = report.sandbox.applied
    if report.sandbox.network == "none":
        assert applied.network_mode == "none"
    else:  # the sink's namespace: no interface but lo, every route via lo
        assert applied.network_mode.startswith("container:")
    assert applied.read_only_rootfs and applied.no_new_privileges and applied.init
    assert applied.cap_drop == ["ALL"] and applied.cap_add == []
    assert applied.user == "10002:10002"
    assert applied.mounts == []
    assert applied.memory_bytes == applied.memory_swap_bytes == 512 * 1024 * 1024
    assert report.sandbox.teardown.complete is True
    assert labelled_containers(docker_client, report.sandbox.session) == []
    assert [t["name"] for t in report.tools] == ["echo_text"]


def test_the_start_gate_passes_every_variable_on_as_it_was_set(docker_client):
    """A probing scan's server starts behind the start gate's shell (sandbox/run/start_gate.py). dash drops a variable
    whose name is no shell name (a client config's `spring.profiles.active`, passed with --pass-config-env) and
    replaces the ones it sets itself (IFS, OPTIND, PPID, PWD): the server saw neither as set, where an ungated server
    (probing off) did. The gate sets them again on its way to the server."""
    env = {"spring.profiles.active": "dev", "MY-FLAG": "1", "-lead": "2", "IFS": "x", "OPTIND": "9", "PPID": "7",
           "PWD": "/workspace/projects", "PLAIN": "3"}
    report = run_scan(ScanOptions(target=str(ZOO), command="zoo-inspector", timeouts=Timeouts(startup=60),
                                  network="none", policy=RunPolicy(env=env)))
    assert report.sandbox.applied is not None and report.sandbox.teardown.complete
    seen = evidence_from_stderr(report.sandbox.stderr)
    assert {name: seen["env"].get(name) for name in env} == env
    assert "OLDPWD" not in seen["env"] and report.probes, report.skipped  # gated: probing ran
