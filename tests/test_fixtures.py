"""`mcp-sandbox fixtures DIR`: what it writes (every scenario, a README per set, CHECKLIST.md), byte for byte the
same on every run, and how it refuses bad input (exit 2, one line)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.fixtures.catalogue import all_fixtures, checklist, fixture_sets
from scanner.rules.registry import ALL_RULES
from scanner.vet.catalogue import VET_RULES
from tests.cli_helpers import run_main

SCENARIOS = {"stateless/server-discover", "stateless/request-meta", "stateless/request-meta-refused",
             "stateless/downgrade-refused", "http/routing-headers", "http/routing-header-mismatch",
             "http/stateless-auth", "tasks/task-handle-lifecycle", "tasks/duplicate-delivery",
             "tasks/retry-other-instance", "notifications/subscriptions-listen",
             "notifications/tools-list-invalidation", "mrtr/input-required-retries"}


def _tree(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def test_it_writes_every_scenario_a_readme_per_set_and_the_checklist(monkeypatch, capsys, tmp_path: Path) -> None:
    code, out, err = run_main(monkeypatch, capsys, "fixtures", tmp_path / "out")
    tree = _tree(tmp_path / "out")
    assert code == 0
    assert {name.removesuffix(".json") for name in tree if name.endswith(".json")} == SCENARIOS
    assert {name for name in tree if name.endswith(".md")} == {
        "CHECKLIST.md", *(f"{group.name}/README.md" for group in fixture_sets())}
    assert out.split() == [str(tmp_path / "out" / name) for name in
                           [*(n for g in fixture_sets() for n in [*(f"{f.path}.json" for f in g.fixtures),
                                                                  f"{g.name}/README.md"]), "CHECKLIST.md"]]
    assert "wrote 19 files" in err
    document = json.loads(tree["stateless/server-discover.json"])
    assert document["exchanges"][0]["direction"] == "client→server"
    assert document["exchanges"][0]["message"]["method"] == "server/discover"


def test_the_bytes_are_the_same_in_another_process(monkeypatch, capsys, tmp_path: Path) -> None:
    """Another interpreter with another hash seed writes the same bytes (no timestamps, no set order, no ids drawn)."""
    run_main(monkeypatch, capsys, "fixtures", tmp_path / "here", "--format", "jsonl")
    code = ("import sys\nfrom scanner.cli.app import main\n"
            "sys.argv = ['mcp-sandbox', 'fixtures', sys.argv[1], '--format', 'jsonl']\nmain()")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "there")], check=False, capture_output=True, env=env,
                   timeout=120)
    assert _tree(tmp_path / "here") == _tree(tmp_path / "there") != {}


def test_jsonl_is_one_exchange_a_line(monkeypatch, capsys, tmp_path: Path) -> None:
    run_main(monkeypatch, capsys, "fixtures", tmp_path, "--format", "jsonl")
    lines = (tmp_path / "tasks" / "task-handle-lifecycle.jsonl").read_text("utf-8").splitlines()
    exchanges = [json.loads(line) for line in lines]
    assert [e["step"] for e in exchanges] == list(range(1, len(lines) + 1))
    assert {e["fixture"] for e in exchanges} == {"tasks/task-handle-lifecycle"}
    assert "task-handle-lifecycle.jsonl" in (tmp_path / "tasks" / "README.md").read_text("utf-8")


def test_list_names_every_fixture(monkeypatch, capsys) -> None:
    code, out, _ = run_main(monkeypatch, capsys, "fixtures", "--list")
    assert code == 0 and {line.split("\t")[0] for line in out.splitlines()} == SCENARIOS


@pytest.mark.parametrize(("args", "says"), [
    (["--spec-version", "2026-13-01"], "--spec-version must be 2026-07-28"),
    (["--spec-version", "2025-11-25"], "needs no fixtures"),
    (["--format", "yaml"], "--format must be one of json, jsonl"),
    ([], "not empty"),
])
def test_bad_input_is_exit_2_with_one_line(monkeypatch, capsys, tmp_path: Path, args: list[str], says: str) -> None:
    (tmp_path / "mine.txt").write_text("keep me", "utf-8")
    code, out, err = run_main(monkeypatch, capsys, "fixtures", tmp_path, *args)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and says in err
    assert _tree(tmp_path) == {"mine.txt": b"keep me"}  # nothing written


def test_force_writes_into_a_folder_that_is_not_empty_and_keeps_other_files(monkeypatch, capsys,
                                                                           tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me", "utf-8")
    (tmp_path / "CHECKLIST.md").write_text("stale", "utf-8")
    code, _, _ = run_main(monkeypatch, capsys, "fixtures", tmp_path, "--force", "--spec-version", "2026-07-28")
    assert code == 0 and (tmp_path / "mine.txt").read_text("utf-8") == "keep me"
    assert (tmp_path / "CHECKLIST.md").read_text("utf-8") == checklist() != "stale"


def test_force_never_writes_through_a_link_out_of_the_folder(monkeypatch, capsys, tmp_path: Path) -> None:
    """`--force` touches only the fixture files of the folder: a CHECKLIST.md that is a symlink (a checkout can ship
    one) is replaced by the file, not followed to overwrite what it points at; a set folder that is a link is
    refused."""
    outside, folder = tmp_path / "outside", tmp_path / "fixtures"
    outside.mkdir()
    folder.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("keep me", "utf-8")
    (folder / "CHECKLIST.md").symlink_to(victim)
    code, _, err = run_main(monkeypatch, capsys, "fixtures", folder, "--force")
    assert code == 0, err
    assert victim.read_text("utf-8") == "keep me"
    assert not (folder / "CHECKLIST.md").is_symlink() and (folder / "CHECKLIST.md").read_text("utf-8") == checklist()
    (folder / "http").rename(tmp_path / "old-http")
    (folder / "http").symlink_to(outside, target_is_directory=True)
    code, _, err = run_main(monkeypatch, capsys, "fixtures", folder, "--force")
    assert code == 2 and "link" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]


def test_a_file_or_no_folder_is_refused(monkeypatch, capsys, tmp_path: Path) -> None:
    target = tmp_path / "file.json"
    target.write_text("{}", "utf-8")
    assert run_main(monkeypatch, capsys, "fixtures", target)[0] == 2
    code, _, err = run_main(monkeypatch, capsys, "fixtures", target / "sub" / "dir")  # was an internal error (exit 3)
    assert code == 2 and err == f"error: {target} is a file; give a folder for the fixtures (it is created if " \
                                "missing)\n"
    code, _, err = run_main(monkeypatch, capsys, "fixtures")
    assert code == 2 and "--list" in err


def test_the_checklist_covers_every_fixture_and_names_only_real_rules() -> None:
    text = checklist()
    for fixture in all_fixtures():
        assert f"`{fixture.path}`" in text or f"`{fixture.set}/*`" in text, fixture.path
    named = set(re.findall(r"`([A-Z][A-Z0-9_]+|W\d+)`", text))
    wire = {rule.id for rule in ALL_RULES if rule.id.startswith("W")}
    vet = {rule.id for rule in VET_RULES}
    assert named and named <= wire | vet, named - wire - vet
    ranges = re.findall(r"`W(\d+)`–`W(\d+)`", text)
    assert ranges and all(f"W{high}" in wire for _, high in ranges)


def test_every_rule_a_fixture_names_exists() -> None:
    wire = {rule.id for rule in ALL_RULES}
    vet = {rule.id for rule in VET_RULES}
    for fixture in all_fixtures():
        assert set(fixture.wire) <= wire and set(fixture.vet) <= vet, fixture.path


def test_help_teaches_the_command(monkeypatch, capsys) -> None:
    code, out, _ = run_main(monkeypatch, capsys, "fixtures", "--help")
    text = " ".join(out.split())
    assert code == 0 and "CHECKLIST.md" in text and "mcp-sandbox fixtures tests/mcp-fixtures" in text
