"""Two (or three) releases of one package in one batch are diffed whichever scan finishes first
(scanner/batch/rediff.py): the results go through the coordinator's own record_result in the order the scans
ended, and the later release's report, row and summary end up as if the baseline had been done first; a re-diff an
interrupt cut short is finished by the next run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.batch import runner
from scanner.batch.jobs import JobResult
from scanner.batch.progress import Progress
from scanner.batch.rediff import without_release_diff
from scanner.batch.runner import BatchOptions, record_result, run_batch
from scanner.batch.store import Store
from scanner.batch.targets import BatchTarget
from scanner.report.model import Report
from scanner.report.score import verdict_of
from tests.test_batch_store import _FakeBackend
from tests.test_release_diff import report as unscored


def report(version: str, **behaviour) -> Report:  # type: ignore[no-untyped-def]
    """A release's report as its scan writes it (with the verdict of its own findings)."""
    made = unscored(version, **behaviour)
    return made.model_copy(update={"verdict": verdict_of(made.findings, made.status)})

NEW_HOST = "bcc.collector.invalid"


def _finish(store: Store, options: BatchOptions, done: dict[str, Report], order: list[str]) -> None:
    """Claim every target (all running at once, as with --jobs N), then hand their results in `order`."""
    keys = {}
    while (row := store.claim(now=10.0)) is not None:
        keys[row.target] = row
    for target in order:
        row = keys[target]
        text = done[target].model_dump_json()
        record_result(store, JobResult(row.key, row.attempts, 0, text, "", 5.0), options, Progress(), now=20.0)


def _batch(tmp_path: Path, releases: dict[str, Report], order: list[str]) -> tuple[Store, Path]:
    out = tmp_path / "out"
    out.mkdir()
    with Store.open(out / "batch.sqlite") as store:
        store.add([BatchTarget(target) for target in releases])
        _finish(store, BatchOptions(out=out, retries=0), releases, order)
        rows = {row.target: row for row in store.rows()}
    return rows, out  # type: ignore[return-value]


def _report_of(out: Path, row) -> dict:  # type: ignore[no-untyped-def]
    return json.loads((out / row.report).read_text())


def test_the_later_release_done_first_is_diffed_when_its_baseline_finishes(tmp_path: Path) -> None:
    releases = {"npm:mail-mcp@1.0.0": report("1.0.0", hosts=("api.mail.invalid",)),
                "npm:mail-mcp@2.0.0": report("2.0.0", hosts=("api.mail.invalid", NEW_HOST),
                                             scripts=("postinstall",))}
    rows, out = _batch(tmp_path, releases, order=["npm:mail-mcp@2.0.0", "npm:mail-mcp@1.0.0"])
    first, second = rows["npm:mail-mcp@1.0.0"], rows["npm:mail-mcp@2.0.0"]
    later = _report_of(out, second)
    assert later["changes_since"]["previous_version"] == "1.0.0"
    assert {"phase": "run", "host": NEW_HOST} in later["changes_since"]["hosts_added"]
    assert later["changes_since"]["install_scripts_added"] == ["mail-mcp: postinstall"]
    assert later["verdict"] == "block" and second.verdict == "block" and second.worst == "error"
    assert [f["rule_id"] for f in second.findings] == ["I12", "I12"]  # the row's top findings: the new behaviour
    assert _report_of(out, first)["changes_since"] is None and first.verdict == "pass"


def test_a_release_finishing_between_two_others_becomes_the_baseline_of_the_later_one(tmp_path: Path) -> None:
    """1.0.0 and 3.0.0 done first (3.0.0 diffed against 1.0.0), then 2.0.0: 3.0.0 is diffed against 2.0.0 instead,
    its findings against 1.0.0 gone."""
    releases = {"npm:mail-mcp@1.0.0": report("1.0.0"),
                "npm:mail-mcp@2.0.0": report("2.0.0", hosts=(NEW_HOST,)),
                "npm:mail-mcp@3.0.0": report("3.0.0", hosts=(NEW_HOST,))}
    rows, out = _batch(tmp_path, releases, order=["npm:mail-mcp@1.0.0", "npm:mail-mcp@3.0.0", "npm:mail-mcp@2.0.0"])
    newest = _report_of(out, rows["npm:mail-mcp@3.0.0"])
    assert newest["changes_since"]["previous_version"] == "2.0.0"
    assert newest["changes_since"]["hosts_added"] == []  # 2.0.0 already contacted the host
    assert not [f for f in newest["findings"] if f["rule_id"] == "I12"]
    assert newest["verdict"] == "pass" and rows["npm:mail-mcp@3.0.0"].verdict == "pass"
    middle = _report_of(out, rows["npm:mail-mcp@2.0.0"])
    assert middle["changes_since"]["previous_version"] == "1.0.0" and middle["verdict"] == "block"


