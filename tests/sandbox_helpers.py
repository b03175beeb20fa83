"""Shared helpers for the tests that run real containers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import docker

from sandbox.core import labels

REPO = Path(__file__).resolve().parent.parent
ZOO = REPO / "tests" / "servers" / "zoo"
CLI = [sys.executable, "-m", "scanner"]


def labelled_containers(client: docker.DockerClient, session: str | None = None) -> list[dict[str, Any]]:
    label = f"{labels.SESSION}={session}" if session else labels.SESSION
    return client.api.containers(all=True, filters={"label": label})


def left_behind(client: docker.DockerClient, before: set[str]) -> set[str]:
    """The labelled containers made since `before` whose scanner process has ended: what a finished run left. Those
    of a scanner still running are its own (`make test` runs the tests that need no engine beside the Docker ones,
    and a `scan` there, even one refused for its flags, begins its sink before it reads them)."""
    return {c["Id"] for c in labelled_containers(client)
            if c["Id"] not in before and not labels.owner_alive(c["Labels"])}


def run_cli(*args: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, **(env or {})})


def run_python(source: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -c SOURCE` with this checkout importable, its output captured."""
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def evidence_from_stderr(stderr: str) -> dict[str, Any]:
    for line in stderr.splitlines():
        if line.startswith("ZOO-EVIDENCE "):
            return json.loads(line[len("ZOO-EVIDENCE "):])
    raise AssertionError(f"the inspector reported no evidence; stderr was: {stderr[:500]!r}")


HOST_CA = "/etc/ssl/certs/ca-certificates.crt"
PHONE_HOME = "phone-home.example.invalid"


def run_on_install_network(session: Any, proxy: Any, image: str, script: str) -> tuple[int, str, dict[str, Any]]:
    """A container on the install network only, configured like the install container (no capabilities, the host
    CA, the proxy's settings), running `script` with PHONE replaced by PHONE_HOME: (exit code, output, inspect)."""
    from sandbox.install.proxy import container as install_egress

    client = session.client
    settings = install_egress.install_network_settings(proxy)
    host_config = client.api.create_host_config(
        network_mode=settings["network_mode"], dns=settings["dns"], cap_drop=["ALL"],
        security_opt=["no-new-privileges"], binds={HOST_CA: {"bind": HOST_CA, "mode": "ro"}},
        tmpfs={"/tmp": "rw,nosuid,nodev,size=256m,mode=1777"})
    env = {"HOME": "/tmp", "NPM_CONFIG_CAFILE": HOST_CA, "NODE_EXTRA_CA_CERTS": HOST_CA, **settings["environment"]}
    container = session.create_container(
        "install", image=image, user="10001:10001", host_config=host_config,
        command=["env", *(f"{k}={v}" for k, v in env.items()), "sh", "-c", script.replace("PHONE", PHONE_HOME)])
    client.api.start(container)
    status = client.api.wait(container, timeout=300)
    output = client.api.logs(container, stdout=True, stderr=True).decode("utf-8", "replace")
    inspect = client.api.inspect_container(container)
    session.remove_container(container)
    return int(status["StatusCode"]), output, inspect
