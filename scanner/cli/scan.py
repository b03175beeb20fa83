"""`mcp-sandbox scan TARGET` and `images build`: the sandbox commands (`gc` is scanner/cli/gc.py).

The scan machinery (mcp, docker, sigstore, and the report model, lock, signing and rich) is imported inside the
commands that run it, so `--version`, `--help`, `check` and `verify` start without paying for it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
from typer.core import TyperCommand

from scanner.cli.options import (config_option, fail_under_option, max_calls_option, upstream_from_cli,
                                 upstream_proxy_option, with_report_options)
from scanner.cli.exit_reason import EXIT_INCOMPLETE
from scanner.cli.remote_options import RemoteFlags, with_remote_options
from scanner.cli.output import STDOUT, ReportOutputs, check_outputs, emit_report, finish, folder_manifests
from scanner.errors import UsageError
from scanner.cli.sandboxed import say_interrupted as _say_interrupted
from scanner.cli.scan_config import ConfigRun
from scanner.cli.scan_door import head_start as _head_start, head_start_options, scan_door
from scanner.cli.values import parse_env, parse_size
from scanner.pipeline.target_text import refuse_blank_target

if TYPE_CHECKING:
    from sandbox.run.policy import RunPolicy
    from scanner.lock.model import LockFile
    from scanner.conformance.options import ConformanceOptions
    from scanner.pipeline.scan import ScanOptions
    from scanner.pipeline.head_start import HeadStart
    from scanner.config import Config
    from scanner.probes.runner import ProbeOptions
    from scanner.report.locations import Artifact
    from scanner.report.model import Report
    from scanner.signing.keys import Signer

EXIT_SCAN_INCOMPLETE = EXIT_INCOMPLETE
images_app = typer.Typer(help="Build the runtime images the sandbox runs servers in.", no_args_is_help=True)


LAUNCH_TAIL = "mcp_sandbox.launch_tail"


class ScanCommand(TyperCommand):
    """`scan`, which keeps what followed the first `--` on its command line: `scan -- npx -y PKG` (no TARGET before
    the `--`) is a launch command, `scan npm:x -- stdio` a target and its server's arguments (doors.launch_words)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[LAUNCH_TAIL] = args[args.index("--") + 1:] if "--" in args else None
        return super().parse_args(ctx, args)


HELP = {
    "target": "npm:NAME\\[@VERSION], pypi:NAME[==VERSION], docker:IMAGE[:TAG|@sha256:DIGEST], or a path to a "
              "package folder, .tgz, .whl or .tar.gz. "
              "Or none, and a launch command after -- (`scan -- npx -y @scope/pkg@1.2.3 ARGS`, `scan -- uvx "
              "pkg==1.0`), or one pasted in quotes (`scan \"npx -y @scope/pkg\"`): it is mapped to its target.",
    "config-file": "Scan every server of this MCP client config (Claude Desktop, Claude Code, .mcp.json, Cursor, "
                   "VS Code), one after the other: each local one in its own sandbox, each remote one over "
                   "Streamable HTTP as --url does (NOT sandboxed).",
    "server": "With --config-file: only this server (repeat).",
    "pass-config-env": "Pass the config's env values to its servers (default: not passed; their names are listed).",
    "command": "Launch command inside the sandbox (default: the package's bin / console script).",
    "env": "Set a variable for the server (repeat). The host's environment never reaches it.",
    "network": "observe (default): no route off the host, but an egress sink answers and logs every DNS query and "
               "connection (B2 findings); none: loopback only, nothing answers.",
    "startup-timeout": "Seconds to wait for the handshake and each request.",
    "ca-bundle": "CA bundle the install and the registry lookups trust (default: the host's, for TLS-intercepting "
                 "proxies).",
    "advisories": "Advisory source: a local OSV export folder, or `osv` for the OSV API. Without one, advisories "
                  "read \"not checked\".",
    "lock": "Also write (or refresh) this lockfile; changes against an existing one are shown first.",
    "sign": "Sign the JSON report (and --lock) with this private key: writes REPORT.intoto.json (DSSE, in-toto "
            "Statement v1).",
    "sign-env": "Sign with the PEM private key in this environment variable (for CI secrets).",
    "no-destructive": "Call only tools annotated read-only (and fixture probes marked allow_destructive).",
    "fixtures": "Hand-written probe calls (JSON, mcp-linter format); they replace the generated ones per tool.",
    "include-responses": "Keep each probe's full response (capped) in the report, not just a 400-character preview.",
    "probe-timeout": "Seconds each probe call may take before it is cancelled.",
    "spec-version": "Check conformance to this protocol revision (2025-11-25, the default: only json-schema-dialect; "
                    "2026-07-28: also the revision's core checks on a fresh server).",
    "spec": "Like --spec-version, with the revision's whole conformance suite (docs/conformance.md).",
    "server-args": "Arguments for the server, after --.",
    "vet-dependencies": "Vet the installed dependencies' source too, not only the package's own files (rule V1).",
}


