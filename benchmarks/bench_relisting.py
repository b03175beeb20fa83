"""What the second listing (P10, scanner/pipeline/relisting.py) costs, and what the cheaper way would have cost.

    .venv/bin/python benchmarks/bench_relisting.py [--target tests/servers/zoo --command zoo-cloaker] [--repeat 5]

Paired in one run, medians over `--repeat`: one scan installs the target (or reuses its cached image); then, with a
first server running in the sandbox (network mode "none"), each round times
  container: what the scan does: a fresh run container from the installed image, seeded like the first, listed
             under the alternate client identity, removed;
  exec:      a second server process started with `docker exec` in the first container, listed the same way.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox.core import engine  # noqa: E402
from sandbox.core.session import SandboxSession  # noqa: E402
from sandbox.run import server as run  # noqa: E402
from sandbox.run.attach import AttachedStdio  # noqa: E402
from sandbox.run.policy import WORKSPACE, RunPolicy  # noqa: E402
from scanner.pipeline.client_identity import ALTERNATE  # noqa: E402
from scanner.pipeline.inventory import Timeouts  # noqa: E402
from scanner.pipeline.relisting import list_as  # noqa: E402
from scanner.pipeline.scan import ScanOptions, run_scan  # noqa: E402
from scanner.probes.runner import ProbeOptions  # noqa: E402


def timed(action: Callable[[], int], repeat: int) -> tuple[float, int]:
    samples, tools = [], 0
    for _ in range(repeat):
        began = time.perf_counter()
        tools = action()
        samples.append(time.perf_counter() - began)
    return round(statistics.median(samples), 3), tools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", default="tests/servers/zoo")
    parser.add_argument("--command", default="zoo-cloaker", help="the launch command (\"\": the package's own)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    report = run_scan(ScanOptions(target=args.target, command=args.command or None, network="none",
                                  probes=ProbeOptions(enabled=False)))
    if report.install is None:
        raise SystemExit(f"the scan of {args.target} did not install: {report.errors}")
    image, command = report.install.image, report.install.command
    policy = RunPolicy()
    timeouts = Timeouts()
    session = SandboxSession(engine.connect())
    try:
        first = run.start_server(session, image, command, policy)

        def container() -> int:
            second = run.start_server(session, image, command, policy)
            try:
                listed = anyio.run(list_as, AttachedStdio(second.socket, stderr=second.stderr), ALTERNATE, timeouts)
            finally:
                run.close_attach(second)
                session.remove_container(second.container_id)
            return len(listed.tools)

        def exec_in_first() -> int:
            api = session.client.api
            exec_id = api.exec_create(first.container_id, command, stdin=True, stdout=True, stderr=True,
                                      user=policy.user, environment=policy.environment(), workdir=WORKSPACE)["Id"]
            sock = run._raw_socket(api.exec_start(exec_id, socket=True))
            stdio = AttachedStdio(sock)
            try:
                listed = anyio.run(list_as, stdio, ALTERNATE, timeouts)
            finally:
                sock.close()
            return len(listed.tools)

        container_s, container_tools = timed(container, args.repeat)
        exec_s, exec_tools = timed(exec_in_first, args.repeat)
    finally:
        session.teardown()
    print(f"{args.target} {args.command}: second listing, median of {args.repeat} (s)")
    print(f"  fresh container (the scan's way): {container_s:.3f}  ({container_tools} tools)")
    print(f"  docker exec in the first container: {exec_s:.3f}  ({exec_tools} tools)")
    print(json.dumps({"target": args.target, "command": args.command, "container": container_s, "exec": exec_s}))


if __name__ == "__main__":
    main()
