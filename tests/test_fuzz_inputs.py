"""Seeded, bounded fuzzing of the offline commands (issue 11, section 7): every hostile input ends with exit 0, 1 or
2, no traceback, no raw control character in any output, and no planted credential in any output of check-config.

Run in process through the console entry point (`main()` with argv), every report output at once (terminal, JSON,
SARIF, Markdown files and GitHub annotations on stdout), and a sample as real processes. The seeds are fixed: a
failure names its case, and `tests.fuzz_inputs` regenerates it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import run_main
from tests.fuzz_inputs import config_cases, tools_cases

ROOT = Path(__file__).resolve().parents[1]
# C0 controls but newline and tab, DEL, C1 controls, bidi embeddings/overrides/isolates, lone surrogates.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
TOOLS_CASES = 150
CONFIG_CASES = 80


def _outputs(tmp_path: Path) -> list[str]:
    return ["--json", str(tmp_path / "out.json"), "--sarif", str(tmp_path / "out.sarif"),
            "--markdown", str(tmp_path / "out.md"), "--github-annotations"]


def _written(tmp_path: Path) -> dict[str, str]:
    """Every report file the run wrote, decoded as the strict UTF-8 every reader expects."""
    found = {}
    for path in tmp_path.glob("out.*"):
        found[path.name] = path.read_bytes().decode("utf-8")
        path.unlink()
    return found


def _assert_clean(name: str, code: int, texts: dict[str, str]) -> None:
    assert code in (0, 1, 2), f"{name}: exit {code}\n{texts.get('stderr', '')[-2000:]}"
    for where, text in texts.items():
        assert "Traceback" not in text, f"{name}: traceback in {where}"
        raw = RAW_CONTROL.search(text)
        assert raw is None, f"{name}: raw {raw.group()!r} in {where}" if raw else ""
    if code == 2:
        lines = texts["stderr"].strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), f"{name}: {texts['stderr'][:500]}"


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str,
         *args: str) -> dict[str, str]:
    code, out, err = run_main(monkeypatch, capsys, *args)
    texts = {"stdout": out, "stderr": err, **_written(tmp_path)}
    _assert_clean(name, code, texts)
    return texts


def test_check_and_lock_survive_hostile_tools_files(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no config of this repository's own is discovered
    source = tmp_path / "tools.json"
    for name, data in tools_cases(seed=11, count=TOOLS_CASES):
        source.write_bytes(data)
        _run(monkeypatch, capsys, tmp_path, name, "check", str(source), *_outputs(tmp_path))
        lock = tmp_path / "out.lock"
        _run(monkeypatch, capsys, tmp_path, name + " lock", "lock", "--from", str(source), "--lock", str(lock))
        if lock.exists():
            _run(monkeypatch, capsys, tmp_path, name + " lock --check", "lock", "--from", str(source), "--lock",
                 str(lock), "--check")
            lock.unlink()


def test_a_saved_report_with_fields_removed_or_retyped_is_read_or_refused(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json
    import random

    from tests.fuzz_inputs import WRONG_TYPES, tools_seed

    monkeypatch.chdir(tmp_path)
    source = tmp_path / "tools.json"
    source.write_text(json.dumps(tools_seed()))
    run_main(monkeypatch, capsys, "check", str(source), "--json", str(tmp_path / "report.json"))
    report = json.loads((tmp_path / "report.json").read_text())
    rng = random.Random(7)
    keys = [(k, None) for k in report] + [(k, s) for k, v in report.items() if isinstance(v, dict) for s in v]
    saved = tmp_path / "saved.json"
    for index in range(30):
        document = json.loads(json.dumps(report))
        key, sub = rng.choice(keys)
        holder = document if sub is None else document[key]
        field = key if sub is None else sub
        if rng.random() < 0.5:
            holder.pop(field, None)
        else:
            holder[field] = rng.choice(WRONG_TYPES)
        saved.write_text(json.dumps(document))
        _run(monkeypatch, capsys, tmp_path, f"report-{index} {key}.{sub}", "check", str(saved), *_outputs(tmp_path))
        _run(monkeypatch, capsys, tmp_path, f"report-{index} lock", "lock", "--from", str(saved), "--lock",
             str(tmp_path / "out.lock"))


def test_check_config_survives_hostile_configs_and_never_prints_a_credential(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "mcp.json"
    for name, data, secrets in config_cases(seed=11, count=CONFIG_CASES):
        source.write_bytes(data)
        texts = _run(monkeypatch, capsys, tmp_path, name, "check-config", str(source), *_outputs(tmp_path))
        for where, text in texts.items():
            for planted in secrets:
                assert planted not in text, f"{name}: credential {planted} in {where}"


def _subprocess(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", "from scanner.cli.app import main; main()", *args], cwd=cwd,
                          capture_output=True, timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})


def test_a_sample_as_processes(tmp_path: Path) -> None:
    """The same classes through a real process: real stdout/stderr encodings, real exit codes."""
    cases = [(n, d) for n, d in tools_cases(seed=5, count=6)] + [(n, d) for n, d, _ in config_cases(seed=5, count=3)]
    for name, data in cases:
        source = tmp_path / "input.json"
        source.write_bytes(data)
        command = "check-config" if name.startswith("config") else "check"
        result = _subprocess(command, str(source), "--json", "-", cwd=tmp_path)
        texts = {"stdout": result.stdout.decode("utf-8"), "stderr": result.stderr.decode("utf-8")}
        _assert_clean(name, result.returncode, texts)
