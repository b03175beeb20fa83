"""A real redis-server on a free loopback port (its own data directory, killed at the end) and real
`mcp-sandbox worker` processes on it, for the distributed-batch tests."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.sandbox_helpers import CLI, REPO


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _stop(process: subprocess.Popen[bytes], grace: float) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def redis_server(data: Path) -> Iterator[str]:
    """Yield the URL of a fresh redis-server; the server is killed (and its data dropped) at the end."""
    import redis

    binary = shutil.which("redis-server")
    assert binary, "redis-server is not installed (scripts/ensure-redis.sh installs Debian's package)"
    data.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data),
                                "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
                               stdout=(data / "redis.log").open("wb"), stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(url, socket_timeout=1).ping()
                break
            except redis.ConnectionError:
                assert process.poll() is None and time.monotonic() < deadline, (data / "redis.log").read_text()
                time.sleep(0.1)
        yield url
    finally:
        _stop(process, 5)


def start_worker(url: str, log: Path, *options: str) -> subprocess.Popen[bytes]:
    """One `mcp-sandbox worker` in a process group of its own (a test can kill it whole, as a host is lost)."""
    return subprocess.Popen([*CLI, "worker", "--broker", url, "--loglevel", "INFO", *options], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=log.open("wb"), start_new_session=True)


def wait_for_workers(url: str, processes: list[subprocess.Popen[bytes]], logs: Path, timeout: float = 90) -> None:
    """Until as many workers as `processes` answer a ping."""
    from scanner.batch.worker import celery_app

    control = celery_app(url).control
    deadline = time.monotonic() + timeout
    while len(control.ping(timeout=1.0) or []) < len(processes):
        assert all(p.poll() is None for p in processes), _logs(logs)
        assert time.monotonic() < deadline, "the workers did not answer in time\n" + _logs(logs)


@contextmanager
def workers(url: str, logs: Path, count: int = 2, timeout: float = 90,
            options: tuple[str, ...] = ()) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Start `count` workers on the broker and wait until each answers a ping; stopped (warm shutdown) at the end."""
    logs.mkdir(parents=True, exist_ok=True)
    processes = [start_worker(url, logs / f"worker{i}.log", *options) for i in range(count)]
    try:
        wait_for_workers(url, processes, logs, timeout)
        yield processes
    finally:
        for process in processes:
            _stop(process, 60)


def _logs(logs: Path) -> str:
    return "\n".join(f"{p.name}: {p.read_text(errors='replace')[-2000:]}" for p in sorted(logs.glob("*.log")))
