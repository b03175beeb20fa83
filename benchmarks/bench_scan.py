"""What a sandboxed scan costs against the same server run bare: two paired figures, medians of alternating pairs.

    .venv/bin/python benchmarks/bench_scan.py [--pairs 5] [--only listing|probes] [--before DIR] [--p10-off]
                                              [--count-calls]

1. listing: a warm scan without probes (`scan pypi:mcp-server-time --no-probes`, the install cached) as a whole
   process, against `docker run --rm -i` of the same installed image answering initialize + tools/list (a plain
   stdio client written here), both timed from process start to exit. Goal: within 1.5x.
2. probes: a full warm scan of `npm:@modelcontextprotocol/server-filesystem -- /workspace` as a whole process,
   against the same tool calls (the ones that scan made, read from its JSON report) sent by the plain client to
   `docker run --rm -i` of the same installed image, unsandboxed: no sink, no snapshots, no seeding but the same
   workspace files on a bind mount. Goal: within 2x.

Each round runs the scan and the bare run back to back, the order alternating from round to round (rotating, with
`--before`); a warm-up scan by each side before the rounds installs (or reuses) its image, so no round pays for an
install. Nothing is cached between pairs that a first scan would not have: every scan makes its own sandbox, sink,
canaries and report.

`--p10-off` also times, in the listing's rounds, the same scan with a `--config` that disables P10 (its second server
is then not started: the stage is skipped by choice), the lever a user has who wants the fastest `--no-probes` scan.

`--before DIR` also times the scanner of another checkout (e.g. the base commit: `git archive BASE | tar -x -C DIR`),
with this checkout's virtualenv, in the same rounds: before and after under the same load, and prints the median of
the per-round differences with their quartiles (the machine's drift between rounds cancels in a round's difference).
Every figure also prints each side's CPU: the whole machine's busy core-seconds during the run (from /proc/stat: the
engine, the containers and the servers included), the scan process's own (its rusage), and the floor the first puts
under the wall time (core-seconds over the cores): a scan whose floor is over the goal cannot reach it on this machine
without spending less CPU, however its work is ordered.
`--count-calls` runs one warm scan of each figure in process and prints the Docker API calls it made, per phase and
per endpoint, and its phase table.
"""

from __future__ import annotations

import argparse
import contextvars
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox.core import labels  # noqa: E402 - from this checkout, after the path above

LISTING_TARGET = ["pypi:mcp-server-time"]
PROBES_TARGET = ["npm:@modelcontextprotocol/server-filesystem", "--", "/workspace"]
READ_TIMEOUT = 60.0


# ---- the scan as a whole process ---------------------------------------------------------------------------------

