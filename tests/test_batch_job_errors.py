"""One target whose text or report the coordinator cannot handle fails its own row, with the reason, and the batch
goes on: a version past Python's integer-digit limit (a local tarball's manifest may say anything), a report that
cannot be filed, an argument no process can be given (a NUL byte), and a target every run dies on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.batch.inputs import read_input
from scanner.batch.jobs import JobResult
from scanner.batch.runner import BatchOptions, run_batch
from scanner.batch.store import MAX_ABANDONED, Store
from scanner.batch.subprocess_backend import SubprocessBackend
from scanner.batch.targets import BatchTarget
from scanner.errors import UsageError
from scanner.report.model import Report, TargetInfo
from tests.test_batch_store import _FakeBackend, _Quiet

HUGE_VERSION = "1" * 5000  # npm packs and installs a local tarball whose package.json says this


def _report(kind: str, name: str, requested: str, version: str) -> str:
    return Report(target=TargetInfo(kind=kind, name=name, requested=requested, version=version,  # type: ignore[arg-type]
                                    ecosystem="npm"), status="complete", verdict="pass").model_dump_json()


def test_a_version_past_the_integer_digit_limit_is_unparseable_not_a_crash(tmp_path: Path) -> None:
    poison, fine = BatchTarget(str(tmp_path / "poison.tgz")), BatchTarget("npm:fine@1.0.0")
    earlier = BatchTarget("npm:poison@1.0.0")  # a release of the same name: the new one is compared with it
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([earlier, poison, fine])
        backend = _FakeBackend({
            earlier.key: [JobResult(earlier.key, 1, 0, _report("npm", "poison", earlier.target, "1.0.0"), "", 1.0)],
            poison.key: [JobResult(poison.key, 1, 0, _report("archive", "poison", poison.target, HUGE_VERSION), "",
                                   1.0)],
            fine.key: [JobResult(fine.key, 1, 0, _report("npm", "fine", fine.target, "1.0.0"), "", 1.0)]})
        backend.capacity = 1  # one at a time: the earlier release is done before the huge one is diffed
        run_batch(store, backend, BatchOptions(out=tmp_path, retries=0), _Quiet(), sleep=lambda _s: None)
        assert {row.target: row.state for row in store.rows()} == {earlier.target: "done", poison.target: "done",
                                                                  fine.target: "done"}


def test_a_result_that_cannot_be_recorded_fails_its_row_and_the_batch_goes_on(tmp_path: Path) -> None:
    blocked, fine = BatchTarget("npm:blocked@1.0.0"), BatchTarget("npm:fine@1.0.0")
    (tmp_path / "reports" / "npm").mkdir(parents=True)
    (tmp_path / "reports" / "npm" / "blocked").write_text("a file where the package's folder goes")
    quiet = _Quiet()
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([blocked, fine])
        backend = _FakeBackend({
            blocked.key: [JobResult(blocked.key, 1, 0, _report("npm", "blocked", blocked.target, "1.0.0"), "", 1.0)],
            fine.key: [JobResult(fine.key, 1, 0, _report("npm", "fine", fine.target, "1.0.0"), "", 1.0)]})
        run_batch(store, backend, BatchOptions(out=tmp_path, retries=2), quiet, sleep=lambda _s: None)
        failed, done = store.row(blocked.key), store.row(fine.key)
    assert (failed.state, failed.attempts, failed.transient) == ("failed", 1, False)
    assert failed.error is not None and failed.error.startswith("its result could not be recorded (")
    assert "FileExistsError" in failed.error or "NotADirectoryError" in failed.error
    assert done.state == "done" and (tmp_path / str(done.report)).is_file()
    assert any(line.startswith(f"failed  {blocked.target}: its result could not be recorded") for line in quiet.lines)


def test_an_argument_no_process_can_take_fails_its_row_when_the_scan_is_started(tmp_path: Path) -> None:
    """A row that reached the store before input refused NUL (an older version's store): the real backend's Popen
    refuses it; that row fails, the batch does not."""
    nul = BatchTarget("npm:left-pad@1.3.0", server_args=("a\x00b",))
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([nul])
        backend = SubprocessBackend(1, tmp_path / "work", fork=False)
        run_batch(store, backend, BatchOptions(out=tmp_path), _Quiet(), sleep=lambda _s: None)
        row = store.row(nul.key)
    assert (row.state, row.attempts) == ("failed", 1)
    assert row.error == "its scan could not be started (ValueError: embedded null byte)"


def test_a_registry_export_argument_with_a_nul_is_refused_at_input(tmp_path: Path) -> None:
    export = [{"server": {"name": "io.github.x/y", "packages": [
        {"registryType": "npm", "identifier": "left-pad", "version": "1.3.0",
         "packageArguments": [{"type": "positional", "value": "a\u0000b"}]},
        {"registryType": "npm", "identifier": "other", "version": "1.0.0",
         "packageArguments": [{"type": "named", "name": "--x\u0000", "value": "v"}]}]}}]
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    first, second = read_input(path)
    assert first.server_args == () and first.unsupported == (
        "packageArguments: an argument holds a NUL character, which no process argument can carry")
    assert second.unsupported == first.unsupported  # a named argument's name too


def test_a_text_line_with_a_nul_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "targets.txt"
    path.write_text("npm:fine@1.0.0\nnpm:left-pad@1.3.0 -- a\x00b\n")
    with pytest.raises(UsageError, match=r"targets.txt:2: an argument holds a NUL character"):
        read_input(path)


def test_a_row_every_run_dies_on_is_failed_after_max_abandoned_runs(tmp_path: Path) -> None:
    target, other = BatchTarget("npm:crashes-the-batch@1.0.0"), BatchTarget("npm:innocent@1.0.0")
    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([target, other])
    for run in range(MAX_ABANDONED):  # each run starts, claims the target, and dies (the lock goes with it)
        with Store.open(tmp_path / "batch.sqlite") as store:
            assert store.requeue_abandoned(now=float(run)) == (1 if run else 0)
            row = store.row(target.key)
            assert (row.state, row.attempts, row.abandoned) == ("queued", 0, run)
            assert store.claim(float(run)).key == target.key  # type: ignore[union-attr]
    with Store.open(tmp_path / "batch.sqlite") as store:
        assert store.requeue_abandoned(now=99.0) == 0
        row = store.row(target.key)
    assert (row.state, row.abandoned, row.finished_at, row.task_id) == ("failed", MAX_ABANDONED, 99.0, None)
    assert row.error == (f"the batch stopped {MAX_ABANDONED} times while this target ran (its scan or its result may "
                         "take the batch down); --retry-failed runs it again")
    with Store.open(tmp_path / "batch.sqlite") as store:
        assert store.row(other.key).state == "queued"  # never running when the runs died: not counted
        assert store.requeue_failed() == 1
        assert (store.row(target.key).state, store.row(target.key).abandoned) == ("queued", 0)


def test_a_host_that_cannot_start_scans_spends_one_attempt_a_step_not_the_queue_s(tmp_path: Path) -> None:
    """An OSError starting a scan (EAGAIN under a pids limit, ENOMEM; here: no such program) is the host's trouble of
    the moment: the filling stopped at the first, so the other rows keep their attempts, and the step waits a second
    before it tries again. It went on claiming, and one step spent an attempt of every queued row (three such steps
    in a short spike, and the whole queue was failed)."""
    from scanner.batch import runner

    with Store.open(tmp_path / "batch.sqlite") as store:
        store.add([BatchTarget(f"npm:server-{n}@1.0.0") for n in range(20)])
        backend = SubprocessBackend(4, tmp_path / "work", command=[str(tmp_path / "no-such-program")])
        waits: list[float] = []
        assert runner._step(store, backend, BatchOptions(out=tmp_path), _Quiet(), lambda: 1000.0, waits.append)
        spent = [row for row in store.rows() if row.attempts]
    assert len(spent) == 1 and spent[0].error is not None and "FileNotFoundError" in spent[0].error
    assert spent[0].state == "queued" and spent[0].transient  # retried after its backoff, as before
    assert waits == [runner.COLLECT_SECONDS]
