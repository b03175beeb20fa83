"""SIGTERM ends a scan like Ctrl-C even when the process was started with SIGINT ignored (`cmd &` from a script),
and a process started under `nohup` keeps ignoring SIGHUP. Real processes and real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scanner.pipeline.interrupts import terminate_as_interrupt, uninterruptible
from tests.sandbox_helpers import run_python

_CHILD = """
import signal, sys, time
from scanner.pipeline.interrupts import terminate_as_interrupt
try:
    with terminate_as_interrupt():
        print("ready", flush=True)
        time.sleep(30)
    print("slept through", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def _run(send: signal.Signals, *, ignore: tuple[signal.Signals, ...]) -> tuple[int, str]:
    def ignoring() -> None:
        for sig in ignore:
            signal.signal(sig, signal.SIG_IGN)

    child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, text=True, preexec_fn=ignoring)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    child.send_signal(send)
    time.sleep(0.5)
    if child.poll() is None:  # still sleeping: the signal was dropped
        child.kill()
        return child.wait(), "still running"
    return child.returncode, child.stdout.read().strip()


def test_sigterm_interrupts_a_process_started_with_sigint_ignored() -> None:
    assert _run(signal.SIGTERM, ignore=(signal.SIGINT,)) == (130, "interrupted")


def test_sigterm_interrupts_a_process_started_normally() -> None:
    assert _run(signal.SIGTERM, ignore=()) == (130, "interrupted")


def test_sighup_is_still_ignored_under_nohup() -> None:
    code, said = _run(signal.SIGHUP, ignore=(signal.SIGHUP,))
    assert said == "still running", said


def test_sighup_interrupts_without_nohup() -> None:
    assert _run(signal.SIGHUP, ignore=()) == (130, "interrupted")


_EXEC_CHILD = """
import sys
from scanner.pipeline.interrupts import forget_handled_interrupts, terminate_as_interrupt
try:
    with terminate_as_interrupt():
        print("ready", flush=True)
        while True:
            exec("for _ in range(200_000): pass")  # nearly all of its time in code run from a string
except KeyboardInterrupt:
    print("interrupted", flush=True)
    forget_handled_interrupts()
    sys.exit(130)
"""


