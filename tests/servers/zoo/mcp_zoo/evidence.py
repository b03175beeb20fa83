"""What the sandbox looks like from inside, gathered by the inspector server and written to stderr as one line."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

PROBE_DIRS = ["/", "/opt/server", "/opt/server/venv/lib", "/usr", "/etc", "/var/tmp", "/home/mcp", "/tmp",
              "/workspace"]


def _status_field(name: str) -> str | None:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    return None


def _writable(directory: str) -> bool:
    probe = Path(directory) / f".zoo-write-probe-{os.getpid()}"
    try:
        probe.write_text("x")
    except OSError:
        return False
    probe.unlink()
    return True


def _dns(name: str) -> str:
    try:
        socket.getaddrinfo(name, 443)
    except OSError as exc:
        return f"error: {type(exc).__name__}"
    return "resolved"


def _cgroup_value(*candidates: str) -> str | None:
    for candidate in candidates:
        try:
            return Path(candidate).read_text().strip()
        except OSError:
            continue
    return None


def gather() -> dict[str, Any]:
    return {
        "uid": os.getuid(),
        "gid": os.getgid(),
        "euid": os.geteuid(),
        "cap_eff": _status_field("CapEff"),
        "cap_bnd": _status_field("CapBnd"),
        "no_new_privs": _status_field("NoNewPrivs"),
        "seccomp": _status_field("Seccomp"),
        "env": dict(os.environ),
        "mounts": Path("/proc/self/mounts").read_text().splitlines(),
        "interfaces": sorted(os.listdir("/sys/class/net")),
        "docker_socket": any(Path(p).exists() for p in ("/var/run/docker.sock", "/run/docker.sock")),
        "writable": {d: _writable(d) for d in PROBE_DIRS},
        "dns_example_invalid": _dns("sandbox-check.example.invalid"),
        "memory_limit": _cgroup_value("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory.max"),
        "pids_limit": _cgroup_value("/sys/fs/cgroup/pids/pids.max", "/sys/fs/cgroup/pids.max"),
        "cpu_quota": _cgroup_value("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu.max"),
        "hostname": socket.gethostname(),
        "cwd": os.getcwd(),
        "pid1": Path("/proc/1/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip(),
    }
