"""Batch report paths from hostile names, the summary (JSON and Markdown) and the batch's exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.batch.report_paths import report_path, safe_component
from scanner.batch.store import Row
from scanner.batch.summary import batch_exit, summary_markdown, write_summary
from scanner.batch.targets import BatchTarget

PLAIN = BatchTarget("npm:x@1.0.0")


@pytest.mark.parametrize("hostile", ["..", ".", "../../etc/passwd", "/etc/passwd", "a/../../b", "\x00\n\x1b[31m",
                                     "..\\..\\windows", "~root", "", "%2e%2e%2f", "\u202egnp.exe", "." * 300])
def test_a_hostile_component_never_leaves_the_reports_folder(tmp_path: Path, hostile: str) -> None:
    path = report_path(tmp_path, PLAIN, hostile, hostile, hostile)
    base = (tmp_path / "reports").resolve()
    assert path.resolve().is_relative_to(base)
    assert all(part not in ("", ".", "..") and not part.startswith(".") for part in path.relative_to(base).parts)
    assert len(path.relative_to(base).parts) in (3, 4)  # ecosystem / name [/ name] / version.json


def test_a_scoped_npm_name_is_two_folders_and_other_slashes_are_replaced(tmp_path: Path) -> None:
    base = tmp_path / "reports"
    scoped = BatchTarget("npm:@scope/server@1.2.3")
    assert report_path(tmp_path, scoped, "npm", "@scope/server", "1.2.3") == base.resolve() / "npm/@scope/server/1.2.3.json"
    assert report_path(tmp_path, PLAIN, "pypi", "@scope/server", "1.2.3").parent.name == "@scope_server"
    assert report_path(tmp_path, PLAIN, "npm", "@a/b/c", "1").parent.name == "@a_b_c"


def test_one_package_scanned_with_two_commands_gets_two_files(tmp_path: Path) -> None:
    plain = report_path(tmp_path, BatchTarget("/zoo", "zoo-plain"), "pypi", "mcp-zoo", "0.1.0")
    other = report_path(tmp_path, BatchTarget("/zoo", "zoo-hang"), "pypi", "mcp-zoo", "0.1.0")
    assert plain != other and plain.parent == other.parent
    assert plain.name.startswith("0.1.0+zoo-plain-") and plain.suffix == ".json"


def test_a_symlinked_folder_that_points_outside_is_refused(tmp_path: Path) -> None:
    (tmp_path / "reports" / "npm").mkdir(parents=True)
    (tmp_path / "reports" / "npm" / "x").symlink_to(tmp_path.parent)
    with pytest.raises(ValueError, match="outside"):
        report_path(tmp_path, PLAIN, "npm", "x", "1.0.0")


def test_safe_component_keeps_ordinary_names() -> None:
    assert [safe_component(s) for s in ("mcp-server-time", "1.0.0+local", "@scope", "2.0.0-rc.1")] == [
        "mcp-server-time", "1.0.0+local", "@scope", "2.0.0-rc.1"]


def _row(key: str, state: str = "done", status: str | None = "complete", verdict: str | None = "pass",
         worst: str | None = None, **extra: object) -> Row:
    return Row(key=key, position=0, target=f"npm:{key}", command=None, server_args=(), origin="", state=state,
               attempts=1, not_before=0, status=status, verdict=verdict, worst=worst, **extra)  # type: ignore[arg-type]


def test_exit_code_is_1_for_a_blocked_target_even_when_others_are_incomplete() -> None:
    rows = [_row("a"), _row("b", verdict="block", worst="error"), _row("c", state="failed", status=None, verdict=None)]
    assert batch_exit(rows, "error").code == 1
    assert batch_exit(rows, "never").code == 3  # --fail-on never: nothing fails, but c was not vetted


@pytest.mark.parametrize(("row", "code"), [
    (_row("x"), 0),
    (_row("x", worst="warning", verdict="review"), 0),
    (_row("x", status="incomplete", verdict="incomplete"), 3),
    (_row("x", state="skipped", status=None, verdict=None), 3),
    (_row("x", state="queued", status=None, verdict=None), 3),
])
def test_exit_code_of_one_target(row: Row, code: int) -> None:
    assert batch_exit([row], "error").code == code


def test_warning_fails_the_gate_at_fail_on_warning() -> None:
    assert batch_exit([_row("x", worst="warning", verdict="review")], "warning").code == 1


def test_the_summary_lists_every_target_with_its_findings_and_report(tmp_path: Path) -> None:
    hostile = "| <script>alert(1)</script> [link](javascript:x) @everyone"
    rows = [_row("good", score=100, report="reports/npm/good/1.0.0.json"),
            _row("bad", verdict="block", worst="error", score=40, report="reports/npm/bad/2.0.0.json",
                 findings=[{"rule_id": "B2", "severity": "error", "tool": "t", "message": hostile}]),
            _row("gone", state="failed", status=None, verdict=None, error="npm has no gone")]
    decision = write_summary(tmp_path, rows, "error")
    assert decision.code == 1
    document = json.loads((tmp_path / "summary.json").read_text())
    assert [t["target"] for t in document["targets"]] == ["npm:good", "npm:bad", "npm:gone"]
    assert document["targets"][1]["fails_gate"] is True and document["targets"][1]["top_findings"][0]["rule_id"] == "B2"
    assert document["exit"]["code"] == 1 and document["verdicts"] == {"pass": 1, "block": 1}
    markdown = (tmp_path / "summary.md").read_text()
    table = [line for line in markdown.splitlines() if line.startswith("| npm:")]
    assert len(table) == 3
    assert all(line.count(" | ") == 5 for line in table)  # the hostile message adds no column
    assert "<script>" not in markdown and "@everyone" not in markdown
    assert "(reports/npm/good/1.0.0.json)" in markdown and "npm has no gone" in markdown


def test_the_markdown_of_an_empty_batch_says_so() -> None:
    assert "Verdicts: none yet" in summary_markdown([], "error")


CUT_SHORT = """
import resource, signal, sys
from pathlib import Path
from tests.test_batch_summary import _row
from scanner.batch.summary import write_summary
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails (EFBIG), as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
try:
    write_summary(Path(sys.argv[1]), [_row(f"target-{n}", error="x" * 200) for n in range(2000)], "error")
except OSError as exc:
    print(exc.errno)
"""


def test_a_summary_write_cut_short_leaves_the_earlier_summary_whole(tmp_path: Path) -> None:
    import errno
    import subprocess
    import sys

    from tests.sandbox_helpers import REPO

    write_summary(tmp_path, [_row("earlier")], "error")
    before = {name: (tmp_path / name).read_text() for name in ("summary.json", "summary.md", "summary.html")}
    done = subprocess.run([sys.executable, "-c", CUT_SHORT, str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == str(errno.EFBIG), done.stderr
    assert {name: (tmp_path / name).read_text() for name in before} == before
    assert json.loads(before["summary.json"])["targets"][0]["target"] == "npm:earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.html", "summary.json", "summary.md"]
