"""`scan --url` / `lock --url` on the CLI: the flags checked (exit 2, one line), the remote scan run with a spinner,
and whether its report may become a lock (never one holding a secret the server echoed)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from scanner.cli.remote_options import RemoteFlags
from scanner.errors import UsageError

if TYPE_CHECKING:
    from scanner.pipeline.remote_target import RemoteTarget
    from scanner.pipeline.scan_options import ScanOptions
    from scanner.report.model import Report


def remote_target(flags: RemoteFlags, target: str | None, tail: list[str] | None) -> RemoteTarget:
    from scanner.pipeline.remote_target import parse_remote

    flag = flags.given_without_url()
    if flag is not None:
        raise UsageError(f"{flag} applies to a remote server: give --url URL too")
    if target is not None or tail:
        raise UsageError("--url scans a remote server: drop the TARGET and the arguments after --")
    assert flags.url is not None
    return parse_remote(flags.url, flags.headers, flags.header_envs, os.environ)


def scan_remote(flags: RemoteFlags, options: ScanOptions, target: str | None, tail: list[str] | None, *,
                quiet: bool = False) -> Report:
    """The remote scan (said on stderr first: it is NOT sandboxed), with a spinner."""
    from scanner.cli.spinner import spinning
    from scanner.pipeline.remote import run_remote_scan

    remote = remote_target(flags, target, tail)
    if not quiet:
        print(f"scanning the remote server at {remote.origin()} over Streamable HTTP: NOT sandboxed"
              + ("" if flags.allow_writes else "; only tools annotated read-only are called"), file=sys.stderr)
    with spinning("scanning") as progress:
        return run_remote_scan(remote, options, allow_writes=flags.allow_writes, progress=progress)


def lockable(report: Report) -> bool:
    """A sandboxed scan's report, or a remote one's that holds no secret; a secret in the served definitions is a
    refusal (exit 2), not a lock that would pin it."""
    remote = report.target.remote
    if remote is not None and remote.secrets_in_definitions:
        raise UsageError("the server echoed a --header-env secret in its definitions; no lock is written (it would "
                         "hold the secret)")
    return report.sandbox is not None or remote is not None
