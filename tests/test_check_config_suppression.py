"""`check-config --config PATH` means what it means on check and scan: the config's disable / ignore suppress findings
(kept, marked, never counted), and a config discovered in the working directory cannot suppress an error-level
security finding (I8, a known-bad release) while one given with --config can."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_provenance_check_config import run

KNOWN_BAD = {"mcpServers": {"mail": {"command": "npx", "args": ["-y", "postmark-mcp@1.0.16"]},
                            "loose": {"command": "npx", "args": ["-y", "some-mcp-server"]}}}


def _client(tmp_path: Path) -> Path:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps(KNOWN_BAD), encoding="utf-8")
    return path


def _findings(document: dict, key: str = "findings") -> list[tuple[str, str]]:
    return sorted((s["name"], f["rule_id"]) for file in document["files"] for s in file["servers"] for f in s[key])


def test_without_a_config_the_known_bad_release_blocks(tmp_path: Path) -> None:
    done = run("check-config", str(_client(tmp_path)), "--json", "-", "-q")
    document = json.loads(done.stdout)
    assert done.returncode == 1 and ("mail", "I8") in _findings(document) and document["config"] is None


def test_an_explicit_config_suppresses_and_the_findings_stay_in_the_report(tmp_path: Path) -> None:
    config = tmp_path / "vetting.toml"
    config.write_text('disable = ["I8"]\nignore = ["I1:*"]\n', encoding="utf-8")
    client = _client(tmp_path)
    done = run("check-config", str(client), "--config", str(config), "--json", "-", "--sarif",
               str(tmp_path / "out.sarif"))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert ("mail", "I8") in _findings(document, "suppressed") and ("mail", "I8") not in _findings(document)
    assert {f for f in _findings(document, "suppressed") if f[1] == "I1"}  # every server's I1 ignored
    assert document["summary"]["suppressed"] == len(_findings(document, "suppressed"))
    assert document["config"]["explicit"] is True and document["config"]["refused"] == []
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    marked = [r for r in sarif["runs"][0]["results"] if r.get("suppressions")]
    assert {r["ruleId"] for r in marked} == {"I1", "I8"}
    terminal = run("check-config", str(client), "--config", str(config))
    assert "(given with --config): suppressed" in terminal.stderr + terminal.stdout


def test_a_discovered_config_cannot_suppress_the_known_bad_release(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "mcp-sandbox.toml").write_text('disable = ["I8", "I1"]\n', encoding="utf-8")
    client = _client(tmp_path)
    monkeypatch.chdir(tmp_path)
    done = run("check-config", str(client), "--json", "-", "-q")
    document = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr  # I8 still counts
    assert ("mail", "I8") in _findings(document) and ("loose", "I1") in _findings(document, "suppressed")
    assert document["config"]["explicit"] is False
    assert [r["rule_id"] for r in document["config"]["refused"]] == ["I8"]


def test_a_missing_config_file_is_exit_2_with_one_line(tmp_path: Path) -> None:
    done = run("check-config", str(_client(tmp_path)), "--config", str(tmp_path / "nope.toml"))
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert done.stderr.startswith("error: config file") and "Traceback" not in done.stderr
