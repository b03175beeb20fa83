#!/usr/bin/env python3
"""The mcp-sandbox GitHub Action (action.yml): validate the inputs (action_inputs.py), scan, check or refresh the
lock, write the job summary and the step outputs.

It reads what GitHub gives a step: INPUT_* variables (action.yml maps each input to one, hyphens as underscores),
GITHUB_OUTPUT and GITHUB_STEP_SUMMARY (files), and MCP_SANDBOX_BIN (the scanner the install step put in a venv;
default `mcp-sandbox` on PATH). Every input is validated first: a bad one prints one line `error: input "NAME": ...`
and exits 2 before anything runs. Inputs are passed to the scanner as separate arguments (`--flag=value`), never
through a shell.

Exit code: the most serious of the steps' codes: 130 interrupted, 3 the scan could not complete (also a scanner
killed by a signal or ending with an undocumented code), 2 bad input, 1 findings at/above `fail-on` (or score under
`fail-under`) or lock changes at/above `lock-fail-on`, 0 clean.
Standard library plus one module of the mcp-sandbox package: it runs under the Python of the venv the
install step made (MCP_SANDBOX_PYTHON), and untrusted text is escaped by sandbox.core.untrusted like everywhere
else (a standard-library-only module)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import uuid
from pathlib import Path

from action_inputs import ENGINE_USED, Config, InputError, load_config  # scripts/action_inputs.py
from sandbox.core.untrusted import escape_invisible
from scanner.report.markdown_text import inert

OUTPUTS = ("verdict", "score", "sarif", "report", "markdown", "attestation", "lock-failed", "lock-changes",
           "exit-code")

SUMMARY_LIMIT = 900_000  # GitHub refuses a step summary over 1 MiB
MAX_CHANGE_ROWS = 100
MAX_UNCHECKED_ROWS = 20  # the things a lock check could not compare, listed in the summary


def scanner() -> list[str]:
    """MCP_SANDBOX_BIN as the install step writes it, the path of the venv's scanner taken whole (RUNNER_TEMP may
    hold spaces on a self-hosted runner); otherwise a command line, split like a shell's."""
    raw = os.environ.get("MCP_SANDBOX_BIN") or "mcp-sandbox"
    return [raw] if Path(raw).is_file() else shlex.split(raw)


def scan_argv(cfg: Config) -> list[str]:
    what = [cfg.target] if cfg.remote is None else remote_argv(cfg)
    argv = [*scanner(), "scan", *what, f"--json={cfg.report}", f"--sarif={cfg.sarif}",
            f"--markdown={cfg.markdown}", f"--fail-on={cfg.fail_on}"]
    if cfg.fail_under is not None:
        argv.append(f"--fail-under={cfg.fail_under}")
    if cfg.max_calls is not None:
        argv.append(f"--max-calls={cfg.max_calls}")
    if cfg.command:
        argv.append(f"--command={cfg.command}")
    argv += [f"--env={item}" for item in cfg.server_env]
    if cfg.sign_env:
        argv.append(f"--sign-env={cfg.sign_env}")
    if cfg.server_args:
        argv += ["--", *cfg.server_args]
    return argv


def remote_argv(cfg: Config) -> list[str]:
    """`--url URL` and its headers (the secrets stay in the environment: only their variables' names are passed)."""
    assert cfg.remote is not None
    remote = cfg.remote
    return [f"--url={remote.url}", *(f"--header={h}" for h in remote.headers),
            *(f"--header-env={h}" for h in remote.header_envs), *(["--allow-writes"] if remote.allow_writes else [])]


def shown_argv(argv: list[str], cfg: Config) -> str:
    """The command line as the log shows it: the URL replaced by its scheme and host (it is never printed)."""
    if cfg.remote is None:
        return shlex.join(argv)
    return shlex.join(f"--url={cfg.remote.shown}/[not shown]" if a == f"--url={cfg.remote.url}" else a for a in argv)


def lock_argv(cfg: Config) -> list[str]:
    assert cfg.lock is not None
    if cfg.lock_mode == "update":
        argv = [*scanner(), "lock", f"--from={cfg.report}", f"--lock={cfg.lock}"]
        return argv + ([f"--sign-env={cfg.sign_env}"] if cfg.sign_env else [])
    argv = [*scanner(), "lock", "--check", f"--from={cfg.report}", f"--lock={cfg.lock}", f"--json={cfg.changes}",
            f"--fail-on={cfg.lock_fail_on}"]
    return argv + ([f"--key={cfg.lock_key}"] if cfg.lock_key else [])


