"""The sandbox's process tree, by role. The run container's PID 1 is docker-init; the server is its first child.
A process that is a child of init but not the server outlived the parent that started it (a double fork: the
orphan is reparented to init), so it is a daemon, and so is everything under it. The scanner's own looks (execs,
whose parent is outside the container) are left out."""

from __future__ import annotations

from sandbox.run.observe import Process
from sandbox.run.process_watch import ProcessTable
from scanner.report.model import ProcessSeen


def classify(table: ProcessTable) -> list[ProcessSeen]:
    """Every process of the server's tree and every daemon, with its role, in pid order (init itself left out)."""
    children: dict[int, list[Process]] = {}
    for process in table.processes:
        children.setdefault(process.ppid, []).append(process)
    under_init = sorted(children.get(table.init_pid, []) if table.init_pid is not None else [],
                        key=lambda p: p.pid)
    seen: list[ProcessSeen] = []
    for rank, top in enumerate(under_init):
        is_server = rank == 0
        seen.append(ProcessSeen(pid=top.pid, args=top.args, role="server" if is_server else "daemon"))
        seen.extend(ProcessSeen(pid=p.pid, args=p.args, role="server child" if is_server else "daemon")
                    for p in _descendants(top.pid, children))
    return sorted(seen, key=lambda p: p.pid)


def daemons(processes: list[ProcessSeen]) -> list[ProcessSeen]:
    return [process for process in processes if process.role == "daemon"]


def _descendants(pid: int, children: dict[int, list[Process]]) -> list[Process]:
    found: list[Process] = []
    stack = list(children.get(pid, []))
    seen = {pid}
    while stack:
        process = stack.pop()
        if process.pid in seen:
            continue
        seen.add(process.pid)
        found.append(process)
        stack.extend(children.get(process.pid, []))
    return found
