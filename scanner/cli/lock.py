"""`mcp-sandbox lock`: write a lockfile from a saved tools/list, or check a later one against it.

The lock, signing and scan machinery is imported by the functions that use it, so building the app does not."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from scanner.cli.signing import print_verification
from scanner.cli.options import fail_on_option, json_option, upstream_from_cli, upstream_proxy_option
from scanner.cli.output import STDOUT, check_writable, refuse_one_file_twice, write_stdout
from scanner.cli.remote_options import RemoteFlags, with_remote_options
from scanner.errors import UsageError
from scanner.report.severity import FAIL_ON_LEVELS, meets_fail_on
from sandbox.core.untrusted import escape_for_terminal

if TYPE_CHECKING:
    from rich.console import Console

    from sandbox.install.proxy.upstream import UpstreamProxy
    from scanner.lock.changes import Change
    from scanner.lock.model import LockFile
    from scanner.report.model import Finding, Report
    from scanner.signing.keys import Signer

# scanner.lock.model.DEFAULT_LOCK_NAME (a test holds them equal): the option's default is read for every command's
# --help, and importing scanner.lock loads the whole lock machinery.
LOCK_FILE_NAME = "mcp-sandbox.lock"
SEVERITY_LABEL = {"error": "ERROR  ", "warning": "WARNING", "info": "info   "}


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True, emoji=False)


def render_changes(console: Console, changes: list[Change], lock_path: Path, unchecked: list[str]) -> None:
    for what in unchecked:
        console.print(f"not compared: {what} (neither the lock nor the input carries them)", markup=False)
    if not changes:
        console.print(f"no changes: the input matches {lock_path}", markup=False)
        return
    from scanner.lock.changes import counts

    for item in changes:
        where = f"{escape_for_terminal(item.tool, 200)}: " if item.tool is not None else ""
        console.print(f"{SEVERITY_LABEL[item.severity]}  {item.kind:<22} {where}{escape_for_terminal(item.message)}",
                      markup=False)
    tally = counts(changes)
    console.print(f"{_plural(len(changes), 'change')}: {_plural(tally['error'], 'error')}, "
                  f"{_plural(tally['warning'], 'warning')}, {tally['info']} info", markup=False)


def render_findings(console: Console, findings: list[Finding]) -> None:
    """The static rules' findings on the changed text, after the changes (nothing when there are none)."""
    if not findings:
        return
    console.print(f"static rules on the changed definitions: {_plural(len(findings), 'finding')}", markup=False)
    for item in findings:
        where = f"{escape_for_terminal(item.tool, 200)}: " if item.tool is not None else ""
        console.print(f"{SEVERITY_LABEL[item.severity]}  {item.rule_id:<4} {item.rule_name:<22} {where}"
                      f"{escape_for_terminal(item.message)}", markup=False)
        if item.evidence:
            console.print(f"           evidence: {escape_for_terminal(item.evidence, 300)}", markup=False)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def write_changes_json(target: str, changes: list[Change], findings: list[Finding], unchecked: list[str],
                       lock_path: Path, fail_on: str, failed: bool) -> None:
    """The changes, what could not be compared, and the findings on the changed text as JSON (ASCII: hidden
    characters are escaped) to a file, or to stdout for `-`."""
    from scanner.atomic_write import atomic_write_bytes
    from scanner.lock.changes import counts, severity_counts

    document = {"lock": str(lock_path), "fail_on": fail_on, "failed": failed, "counts": counts(changes),
                "changes": [c.model_dump(mode="json") for c in changes], "not_compared": unchecked,
                "finding_counts": severity_counts(f.severity for f in findings),
                "findings": [f.model_dump(mode="json") for f in findings]}
    text = json.dumps(document, indent=2, ensure_ascii=True) + "\n"
    if target == STDOUT:
        write_stdout(text, "the changes")
    else:
        atomic_write_bytes(Path(target), text.encode("ascii"))


