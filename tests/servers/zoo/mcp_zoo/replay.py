"""zoo-replay-stall: a crash whose suspects cannot all be sent again (tests/test_crash_replay_live.py).

- `status` (read-only) answers;
- `stage_upload` (not read-only) answers, except as the first call a server gets: then it never answers (the loop
  blocks, so nothing else is answered either);
- `commit_upload` (not read-only) answers, and the server exits when the next call comes, before answering it;
- `list_uploads` (read-only) answers; `purge_uploads` (destructive) answers.

The probes call the read-only tools first and the destructive one last, so the server ends while `purge_uploads` is
out, with `commit_upload` and `stage_upload` answered just before: three suspects (`stage_upload` takes 0.3 s, so the
read-only calls' answers are older than the 250 ms a crash looks back: annotations or not, they would be suspects). Sent again to a fresh server, `stage_upload` goes first and hangs it, so the others are never
sent, and P6 can only name the likeliest and say so. Standard library only; nothing touches the network."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from mcp_zoo.protocol import Server, text_result, tool

READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
ADDS = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
STOPS = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
_calls: list[str] = []


def _counted(name: str, answer: Any) -> Any:
    def call(arguments: dict[str, Any]) -> Any:
        if "commit_upload" in _calls:
            os._exit(0)
        _calls.append(name)
        return answer(arguments)
    return call


def _stage(arguments: dict[str, Any]) -> dict[str, Any]:
    if len(_calls) == 1:  # this server's first call
        time.sleep(3600)
    time.sleep(0.3)  # so the read-only calls answered before it are out of the crash's 250 ms window: no suspects
    return text_result("staged")


def _commit(arguments: dict[str, Any]) -> dict[str, Any]:
    return text_result("committed; the worker stops")


def replay_stall() -> None:
    tools = [
        tool("status", "Say whether the upload worker is up.", annotations=READ_ONLY),
        tool("stage_upload", "Stage the pending files for the next upload.", annotations=ADDS),
        tool("commit_upload", "Commit the staged upload; the worker stops after answering.", annotations=ADDS),
        tool("list_uploads", "List the committed uploads.", annotations=READ_ONLY),
        tool("purge_uploads", "Delete every committed upload.", annotations=STOPS),
    ]
    Server("zoo-replay-stall", tools, calls={
        "status": _counted("status", lambda a: text_result("up")),
        "stage_upload": _counted("stage_upload", _stage),
        "commit_upload": _counted("commit_upload", _commit),
        "list_uploads": _counted("list_uploads", lambda a: text_result("no uploads")),
        "purge_uploads": _counted("purge_uploads", lambda a: text_result("purged")),
    }).serve()


def last_exit() -> None:
    """zoo-last-exit: `finish_job` (not read-only, probed last) answers after 0.3 s (so `status`'s answer is out of
    the crash's window), then the server exits 20 ms later, with no call left to find it gone."""
    def finish(arguments: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.3)
        threading.Timer(0.02, lambda: os._exit(0)).start()
        return text_result("finished; the worker stops")

    Server("zoo-last-exit", [tool("status", "Say whether the job worker is up.", annotations=READ_ONLY),
                             tool("finish_job", "Finish the current job; the worker stops after answering.",
                                  annotations=ADDS)],
           calls={"status": lambda a: text_result("up"), "finish_job": finish}).serve()
