"""A well-meaning zoo server that does each thing real servers were wrongly blamed for (tests/test_precision_live.py):

- at start-up it looks up its update host (a start-up B2 error, once, though every restarted server does it again),
  creates its store at `$ZOO_STORE_FILE` and its own directory `~/.zoo-precision/`;
- `recall` (read-only) appends to its call log in `~/.zoo-precision/`: tool state, a B1 info;
- `remember` (non-destructive) rewrites the store to append a note: tool state, no B1;
- `show_log` (read-only) keeps a long-lived `cat` helper as its own child, as GitPython keeps `git cat-file --batch`:
  a B5 info;
- `export_notes` (not read-only, like `remember` called just before it) exits before answering: P6 names it, not
  `remember`;
- `shutdown_worker` answers, then the server exits 20 ms later: P6 names it, not the next call;
- `kill_process` signals the pid it is given: with the pid the probes generate, nothing; with 1, the container's
  init, which forwards the signal to the server.

Every name is under `.invalid`; nothing else touches the network.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from mcp_zoo.protocol import Server, text_result, tool

UPDATE_HOST = "updates.zoo-precision.invalid"
HOME = Path(os.environ.get("HOME", "/home/mcp"))
OWN_DIR = HOME / ".zoo-precision"
READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
ADDS = {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False}
STOPS = {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": False}
_helpers: list[subprocess.Popen[bytes]] = []


def _store() -> Path:
    return Path(os.environ.get("ZOO_STORE_FILE", str(HOME / "zoo-store.json")))


def _recall(arguments: dict[str, Any]) -> dict[str, Any]:
    with (OWN_DIR / "calls.jsonl").open("a", encoding="utf-8") as log:
        log.write(json.dumps({"tool": "recall", "at": time.time()}) + "\n")
    return text_result("notes: " + ", ".join(json.loads(_store().read_text(encoding="utf-8"))))


def _remember(arguments: dict[str, Any]) -> dict[str, Any]:
    notes = json.loads(_store().read_text(encoding="utf-8"))
    notes.append(str(arguments.get("note", "")))
    _store().write_text(json.dumps(notes), encoding="utf-8")  # the whole store rewritten to append one note
    return text_result(f"{len(notes)} notes")


def _show_log(arguments: dict[str, Any]) -> dict[str, Any]:
    if not _helpers:
        _helpers.append(subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL))
    return text_result("log: 3 entries")


def _export(arguments: dict[str, Any]) -> dict[str, Any]:
    os._exit(3)  # at once, before any answer


def _shutdown(arguments: dict[str, Any]) -> dict[str, Any]:
    threading.Timer(0.02, lambda: os._exit(0)).start()  # after the reply, before the next call
    return text_result("worker stopping")


def _kill(arguments: dict[str, Any]) -> dict[str, Any]:
    pid = arguments.get("pid")
    if not isinstance(pid, int):
        return text_result("Argument 'pid' must be an integer process id.", True)
    try:
        os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError, OverflowError, ValueError) as exc:
        return text_result(f"Could not signal process {pid}: {exc.__class__.__name__}", True)
    return text_result(f"Successfully terminated process {pid}")


def precision() -> None:
    try:
        socket.getaddrinfo(UPDATE_HOST, 443, type=socket.SOCK_STREAM)
    except OSError:
        pass
    OWN_DIR.mkdir(exist_ok=True)
    (OWN_DIR / "config.json").write_text('{"telemetry": false}', encoding="utf-8")
    if not _store().exists():
        _store().write_text("[]", encoding="utf-8")
    tools = [
        tool("recall", "Return every note kept in the store, oldest first.", annotations=READ_ONLY),
        tool("show_log", "Show the last entries of the worker's log.", annotations=READ_ONLY),
        tool("remember", "Add one note to the store; never removes notes.", {"note": {"type": "string"}},
             annotations=ADDS, required=["note"]),
        tool("export_notes", "Write every note to the export file.", annotations=ADDS),
        tool("shutdown_worker", "Stop the worker; the server goes away after answering.", annotations=STOPS),
        tool("kill_process", "Terminate the process with the given pid.", {"pid": {"type": "integer"}},
             annotations=STOPS, required=["pid"]),
    ]
    for definition in tools:
        required = definition.pop("required", None)
        if required:
            definition["inputSchema"]["required"] = required
    Server("zoo-precision", tools, calls={"recall": _recall, "remember": _remember, "show_log": _show_log,
                                          "export_notes": _export, "shutdown_worker": _shutdown,
                                          "kill_process": _kill}).serve()
