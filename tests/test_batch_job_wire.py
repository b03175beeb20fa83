"""Jobs and results cross the broker as JSON and come back whole; a report too big for a result backend comes back
as none with the reason; `batch --broker` and `worker` refuse what is not a broker URL (exit 2, one line)."""

from __future__ import annotations

import json

import pytest

from scanner.batch.job_wire import (MAX_RESULT_REPORT_BYTES, WireError, job_from_payload, job_payload,
                                    result_from_payload, result_payload)
from scanner.batch.jobs import Job, JobResult, ScanSettings
from scanner.batch.outcome import classify
from scanner.batch.targets import BatchTarget
from tests.sandbox_helpers import run_cli


def _job() -> Job:
    target = BatchTarget("/srv/zoo", "zoo-plain --flag", ("a", "b c"), "targets.txt:3")
    return Job(target.key, 2, target, ScanSettings(memory="768m", probe_timeout=4.5, max_calls=2_000,
                                                   extra_flags=("--x",)))


def test_a_job_survives_the_json_round_trip() -> None:
    job = _job()
    assert job_from_payload(json.loads(json.dumps(job_payload(job)))) == job


def test_a_batch_passes_its_probe_budget_to_every_scan() -> None:
    """A marketplace's large servers were always incomplete in a batch: it had no way to raise the 500-call budget."""
    arguments = _job().scan_arguments("/out/r.json")
    assert arguments[arguments.index("--max-calls") + 1] == "2000"
    assert "--max-calls" not in ScanSettings().flags()  # none given: the scan's own default


def test_a_job_with_unknown_settings_or_wrong_types_is_refused() -> None:
    payload = job_payload(_job())
    with pytest.raises(WireError, match="unknown scan settings"):
        job_from_payload({**payload, "settings": {**payload["settings"], "shell": "rm -rf /"}})
    with pytest.raises(WireError, match="expected text"):
        job_from_payload({**payload, "target": {**payload["target"], "target": ["not", "text"]}})
    with pytest.raises(WireError, match="not a scan job"):
        job_from_payload({"key": "k"})


def test_a_result_survives_the_round_trip() -> None:
    result = JobResult("k", 1, 0, '{"x": 1}', "tail", 12.5)
    assert result_from_payload(json.loads(json.dumps(result_payload(result)))) == result


def test_an_oversized_report_comes_back_as_none_with_the_reason() -> None:
    huge = "x" * (MAX_RESULT_REPORT_BYTES + 1)
    back = result_from_payload(result_payload(JobResult("k", 1, 0, huge, "", 1.0)))
    assert back.report_json is None
    outcome = classify(back)
    assert outcome.kind == "failed" and "larger than" in (outcome.error or "")
    small = result_from_payload(result_payload(JobResult("k", 1, 0, "x" * 100, "", 1.0)))
    assert small.report_json == "x" * 100  # near miss: under the cap it is kept


@pytest.mark.parametrize("command", [["batch", "targets.txt", "--out", "out"], ["worker"]])
def test_a_broker_that_is_not_a_url_is_refused(command: list[str], tmp_path) -> None:
    result = run_cli(*command, "--broker", "http://example.invalid/queue", timeout=60)
    assert result.returncode == 2
    assert result.stderr.startswith("error: --broker 'http://example.invalid/queue' is not a broker URL")
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("url", "why"), [("redis://[queue/0", "Invalid IPv6 URL"),
                                          ("redis://queue:port/0", "Port could not be cast"),
                                          ("redis://queue:99999/0", "Port out of range")])
def test_a_broker_url_that_does_not_parse_is_exit_2_not_an_internal_error(url: str, why: str, tmp_path) -> None:
    targets = tmp_path / "targets.txt"
    targets.write_text("npm:left-pad@1.3.0\n")
    result = run_cli("batch", str(targets), "--out", str(tmp_path / "out"), "--broker", url, timeout=60)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"error: --broker {url!r} is not a URL ({why}")
    assert "internal error" not in result.stderr


def test_an_unreachable_broker_is_one_line_and_exit_3(tmp_path) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    targets = tmp_path / "targets.txt"
    targets.write_text("npm:left-pad@1.3.0\n")
    result = run_cli("batch", str(targets), "--out", str(tmp_path / "out"), "--broker",
                     f"redis://user:secret@127.0.0.1:{port}/0", timeout=120)
    assert result.returncode == 3, result.stderr
    assert f"cannot reach the broker at redis://127.0.0.1:{port}/0" in result.stderr
    assert "secret" not in result.stderr and "Traceback" not in result.stderr


def test_a_batch_that_fails_mid_run_still_rewrites_its_summary(tmp_path) -> None:
    """A rerun adding a target, whose broker does not answer (exit 3): summary.json kept the earlier run's `exit 0: all
    1 targets vetted`, without the new target, for whoever reads the summary rather than the exit code."""
    import socket

    from scanner.batch.store import ScanRecord, Store
    from scanner.batch.summary import write_summary

    out, vetted = tmp_path / "out", BatchTarget("npm:left-pad@1.3.0")
    out.mkdir()
    with Store.open(out / "batch.sqlite") as store:  # the earlier run: left-pad vetted, nothing found
        store.add([vetted])
        store.claim(1.0)
        store.record_done(vetted.key, ScanRecord(status="complete", verdict="pass", score=100, worst=None,
                                                 ecosystem="npm", name="left-pad", version="1.3.0", findings=[],
                                                 report="reports/npm/left-pad/1.3.0.json", scan_seconds=1.0), 2.0)
        assert write_summary(out, store.rows(), "error").code == 0
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    targets = tmp_path / "targets.txt"
    targets.write_text("npm:left-pad@1.3.0\nnpm:new-mcp@1.0.0\n")
    result = run_cli("batch", str(targets), "--out", str(out), "--broker", f"redis://127.0.0.1:{port}/0", timeout=120)
    assert result.returncode == 3, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["exit"]["code"] == 3
    assert [(t["target"], t["state"]) for t in summary["targets"]] == [("npm:left-pad@1.3.0", "done"),
                                                                       ("npm:new-mcp@1.0.0", "queued")]
    assert "npm:new-mcp@&#8203;1.0.0 | queued" in (out / "summary.md").read_text()