def scan_once(source: Path, target: list[str], probes: bool, report: Path, extra: tuple[str, ...] = ()) -> Spent:
    """One `mcp-sandbox scan` process (the report written to `report`; `extra`: more flags): its seconds, and the
    CPU seconds the process itself used (all its threads, from its rusage)."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    flags = [*extra] if probes else ["--no-probes", *extra]
    name, *rest = target
    command = [sys.executable, "-m", "scanner", "scan", name, *flags, "--json", str(report), "--fail-on", "never",
               "-q", *rest]
    with tempfile.TemporaryFile() as stderr:
        began = time.perf_counter()
        # cwd=source: `-m scanner` puts the working directory first on sys.path, ahead of PYTHONPATH, so run from
        # this checkout a `--before` scan would time this checkout's scanner again.
        process = subprocess.Popen(command, env=env, cwd=source, stdout=subprocess.DEVNULL, stderr=stderr,
                                   stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - began
        process.returncode = os.waitstatus_to_exitcode(status)
        if not report.is_file():
            stderr.seek(0)
            raise SystemExit(f"the scan wrote no report (exit {process.returncode}): "
                             f"{stderr.read().decode(errors='replace')[-800:]}")
    return Spent(seconds, usage.ru_utime + usage.ru_stime)


# ---- the bare baseline: a plain stdio client against docker run -i ------------------------------------------------

class BareServer:
    """`docker run --rm -i` of the installed image with its launch command; JSON-RPC lines over stdin/stdout."""

    def __init__(self, image: str, command: list[str], workspace: Path | None) -> None:
        mount = ["-v", f"{workspace}:/workspace", "--user", "10002:10002", "-w", "/workspace"] if workspace else []
        self.stderr = tempfile.TemporaryFile()
        # Owned by this live process: an image installed before its session labels were cleared on commit still
        # names the install's dead session, and the gc sweep of a --before checkout (one from before the sweep
        # took only what a session named) would remove the container as that session's leftover.
        owned = labels.session_labels(f"bench-bare-{uuid.uuid4().hex[:12]}", "bench")
        unowned = [word for key, value in owned.items() for word in ("--label", f"{key}={value}")]
        self.process = subprocess.Popen(["docker", "run", "--rm", "-i", *unowned, *mount, "--entrypoint", "", image,
                                         *command],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, **({"params": params} if params else {})})
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.stderr.seek(0)
                said = self.stderr.read().decode(errors="replace")[-800:]
                failed = BareStartFailed if method == "initialize" else SystemExit
                raise failed(f"the bare server closed its stdout before answering {method} (docker exit "
                             f"{self.process.poll()}): {said}")
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == self.next_id:
                return message

    def notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=READ_TIMEOUT)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()


def bare_once(image: str, command: list[str], calls: list[dict[str, Any]], workspace: Path | None) -> Spent:
    """Seconds from `docker run` to its exit: initialize, tools/list, then each call in order, then EOF. A run whose
    server ended before answering initialize (seen on a machine under load 15+: the container gone at once) is
    said on stderr and run again, up to twice; its time is not counted."""
    for _ in range(2):
        try:
            return Spent(_bare_run(image, command, calls, workspace))
        except BareStartFailed as exc:
            print(f"bare run retried: {exc}", file=sys.stderr, flush=True)
    return Spent(_bare_run(image, command, calls, workspace))


class BareStartFailed(SystemExit):
    pass


def _bare_run(image: str, command: list[str], calls: list[dict[str, Any]], workspace: Path | None) -> float:
    began = time.perf_counter()
    server = BareServer(image, command, workspace)
    server.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "bench", "version": "1"}})
    server.notify("notifications/initialized")
    server.request("tools/list")
    for call in calls:
        server.request("tools/call", {"name": call["tool"], "arguments": call.get("arguments") or {}})
    server.close()
    return time.perf_counter() - began


def workspace_copy(directory: Path) -> Path:
    """The scan's workspace seed, extracted afresh for one bare run's bind mount (owned by the run uid, as in the
    scan): the calls write, move and delete, and each scan starts from a fresh seed too."""
    from sandbox.run.policy import RUN_GID, RUN_UID
    from sandbox.run.workspace_seed import build_workspace_seed

    seed = build_workspace_seed(RUN_UID, RUN_GID)
    target = Path(tempfile.mkdtemp(prefix="workspace-", dir=directory))
    with tarfile.open(fileobj=io.BytesIO(seed.archive)) as tar:
        tar.extractall(target, filter="fully_trusted")
    os.chown(target, RUN_UID, RUN_GID)
    return target


# ---- pairs --------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Spent:
    """One timed action: its wall seconds, and the CPU seconds of the scan's own process (None: a bare run, whose
    client is this benchmark)."""

    seconds: float
    own_cpu: float | None = None


@dataclass(frozen=True)
class Sample:
    """One action in one round: what it spent, and the whole machine's busy core-seconds meanwhile (None where
    /proc/stat cannot be read): every process's share, the engine's and the containers' included."""

    spent: Spent
    machine_cpu: float | None


def busy_core_seconds() -> float | None:
    """The machine's CPU time spent busy so far (every core; idle and I/O wait left out), from /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(value) for value in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def sampled(action: Callable[[], Spent]) -> Sample:
    before = busy_core_seconds()
    spent = action()
    after = busy_core_seconds()
    return Sample(spent, None if before is None or after is None else after - before)


def rounds(pairs: int, actions: dict[str, Callable[[], Spent]]) -> dict[str, list[Sample]]:
    """Each action's sample in each of `pairs` rounds, the order rotating from round to round."""
    samples: dict[str, list[Sample]] = {name: [] for name in actions}
    names = list(actions)
    for index in range(pairs):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(sampled(actions[name]))
    return samples


def figure(name: str, goal: float, samples: dict[str, list[Sample]], pairs: int) -> None:
    """Each action's median against the bare run's; with a `before` side, the change per round as well (this
    round's scan minus this round's before: the machine's drift between rounds cancels, so it resolves smaller
    effects than two medians do). Then each action's CPU: the machine's busy core-seconds (median), the scan
    process's own, and the floor they put under the wall time: no run on this machine's cores ends sooner than its
    core-seconds spread over all of them."""
    seconds = {label: [sample.spent.seconds for sample in values] for label, values in samples.items()}
    medians = {label: statistics.median(values) for label, values in seconds.items()}
    bare = medians["bare"]
    for label in (label for label in medians if label != "bare"):
        ratio = medians[label] / bare
        print(f"{name}: {label} {medians[label]:.2f} s, bare {bare:.2f} s, ratio {ratio:.2f}x (goal {goal:g}x; "
              f"medians of {pairs} rounds, order rotating){'' if ratio <= goal else '  -- over the goal'}", flush=True)
    if "before" in seconds and pairs >= 2:
        print(f"{name}: scan minus before, per round: {paired_change(seconds['scan'], seconds['before'])}", flush=True)
    for label, values in samples.items():
        print(f"{name}: {label} CPU {cpu_line(values, bare)}", flush=True)