def run(argv: list[str], cfg: Config, *, with_key: bool) -> int:
    """Run one scanner command; the signing key's variable reaches only the commands that sign.

    On GitHub the scanner's output is read by the runner between `::stop-commands::TOKEN` and `::TOKEN::` (TOKEN
    random, never given to the scanner), its stderr merged into stdout so both are inside that window: the runner
    takes any line that starts with `::` after its leading spaces as a workflow command, and the terminal view wraps
    a server's long text (its instructions, stderr, errors) onto lines of their own that can start so."""
    env = dict(os.environ)
    if cfg.sign_env and not with_key:
        env.pop(cfg.sign_env, None)
    on_github = _on_github()
    print("::group::" if on_github else "==>", shown_argv(argv, cfg), flush=True)
    token = f"mcp-sandbox-{uuid.uuid4().hex}"
    if on_github:
        print(f"::stop-commands::{token}", flush=True)
    try:
        returncode = subprocess.run(argv, cwd=cfg.workdir, env=env, check=False,
                                    stderr=subprocess.STDOUT if on_github else None).returncode
    except FileNotFoundError:
        print(f"error: the scanner {argv[0]!r} was not found (MCP_SANDBOX_BIN)", file=sys.stderr)
        return 3
    finally:
        if on_github:
            print(f"::{token}::", flush=True)
            print("::endgroup::", flush=True)
    code = exit_code_of(returncode)
    if code != returncode:
        how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited with {returncode}"
        print(f"error: the scanner {how}: counted as exit {code}", file=sys.stderr, flush=True)
    return code


def exit_code_of(returncode: int) -> int:
    """A scanner command's exit code as the action documents it: 0, 1, 2 and 3 as they are, 130 for an interrupt
    (also a scanner killed by SIGINT), and 3 for anything else: a scanner killed by a signal (OOM, SIGKILL, SIGTERM)
    or exiting with a code of no documented meaning did not complete."""
    if returncode == -signal.SIGINT:
        return 130
    return returncode if returncode in (0, 1, 2, 3, 130) else 3


def combine(*codes: int) -> int:
    for code in (130, 3, 2, 1):
        if code in codes:
            return code
    return max(codes, key=abs) if any(codes) else 0


def md(text: object, limit: int = 300) -> str:
    """Untrusted text made inert in Markdown/HTML as the report's `md` makes it (scanner.report.markdown_text.inert):
    invisible and control characters as visible escapes, no mention, autolink, issue link or emoji."""
    value = str(text if text is not None else "")
    if len(value) > limit:
        value = value[:limit] + f"…(+{len(value) - limit} chars)"
    return inert(escape_invisible(value))


