"""`mcp-sandbox rules` and `check --explain`, through the real entry point: every rule of every family, one registry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scanner.rules.registry import ALL_RULES, rule

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from scanner.cli.app import main; main()", *args],
                          capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "200"})


def test_rules_table_lists_every_rule_of_every_family() -> None:
    result = run("rules")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines() if line.strip()}
    for entry in ALL_RULES:
        assert entry.id in rows and entry.name in rows[entry.id] and entry.severity in rows[entry.id], entry.id
    assert f"{len(ALL_RULES)} rules" in result.stdout


def test_rules_json_to_stdout_is_the_registry() -> None:
    result = run("rules", "--json", "-")
    assert result.returncode == 0, result.stderr
    listed = json.loads(result.stdout)  # nothing but the JSON on stdout
    assert [item["id"] for item in listed] == [entry.id for entry in ALL_RULES]
    assert {item["family"] for item in listed} == {"S", "P", "B", "I", "FX", "W", "V"}
    p3 = next(item for item in listed if item["id"] == "P3")
    assert p3 == {"id": "P3", "name": "no-paging-hint", "severity": "warning", "family": "P",
                  "category": "ergonomics", "why": rule("P3").why, "fix": rule("P3").fix, "docs": rule("P3").docs,
                  "example": rule("P3").example, "reference": None}


def test_rules_json_to_a_file_and_one_family(tmp_path: Path) -> None:
    out = tmp_path / "rules.json"
    result = run("rules", "--family", "b", "--json", str(out))
    assert result.returncode == 0, result.stderr
    assert [item["id"] for item in json.loads(out.read_text())] == [f"B{n}" for n in range(1, 8)]
    assert "B6" in result.stdout and "S1 " not in result.stdout  # the table still prints, for that family only


@pytest.mark.parametrize("args,needle", [
    (["rules", "--family", "Q"], "--family must be one of S, P, B, I, FX, W"),
    (["rules", "--json", "/nonexistent-dir/rules.json"], "cannot write the JSON rules to"),
])
def test_bad_input_exits_2_with_one_line(args: list[str], needle: str) -> None:
    result = run(*args)
    assert result.returncode == 2 and needle in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("key", ["P3", "B2", "I7", "fx", "egress-attempt"])
def test_explain_reaches_every_family(key: str) -> None:
    result = run("check", "--explain", key)
    assert result.returncode == 0, result.stderr
    found = rule(key.upper()) if key != "egress-attempt" else rule("B2")
    assert result.stdout.startswith(f"{found.id} {found.name}  (default severity: {found.severity}")
    for part in ("## What it does", "## Why is this bad?", "## Example", "## Fix", found.docs, found.fix):
        assert part in result.stdout, part


def test_rules_markdown_is_the_readme_table(tmp_path: Path) -> None:
    """The README's rules table is `rules --markdown` output: regenerate it with
    `mcp-sandbox rules --markdown -` when a rule changes."""
    out = tmp_path / "rules.md"
    result = run("rules", "--markdown", str(out))
    assert result.returncode == 0, result.stderr
    table = out.read_text("utf-8")
    assert table.count("\n") == len(ALL_RULES) + 2 and "| P3 | `" in table and "| FX | `" in table
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")
    start, end = readme.index("<!-- rules:start -->\n"), readme.index("<!-- rules:end -->")
    assert readme[start + len("<!-- rules:start -->\n"):end] == table


def test_rules_json_and_markdown_cannot_both_take_stdout() -> None:
    result = run("rules", "--json", "-", "--markdown", "-")
    assert result.returncode == 2 and result.stderr.startswith("error: --json - and --markdown -")


def test_rules_json_and_markdown_cannot_share_a_file(tmp_path: Path) -> None:
    """`--json r --markdown r` wrote the JSON, then the table over it."""
    result = run("rules", "--json", str(tmp_path / "r"), "--markdown", str(tmp_path / "." / "r"))
    assert result.returncode == 2 and "the same file" in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "r").exists()