def cpu_line(samples: list[Sample], bare_seconds: float) -> str:
    machine = [sample.machine_cpu for sample in samples if sample.machine_cpu is not None]
    own = [sample.spent.own_cpu for sample in samples if sample.spent.own_cpu is not None]
    if not machine:
        return "unavailable (no /proc/stat)"
    cores = os.cpu_count() or 1
    busy = statistics.median(machine)
    floor = busy / cores
    text = f"{busy:.2f} core-s machine-wide (floor {floor:.2f} s on {cores} cores, {floor / bare_seconds:.2f}x bare)"
    if own:
        text += f", of which the scan process {statistics.median(own):.2f}"
    return text


def paired_change(after: list[float], before: list[float]) -> str:
    """The median of the per-round differences, with their quartiles."""
    differences = [a - b for a, b in zip(after, before)]
    low, _, high = statistics.quantiles(differences, n=4, method="inclusive")
    return f"median {statistics.median(differences):+.3f} s (quartiles {low:+.3f} to {high:+.3f} s)"


def scans(sources: dict[str, Path], target: list[str], probes: bool, work: Path) -> dict[str, Callable[[], Spent]]:
    return {label: (lambda source=source, label=label: scan_once(source, target, probes, work / f"{label}.json"))
            for label, source in sources.items()}


def p10_off_config(work: Path) -> Path:
    """A config, for --config, that disables P10 (its second server is then not started)."""
    config = work / "p10-off.toml"
    config.write_text('disable = ["P10"]\n', encoding="utf-8")
    return config


def p10_off(source: Path, work: Path) -> Callable[[], Spent]:
    """The listing scan with a config, given with --config, that disables P10."""
    config = p10_off_config(work)
    return lambda: scan_once(source, LISTING_TARGET, False, work / "p10-off.json", ("--config", str(config)))


def listing_figure(sources: dict[str, Path], pairs: int, work: Path, *, with_p10_off: bool = False) -> None:
    report = warm_up(sources, LISTING_TARGET, False, work)
    image, command = report["install"]["image"], report["install"]["command"]
    print(f"listing: {' '.join(LISTING_TARGET)} as {image}; phases of the warm-up scan: {phases(report)}", flush=True)
    actions = {**scans(sources, LISTING_TARGET, False, work), "bare": lambda: bare_once(image, command, [], None)}
    if with_p10_off:
        actions["scan, P10 off by --config"] = p10_off(sources["scan"], work)
    figure("listing (warm, --no-probes)", 1.5, rounds(pairs, actions), pairs)


def probes_figure(sources: dict[str, Path], pairs: int, work: Path) -> None:
    report = warm_up(sources, PROBES_TARGET, True, work)
    image, command = report["install"]["image"], report["install"]["command"]
    calls = [{"tool": probe["tool"], "arguments": probe.get("arguments")} for probe in report.get("probes") or []
             if probe.get("status") != "not_probed"]
    print(f"probes: {' '.join(PROBES_TARGET)} as {image}, {len(calls)} calls; phases of the warm-up scan: "
          f"{phases(report)}", flush=True)
    actions = {**scans(sources, PROBES_TARGET, True, work),
               "bare": lambda: bare_once(image, command, calls, workspace_copy(work))}
    figure("probes (warm, full scan)", 2.0, rounds(pairs, actions), pairs)


def warm_up(sources: dict[str, Path], target: list[str], probes: bool, work: Path) -> dict[str, Any]:
    """One scan by each side before the rounds, so that no round pays for an install (a `--before` checkout whose
    installed images are keyed apart, another install format, installs its own here): this side's report."""
    for name, source in sources.items():
        scan_once(source, target, probes, work / f"warm-up-{name}.json")
    return json.loads((work / "warm-up-scan.json").read_text())


def phases(report: dict[str, Any]) -> str:
    timings = {name: value for name, value in (report.get("timings") or {}).items() if value}
    return ", ".join(f"{name} {value:.2f}" for name, value in timings.items()) or "(no phase table: an older scanner)"


# ---- Docker API calls per phase (in process) ----------------------------------------------------------------------

SECONDS: Counter[tuple[str, str]] = Counter()  # the seconds each (phase, endpoint) took, summed
_PHASE: contextvars.ContextVar[str] = contextvars.ContextVar("phase", default="(no phase: listing and probes)")