def _validate(target: str | None, from_file: Path | None, check: bool, fail_on: str, key: Path | None,
              sign: Path | None, sign_env: str | None, accept: bool) -> Path | None:
    """Every flag problem, before anything is read or scanned."""
    if target is not None and from_file is not None:
        raise UsageError("give either a live TARGET or --from FILE, not both")
    if target is None and from_file is None:
        raise UsageError("give a TARGET to scan (e.g. npm:NAME) or --from FILE (a saved tools/list or JSON report)")
    if fail_on not in FAIL_ON_LEVELS:
        raise UsageError(f"--fail-on must be one of {', '.join(FAIL_ON_LEVELS)}, not {fail_on!r}")
    if check and (sign is not None or sign_env is not None or accept):
        raise UsageError("--check only compares: drop --sign/--sign-env/--accept, which apply when writing a lock")
    if not check and key is not None:
        raise UsageError("--key verifies the lock's signature before a check: use it with --check")
    return from_file


def _refuse_live_flags(upstream_proxy: str | None, command: str | None, remote: RemoteFlags) -> None:
    """With --from nothing is installed, launched or fetched: a flag for that is a mistake, not something to drop
    without a word (`--command` would suggest the lock pins that launch)."""
    live = {"--upstream-proxy": (upstream_proxy, "installing a live TARGET"),
            "--command": (command, "launching a live TARGET"),
            "--header": (remote.headers, "a --url server"), "--header-env": (remote.header_envs, "a --url server")}
    for flag, (value, use) in live.items():
        if value:
            raise UsageError(f"{flag} applies to {use}; drop it with --from")


def _check_paths(lock_path: Path, check: bool, json_path: str | None, source: Path | None, sign: Path | None,
                 signing: bool) -> None:
    """The outputs (the lock, its envelope when signing, the changes) writable and none of them an input: the
    --from file or the --sign private key, which an output over it would destroy."""
    if check and not lock_path.is_file():
        raise UsageError(f"no lock at {lock_path}: create one with `mcp-sandbox lock --from FILE` "
                         "(or point --lock at it)")
    inputs = [path for path in (source, sign) if path is not None]
    if not check:
        check_writable(lock_path, "the lock", inputs)
    check_writable(json_path, "the changes", inputs + [lock_path])
    if signing:
        from scanner.signing.attest import envelope_outputs

        envelopes = envelope_outputs(lock_path)
        for envelope, what in envelopes:
            check_writable(envelope, what, inputs)
        refuse_one_file_twice([(json_path, "the changes"), *envelopes])


def _verify_lock_signature(console: Console, lock_path: Path, key: Path) -> None:
    from scanner.signing.attest import attestation_path
    from scanner.signing.keys import load_public_key
    from scanner.signing.verify import VerificationFailed, verify_attestation

    public_key = load_public_key(key)
    envelope = attestation_path(lock_path)
    if not envelope.is_file():
        console.print(f"FAIL  {lock_path} is not signed: no envelope {envelope}; the lock cannot be trusted",
                      markup=False)
        raise typer.Exit(1)
    try:
        result = verify_attestation(envelope, public_key, {"lockfile": lock_path})
    except VerificationFailed as exc:
        console.print(f"FAIL  {escape_for_terminal(str(exc))}; the lock cannot be trusted", markup=False)
        raise typer.Exit(1) from None
    print_verification(console, result)
    if not result.ok or not any(c.role == "lockfile" and c.ok for c in result.checks):
        console.print(f"verification failed: {lock_path} cannot be trusted", markup=False)
        raise typer.Exit(1)


def _trusted_lock(console: Console, lock_path: Path, key: Path | None) -> LockFile:
    """The lock to check against, read once its envelope verified with key (when given) and before any scan: a bad
    key, an untrusted or a malformed lock ends the run at once, and the lock compared is the one just verified."""
    from scanner.lock.io import load_lock

    if key is not None:
        _verify_lock_signature(console, lock_path, key)
    else:
        from scanner.signing.attest import attestation_path

        if (envelope := attestation_path(lock_path)).is_file():
            print(f"note: {envelope} is beside the lock and was not checked; --key PUB verifies the lock before "
                  "trusting it", file=sys.stderr)
    return load_lock(lock_path)


