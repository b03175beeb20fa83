"""Where a cold scan's install goes, and how much of it is the registry's: paired medians of alternating cold scans.

    .venv/bin/python benchmarks/bench_cold.py [--pairs 3] [--before DIR] [--target pypi:mcp-server-time]

Each sample is one process that runs `run_scan` of the target without probes and without the install cache
(`--no-cache`: a fresh install every time; the installed image's tag is the cached one's, so it is replaced by an
equal one and nobody's cache is deleted), with timers around the install's own functions on its main thread:

- proxy: the install proxy's network and container, until squid and dnsmasq answer;
- container: the install container created and started, its processes and writable places listed;
- installer: the installer's commands themselves (uv/npm, as `docker exec`, from start to exit);
- between steps: what the host does around each step (ending leftovers, listing writes, removing the step's folders,
  the engine's clock, the lockfile reads);
- end+log+manifest: the install's end (a checkout before 2026-12-06 stops the container here; now a last check that
  nothing of it runs), reading the proxy's log once it has settled, reading the manifest;
- commit: `docker commit` of the installed tree;
- rest: the install's wall time less the above (what is left on the main thread: the removal of the install
  container, proxy and network when it is not done beside the scan, and glue).

The registry's share is measured beside it, after each scan, from this host and without any sandbox: the same
requests the install made, as fast as they can go (the resolution's index and metadata requests wave by wave, one wave
per level of the dependency tree, each wave in parallel; then the install's index pages and downloads, all in
parallel). That is the registry's latency and bytes over the wire; everything else of the install is the scanner's
(including the installer's own work: unpacking, copying, compiling bytecode). uv's own timing lines (Resolved,
Prepared, Installed, Bytecode compiled) are shown too.

`--before DIR` times a tree of another commit (`git archive da80d01 | tar -x -C DIR`) in the same rounds, with this
checkout's virtualenv, the order alternating, and prints the median of the per-round differences of `run_scan` and of
the install, with their quartiles (a round's own time also holds the registry replay, which the network varies).
The machine's load (`uptime`) is printed before and after: figures taken under load are not final.

What a cold install does not redo: the runtime image's writable places, which the write watch finds by walking the
whole image, are kept per image and container configuration (sandbox/install/kept_roots.py, in the user's state
folder, as a user's later installs keep them); only the first install of a runtime image on this machine walks it
(0.2 s for Python's; 0.13-0.32 s for Node's since it carries npm 10, 0.5-1.1 s before). Point MCP_SANDBOX_STATE_DIR
at an empty folder for every round to time that first install instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("proxy", "container", "installer", "between steps", "end+log+manifest", "commit", "rest")
UV_LINE = re.compile(r"^(Resolved|Prepared|Installed|Bytecode compiled) \d+ \w+ in ([\d.]+)(ms|s)$", re.M)
PYPI_SIMPLE = "https://pypi.org/simple/{name}/"
NPM_REGISTRY = "https://registry.npmjs.org/"
PARALLEL_REQUESTS = 16


# ---- the driver: one cold scan in this process, timed per install phase ----------------------------------------

class InstallTimers:
    """Seconds per install phase, summed over the main thread's calls of the install's functions."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.installed: Any = None

    def wrap(self, owner: Any, attribute: str, phase: str) -> None:
        original = getattr(owner, attribute)

        def timed(*args: Any, **kwargs: Any) -> Any:
            if threading.current_thread() is not threading.main_thread():
                return original(*args, **kwargs)
            began = time.monotonic()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[phase] += time.monotonic() - began
        setattr(owner, attribute, timed)

    def install(self) -> None:
        from sandbox.install import container, steps
        from sandbox.install.proxy import container as proxy

        for name in ("start_install_proxy", "launch_install_proxy"):  # whichever the install calls
            if hasattr(container, name):
                self.wrap(container, name, "proxy")
        if hasattr(proxy.InstallProxy, "wait_ready"):
            self.wrap(proxy.InstallProxy, "wait_ready", "proxy")
        self.wrap(container, "_create_install_container", "container")
        self.wrap(steps.StepRunner, "start", "container")
        self.wrap(steps.StepRunner, "_wait", "installer")
        for name in ("run", "engine_now", "read_file", "read_tmp_file"):
            self.wrap(steps.StepRunner, name, "between steps")  # run's own wait is taken back out below
        for name in ("_stopped_install", "_finished_install"):  # whichever the install calls
            if hasattr(container, name):
                self.wrap(container, name, "end+log+manifest")
        self.wrap(container, "_commit", "commit")
        original = container.install

        def install(*args: Any, **kwargs: Any) -> Any:
            began = time.monotonic()
            self.installed = original(*args, **kwargs)
            self.seconds["total"] = time.monotonic() - began
            return self.installed
        container.install = install  # scanner/pipeline/installation.py calls it through this module

    def phases(self) -> dict[str, float]:
        seconds = dict(self.seconds)
        seconds["between steps"] = seconds.get("between steps", 0.0) - seconds.get("installer", 0.0)
        seconds["rest"] = seconds.get("total", 0.0) - sum(seconds.get(p, 0.0) for p in PHASES if p != "rest")
        return {phase: round(seconds.get(phase, 0.0), 3) for phase in (*PHASES, "total")}


