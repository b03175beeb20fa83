"""Which scan `scan` runs: the remote one (--url), each server of a config or plugin, or one sandboxed scan of TARGET
or of the target a launch command maps to (said on stderr first, and in the report's target); and the engine work a
sandboxed package scan begins before the scan machinery is imported (`head_start`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scanner.cli.output import ReportOutputs
from scanner.cli.remote_options import RemoteFlags
from scanner.cli.scan_config import ConfigRun
from scanner.errors import UsageError

if TYPE_CHECKING:
    from scanner.pipeline.doors import LaunchMapping
    from scanner.pipeline.head_start import HeadStart
    from scanner.pipeline.scan import ScanOptions
    from scanner.report.model import Report

Run = Callable[..., "Report"]  # scanner/cli/scan.py's `_run(options, early)`
ScanConfig = Callable[[ConfigRun, "ScanOptions", ReportOutputs, "int | None"], int]


def several(given: ConfigRun) -> bool:
    """--config-file, --server, --pass-config-env, or TARGET a plugin folder (plugin.json): each server in turn."""
    from scanner.plugins.folder import is_plugin_folder

    target = given.target
    return (given.path is not None or bool(given.servers) or given.pass_env
            or target is not None and is_plugin_folder(Path(target).expanduser()))


def _remote(given: ConfigRun) -> RemoteFlags | None:
    remote = given.remote or RemoteFlags()
    return remote if remote.url is not None or remote.given_without_url() else None


def launch_mapping(given: ConfigRun, server_args: list[str], command: str | None) -> LaunchMapping | None:
    """The target a launch command (or a script in a folder target) maps to; None: TARGET as given. UsageError
    for a launch command that maps to nothing, or that conflicts with --command."""
    from scanner.pipeline.doors import folder_script, launch_words, map_launch

    words = launch_words(given.target, server_args, given.tail)
    if words is None and given.target is None:
        raise UsageError("give a TARGET (npm:NAME, pypi:NAME or a package folder), a launch command after -- "
                         "(mcp-sandbox scan -- npx -y @scope/pkg), or --config-file FILE")
    mapping = map_launch(words, Path.cwd()) if words is not None else folder_script(given.target, server_args)
    if mapping is not None and mapping.command is not None and command is not None:
        raise UsageError("--command: the launch command names the program to run already; drop --command")
    return mapping


def _refuse_sandbox_flags(options: ScanOptions) -> None:
    """--command and --env say how the sandbox launches a server: a --url server runs elsewhere, so either one was
    dropped without a word (the scan said nothing of an --env API key the user meant it to get)."""
    if options.command is not None:
        raise UsageError("--command launches a sandboxed server; a --url server runs elsewhere: drop --command")
    if options.policy.env:
        raise UsageError("--env sets a sandboxed server's environment; a --url server runs elsewhere: drop --env "
                         "(--header-env sends a secret as a header)")


def head_start_options(given: ConfigRun, options: ScanOptions) -> ScanOptions | None:
    """The options a head start begins a package scan with (the launch command's target, arguments and command
    mapped), or None: nothing is begun for several servers, a remote one or a container image (its own start), or a
    known-bad release. Read once every flag and door that can be refused without the scan machinery was read, before
    it is imported: the door is mapped and the target parsed here to be refused (a known-bad release starts
    nothing), and both again when scanned."""
    from scanner.pipeline.image_target import is_image_target
    from scanner.pipeline.refusal import known_bad_refusal
    from scanner.pipeline.targets import parse_target

    if several(given) or _remote(given) is not None:
        return None
    mapping = launch_mapping(given, options.server_args, options.command)
    target = mapping.target if mapping is not None else given.target
    if target is None or is_image_target(target) or known_bad_refusal(parse_target(target),
                                                                      options.config) is not None:
        return None
    return _mapped(options, mapping)


def head_start(planned: ScanOptions | None,
               speculative: HeadStart | None = None) -> AbstractContextManager[HeadStart | None]:
    """A package scan's engine connection, session and sink, begun now in a thread, and (unless --no-cache) the
    resolution and a cached install's server in another (closed on the way out if the scan never took them);
    nothing when `head_start_options` said so (None). `speculative`: one begun before the flags were read
    (scanner/cli/early_start.py), adopted when its sink fits `planned`, else closed here, its sink torn down."""
    if speculative is not None:
        if planned is not None and speculative.fits(planned):
            speculative.begin(planned)
            return speculative
        speculative.close()
    if planned is None:
        return nullcontext()
    from scanner.pipeline.head_start import HeadStart

    return HeadStart(observe=planned.network == "observe", hostname=planned.policy.hostname, options=planned)


def _mapped(options: ScanOptions, mapping: LaunchMapping | None) -> ScanOptions:
    """The options with the launch command's target, arguments and command, as `scan_door` scans them."""
    if mapping is None:
        return options
    return replace(options, target=mapping.target, server_args=mapping.server_args,
                   command=mapping.command or options.command, launch_findings=mapping.findings)


def scan_door(options: ScanOptions, given: ConfigRun, outputs: ReportOutputs, fail_under: int | None,
              early: HeadStart | None, *, run: Run, scan_config: ScanConfig) -> Report:
    """Scan TARGET, or the target a launch command maps to, or the remote server of --url; or each server of a
    config or plugin (`scan_config`: the exit comes from there)."""
    from scanner.pipeline.doors import launch_origin, with_launch

    if several(given):
        raise typer.Exit(scan_config(given, options, outputs, fail_under))
    remote = _remote(given)
    if remote is not None:
        from scanner.cli.remote_scan import scan_remote

        _refuse_sandbox_flags(options)
        return scan_remote(remote, options, given.target, given.tail, quiet=outputs.quiet)
    mapping = launch_mapping(given, options.server_args, options.command)
    if mapping is None:
        return run(options, early)
    if not outputs.quiet:
        print(mapping.describe(), file=sys.stderr)
    return with_launch(run(_mapped(options, mapping), early), launch_origin(mapping))