def check_against_lock(console: Console, old: LockFile, new: LockFile, lock_path: Path, json_path: str | None,
                       fail_on: str) -> None:
    from scanner.lock.changes import at_or_above
    from scanner.lock.diff import diff
    from scanner.lock.lint import changed_text_findings
    from scanner.lock.server_diff import not_compared

    changes, findings, unchecked = diff(old, new), changed_text_findings(old, new), not_compared(old, new)
    failing = at_or_above(changes, fail_on)
    failing_findings = [f for f in findings if meets_fail_on(f.severity, fail_on)]
    render_changes(console, changes, lock_path, unchecked)
    render_findings(console, findings)
    if json_path is not None:
        write_changes_json(json_path, changes, findings, unchecked, lock_path, fail_on,
                           bool(failing or failing_findings))
    if failing or failing_findings:
        console.print(f"exit 1: {_plural(len(failing), 'change')} and {_plural(len(failing_findings), 'finding')} "
                      f"at or above --fail-on {fail_on}", markup=False)
        raise typer.Exit(1)


def write_with_changes(console: Console, new: LockFile, lock_path: Path, signer: Signer | None, accept: bool,
                       json_path: str | None) -> None:
    from scanner.lock.changes import at_or_above
    from scanner.lock.diff import diff
    from scanner.lock.io import load_lock, write_lock
    from scanner.lock.lint import changed_text_findings
    from scanner.lock.server_diff import duplicate_changes, not_compared
    from scanner.signing.attest import attestation_path, write_attestation

    changes: list[Change] = []
    findings: list[Finding] = []
    unchecked: list[str] = []
    if lock_path.exists():
        old = load_lock(lock_path)
        changes, findings, unchecked = diff(old, new), changed_text_findings(old, new), not_compared(old, new)
        render_changes(console, changes, lock_path, unchecked)
        render_findings(console, findings)
    elif changes := duplicate_changes(new):  # a first lock: nothing to compare, but twins need a reviewer's --accept
        render_changes(console, changes, lock_path, [])
    errors = at_or_above(changes, "error")
    error_findings = [f for f in findings if meets_fail_on(f.severity, "error")]
    blocked = bool(errors or error_findings) and not accept
    if json_path is not None:
        write_changes_json(json_path, changes, findings, unchecked, lock_path, "error", blocked)
    if blocked:
        console.print(f"lock not updated: {_plural(len(errors), 'change')} and {_plural(len(error_findings), 'finding')}"
                      " at error level; review them above and re-run with --accept to pin the new definitions",
                      markup=False)
        raise typer.Exit(1)
    write_lock(new, lock_path)
    console.print(f"wrote {lock_path} ({_plural(len(new.tools), 'tool')})", markup=False)
    envelope = attestation_path(lock_path)
    if signer is not None:
        write_attestation(signer, envelope, lock_path=lock_path, lock=new)
        console.print(f"signed {lock_path} -> {envelope} (keyid {signer.keyid})", markup=False)
    elif envelope.exists():
        console.print(f"warning: {envelope} signs the previous lock and no longer matches; re-sign with --sign",
                      markup=False)


def lock_and_sign(report: Report, new: LockFile | None, lock_path: Path | None, json_path: str | None,
                  signer: Signer | None, accept: bool) -> bool:
    """After a scan: refresh the lock (when the scan could be locked), then sign the JSON report. The report's envelope
    covers the lock only when this scan wrote it: an older lock (a refresh refused for its error-level changes, or a
    scan that could not list) is not what this report saw. A refused refresh still leaves the report signed, never
    the new report beside an earlier run's envelope; it returns True (the scan's exit code, 1 unless 3, weighs it)."""
    refused: typer.Exit | None = None
    if lock_path is not None and new is not None:
        try:
            write_with_changes(_console(stderr=True), new, lock_path, signer, accept, None)
        except typer.Exit as exc:
            refused = exc
    if signer is not None and json_path is not None and json_path != STDOUT:
        from scanner.signing.attest import attestation_path, write_attestation

        report_path = Path(json_path)
        covered = lock_path if new is not None and refused is None else None
        envelope = write_attestation(signer, attestation_path(report_path), report_path=report_path, report=report,
                                     lock_path=covered)
        unsigned = f"; not the lock {lock_path}, which this scan did not write" if lock_path and not covered else ""
        print(f"signed {report_path} -> {envelope} (keyid {signer.keyid}){unsigned}", file=sys.stderr)
    return refused is not None