def lock_summary(cfg: Config, code: int | None) -> str:
    assert cfg.lock is not None
    name = md(cfg.lock.name, 200)
    if code is None:
        return f"\n### Lock {name}\n\nNot compared: the scan did not complete.\n"
    if cfg.lock_mode == "update":
        state = {0: "refreshed", 1: "not refreshed (exit 1: its error-level changes need `mcp-sandbox lock --accept`)"
                 }.get(code, f"not refreshed (exit {code}); see the log")
        return f"\n### Lock {name}\n\nLock {state}.\n"
    try:
        data = json.loads(cfg.changes.read_text(encoding="utf-8"))
        changes = list(data["changes"])
        counts = data["counts"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"\n### Lock {name}\n\nThe lock check did not complete (exit {code}); see the log.\n"
    icon = "⛔" if data.get("failed") else "✅"
    lines = ["", f"### {icon} Lock check against {name}: {len(changes)} changes", "",
             (f"**{counts.get('error', 0)}** errors · **{counts.get('warning', 0)}** warnings · "
              f"**{counts.get('info', 0)}** info · fails at `{cfg.lock_fail_on}`")]
    unchecked = data.get("not_compared")
    if isinstance(unchecked, list) and unchecked:
        lines += ["", "Not compared (not evidence of no change):", ""]
        lines += [f"- {md(what, 300)}" for what in unchecked[:MAX_UNCHECKED_ROWS]]
        if len(unchecked) > MAX_UNCHECKED_ROWS:
            lines.append(f"- …and {len(unchecked) - MAX_UNCHECKED_ROWS} more (see {md(cfg.changes.name)})")
    lines += _rows(changes, ("kind", "change"), "kind", cfg)
    findings = data.get("findings")
    if isinstance(findings, list) and findings:
        noun = "finding" if len(findings) == 1 else "findings"
        lines += ["", f"Static rules on the changed definitions: {len(findings)} {noun} (they count for "
                      f"`{cfg.lock_fail_on}` like changes)"]
        lines += _rows(findings, ("rule", "finding"), "rule_id", cfg)
    return "\n".join(lines) + "\n"


def _rows(items: list[object], heads: tuple[str, str], what: str, cfg: Config) -> list[str]:
    """A table of lock changes or findings (severity, `what`, tool, message), at most MAX_CHANGE_ROWS of them."""
    rows = [item for item in items if isinstance(item, dict)]
    if not rows:
        return []
    lines = ["", f"| severity | {heads[0]} | tool | {heads[1]} |", "| --- | --- | --- | --- |"]
    for row in rows[:MAX_CHANGE_ROWS]:
        tool = "(server)" if row.get("tool") is None else md(row.get("tool"), 120)
        lines.append(f"| {md(row.get('severity'), 20)} | {md(row.get(what), 40)} | {tool} | {md(row.get('message'))} |")
    if len(rows) > MAX_CHANGE_ROWS:
        lines += ["", f"…and {len(rows) - MAX_CHANGE_ROWS} more (see {md(cfg.changes.name)})."]
    return lines


def write_summary(cfg: Config, scan_code: int, lock_code: int | None) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not cfg.summary or not target:
        return
    try:
        text = cfg.markdown.read_text(encoding="utf-8", errors="replace")
    except OSError:
        what = cfg.target if cfg.remote is None else cfg.remote.shown
        text = f"## mcp-sandbox: no report for {md(what)}\n\nThe scan exited with code {scan_code}; see the log.\n"
    if cfg.lock is not None:
        text += lock_summary(cfg, lock_code)
    if len(text) > SUMMARY_LIMIT:
        text = text[:SUMMARY_LIMIT].rsplit("\n", 1)[0] + "\n\n…summary cut; see the JSON report.\n"
    with open(target, "a", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(text + "\n")


def write_outputs(values: dict[str, str]) -> None:
    target = os.environ.get("GITHUB_OUTPUT")
    unknown = set(values) - set(OUTPUTS)
    assert not unknown, unknown
    if not target:
        for name, value in values.items():
            print(f"{name}={value}")
        return
    with open(target, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def read_report(path: Path) -> tuple[str, str]:
    """(verdict, score) from the JSON report; empty strings when it has none."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "", ""
    verdict = report.get("verdict") if isinstance(report, dict) else None
    score = report.get("score") if isinstance(report, dict) else None
    value = score.get("value") if isinstance(score, dict) else None
    return (verdict if isinstance(verdict, str) else "",
            str(value) if isinstance(value, int) and not isinstance(value, bool) else "")


def _mark_engine_used() -> None:
    """Leave ENGINE_USED in RUNNER_TEMP before anything runs: from here on the engine may run scanned servers, and
    scripts/action_images.py saves no image for the cache from it."""
    runner_temp = os.environ.get("RUNNER_TEMP")
    if runner_temp:
        Path(runner_temp, ENGINE_USED).touch()


def _on_github() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


def _error(message: str) -> None:
    line = f"error: {message}"
    if _on_github():  # an annotation; %, CR and LF escaped so a value cannot inject another workflow command
        line = "::error title=mcp-sandbox::" + line.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    print(line, file=sys.stderr, flush=True)


def prepare_report_paths(cfg: Config, attestation: Path) -> None:
    """Create the report folder and the SARIF file's folder, and remove a previous run's files (never reported as
    this run's). A path that cannot be made (a file in the way, no permission) is the input's fault: InputError."""
    for name, folder in (("report-dir", cfg.report_dir), ("sarif", cfg.sarif.parent)):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(name, f"cannot create the folder {folder}: {exc.strerror or exc}") from None
    for name, stale in (("report-dir", cfg.report), ("report-dir", cfg.markdown), ("sarif", cfg.sarif),
                        ("report-dir", cfg.changes), ("report-dir", attestation)):
        try:
            stale.unlink(missing_ok=True)
        except OSError as exc:
            raise InputError(name, f"cannot replace {stale}: {exc.strerror or exc}") from None


def main() -> int:
    _mark_engine_used()
    try:
        cfg = load_config()
    except InputError as exc:
        _error(str(exc))
        return 2
    attestation = cfg.report.with_name(cfg.report.name + ".intoto.json")
    try:
        prepare_report_paths(cfg, attestation)
    except InputError as exc:
        _error(str(exc))
        return 2

    scan_code = run(scan_argv(cfg), cfg, with_key=True)
    if scan_code in (0, 1) and not cfg.report.is_file():
        _error(f"the scan exited with {scan_code} but wrote no report at {cfg.report}")
        scan_code = 3
    lock_code = None
    if cfg.lock is not None and scan_code in (0, 1):
        lock_code = run(lock_argv(cfg), cfg, with_key=cfg.lock_mode == "update")

    verdict, score = read_report(cfg.report)
    changes = ""
    if lock_code is not None and cfg.lock_mode == "check":
        try:
            changes = str(len(json.loads(cfg.changes.read_text(encoding="utf-8"))["changes"]))
        except (OSError, ValueError, KeyError, TypeError):
            changes = ""
    code = combine(scan_code, lock_code or 0)
    write_outputs({
        "verdict": verdict,
        "score": score,
        "sarif": str(cfg.sarif) if cfg.sarif.is_file() else "",
        "report": str(cfg.report) if cfg.report.is_file() else "",
        "markdown": str(cfg.markdown) if cfg.markdown.is_file() else "",
        "attestation": str(attestation) if attestation.is_file() else "",
        "lock-failed": "" if lock_code is None else str(lock_code != 0).lower(),
        "lock-changes": changes,
        "exit-code": str(code),
    })
    write_summary(cfg, scan_code, lock_code)
    if code:
        _error(f"mcp-sandbox: verdict {verdict or 'none'}, score {score or 'none'}, scan exit {scan_code}"
               + (f", lock exit {lock_code}" if lock_code is not None else "") + f" -> exit {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