def drive(target: str, out: Path) -> None:
    timers = InstallTimers()
    timers.install()
    from scanner.pipeline.scan import ScanOptions, run_scan
    from scanner.probes.runner import ProbeOptions

    began = time.monotonic()
    report = run_scan(ScanOptions(target=target, use_cache=False, probes=ProbeOptions(enabled=False)))
    scan_seconds = time.monotonic() - began
    installed = timers.installed
    output = installed.installer_output if installed is not None else ""
    uv = {kind: float(value) / (1000 if unit == "ms" else 1) for kind, value, unit in UV_LINE.findall(output)}
    manifest = installed.manifest if installed is not None else None
    out.write_text(json.dumps({
        "scan": round(scan_seconds, 3), "phases": timers.phases(), "uv": uv,
        "timings": report.model_dump(mode="json").get("timings") or {},
        "registry": registry_replay(target.split(":", 1)[0], manifest or {}),
    }))


# ---- the registry's own time: the install's requests replayed from this host --------------------------------------

def _client() -> Any:
    import httpx

    bundle = Path("/etc/ssl/certs/ca-certificates.crt")
    verify: Any = ssl.create_default_context(cafile=str(bundle)) if bundle.is_file() else True
    return httpx.Client(verify=verify, timeout=60.0, follow_redirects=True, http2=False,
                        limits=httpx.Limits(max_connections=PARALLEL_REQUESTS))


def _waves(client: Any, waves: list[list[str]], accept: str) -> float:
    """Seconds to GET every URL, one wave after another, each wave's requests in parallel."""
    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=PARALLEL_REQUESTS) as pool:
        for wave in waves:
            list(pool.map(lambda url: client.get(url, headers={"Accept": accept}).content, wave))
    return time.monotonic() - began


def _pypi_tree(requirements: str) -> dict[str, tuple[str, int]]:
    """name -> (version, depth in the tree) from a uv requirements.txt (`name==version` then `# via` lines)."""
    parents: dict[str, list[str]] = {}
    versions: dict[str, str] = {}
    current = ""
    for line in requirements.splitlines():
        pinned = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ \\]+)", line)
        if pinned:
            current = pinned[1].lower().replace("_", "-").replace(".", "-")
            versions[current], parents[current] = pinned[2], []
        via = re.match(r"^\s+#\s+(?:via\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)\s*$", line)
        if via and current and via[1] != "via":
            parents[current].append(via[1].lower().replace("_", "-").replace(".", "-"))

    def depth(name: str, seen: frozenset[str] = frozenset()) -> int:
        known = [p for p in parents.get(name, []) if p in versions and p not in seen]
        return 0 if not known else 1 + min(depth(p, seen | {name}) for p in known)
    return {name: (version, depth(name)) for name, version in versions.items()}