@contextmanager
def counting_calls() -> Iterator[Counter[tuple[str, str]]]:
    """Count every Docker API request by (phase, endpoint) while in the block."""
    from sandbox.core import engine
    from scanner.pipeline.phase_clock import PhaseClock

    counts: Counter[tuple[str, str]] = Counter()
    original_request, original_phase = engine.BoundedAPIClient.request, PhaseClock.phase

    def request(self: Any, method: Any, url: Any, *args: Any, **kwargs: Any) -> Any:
        key = (_PHASE.get(), engine.describe_call(method, url))
        counts[key] += 1
        began = time.perf_counter()
        try:
            return original_request(self, method, url, *args, **kwargs)
        finally:
            SECONDS[key] += time.perf_counter() - began

    @contextmanager
    def phase(self: Any, name: str) -> Iterator[None]:
        token = _PHASE.set(name)
        try:
            with original_phase(self, name):  # type: ignore[arg-type]
                yield
        finally:
            _PHASE.reset(token)

    engine.BoundedAPIClient.request, PhaseClock.phase = request, phase  # type: ignore[method-assign,assignment]
    try:
        yield counts
    finally:
        engine.BoundedAPIClient.request, PhaseClock.phase = original_request, original_phase  # type: ignore[method-assign]


@contextmanager
def timing_probe_steps() -> Iterator[Counter[str]]:
    """Seconds per step of the probe calls, summed: the call itself, the looks after it, the re-list (run beside the
    looks, so the steps overlap), and the whole call."""
    from scanner.probes import relister, runner

    spent: Counter[str] = Counter()
    originals = {"call (server answer)": (runner.ProbeRunner, "_send"),
                 "re-list (fetched beside the looks)": (relister, "fetch_tools"),
                 "looks (state, snapshot, top, drain; the re-list beside)": (runner, "look_after_call"),
                 "whole call (with the settle)": (runner.ProbeRunner, "_call")}
    saved = {name: getattr(owner, attribute) for name, (owner, attribute) in originals.items()}

    def timed(name: str, function: Any) -> Any:
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return await function(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - began
        return wrapper

    for name, (owner, attribute) in originals.items():
        setattr(owner, attribute, timed(name, saved[name]))
    try:
        yield spent
    finally:
        for name, (owner, attribute) in originals.items():
            setattr(owner, attribute, saved[name])


def count_calls(target: list[str], probes: bool) -> None:
    from scanner.pipeline.scan import ScanOptions, run_scan
    from scanner.probes.runner import ProbeOptions

    name, *rest = target
    options = ScanOptions(target=name, server_args=[arg for arg in rest if arg != "--"],
                          probes=ProbeOptions(enabled=probes))
    with counting_calls() as counts, timing_probe_steps() as steps:
        report = run_scan(options)
    per_phase: Counter[str] = Counter()
    for (phase, _), count in counts.items():
        per_phase[phase] += count
    calls = len(report.probes)
    print(f"\n{name} ({'probes' if probes else 'no probes'}): {sum(counts.values())} Docker API calls, {calls} probe "
          f"calls; phases: {phases(report.model_dump(mode='json'))}")
    for step, seconds in steps.items():
        print(f"  probe step {step}: {seconds:.2f} s in all, {seconds / max(calls, 1) * 1000:.0f} ms per call")
    for phase, count in per_phase.most_common():
        print(f"  {count:5d}  {phase}")
    for (phase, call), count in counts.most_common(14):
        print(f"  {count:5d}  {SECONDS[(phase, call)]:6.2f} s  {call}  [{phase}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--only", choices=("listing", "probes"))
    parser.add_argument("--source", type=Path, default=ROOT, help="the checkout whose scanner is timed")
    parser.add_argument("--before", type=Path, help="another checkout (e.g. the base commit) timed in the same rounds")
    parser.add_argument("--p10-off", action="store_true", help="also time the listing scan with P10 disabled by --config")
    parser.add_argument("--count-calls", action="store_true", help="count Docker API calls per phase, in process")
    args = parser.parse_args()
    # Bytecode as an installed CLI has it: with PYTHONDONTWRITEBYTECODE set (as some shells and CI set it), every scan
    # would compile its modules from source again, and a `--before` checkout, which no earlier run has compiled, paid
    # that in every round (about 0.3 s) where this checkout did not.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.count_calls:
        if args.only != "probes":
            count_calls(LISTING_TARGET, False)
        if args.only != "listing":
            count_calls(PROBES_TARGET, True)
        return
    sources = {"scan": args.source.resolve(), **({"before": args.before.resolve()} if args.before else {})}
    with tempfile.TemporaryDirectory(prefix="bench-scan-") as work:
        if args.only != "probes":
            listing_figure(sources, args.pairs, Path(work), with_p10_off=args.p10_off)
        if args.only != "listing":
            probes_figure(sources, args.pairs, Path(work))


if __name__ == "__main__":
    main()
