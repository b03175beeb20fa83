"""File a finished scan's report in the batch directory: the JSON report as the scan wrote it, and the SARIF and
Markdown views on request, each written whole (a temporary file renamed into place) so a kill never leaves half a
report where a reader looks."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from sandbox.core.untrusted import escape_json_text
from scanner.batch.report_paths import REPORTS, report_path
from scanner.batch.targets import BatchTarget
from scanner.report.locations import report_artifact
from scanner.report.markdown import to_markdown
from scanner.report.model import Report
from scanner.report.sarif import to_sarif


def file_report(root: Path, target: BatchTarget, report: Report, report_json: str, *, sarif: bool = False,
                markdown: bool = False, taken: Callable[[str], bool] = lambda _path: False) -> str:
    """Write the report (and the views asked for) at a path no other row has (`taken`: whether another row's report
    is at a path relative to `root`) and return the JSON report's path relative to `root`."""
    info = report.target
    path = report_path(root, target, info.ecosystem, info.name, info.version, taken)
    _write(path, report, report_json, sarif=sarif, markdown=markdown)
    return path.relative_to(root.resolve()).as_posix()


def refile_report(root: Path, relative: str, report: Report, report_json: str, *, sarif: bool = False,
                  markdown: bool = False) -> None:
    """Rewrite a row's report (and views) where the row says it is (`relative`, as file_report returned it)."""
    base = (root / REPORTS).resolve()
    path = root.resolve() / relative
    if not path.resolve().is_relative_to(base):
        raise ValueError(f"report path {path} is outside {base}")
    _write(path, report, report_json, sarif=sarif, markdown=markdown)


def _write(path: Path, report: Report, report_json: str, *, sarif: bool, markdown: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, report_json if report_json.endswith("\n") else report_json + "\n")
    if sarif:
        document = json.dumps(to_sarif(report, report_artifact(report)), indent=2, ensure_ascii=False)
        write_whole(path.with_suffix(".sarif"), escape_json_text(document) + "\n")
    if markdown:
        write_whole(path.with_suffix(".md"), to_markdown(report))


def write_whole(path: Path, text: str) -> None:
    """Write `text` beside `path` and rename it into place: a reader (and a kill, a full disk) sees the file as it
    was or as it is now, never half of it. A write that fails leaves the earlier file and removes its temporary."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