def test_a_lower_release_done_last_leaves_the_other_packages_and_the_older_releases_alone(tmp_path: Path) -> None:
    other = report("0.5.0", hosts=(NEW_HOST,)).model_copy(update={"target": report("0.5.0").target.model_copy(
        update={"name": "other-mcp", "requested": "npm:other-mcp@0.5.0"})})
    releases = {"npm:mail-mcp@1.0.0": report("1.0.0", hosts=(NEW_HOST,)), "npm:other-mcp@0.5.0": other,
                "npm:mail-mcp@0.9.0": report("0.9.0")}
    rows, out = _batch(tmp_path, releases, order=["npm:mail-mcp@1.0.0", "npm:other-mcp@0.5.0", "npm:mail-mcp@0.9.0"])
    assert _report_of(out, rows["npm:other-mcp@0.5.0"])["changes_since"] is None
    assert _report_of(out, rows["npm:mail-mcp@1.0.0"])["changes_since"]["previous_version"] == "0.9.0"
    assert _report_of(out, rows["npm:mail-mcp@0.9.0"])["changes_since"] is None


def test_without_release_diff_gives_back_the_scan_s_own_report() -> None:
    old, new = report("1.0.0"), report("2.0.0", hosts=(NEW_HOST,))
    from scanner.batch.release_diff import release_changes, with_changes

    diffed = with_changes(new, release_changes(old, new, "old.json"))
    assert diffed.verdict == "block"
    assert without_release_diff(diffed) == new


def test_a_re_diff_cut_short_by_an_interrupt_is_finished_by_the_next_run(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """1.1.0 done first, then 1.0.0, and the batch interrupted (Ctrl-C; a SIGKILL the same) right after 1.0.0 was
    recorded, before 1.1.0 was re-diffed against it: the rerun finishes that re-diff."""
    releases = {"npm:mail-mcp@1.1.0": report("1.1.0", hosts=("api.mail.invalid", NEW_HOST)),
                "npm:mail-mcp@1.0.0": report("1.0.0", hosts=("api.mail.invalid",))}
    out = tmp_path / "out"
    out.mkdir()
    real, calls = runner.rediff_later, []

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args[1].target)
        if args[1].target == "npm:mail-mcp@1.0.0":
            raise KeyboardInterrupt  # where the signal lands: the row recorded done, the re-diff not begun
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "rediff_later", interrupted)
    with Store.open(out / "batch.sqlite") as store:
        store.add([BatchTarget(target) for target in releases])
        with pytest.raises(KeyboardInterrupt):
            _finish(store, BatchOptions(out=out, retries=0), releases, order=list(releases))
        later = store.row(BatchTarget("npm:mail-mcp@1.1.0").key)
    assert _report_of(out, later)["changes_since"] is None and calls == list(releases)
    monkeypatch.setattr(runner, "rediff_later", real)
    with Store.open(out / "batch.sqlite") as store:  # the rerun: nothing left to scan, the re-diff left to finish
        run_batch(store, _FakeBackend({}), BatchOptions(out=out, retries=0), Progress(), sleep=lambda _s: None)
        later = store.row(later.key)
    assert _report_of(out, later)["changes_since"]["previous_version"] == "1.0.0"
    assert later.verdict == "block" and [f["rule_id"] for f in later.findings] == ["I12"]
    with Store.open(out / "batch.sqlite") as store:
        assert store.pending_rediffs() == []  # done once: the run after does not do it again


def test_a_re_diff_cut_short_after_its_report_was_rewritten_amends_the_row_on_the_next_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interrupt (a SIGKILL the same) lands between the later release's report being rewritten (now `block`, a
    new host) and its row being amended: the rerun finds the report already re-diffed, and must still bring the row
    (which the summary and the exit code read) to it, not leave it `pass`."""
    releases = {"npm:mail-mcp@1.1.0": report("1.1.0", hosts=("api.mail.invalid", NEW_HOST)),
                "npm:mail-mcp@1.0.0": report("1.0.0", hosts=("api.mail.invalid",))}
    out = tmp_path / "out"
    out.mkdir()

    def interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt  # where the signal lands: the report rewritten, the row not yet amended

    with monkeypatch.context() as patched, Store.open(out / "batch.sqlite") as store:
        patched.setattr(Store, "amend_done", interrupted)
        store.add([BatchTarget(target) for target in releases])
        with pytest.raises(KeyboardInterrupt):
            _finish(store, BatchOptions(out=out, retries=0), releases, order=list(releases))
        later = store.row(BatchTarget("npm:mail-mcp@1.1.0").key)
    assert _report_of(out, later)["verdict"] == "block" and later.verdict == "pass"  # the file ahead of the row
    with Store.open(out / "batch.sqlite") as store:
        run_batch(store, _FakeBackend({}), BatchOptions(out=out, retries=0), Progress(), sleep=lambda _s: None)
        later = store.row(later.key)
    assert later.verdict == "block" and later.worst == "error" and [f["rule_id"] for f in later.findings] == ["I12"]
    with Store.open(out / "batch.sqlite") as store:
        assert store.pending_rediffs() == []