def _pypi_wheel(page: dict[str, Any], version: str) -> dict[str, Any] | None:
    """The file of `version` the install took: a wheel for CPython 3.13 on x86-64 Linux, else any pure wheel."""
    from packaging.tags import compatible_tags, cpython_tags
    from packaging.utils import parse_wheel_filename

    platforms = [*(f"manylinux_2_{minor}_x86_64" for minor in range(40, 4, -1)), "manylinux2014_x86_64",
                 "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64"]
    wanted = {tag: rank for rank, tag in enumerate([*cpython_tags((3, 13), platforms=platforms),
                                                    *compatible_tags((3, 13), "cp313", platforms)])}
    best: tuple[int, dict[str, Any]] | None = None
    for file in page.get("files") or []:
        if not str(file.get("filename", "")).endswith(".whl"):
            continue
        try:
            _, file_version, _, tags = parse_wheel_filename(file["filename"])
        except ValueError:
            continue
        ranks = [wanted[tag] for tag in tags if tag in wanted]
        if str(file_version) == version and ranks and (best is None or min(ranks) < best[0]):
            best = (min(ranks), file)
    return best[1] if best else None


def _pypi_replay(client: Any, requirements: str) -> dict[str, float]:
    tree = _pypi_tree(requirements)
    accept = "application/vnd.pypi.simple.v1+json"
    pages = {name: client.get(PYPI_SIMPLE.format(name=name), headers={"Accept": accept}).json() for name in tree}
    wheels = {name: _pypi_wheel(pages[name], version) for name, (version, _) in tree.items()}
    levels = max((d for _, d in tree.values()), default=0) + 1
    by_level = [[name for name, (_, d) in tree.items() if d == level] for level in range(levels)]
    # the resolution: per level, every package's index page and its wheel's metadata (PEP 658)
    resolve = _waves(client, [[PYPI_SIMPLE.format(name=n) for n in wave] for wave in by_level], accept)
    resolve += _waves(client, [[wheels[n]["url"] + ".metadata" for n in wave if wheels[n]] for wave in by_level], "*/*")
    # the install: every index page again (a step starts with no cache), then every wheel
    install = _waves(client, [[PYPI_SIMPLE.format(name=n) for n in tree]], accept)
    install += _waves(client, [[w["url"] for w in wheels.values() if w]], "*/*")
    return {"resolve": round(resolve, 3), "download": round(install, 3), "requests": float(4 * len(tree)),
            "missing": float(sum(1 for w in wheels.values() if w is None))}


def _npm_replay(client: Any, lockfile: dict[str, Any]) -> dict[str, float]:
    packages = {path: meta for path, meta in (lockfile.get("packages") or {}).items()
                if path.startswith("node_modules/") and isinstance(meta, dict) and meta.get("resolved")}
    depth = {path: path.count("node_modules/") - 1 for path in packages}
    names = {path: path.rsplit("node_modules/", 1)[1] for path in packages}
    levels = max(depth.values(), default=0) + 1
    waves = [sorted({NPM_REGISTRY + names[p].replace("/", "%2f") for p in packages if depth[p] == level})
             for level in range(levels)]
    resolve = _waves(client, waves, "application/vnd.npm.install-v1+json")
    download = _waves(client, [[str(meta["resolved"]) for meta in packages.values()]], "*/*")
    return {"resolve": round(resolve, 3), "download": round(download, 3), "requests": float(2 * len(packages)),
            "missing": 0.0}


def registry_replay(ecosystem: str, manifest: dict[str, Any]) -> dict[str, float]:
    with _client() as client:
        if ecosystem == "pypi" and manifest.get("requirements"):
            return _pypi_replay(client, str(manifest["requirements"]))
        if ecosystem == "npm":
            return _npm_replay(client, manifest)
    return {}


# ---- the pairs -------------------------------------------------------------------------------------------------

