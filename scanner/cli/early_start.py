"""A package scan's sink, begun before the CLI reads its flags.

The CLI spends its first ~0.15 s importing typer and pydantic and reading the flags, and only then begins the head
start (scanner/pipeline/head_start.py), whose sink takes the engine ~0.2 s to start; the server cannot start before
the sink is ready. When the command line looks like a sandboxed package scan (`looks_like_package_scan`), the entry
point begins the head start's engine connection, session and sink first, and imports the CLI while the engine works;
the scan adopts that head start once its flags are read (scanner/cli/scan_door.py `head_start`).

The look at the command line is a guess, never a decision: it only says whether to begin early. The scan's own
reading of its flags decides what runs, and a head start it does not adopt (a bad flag, a refused or remote target,
`--help`) is closed, which tears its sink down, before the command ends. A misjudged command line costs a sink
started and removed, never a scan that differs. Its guess is conservative: any flag that makes a scan remote,
several, unobserved or a help text means nothing is begun.

A signal while the CLI imports (SIGTERM and SIGHUP as Ctrl-C) closes the head start, so nothing is left behind,
and ends the command with exit 130 and one line true to the teardown. A process killed outright leaves containers
labelled with its session, which the next scan's gc sweep removes once the process is gone.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scanner.pipeline.head_start import HeadStart

# Flags of `scan` after which it is not one sandboxed package scan observed by a sink (remote, several servers):
# no head start is begun for these (nor for --help, -h, which are not among SCAN_FLAGS).
NOT_BEGUN = frozenset({"--url", "--header", "--header-env", "--allow-writes", "--config-file", "--server",
                       "--pass-config-env"})
IMAGE_PREFIX = "docker:"  # a container image's scan starts its own engine work (scanner/pipeline/image_target.py)
# Every flag `scan` takes (tests/test_early_start.py keeps this equal to the command's): any other is a usage error,
# which comes sooner with nothing begun (no sink to tear down before the error line's exit 2).
SCAN_FLAGS = frozenset({
    "--accept", "--advisories", "--allow-writes", "--ca-bundle", "--command", "--config", "--config-file", "--cpus",
    "--env", "--fail-on", "--fail-under", "--fixtures", "--github-annotations", "--header", "--header-env",
    "--ignore-scripts", "--include-responses", "--install-timeout", "--json", "--lock", "--markdown", "--max-calls",
    "--memory", "--min-severity", "--network", "--no-cache", "--no-destructive", "--no-error-probes", "--no-probes",
    "--pass-config-env", "--pids", "--probe-timeout", "--quiet", "--request-timeout", "--sarif", "--server", "--sign",
    "--sign-env", "--spec", "--spec-version", "--startup-timeout", "--upstream-proxy", "--url", "--vet-dependencies",
})
SHORT_FLAGS = frozenset("q")


def looks_like_package_scan(argv: Sequence[str]) -> bool:
    """Whether `argv` (without the program's name) looks like `scan` of one package in the observed sandbox: a
    target or a launch command after `--`, only flags `scan` takes (so no --help, -h, -qh) and none of NOT_BEGUN,
    no --network but observe, no container image. What comes after `--` is the server's and is not read."""
    if not argv or argv[0] != "scan":
        return False
    words = list(argv[1:])
    head = words[:words.index("--")] if "--" in words else words
    launch = len(head) < len(words) - 1  # words after `--`: a launch command (or the server's arguments)
    if not launch and all(word.startswith("-") for word in head):
        return False  # nothing to scan: the usage error
    for at, word in enumerate(head):
        flag, equals, value = word.partition("=")
        if flag in NOT_BEGUN or word.startswith(IMAGE_PREFIX) or _unknown_flag(flag):
            return False
        if flag == "--network" and (value if equals else _next(head, at)) != "observe":
            return False
    return True


def _unknown_flag(word: str) -> bool:
    """A flag `scan` does not take (`-` alone is a value: stdout)."""
    if word.startswith("--"):
        return word not in SCAN_FLAGS
    return word.startswith("-") and len(word) > 1 and not set(word[1:]) <= SHORT_FLAGS


def _next(words: list[str], at: int) -> str | None:
    return words[at + 1] if at + 1 < len(words) else None


def run_with_head_start(run: Callable[[HeadStart | None], None]) -> None:
    """Begin the head start (observing, the run policy's kind of host name, building no image), then `run` the CLI
    with it to adopt; close it on the way out, whatever ended the command. An interrupt that reaches here (the
    imports before the CLI runs, the CLI's own) ends with exit 130 and one line true to the teardown; a command
    that ended otherwise without adopting it says so only if its teardown left something."""
    early: HeadStart | None = None
    settled = False
    try:
        from sandbox.run.policy import plausible_hostname
        from scanner.pipeline.head_start import HeadStart
        from scanner.pipeline.interrupts import INTERRUPTED_EXIT, keep_lost_interrupts, terminate_as_interrupt

        with ExitStack() as stack:
            stack.enter_context(keep_lost_interrupts())
            stack.enter_context(terminate_as_interrupt())  # caught before the sink's container is created
            early = stack.enter_context(HeadStart(observe=True, hostname=plausible_hostname(), build_images=False))
            try:
                run(early)
            finally:
                settled = early.closed  # adopted or let go by the command, which then said what became of it
    except SystemExit as ended:
        if early is not None and not early.begun:
            _say_after(early, interrupted=ended.code == INTERRUPTED_EXIT and not settled)  # bound: `early` is set after the imports
        raise
    except (KeyboardInterrupt, Exception) as exc:  # an interrupt, also as what an import made of it; others go on
        from scanner.pipeline.interrupts import INTERRUPTED_EXIT, caused_by_interrupt, forget_handled_interrupts

        if not caused_by_interrupt(exc):
            raise
        _say(early.interrupted_line() if early is not None else "interrupted")
        forget_handled_interrupts()
        sys.exit(INTERRUPTED_EXIT)


def _say_after(early: HeadStart, *, interrupted: bool) -> None:
    """After a command that did not adopt the head start (closed by now): the interrupted line when an interrupt
    ended the command before it adopted or let go of the head start (typer ends one inside a command without a
    word); otherwise a line only when the teardown left something."""
    if interrupted:
        _say(early.interrupted_line())
        return
    left = early.left_behind()
    if left == [] or not early.connected:
        return
    what = f"left {', '.join(left)}" if left else "its teardown failed"
    _say(f"warning: the sandbox begun for this scan was not fully torn down: {what}; `mcp-sandbox gc` removes "
         "what is left")


def _say(line: str) -> None:
    """One line on stderr, the engine's words in it escaped."""
    from sandbox.core.untrusted import escape_for_terminal

    print(escape_for_terminal(line, 2000), file=sys.stderr)
