"""The install as steps the host runs one at a time (`docker exec`) in an idle install container, so that the host —
never anything inside — decides where one step ends and the next begins (sandbox/install_windows.py).

The container's own process is an idle `sleep` under docker-init, running as a different user than the install
(uid 10002, not 10001). After every step the host runs `kill -KILL -1` as the install user: that ends every process
the step left behind (a daemonised phone-home cannot run on into the next package's step and be blamed on it), and
cannot touch the idle process, so the container lives on for the next step and for `docker commit`.

A step's output goes to a file in the container's /tmp (a tmpfs, never committed) and its tail is read back after the
step; it is the installer's output, shown to the user, and never used to attribute anything.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from docker.errors import APIError, NotFound

from sandbox.archive import read_member
from sandbox.errors import SandboxError
from sandbox.install_windows import engine_time

STEP_LOG = "/tmp/mcp-sandbox-step.log"
IDLE_COMMAND = ["sleep", "infinity"]
POLL_FIRST_SECONDS = 0.01
POLL_MAX_SECONDS = 0.1


class StepTimeout(SandboxError):
    """The install's deadline passed while a step was running."""


@dataclass(frozen=True)
class StepResult:
    exit_code: int
    output: str  # the tail of what the step printed (untrusted: shown, never interpreted)


class StepRunner:
    """Runs commands in the started install container as `user`, with `environment` passed through `env` on the
    command line (like the one-shot install did: nothing reaches the container's config, so `docker commit` cannot
    carry proxy variables into the installed image), all before `deadline` (time.monotonic())."""

    def __init__(self, api: Any, container_id: str, *, user: str, environment: dict[str, str], deadline: float,
                 workdir: str = "/opt/server", tail_chars: int = 8_000) -> None:
        self.api = api
        self.container_id = container_id
        self.user = user
        self.environment = environment
        self.deadline = deadline
        self.workdir = workdir
        self.tail_chars = tail_chars

    def run(self, command: list[str]) -> StepResult:
        """Run one step to its end, then end whatever it left running; raises StepTimeout at the deadline."""
        wrapped = ["env", *(f"{k}={v}" for k, v in self.environment.items()),
                   "sh", "-c", f'exec "$@" > {STEP_LOG} 2>&1 < /dev/null', "mcp-sandbox-step", *command]
        exec_id = self._exec_create(wrapped)
        self._call(self.api.exec_start, exec_id, detach=True)
        exit_code = self._wait(exec_id)
        output = self._finish()
        return StepResult(exit_code, output)

    def read_file(self, path: str, max_bytes: int = 64 * 1024 * 1024) -> bytes | None:
        """A file of the container's filesystem (not its tmpfs mounts) through the engine's archive API; None when
        it does not exist."""
        try:
            stream, _ = self.api.get_archive(self.container_id, path)
            return read_member(stream, max_bytes=max_bytes)
        except (NotFound, FileNotFoundError):
            return None
        except ValueError as exc:  # larger than max_bytes
            raise SandboxError(f"{path} in the install container is too large to read: {exc}") from None

    def read_tmp_file(self, path: str, max_bytes: int) -> bytes:
        """A file on the container's tmpfs (which the archive API cannot see), by `head -c` as the install user; only
        between steps, when nothing else of the install runs."""
        exec_id = self._exec_create(["head", "-c", str(max_bytes), "--", path])
        return bytes(self._call(self.api.exec_start, exec_id, demux=True)[0] or b"")

    def engine_now(self) -> float:
        """The engine's clock, the one squid, dnsmasq and the log timestamps use (host clock as a fallback: the same
        kernel unless the engine is remote)."""
        info = self._call(self.api.info)
        return engine_time(str(info.get("SystemTime", ""))) or time.time()

    def _wait(self, exec_id: str) -> int:
        pause = POLL_FIRST_SECONDS
        while True:
            state = self._call(self.api.exec_inspect, exec_id)
            if not state.get("Running"):
                code = state.get("ExitCode")
                return int(code) if code is not None else -1
            if time.monotonic() >= self.deadline:
                raise StepTimeout("the install step did not finish before the deadline")
            time.sleep(min(pause, max(0.0, self.deadline - time.monotonic())))
            pause = min(pause * 1.5, POLL_MAX_SECONDS)

    def _finish(self) -> str:
        """End every process of the install user (the idle process is another user's), then read the step's tail."""
        script = f"kill -KILL -1 2>/dev/null; tail -c {self.tail_chars} {STEP_LOG} 2>/dev/null"
        exec_id = self._exec_create(["sh", "-c", script])
        output = self._call(self.api.exec_start, exec_id)
        return bytes(output or b"").decode("utf-8", errors="replace")

    def _exec_create(self, command: list[str]) -> str:
        created = self._call(self.api.exec_create, self.container_id, command, user=self.user, workdir=self.workdir,
                             stdout=True, stderr=True)
        return str(created["Id"])

    def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except APIError as exc:  # the container stopped (out of memory) or vanished
            raise SandboxError(f"the install container stopped responding: {exc.explanation or exc}") from None