def sample(source: Path, target: str, work: Path) -> dict[str, Any]:
    out = work / "sample.json"
    out.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(source)}
    began = time.perf_counter()
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--drive", target, "--out", str(out)],
                          env=env, cwd=source, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0 or not out.is_file():
        raise SystemExit(f"the cold scan of {source} failed (exit {done.returncode}): {done.stderr.decode()[-800:]}")
    result: dict[str, Any] = json.loads(out.read_text())
    result["process"] = round(time.perf_counter() - began, 3)
    return result


def median(samples: list[dict[str, Any]], *keys: str) -> float:
    values = []
    for one in samples:
        value: Any = one
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (int, float)):
            values.append(float(value))
    return statistics.median(values) if values else float("nan")


def report(sides: dict[str, list[dict[str, Any]]]) -> None:
    labels = list(sides)
    print("\n" + f"{'':<30}" + "".join(f"{label:>12}" for label in labels))

    def line(name: str, *keys: str) -> None:
        print(f"{name:<30}" + "".join(f"{median(sides[label], *keys):12.2f}" for label in labels))
    line("scan: run_scan wall (s)", "scan")
    line("report timings.total", "timings", "total")
    line("report timings.install", "timings", "install")
    for phase in ("container_create", "container_start", "first_answer", "teardown"):  # after it: slowed by it?
        line(f"report timings.{phase}", "timings", phase)
    for phase in (*PHASES, "total"):
        line(f"  install: {phase}", "phases", phase)
    # The report's own parts of the install (a checkout before 2026-12-07 has none: nan); `steps` is installer plus
    # between steps above, `finish` end+log+manifest, and its `container` also holds the kept writable places' lookup
    # (an inspect and an info call), which the timers above leave in rest.
    for phase in ("proxy", "container", "steps", "finish", "commit"):
        line(f"  report: install_{phase}", "timings", f"install_{phase}")
    for kind in ("Resolved", "Prepared", "Installed", "Bytecode compiled"):
        line(f"  uv says: {kind}", "uv", kind)
    line("registry: resolution", "registry", "resolve")
    line("registry: downloads", "registry", "download")
    if "before" in sides and len(sides["before"]) >= 2:  # the machine's drift between rounds cancels in a difference
        # Imported here, in the parent only: bench_scan imports this checkout's sandbox, which a --drive child of a
        # --before tree must not.
        from bench_scan import paired_change

        for name, keys in (("run_scan", ("scan",)), ("install", ("phases", "total"))):
            change = paired_change([median([one], *keys) for one in sides["current"]],
                                   [median([one], *keys) for one in sides["before"]])
            print(f"current minus before, {name} per round: {change}")
    for label in labels:
        install = median(sides[label], "phases", "total")
        registry = median(sides[label], "registry", "resolve") + median(sides[label], "registry", "download")
        print(f"{label}: install {install:.2f} s = registry {registry:.2f} s ({registry / install:.0%}) + scanner "
              f"{install - registry:.2f} s ({(install - registry) / install:.0%})")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--target", default="pypi:mcp-server-time")
    parser.add_argument("--source", type=Path, default=ROOT, help="the checkout whose scanner is timed")
    parser.add_argument("--before", type=Path, help="another checkout (e.g. the base commit) timed in the same rounds")
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        drive(args.drive, args.out)
        return
    sources = {"current": args.source.resolve(), **({"before": args.before.resolve()} if args.before else {})}
    print(f"cold scan of {args.target}, {args.pairs} rounds; load: {uptime()}")
    samples: dict[str, list[dict[str, Any]]] = {label: [] for label in sources}
    order = list(sources)
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as work:
        for index in range(args.pairs):
            for step in range(len(order)):
                label = order[(index + step) % len(order)]
                samples[label].append(sample(sources[label], args.target, Path(work)))
                print(f"  round {index + 1} {label}: {samples[label][-1]['process']:.2f} s", flush=True)
    report(samples)
    print(f"load after: {uptime()}")


if __name__ == "__main__":
    main()
