"""Shared helpers for the tests that run real containers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import docker

from sandbox import labels

REPO = Path(__file__).resolve().parent.parent
ZOO = REPO / "tests" / "servers" / "zoo"
CLI = [sys.executable, "-m", "scanner"]


def labelled_containers(client: docker.DockerClient, session: str | None = None) -> list[dict[str, Any]]:
    label = f"{labels.SESSION}={session}" if session else labels.SESSION
    return client.api.containers(all=True, filters={"label": label})


def run_cli(*args: str, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, **(env or {})})


def evidence_from_stderr(stderr: str) -> dict[str, Any]:
    for line in stderr.splitlines():
        if line.startswith("ZOO-EVIDENCE "):
            return json.loads(line[len("ZOO-EVIDENCE "):])
    raise AssertionError(f"the inspector reported no evidence; stderr was: {stderr[:500]!r}")