@with_report_options
@with_remote_options()
def scan(
    ctx: typer.Context,
    target: str | None = typer.Argument(None, metavar="TARGET", help=HELP["target"]),
    server_args: list[str] | None = typer.Argument(None, metavar="[-- SERVER ARGS...]", help=HELP["server-args"]),
    config_file: Path | None = typer.Option(None, "--config-file", metavar="FILE", help=HELP["config-file"]),
    servers: list[str] = typer.Option([], "--server", metavar="NAME", help=HELP["server"]),
    pass_config_env: bool = typer.Option(False, "--pass-config-env", help=HELP["pass-config-env"]),
    command: str | None = typer.Option(None, "--command", help=HELP["command"]),
    env: list[str] = typer.Option([], "--env", metavar="NAME=VALUE", help=HELP["env"]),
    network: str = typer.Option("observe", "--network", help=HELP["network"]),
    memory: str = typer.Option("512m", "--memory", help="Memory limit (memory+swap) of the server."),
    cpus: float = typer.Option(1.0, "--cpus", min=0.1, max=64, help="CPU quota of the server."),
    pids: int = typer.Option(128, "--pids", min=8, max=4096, help="Process/thread limit of the server."),
    startup_timeout: float = typer.Option(60.0, "--startup-timeout", min=1, help=HELP["startup-timeout"]),
    request_timeout: float = typer.Option(30.0, "--request-timeout", min=1, help="Seconds to wait for each listing."),
    install_timeout: int = typer.Option(600, "--install-timeout", min=10, help="Seconds the install may take."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Install afresh even if this version was installed."),
    ignore_scripts: bool = typer.Option(False, "--ignore-scripts", help="Do not run npm install scripts."),
    ca_bundle: Path | None = typer.Option(None, "--ca-bundle", help=HELP["ca-bundle"]),
    upstream_proxy: str | None = upstream_proxy_option(),
    outputs: ReportOutputs = ReportOutputs(),
    fail_under: int | None = fail_under_option(),
    config_path: Path | None = config_option(),
    advisories: str | None = typer.Option(None, "--advisories", metavar="DIR|osv", help=HELP["advisories"]),
    lock_path: Path | None = typer.Option(None, "--lock", help=HELP["lock"]),
    accept: bool = typer.Option(False, "--accept", help="Refresh --lock even when its changes include errors."),
    sign: Path | None = typer.Option(None, "--sign", help=HELP["sign"]),
    sign_env: str | None = typer.Option(None, "--sign-env", metavar="VAR", help=HELP["sign-env"]),
    no_probes: bool = typer.Option(False, "--no-probes", help="Only list and lint the tools; call none of them."),
    no_destructive: bool = typer.Option(False, "--no-destructive", help=HELP["no-destructive"]),
    no_error_probes: bool = typer.Option(False, "--no-error-probes", help="Skip the bad-input probes."),
    fixtures: Path | None = typer.Option(None, "--fixtures", metavar="FILE", help=HELP["fixtures"]),
    include_responses: bool = typer.Option(False, "--include-responses", help=HELP["include-responses"]),
    probe_timeout: float = typer.Option(30.0, "--probe-timeout", min=1, help=HELP["probe-timeout"]),
    max_calls: int = max_calls_option(),
    spec_version: str | None = typer.Option(None, "--spec-version", metavar="REVISION", help=HELP["spec-version"]),
    spec: str | None = typer.Option(None, "--spec", metavar="REVISION", help=HELP["spec"]),
    remote: RemoteFlags = RemoteFlags(),
    vet_dependencies: bool = typer.Option(False, "--vet-dependencies", help=HELP["vet-dependencies"]),
) -> None:
    """Install TARGET (or a launch command's, a client config's) in a throwaway sandbox, run it with no route off the
    host, list and call its tools, then tear it all down (--url: a remote server, NOT sandboxed). Exit codes: 0 clean; 1
    a finding at/above --fail-on (or score under --fail-under); 2 bad input; 3 incomplete (no engine, install failed, no
    answer, teardown incomplete, an internal error); with --config-file, the worst. The last line on stderr says why."""
    inputs = [target, config_file, config_path, fixtures, ca_bundle, sign, *folder_manifests(target)]  # no output
    signer = _check_flags(outputs, fail_under, lock_path, sign, sign_env, inputs, accept)
    _check_sources(advisories, ca_bundle, network, target)
    upstream = upstream_from_cli(upstream_proxy)  # its warning first, as before the scan machinery was lazy
    policy, config, conformance = _policy(memory, cpus, pids, env), _load_config(config_path), _conformance_options(
        spec_version, spec)
    given = ConfigRun(config_file, servers, pass_config_env, target, ctx.meta[LAUNCH_TAIL], lock_path, signer, remote)
    probes = _probe_options(ctx.params)  # --no-probes, --no-destructive, ..., --max-calls (read by name there)
    options = _scan_options(startup_timeout, request_timeout, target=target or "", server_args=list(
        server_args or []), command=command, upstream_proxy=upstream, policy=policy,
        use_cache=not no_cache, ca_bundle=ca_bundle, ignore_scripts=ignore_scripts, install_timeout=install_timeout,
        config=config, advisories=advisories, network=network, probes=probes(),  # type: ignore[arg-type]
        conformance=conformance, vet_dependencies=vet_dependencies)  # no mcp imported yet (scan_options)
    report = _begun_and_scanned(options, given, outputs, fail_under, ctx.obj)
    lock_refused = _write_outputs(report, outputs, lock_path, accept, signer)
    raise typer.Exit(finish(report, outputs, fail_under, lock_refused))


def _begun_and_scanned(options: ScanOptions, given: ConfigRun, outputs: ReportOutputs,
                       fail_under: int | None, speculative: HeadStart | None) -> Report:
    """The scan, its engine work (and a cached install's servers) begun first. A signal while the scan path is
    imported (SIGTERM/SIGHUP as Ctrl-C) closes the head start, which tears its session down: exit 130.
    `speculative`: a head start the entry point began before the flags were read, with a host name of its own, which
    the run policy takes (scanner/cli/early_start.py)."""
    from scanner.pipeline.interrupts import terminate_as_interrupt

    if speculative is not None:
        options = replace(options, policy=replace(options.policy, hostname=speculative.hostname))
    planned = head_start_options(given, options)
    begun = planned is not None  # an interrupt from here on ends with the head start's session torn down
    early: HeadStart | None = None
    try:
        # The signals are caught before the head start's first container is created, so a SIGTERM while it begins
        # (or while the scan path is imported) tears its session down instead of ending the process at once.
        with terminate_as_interrupt() if planned is not None else nullcontext(), _head_start(
                planned, speculative) as early:
            return scan_door(options, given, outputs, fail_under, early, run=_run, scan_config=_scan_config)
    except KeyboardInterrupt:
        if not begun:
            raise
        begun_one = early or speculative  # a speculative one whose `begin` was interrupted closed itself
        if begun_one is not None and not begun_one.closed:  # interrupted while asked whether it fits: closed here
            begun_one.close(ending=True)
        _say_interrupted([], begun_one.interrupted_line() if begun_one is not None else None)


def _scan_options(startup: float, request: float, **fields: Any) -> ScanOptions:
    """The options, with the timeouts (neither imports mcp: the head start begins with them)."""
    from scanner.pipeline.scan_options import ScanOptions
    from scanner.pipeline.timeouts import Timeouts

    return ScanOptions(timeouts=Timeouts(startup=startup, request=request), **fields)


def _load_config(path: Path | None) -> Config:
    from scanner.config import load

    return load(path)


def _scan_config(run_request: ConfigRun, options: ScanOptions, outputs: ReportOutputs, fail_under: int | None) -> int:
    """`scan --config-file` (every server of the config) or `scan PLUGIN` (every server of its mcp.json), each
    scanned as `_run` scans one."""
    from scanner.cli.scan_config import scan_config

    if run_request.path is None and not run_request.servers and not run_request.pass_env:
        from scanner.cli.plugin import scan_plugin  # TARGET is a plugin folder (scan_door.several)

        return scan_plugin(run_request, options, outputs, fail_under, run=_run)
    return scan_config(run_request, options, outputs, fail_under, run=_run)


def _check_flags(outputs: ReportOutputs, fail_under: int | None, lock_path: Path | None, sign: Path | None,
                 sign_env: str | None, inputs: list[str | Path | None], accept: bool = False) -> Signer | None:
    """The flags and the output paths, before anything is installed; the signer when one is asked for."""
    if accept and lock_path is None:  # nothing to refresh: the flag would be dropped after the whole scan
        raise UsageError("--accept refreshes --lock past its error-level changes: give --lock PATH too")
    if sign is None and sign_env is None:
        check_outputs(outputs, inputs, fail_under, others=[(lock_path, "the lock")])
        return None
    if outputs.json is None or outputs.json == STDOUT:
        raise UsageError("--sign/--sign-env sign the JSON report: also give --json PATH (a file, not -)")
    from scanner.signing import envelope_outputs, load_signer  # cryptography: loaded only to sign

    check_outputs(outputs, inputs, fail_under, [(lock_path, "the lock"), *envelope_outputs(outputs.json, lock_path)])
    return load_signer(sign, sign_env)


def _check_sources(advisories: str | None, ca_bundle: Path | None, network: str, target: str | None = None) -> None:
    if target is not None:
        refuse_blank_target(target)  # before a plugin folder is looked for in '.'
    if advisories not in (None, "osv") and not Path(advisories).expanduser().is_dir():
        raise UsageError(f"--advisories {advisories!r} is neither a folder of OSV JSON files nor `osv`")
    if ca_bundle is not None and not ca_bundle.is_file():
        raise UsageError(f"--ca-bundle {ca_bundle} is not a file")
    if network not in ("observe", "none"):
        raise UsageError(f"--network must be observe or none, not {network!r}")


def _conformance_options(spec_version: str | None, spec: str | None) -> ConformanceOptions:
    from scanner.conformance.options import REVISIONS, ConformanceOptions

    for flag, value in (("--spec-version", spec_version), ("--spec", spec)):
        if value is not None and value not in REVISIONS:
            raise UsageError(f"{flag} {value!r} is not a revision the scanner checks; use {' or '.join(REVISIONS)}")
    if spec_version is not None and spec is not None and spec_version != spec:
        raise UsageError(f"--spec-version {spec_version} and --spec {spec} name two revisions; give one")
    return ConformanceOptions(spec_version=spec or spec_version or REVISIONS[0], full=spec is not None)


def _policy(memory: str, cpus: float, pids: int, env: list[str]) -> RunPolicy:
    from sandbox.run.policy import RunPolicy

    return RunPolicy(memory_bytes=parse_size(memory, "--memory"), nano_cpus=int(cpus * 1e9), pids_limit=pids,
                     env=parse_env(env))


LOOK_BY = "MCP_SANDBOX_LOOK_BY"  # "exec": one exec per after-call snapshot, not the observer (docs/observer.md)


def _probe_options(flags: dict[str, Any]) -> Callable[[], ProbeOptions]:
    """The probe flags, by their parameters' names in `flags` (the command's parsed parameters); the fixtures are
    read (and refused) now, the options built when called."""
    loaded = None
    if flags["fixtures"] is not None:
        from scanner.probes.fixtures import load_fixtures  # its models: only for --fixtures

        loaded = load_fixtures(flags["fixtures"], env=os.environ)

    def build() -> ProbeOptions:
        from scanner.probes.options import ProbeOptions

        return ProbeOptions(enabled=not flags["no_probes"], no_destructive=flags["no_destructive"],
                            error_probes=not flags["no_error_probes"], fixtures=loaded,
                            include_responses=flags["include_responses"], timeout=flags["probe_timeout"],
                            max_calls=flags["max_calls"], observer=os.environ.get(LOOK_BY) != "exec")
    return build


def _run(options: ScanOptions, early: HeadStart | None = None) -> Report:
    """The scan, with a spinner on stderr when it can show (scanner/cli/spinner.py); Ctrl-C after the sandbox is
    torn down is exit 130. `early`: the engine work begun before the scan machinery was imported (`_head_start`)."""
    from scanner.cli.spinner import spinner_shows, spinning
    from scanner.pipeline.interrupts import ScanInterrupted, uninterruptible

    with uninterruptible():  # a Ctrl-C while the scan path imports is held to its end, then raised here (as a whole)
        from scanner.pipeline.image_scan import run_target
    try:
        if not spinner_shows(sys.stderr):
            return run_target(options, progress=lambda _step: None, head_start=early)
        with spinning("scanning") as progress:
            return run_target(options, progress=progress, head_start=early)
    except ScanInterrupted as interrupt:  # run_scan has torn the sandbox down in its finally block by now
        _say_interrupted(interrupt.left)
    except KeyboardInterrupt:
        if early is not None:
            raise  # before the scan took the head start's session: closing it tears that down (_begun_and_scanned)
        _say_interrupted([])  # before any sandbox (a container image's scan starts its session in the scan)


def _lock_artifact(lock_path: Path, new: LockFile | None) -> Artifact:
    """The lockfile, with the line of each tool in it (as it is after this scan, or as it was)."""
    from scanner.lock.io import lock_bytes
    from scanner.report.locations import file_artifact, tool_lines

    if new is not None:
        text = lock_bytes(new).decode("ascii")
    else:
        text = lock_path.read_text(encoding="utf-8", errors="replace") if lock_path.is_file() else ""
    return file_artifact(str(lock_path), tool_lines(text))


def _write_outputs(report: Report, outputs: ReportOutputs, lock_path: Path | None, accept: bool,
                   signer: Signer | None) -> bool:
    """The report views (pointing at the lock when there is one), then the lock, then the report's signature; True
    when the lock refresh was refused (error-level changes without --accept, said above): the exit code weighs it."""
    try:
        from scanner.cli.remote_scan import lockable

        new = None
        if lock_path and lockable(report) and not report.errors:  # the lock and signing: loaded only when asked for
            from scanner.lock.build import build_lock

            new = build_lock(report.as_served())
        emit_report(report, outputs, _lock_artifact(lock_path, new) if lock_path else None)
        if lock_path is not None or signer is not None:
            from scanner.cli.lock import lock_and_sign

            return lock_and_sign(report, new, lock_path, outputs.json, signer, accept)
    except KeyboardInterrupt:  # the scan's sandbox is gone already; each file written is whole (written atomically)
        _say_interrupted([])
    return False


def build_images(
    rebuild: bool = typer.Option(False, "--rebuild", help="Build even if an image with the same hash exists."),
    ca_bundle: Path | None = typer.Option(None, "--ca-bundle", help="CA bundle the build trusts."),
) -> None:
    """Build the images a scan uses: the node and python runtimes, the egress sink and the install proxy (tagged by
    project version and build-context hash)."""
    from rich.console import Console

    from sandbox.core import engine, images

    client = engine.connect()
    console = Console(stderr=True, highlight=False, emoji=False)
    for runtime in images.REPOSITORIES:
        with console.status(f"{runtime}: checking", spinner="dots") as status:
            image = images.ensure_runtime_image(client, runtime, ca_bundle=ca_bundle, rebuild=rebuild,
                                                progress=lambda line: status.update(f"{runtime}: {line[:100]}"))
        console.print(f"{runtime}: {image.tag} ({'built' if image.built else 'up to date'})", markup=False)


def init_fixtures(
    path: Path = typer.Argument(..., metavar="FILE", help="The fixtures file to write (never overwritten)."),
    target: str = typer.Argument(..., metavar="TARGET", help="The server, as for `scan`."),
    command: str | None = typer.Option(None, "--command", help="Launch command inside the sandbox."),
    upstream_proxy: str | None = upstream_proxy_option(),
) -> None:
    """Write a starter fixtures file: one probe per live tool of TARGET, with generated arguments to edit."""
    from sandbox.core.untrusted import escape_for_terminal
    from sandbox.run.workspace_seed import seed_manifest
    from scanner.cli.sandboxed import run_sandboxed
    from scanner.probes.fixtures import write_starter_fixtures
    from scanner.probes.runner import ProbeOptions
    from scanner.pipeline.scan import ScanOptions

    if path.exists():
        raise UsageError(f"{path} already exists; choose another file name or remove it first")
    upstream = upstream_from_cli(upstream_proxy)
    if not path.parent.is_dir():  # before the install and the listing, not after them
        raise UsageError(f"cannot write {path}: the folder {path.parent} does not exist")
    report = run_sandboxed(ScanOptions(target=target, command=command, probes=ProbeOptions(enabled=False),
                                       upstream_proxy=upstream), "listing tools")
    if report.errors or not report.tools:  # an error can quote the server (its JSON-RPC error message): escaped
        for line in report.errors or ["the server served no tools"]:
            print(f"error: {escape_for_terminal(line)}", file=sys.stderr)
        raise typer.Exit(EXIT_SCAN_INCOMPLETE)
    count = write_starter_fixtures(path, report.tools, seed_manifest())
    print(f"wrote {count} probes to {path}")


def register(app: typer.Typer) -> None:
    app.command("scan", cls=ScanCommand)(scan)
    app.command("init-fixtures")(init_fixtures)
    images_app.command("build")(build_images)
    app.add_typer(images_app, name="images")
