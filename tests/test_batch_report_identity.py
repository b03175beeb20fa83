"""One row, one report file, and only a registry target's row stands for a registry release: two names that share
their first 80 characters, two targets resolving to one release, or a folder or archive whose manifest claims a
registry package's name and version never overwrite another row's report, fake "already vetted" (`--since`) or
become the baseline a registry release is diffed against (two local builds are still compared with each other). A
store from before the change resumes as it was."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from scanner.batch.jobs import JobResult
from scanner.batch.previous import is_vetted
from scanner.batch.report_paths import report_path
from scanner.batch.runner import BatchOptions, run_batch
from scanner.batch.store import Store
from scanner.batch.targets import BatchTarget
from scanner.cli.batch import _not_vetted
from scanner.report.model import Report, TargetInfo
from tests.test_batch_store import _FakeBackend, _Quiet

LONG = "a" * 80


def _report(kind: str, name: str, requested: str, version: str) -> str:
    return Report(target=TargetInfo(kind=kind, name=name, requested=requested, version=version,  # type: ignore[arg-type]
                                    ecosystem="npm"), status="complete", verdict="pass").model_dump_json()


def _run(out: Path, results: dict[BatchTarget, tuple[str, str, str]]) -> dict[str, str]:
    """Each target done with a report of (kind, name, version), one at a time; {target: its report's path}."""
    out.mkdir(exist_ok=True)
    with Store.open(out / "batch.sqlite") as store:
        store.add(list(results))
        backend = _FakeBackend({t.key: [JobResult(t.key, 1, 0, _report(kind, name, t.target, version), "", 1.0)]
                                for t, (kind, name, version) in results.items()})
        backend.capacity = 1
        run_batch(store, backend, BatchOptions(out=out, retries=0), _Quiet(), sleep=lambda _s: None)
        rows = {row.target: row for row in store.rows()}
    assert {row.state for row in rows.values()} == {"done"}
    return {target: str(row.report) for target, row in rows.items()}


def _requested(out: Path, report: str) -> str:
    return json.loads((out / report).read_text())["target"]["requested"]


def test_names_cut_to_the_same_80_characters_get_a_file_each(tmp_path: Path) -> None:
    legit, evil = BatchTarget(f"npm:{LONG}-legit@1.0.0"), BatchTarget(f"npm:{LONG}-evil@1.0.0")
    paths = _run(tmp_path, {legit: ("npm", f"{LONG}-legit", "1.0.0"), evil: ("npm", f"{LONG}-evil", "1.0.0")})
    assert paths[legit.target] != paths[evil.target]
    assert [_requested(tmp_path, paths[t.target]) for t in (legit, evil)] == [legit.target, evil.target]


def test_two_targets_resolving_to_one_release_get_a_file_each(tmp_path: Path) -> None:
    tagged, pinned = BatchTarget("npm:left-pad@latest"), BatchTarget("npm:left-pad@1.3.0")
    paths = _run(tmp_path, {tagged: ("npm", "left-pad", "1.3.0"), pinned: ("npm", "left-pad", "1.3.0")})
    assert paths[tagged.target] == "reports/npm/left-pad/1.3.0.json"  # the first to finish has the plain name
    assert paths[pinned.target].startswith("reports/npm/left-pad/1.3.0+")
    assert [_requested(tmp_path, paths[t.target]) for t in (tagged, pinned)] == [tagged.target, pinned.target]


def test_an_upload_claiming_a_registry_release_fakes_neither_its_file_nor_vetted(tmp_path: Path) -> None:
    upload = BatchTarget(str(tmp_path / "evil.tgz"))
    real, later = BatchTarget("npm:left-pad@1.3.0"), BatchTarget("npm:left-pad@1.4.0")
    paths = _run(tmp_path, {upload: ("archive", "left-pad", "1.3.0"), later: ("npm", "left-pad", "1.4.0")})
    assert paths[upload.target].startswith("reports/npm/left-pad/1.3.0+")  # never the release's own name
    database = tmp_path / "batch.sqlite"
    assert not is_vetted(database, "npm", "left-pad", "1.3.0")
    assert [t.target for t in _not_vetted([real], database)] == [real.target]  # --since still scans the release
    # nor was it the earlier release the real 1.4.0 was diffed against
    assert json.loads((tmp_path / paths[later.target]).read_text())["changes_since"] is None
    assert is_vetted(database, "npm", "left-pad", "1.4.0")


def test_a_store_from_before_keeps_its_reports_and_they_are_never_overwritten(tmp_path: Path) -> None:
    """An old batch: its upload row took reports/npm/left-pad/1.3.0.json; the real release, scanned on resume, gets
    a file of its own, and the old registry rows still count for --since and as baselines."""
    upload, old_release = BatchTarget("/uploads/evil.tgz"), BatchTarget("npm:left-pad@1.2.0")
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([upload, old_release])
    connection = sqlite3.connect(tmp_path / "batch.sqlite")
    for target, version in ((upload, "1.3.0"), (old_release, "1.2.0")):
        relative = f"reports/npm/left-pad/{version}.json"  # the names before the change
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(_report("npm", "left-pad", target.target, version))
        connection.execute("UPDATE targets SET state = 'done', status = 'complete', ecosystem = 'npm', name = "
                           "'left-pad', version = ?, report = ?, finished_at = 1 WHERE key = ?",
                           (version, relative, target.key))
    connection.commit()
    connection.close()
    real = BatchTarget("npm:left-pad@1.3.0")
    paths = _run(tmp_path, {real: ("npm", "left-pad", "1.3.0")})
    assert paths[real.target].startswith("reports/npm/left-pad/1.3.0+")
    assert _requested(tmp_path, "reports/npm/left-pad/1.3.0.json") == upload.target  # the old row's file, untouched
    new_report = json.loads((tmp_path / paths[real.target]).read_text())
    assert new_report["changes_since"]["previous_version"] == "1.2.0"  # the old registry row is its baseline
    assert is_vetted(tmp_path / "batch.sqlite", "npm", "left-pad", "1.2.0")


def test_a_long_version_keeps_the_hash_and_a_taken_hash_gives_the_whole_one(tmp_path: Path) -> None:
    upload = BatchTarget("/uploads/x.tgz")
    long_a = report_path(tmp_path, upload, "npm", "x", "9" * 200)
    long_b = report_path(tmp_path, BatchTarget("/uploads/y.tgz"), "npm", "x", "9" * 200)
    assert long_a != long_b and len(long_a.name) < 100
    short = report_path(tmp_path, upload, "npm", "x", "1.0.0").relative_to(tmp_path.resolve()).as_posix()
    whole = report_path(tmp_path, upload, "npm", "x", "1.0.0", taken=lambda path: path == short)
    assert len(whole.stem.rpartition("+")[2]) == 64


def test_a_release_done_first_is_not_re_diffed_against_an_upload_claiming_an_earlier_one(tmp_path: Path) -> None:
    """The real 2.0.0 done first, then an upload claiming 1.0.0 (the real one's hosts, say): the upload is no
    release of left-pad, so the re-diff of the later releases (scanner.batch.rediff) leaves 2.0.0 as it was."""
    upload, real = BatchTarget(str(tmp_path / "claims-1.0.0.tgz")), BatchTarget("npm:left-pad@2.0.0")
    paths = _run(tmp_path, {real: ("npm", "left-pad", "2.0.0"), upload: ("archive", "left-pad", "1.0.0")})
    assert json.loads((tmp_path / paths[real.target]).read_text())["changes_since"] is None


def test_two_local_builds_of_a_package_are_still_compared(tmp_path: Path) -> None:
    """Folders and archives are each other's baselines (two builds compared), and a registry release is theirs."""
    old, new = BatchTarget(str(tmp_path / "build-1.0.0.tgz")), BatchTarget(str(tmp_path / "build-2.0.0.tgz"))
    paths = _run(tmp_path, {new: ("archive", "left-pad", "2.0.0"), old: ("archive", "left-pad", "1.0.0")})
    assert json.loads((tmp_path / paths[new.target]).read_text())["changes_since"]["previous_version"] == "1.0.0"
    published, build = BatchTarget("npm:right-pad@1.0.0"), BatchTarget(str(tmp_path / "right-pad-1.1.0.tgz"))
    paths = _run(tmp_path / "other", {published: ("npm", "right-pad", "1.0.0"), build: ("archive", "right-pad", "1.1.0")})
    assert json.loads((tmp_path / "other" / paths[build.target]).read_text())["changes_since"]["previous_version"] == \
        "1.0.0"
