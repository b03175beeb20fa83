"""Headless Chromium (Debian's `chromium`, installed by scripts/ensure-chromium.sh) driven over the DevTools protocol
on a pipe (`--remote-debugging-pipe`: JSON messages separated by NUL on fds 3 and 4), so the browser tests need no
websocket client and open no port. One page per browser; the events it sends (network requests, console, CSP
reports) are kept for the test to read.

The browser runs with its own throw-away profile and `--no-sandbox` (the tests run as root, where Chromium's own
sandbox refuses to start); it only ever loads the files the test wrote."""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
         "--disable-gpu", "--disable-extensions", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-default-apps", "--mute-audio")
TIMEOUT_SECONDS = 60.0
BROWSERS = ("chromium", "chromium-browser", "google-chrome")  # as scripts/ensure-chromium.sh looks for them


class DevToolsError(AssertionError):
    pass


class Page:
    """One tab: `call` a DevTools method and get its result; `events` holds every event received so far."""

    def __init__(self, process: subprocess.Popen[bytes], commands: int, replies: int) -> None:
        self._process, self._commands, self._replies = process, commands, replies
        self._buffer = b""
        self._next_id = 0
        self._session: str | None = None
        self.events: list[dict[str, Any]] = []

    def attach(self) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        self._session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                  browser=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            self.call(f"{domain}.enable")

    def call(self, method: str, params: dict[str, Any] | None = None, *, browser: bool = False) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if not browser:
            message["sessionId"] = self._session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        reply = self._until(lambda m: m.get("id") == self._next_id, f"the reply to {method}")
        if "error" in reply:
            raise DevToolsError(f"{method}: {reply['error']}")
        return dict(reply.get("result", {}))

    def wait_event(self, method: str, timeout: float = TIMEOUT_SECONDS) -> dict[str, Any]:
        """The first event `method` received from now on (or already kept and not yet waited for)."""
        for event in self.events:
            if event.get("method") == method and not event.get("_seen"):
                event["_seen"] = True
                return event
        event = self._until(lambda m: m.get("method") == method, method, timeout)
        event["_seen"] = True
        return event

    def evaluate(self, expression: str) -> Any:
        """The value of a page expression (promises awaited); a page exception is a test failure."""
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise DevToolsError(f"page exception: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, x: float, y: float) -> None:
        """A real mouse click (press and release) at page coordinates."""
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def _until(self, wanted: Any, what: str, timeout: float = TIMEOUT_SECONDS) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "method" in message:
                    self.events.append(message)
                if wanted(message):
                    return dict(message)
            left = deadline - time.monotonic()
            if left <= 0 or self._process.poll() is not None:
                raise DevToolsError(f"no {what} from chromium within {timeout:.0f} s (exit {self._process.poll()})")
            ready, _, _ = select.select([self._replies], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self._replies, 1 << 16)
                if not chunk:
                    raise DevToolsError(f"chromium closed the DevTools pipe waiting for {what}")
                self._buffer += chunk


def _high(fd: int) -> int:
    """The same pipe end at fd >= 10 (so moving it to 3 or 4 in the child cannot clobber the other end)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


@contextmanager
def chromium_page(profile: Path) -> Iterator[Page]:
    """A headless Chromium with one attached tab; the browser is killed at the end."""
    binary = next(filter(None, map(shutil.which, BROWSERS)), None)
    assert binary, "chromium is not installed (scripts/ensure-chromium.sh installs Debian's package)"
    child_reads, commands = (_high(fd) for fd in os.pipe())
    replies, child_writes = (_high(fd) for fd in os.pipe())

    def pipes_to_3_and_4() -> None:
        os.dup2(child_reads, 3)
        os.dup2(child_writes, 4)

    profile.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen([binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=(profile / "chromium.log").open("wb"), close_fds=False,
                               preexec_fn=pipes_to_3_and_4)
    os.close(child_reads)
    os.close(child_writes)
    try:
        page = Page(process, commands, replies)
        page.attach()
        yield page
    finally:
        process.kill()
        process.wait()
        os.close(commands)
        os.close(replies)