@with_remote_options(writes=False)
def lock(
    target: str | None = typer.Argument(None, metavar="TARGET", help="A live target to scan first: npm:NAME\\[@VERSION], "
                                        "pypi:NAME[==VERSION] or a local package (as in `scan`)."),
    server_args: list[str] | None = typer.Argument(None, metavar="[-- SERVER ARGS...]",
                                                   help="Arguments for the server, after --."),
    command: str | None = typer.Option(None, "--command", help="Launch command inside the sandbox (as in `scan`)."),
    from_file: Path | None = typer.Option(None, "--from", metavar="FILE", help="Saved tools/list result or "
                                          "mcp-sandbox JSON report (- reads standard input)."),
    lock_path: Path = typer.Option(Path(LOCK_FILE_NAME), "--lock", help="The lockfile to write or check."),
    check: bool = typer.Option(False, "--check", help="Compare the input with the lock instead of writing it."),
    json_path: str | None = json_option("Write the changes as JSON to PATH (- for stdout; the terminal view then "
                                        "goes to stderr)."),
    fail_on: str = fail_on_option("warning", "With --check: exit 1 on a change, or a finding on the changed "
                                             "text, at or above: info|warning|error|never."),
    key: Path | None = typer.Option(None, "--key", help="With --check: verify the lock's envelope with this key."),
    sign: Path | None = typer.Option(None, "--sign", help="Sign the lock with this private key file."),
    sign_env: str | None = typer.Option(None, "--sign-env", metavar="VAR",
                                        help="Sign with the PEM key in this environment variable."),
    accept: bool = typer.Option(False, "--accept", help="Refresh the lock even when its changes, or the static "
                                "findings on the changed text, include errors (after reviewing them)."),
    upstream_proxy: str | None = upstream_proxy_option(),
    remote: RemoteFlags = RemoteFlags(),
) -> None:
    """Pin a server's tools (fingerprints over RFC 8785 JSON), instructions, prompts and resources, or --check a
    later tools/list against the pins.

    Exit codes: 0 the lock written, or (--check) no change at or above --fail-on; 1 a change at or above --fail-on,
    a lock whose signature --key does not verify, or a refresh held back by error-level changes (--accept takes
    them); 2 bad input; 3 a live TARGET could not be listed."""
    from scanner.lock.build import build_lock
    from scanner.lock.source import load_source
    from scanner.signing.keys import load_signer

    source_path = _validate(target or remote.url, from_file, check, fail_on, key, sign, sign_env, accept)
    if source_path is not None:
        _refuse_live_flags(upstream_proxy, command, remote)
    _check_paths(lock_path, check, json_path, source_path, sign, not check and (sign or sign_env) is not None)
    signer = None if check else load_signer(sign, sign_env)
    console = _console(stderr=json_path == STDOUT)
    old = _trusted_lock(console, lock_path, key) if check else None
    if source_path is None:
        report = live_report(target, list(server_args or []), command, upstream_from_cli(upstream_proxy), remote)
        new = build_lock(report.as_served())
    else:
        source = load_source(source_path)
        new = build_lock(source.report, instructions_known=source.instructions_known)
    if old is not None:
        check_against_lock(console, old, new, lock_path, json_path, fail_on)
    else:
        write_with_changes(console, new, lock_path, signer, accept, json_path)


def live_report(target: str | None, server_args: list[str], command: str | None,
                upstream_proxy: UpstreamProxy | None = None, remote: RemoteFlags = RemoteFlags()) -> Report:
    """Scan the target in the sandbox (default policy), or the --url server (read-only tools only), for its live
    definitions; exit 3 when it could not list."""
    from rich.console import Console

    from scanner.cli.remote_scan import lockable, scan_remote
    from scanner.cli.sandboxed import run_sandboxed
    from scanner.pipeline.scan import ScanOptions

    console = Console(stderr=True, highlight=False, emoji=False)
    if remote.url is not None or remote.given_without_url():
        if command is not None:
            raise UsageError("--command launches a sandboxed server; a --url server runs elsewhere: drop --command")
        report = scan_remote(remote, ScanOptions(target=""), target, server_args)
    else:
        assert target is not None
        report = run_sandboxed(ScanOptions(target=target, server_args=server_args, command=command,
                                           upstream_proxy=upstream_proxy), "scanning")
    if report.errors or not lockable(report) or not report.server.name and not report.tools:
        for error in report.errors or ["the server listed nothing"]:
            console.print(f"error: {escape_for_terminal(error)}", markup=False)
        raise typer.Exit(3)
    return report


def register(app: typer.Typer) -> None:
    app.command("lock")(lock)