def _exec_child(tmp_path: Path, source: str, send: signal.Signals) -> tuple[int, str]:
    """Run `source` as `python -m` (the scanner's own way: the flag below decides a `-m` run's exit, while a
    `-c` or file run exits from SystemExit first), signal it once it is in its loop."""
    (tmp_path / "exec_child.py").write_text(source)
    child = subprocess.Popen([sys.executable, "-m", "exec_child"], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    time.sleep(0.05)
    child.send_signal(send)
    out, _ = child.communicate(timeout=30)
    return child.returncode, out.strip()


@pytest.mark.parametrize("send", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_inside_code_run_from_a_string_still_exits_130(tmp_path: Path, send: signal.Signals) -> None:
    """CPython 3.11 ends a `-m` process with SIGINT at exit (returncode -2) once a KeyboardInterrupt left code
    exec'd from a string, even if it was caught: forget_handled_interrupts, called before the exit, clears that."""
    for _ in range(3):
        assert _exec_child(tmp_path, _EXEC_CHILD, send) == (130, "interrupted")


def test_the_near_miss_a_keyboard_interrupt_leaving_exec_ends_the_process_with_sigint(tmp_path: Path) -> None:
    """Why: the same child without the call exits -2 although it printed that it caught the interrupt."""
    plain = _EXEC_CHILD.replace("    forget_handled_interrupts()\n", "")
    assert "forget_handled_interrupts()\n" not in plain
    for send in (signal.SIGINT, signal.SIGTERM):
        assert _exec_child(tmp_path, plain, send) == (-signal.SIGINT, "interrupted")


# uninterruptible(): the signals a critical section holds, in this process (its main thread), with real signals.

def _signalled_inside(*, redeliver: bool = True, then: BaseException | None = None) -> list[str]:
    """A section that gets SIGTERM (as a scan ending by SIGTERM gets it) and goes on; what it reached, in order."""
    reached: list[str] = []
    with terminate_as_interrupt():
        try:
            with uninterruptible(redeliver=redeliver):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)  # the handler has run by now (it runs between bytecodes of this thread)
                reached.append("section ended")
                if then is not None:
                    raise then
            reached.append("after the section")
        except KeyboardInterrupt:
            reached.append("interrupted")
        except ValueError:
            reached.append("its error")
    return reached


def test_a_signal_held_by_a_section_ends_the_scan_once_the_section_is_over() -> None:
    assert _signalled_inside() == ["section ended", "interrupted"]


def test_a_section_that_raised_keeps_its_error_and_drops_the_held_signal() -> None:
    assert _signalled_inside(then=ValueError("teardown failed")) == ["section ended", "its error"]


def test_a_section_of_a_scan_ending_already_drops_the_held_signal() -> None:
    assert _signalled_inside(redeliver=False) == ["section ended", "after the section"]


def test_a_section_inside_a_section_hands_its_signal_to_the_outer_one() -> None:
    reached: list[str] = []
    with terminate_as_interrupt(), pytest.raises(KeyboardInterrupt):
        with uninterruptible():
            with uninterruptible():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.05)
            reached.append("inner ended")
            time.sleep(0.05)
            reached.append("outer ended")
    assert reached == ["inner ended", "outer ended"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # every handler back as it was


_CLI_CHILD = """
from scanner.cli import app
def interrupted(**_kwargs):
    exec("raise KeyboardInterrupt")  # as a Ctrl-C landing in a dataclass's generated method while modules import
app.app = interrupted
app.main()
"""


def _cli_child(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    """`source` (which replaces the CLI's app and calls its main) run as `python -m`, as the CLI runs."""
    (tmp_path / "cli_child.py").write_text(source)
    return subprocess.run([sys.executable, "-m", "cli_child"], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}, timeout=60)


def test_the_cli_exits_130_after_an_interrupt_that_left_code_run_from_a_string(tmp_path: Path) -> None:
    child = _cli_child(tmp_path, _CLI_CHILD)
    assert child.returncode == 130, child.stderr
    assert "interrupted" in child.stderr


# keep_lost_interrupts(): a KeyboardInterrupt raised where CPython cannot raise it (a weakref callback, as the one
# that drops an import's module lock) is delivered again, not dropped.

_LOST_CHILD = """
import signal, sys, time, weakref
from scanner.pipeline.interrupts import keep_lost_interrupts

class Lock:
    pass

def dropped(_ref):  # as importlib's callback that drops a module lock: the Ctrl-C lands while it runs
    signal.raise_signal(signal.SIGINT)  # its handler runs at once: KeyboardInterrupt inside the callback

try:
    with keep_lost_interrupts():
        lock = Lock()
        ref = weakref.ref(lock, dropped)
        del lock
        time.sleep(2)
        print("ran on", flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_an_interrupt_raised_inside_a_weakref_callback_still_ends_the_process() -> None:
    child = run_python(_LOST_CHILD)
    assert (child.returncode, child.stdout.strip()) == (130, "interrupted"), child.stderr
    assert "Exception ignored" not in child.stderr


def test_the_near_miss_without_it_cpython_drops_that_interrupt_and_runs_on() -> None:
    plain = _LOST_CHILD.replace("    with keep_lost_interrupts():\n", "    if True:\n")
    assert "with keep_lost_interrupts()" not in plain
    child = run_python(plain)
    assert (child.returncode, child.stdout.strip()) == (0, "ran on")
    assert "Exception ignored in: <function dropped" in child.stderr
    assert "KeyboardInterrupt" in child.stderr


def test_other_exceptions_a_callback_raises_still_reach_the_hook_before_it() -> None:
    source = _LOST_CHILD.replace("signal.raise_signal(signal.SIGINT)", "raise ValueError('a bug')")
    child = run_python(source)
    assert (child.returncode, child.stdout.strip()) == (0, "ran on")
    assert "Exception ignored in: <function dropped" in child.stderr and "ValueError: a bug" in child.stderr


def test_the_hook_is_back_as_it_was_after_the_section() -> None:
    from scanner.pipeline.interrupts import keep_lost_interrupts

    before = sys.unraisablehook
    with keep_lost_interrupts():
        assert sys.unraisablehook is not before
    assert sys.unraisablehook is before


_CLI_LOST_CHILD = """
import signal, weakref
from scanner.cli import app

class Lock:
    pass

def interrupted(**_kwargs):
    lock = Lock()
    ref = weakref.ref(lock, lambda _ref: signal.raise_signal(signal.SIGINT))
    del lock
    import time
    time.sleep(2)
    print("ran on", flush=True)
    return 0
app.app = interrupted
app.main()
"""


def test_the_cli_exits_130_after_an_interrupt_cpython_would_have_dropped(tmp_path: Path) -> None:
    child = _cli_child(tmp_path, _CLI_LOST_CHILD)
    assert child.returncode == 130, child.stderr
    assert "interrupted" in child.stderr and "ran on" not in child.stdout


# caused_by_interrupt(): a Ctrl-C CPython turned into another error (3.11: a RuntimeError from `__set_name__`).

def _set_name_raising(raised: BaseException) -> RuntimeError:
    class Field:
        def __set_name__(self, owner: type, name: str) -> None:
            raise raised

    with pytest.raises(RuntimeError, match="Error calling __set_name__") as caught:
        type("Settings", (), {"environment": Field()})
    return caught.value


def test_an_error_cpython_made_of_a_ctrl_c_is_caused_by_an_interrupt() -> None:
    from scanner.pipeline.interrupts import caused_by_interrupt

    assert caused_by_interrupt(_set_name_raising(KeyboardInterrupt()))
    assert caused_by_interrupt(KeyboardInterrupt())


def test_the_near_miss_the_same_error_from_a_bug_is_not() -> None:
    from scanner.pipeline.interrupts import caused_by_interrupt

    assert not caused_by_interrupt(_set_name_raising(ValueError("a bug")))
    looped = ValueError("a")
    looped.__context__ = TypeError("b")
    looped.__context__.__context__ = looped  # a chain that loops ends the walk
    assert not caused_by_interrupt(looped)


def _schema_error_raising(raised: BaseException) -> Exception:
    """What pydantic-core raises when an exception is raised while it builds a validator (an enum member's `value`,
    read at build time): a SchemaError naming it in its text alone."""
    from pydantic_core import SchemaError, SchemaValidator, core_schema

    class Member:
        @property
        def value(self) -> object:
            raise raised

    with pytest.raises(SchemaError, match="Error building") as caught:
        SchemaValidator(core_schema.enum_schema(Member, [Member()]))
    assert caught.value.__cause__ is None and caught.value.__context__ is None  # the text is all there is
    return caught.value


def test_a_validator_build_pydantic_failed_for_a_ctrl_c_is_caused_by_an_interrupt() -> None:
    from scanner.pipeline.interrupts import caused_by_interrupt

    assert caused_by_interrupt(_schema_error_raising(KeyboardInterrupt()))
    wrapped = RuntimeError("importing the report views")
    wrapped.__cause__ = _schema_error_raising(KeyboardInterrupt())
    assert caused_by_interrupt(wrapped)


def test_the_near_miss_a_validator_build_failed_by_a_bug_naming_the_interrupt_is_not() -> None:
    from scanner.pipeline.interrupts import caused_by_interrupt

    assert not caused_by_interrupt(_schema_error_raising(ValueError("KeyboardInterrupt: in a message")))
    assert not caused_by_interrupt(ValueError("Error building validator:\n  KeyboardInterrupt: "))  # not pydantic's


_CLI_WRAPPED_CHILD = """
from scanner.cli import app
class Field:
    def __set_name__(self, owner, name):
        raise {raised}
def interrupted(**_kwargs):
    type("Settings", (), {{"environment": Field()}})  # as a dataclass made while a module imports
app.app = interrupted
app.main()
"""


_CLI_SCHEMA_CHILD = """
from pydantic_core import SchemaValidator, core_schema
from scanner.cli import app
class Member:
    @property
    def value(self):
        raise {raised}
def interrupted(**_kwargs):
    SchemaValidator(core_schema.enum_schema(Member, [Member()]))  # as a model made while a report view imports
app.app = interrupted
app.main()
"""


@pytest.mark.parametrize("child_source", [_CLI_WRAPPED_CHILD, _CLI_SCHEMA_CHILD], ids=["set_name", "validator"])
@pytest.mark.parametrize(("raised", "code", "said"), [("KeyboardInterrupt", 130, "interrupted"),
                                                      ("ValueError('a bug')", 3, "error: internal error")])
def test_the_cli_exits_130_after_a_ctrl_c_cpython_wrapped_and_3_after_a_bug_so_wrapped(
        tmp_path: Path, child_source: str, raised: str, code: int, said: str) -> None:
    child = _cli_child(tmp_path, child_source.format(raised=raised))
    assert child.returncode == code, child.stderr
    assert child.stderr.startswith(said)


_IMPORT_CHILD = """
import os, signal, sys, threading
from scanner.cli import scan as scan_cli
threading.Timer(0.05, os.kill, args=(os.getpid(), signal.SIGINT)).start()  # while the scan path imports
try:
    scan_cli._run(None)  # the interrupt is raised before the options are used
except KeyboardInterrupt:
    print("interrupted", "scanner.pipeline.image_scan" in sys.modules, flush=True)
"""


def test_a_ctrl_c_while_the_scan_path_imports_is_raised_once_it_is_imported() -> None:
    """Held to the import's end (interrupts.uninterruptible), then raised: never inside the import, where CPython may
    drop it or turn it into another error."""
    imported = run_python("import sys, scanner.cli.scan; print(sorted(sys.modules))").stdout
    assert "scanner.pipeline.image_scan" not in imported
    child = run_python(_IMPORT_CHILD)
    assert child.stdout.strip() == "interrupted True", child.stderr


# `lock TARGET` and `init-fixtures` scan in a sandbox too: interrupted, they end as `scan` does, with the line that says
# what the teardown left. Typer turns a KeyboardInterrupt a command lets escape into exit 130 with nothing said.

_LEFT = "0123456789ab (the engine refused to remove it: device or resource busy)"
_SCAN_INTERRUPTED_CHILD = """
import sys
from scanner.cli import app
from scanner.pipeline import image_scan
from scanner.pipeline.interrupts import ScanInterrupted
def interrupted(options, progress, head_start=None):
    raise ScanInterrupted(LEFT)
image_scan.run_target = interrupted
sys.argv = ["mcp-sandbox", *ARGS]
app.main()
"""


@pytest.mark.parametrize(("args", "left"), [
    (["lock", "ZOO"], [_LEFT]), (["init-fixtures", "FIXTURES", "ZOO"], [_LEFT]), (["lock", "ZOO"], None),
    (["init-fixtures", "FIXTURES", "ZOO"], []),
])
def test_an_interrupted_sandboxed_command_says_what_its_teardown_left(
        tmp_path: Path, args: list[str], left: list[str] | None) -> None:
    zoo = str(Path(__file__).resolve().parent / "servers" / "zoo")
    argv = [zoo if arg == "ZOO" else str(tmp_path / "fixtures.yaml") if arg == "FIXTURES" else arg for arg in args]
    source = _SCAN_INTERRUPTED_CHILD.replace("LEFT", repr(left)).replace("ARGS", repr(argv))
    (tmp_path / "cli_child.py").write_text(source)
    child = subprocess.run([sys.executable, "-m", "cli_child"], capture_output=True, text=True, cwd=tmp_path,
                           env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}, timeout=60)
    assert child.returncode == 130, child.stderr
    last = child.stderr.strip().splitlines()[-1] if child.stderr.strip() else ""
    if left is None:
        assert last == "interrupted; the sandbox's teardown failed: `mcp-sandbox gc` removes what it left"
    elif left:
        assert last.startswith("interrupted; the sandbox was not fully torn down: left 0123456789ab (the engine refused")
    else:
        assert last == "interrupted; the sandbox was torn down"
