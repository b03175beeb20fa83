"""A Ctrl-C while the CLI itself imports (typer, rich, the app: the first tenth of a second) ends the command with
exit 130 and one line, not a traceback of the import machinery. Real processes, a real SIGINT delivered while
`scanner.cli.app` imports."""

from __future__ import annotations

from tests.sandbox_helpers import run_python

# A finder ahead of the others that, when `module` (scanner.cli.app unless said) is imported, sends SIGINT to this
# process and waits for it: the interrupt lands inside that import, as a Ctrl-C pressed at start-up does.
_CHILD = """
import os, signal, sys, time
class InterruptingFinder:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        return None
sys.meta_path.insert(0, InterruptingFinder())
sys.argv = ["mcp-sandbox", *{argv!r}]
{entry}
"""
ENTRY = "from scanner.cli.entry import main\nmain()"


def _child(entry: str = ENTRY, module: str = "scanner.cli.app", argv: tuple[str, ...] = ("--version",)) -> str:
    return _CHILD.format(entry=entry, module=module, argv=list(argv))


def test_a_ctrl_c_while_the_cli_imports_exits_130_with_one_line() -> None:
    child = run_python(_child())
    assert (child.returncode, child.stderr, child.stdout) == (130, "interrupted\n", "")


def test_the_near_miss_the_app_imported_unguarded_ends_in_a_traceback() -> None:
    child = run_python(_child(entry="from scanner.cli.app import main\nmain()"))
    assert child.returncode != 130 and "Traceback" in child.stderr and "KeyboardInterrupt" in child.stderr


def test_without_an_interrupt_the_entry_runs_the_cli() -> None:
    child = run_python("import sys\nsys.argv = ['mcp-sandbox', '--version']\n"
                       "from scanner.cli.entry import main\nmain()")
    assert child.returncode == 0 and child.stdout.startswith("mcp-sandbox")


def test_a_ctrl_c_while_a_package_scan_begins_its_sink_exits_130_with_one_line() -> None:
    """The entry begins a package scan's sink before it imports the CLI (scanner/cli/early_start.py): a Ctrl-C while
    that code imports (docker), before anything began, is the same one line."""
    child = run_python(_child(module="docker", argv=("scan", "pypi:mcp-server-time", "-q")))
    assert (child.returncode, child.stderr, child.stdout) == (130, "interrupted\n", "")
