"""The GitHub Action: action.yml agrees with scripts/action.py, every input is validated, inputs never reach a shell,
and the script run the way the action runs it (INPUT_* variables, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files)
scans a local test server, writes the outputs, the job summary and the SARIF file, and checks / refreshes a lock."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import jsonschema
import pytest

from tests import mini_yaml
from tests.sandbox_helpers import REPO, ZOO
from tests.test_remote_scan import SECRET, server  # noqa: F401 - the loopback Streamable HTTP server fixture

SCRIPT = REPO / "scripts" / "action.py"
INSTALL = REPO / "scripts" / "action-install.sh"
CLI = str(Path(sys.executable).with_name("mcp-sandbox"))
SARIF_SCHEMA = REPO / "tests" / "fixtures" / "sarif-schema-2.1.0.json"
UNSAFE_RAW = ("\x1b", "\x07", "\r", "\u202e", "\U000e0072")

sys.path.insert(0, str(REPO / "scripts"))
import action  # scripts/action.py
import action_inputs  # scripts/action_inputs.py

sys.path.pop(0)


def action_yml() -> dict:
    return mini_yaml.loads((REPO / "action.yml").read_text(encoding="utf-8"))


def env_name(name: str) -> str:
    return "INPUT_" + name.upper().replace("-", "_")


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT in GitHub's `name<<DELIMITER` form; every delimiter must be unique and closed."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i]:
            i += 1
            continue
        name, delimiter = lines[i].split("<<", 1)
        end = lines.index(delimiter, i + 1)
        assert name not in outputs, f"output {name} written twice"
        outputs[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return outputs


class ActionRun:
    def __init__(self, proc: subprocess.CompletedProcess[str], output: Path, summary: Path) -> None:
        self.code = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.outputs = parse_outputs(output.read_text(encoding="utf-8"))
        self.summary = summary.read_text(encoding="utf-8")

    def __repr__(self) -> str:
        return f"<exit {self.code} outputs={self.outputs} stderr={self.stderr[-2000:]!r}>"


@pytest.fixture
def run_action(tmp_path):
    """Run scripts/action.py as the action's scan step does: inputs only as INPUT_* variables."""

    def run(inputs: dict[str, str], *, scanner: str = CLI, extra_env: dict[str, str] | None = None,
            cwd: Path = REPO) -> ActionRun:
        output, summary = tmp_path / "github_output", tmp_path / "step_summary"
        output.write_text("")
        summary.write_text("# earlier step\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
        env.update({"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary), "MCP_SANDBOX_BIN": scanner,
                    "RUNNER_TEMP": str(tmp_path)})
        env.update({env_name(k): v for k, v in inputs.items()})
        env.update(extra_env or {})
        proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, cwd=cwd,
                              timeout=600, check=False)
        return ActionRun(proc, output, summary)

    return run


# ---------------------------------------------------------------- action.yml agrees with the script


def test_action_yml_inputs_match_what_the_script_reads():
    spec = action_yml()
    assert spec["runs"]["using"] == "composite"
    inputs = spec["inputs"]
    assert set(inputs) == set(action_inputs.INPUTS) | {"python"}, "action.yml inputs != scripts/action.py INPUTS"
    for name, default in action_inputs.INPUTS.items():
        assert inputs[name].get("default") == default, name  # target or url: the script requires one
        assert inputs[name]["required"] == "false", name
        assert inputs[name]["description"].strip(), name
    steps = {step["id"]: step for step in spec["runs"]["steps"]}
    scan_env = steps["scan"]["env"]
    mapped = {k: v for k, v in scan_env.items() if k.startswith("INPUT_")}
    assert mapped == {env_name(name): f"${{{{ inputs.{name} }}}}" for name in action_inputs.INPUTS}
    assert steps["install"]["env"]["INPUT_PYTHON"] == "${{ inputs.python }}"
    assert scan_env["MCP_SANDBOX_BIN"] == "${{ steps.install.outputs.bin }}"
    assert scan_env["MCP_SANDBOX_PYTHON"] == "${{ steps.install.outputs.python }}"


def test_action_yml_outputs_match_what_the_script_writes():
    outputs = action_yml()["outputs"]
    assert tuple(outputs) == action.OUTPUTS
    for name, spec in outputs.items():
        assert spec["value"] == f"${{{{ steps.scan.outputs.{name} }}}}"
        assert spec["description"].strip()
    assert "incomplete" in outputs["verdict"]["description"], "the verdict output can be incomplete (a failed scan)"
    assert "did not complete" in outputs["lock-failed"]["description"], "empty lock-failed is not a pass"


# The only actions the composite action runs, each pinned to a commit (a tag can be moved to other code).
PINNED_ACTIONS = {"actions/cache/restore", "actions/cache/save"}


def test_action_yml_never_interpolates_into_a_shell_and_pins_the_actions_it_uses():
    steps = action_yml()["runs"]["steps"]
    scripts = [step for step in steps if "uses" not in step]
    for step in scripts:
        assert step["shell"] == "bash"
        assert "${{" not in step["run"], f"step {step['name']} splices an expression into its script"
    for step in (step for step in steps if "uses" in step):
        name, _, ref = step["uses"].split()[0].partition("@")
        assert name in PINNED_ACTIONS and re.fullmatch(r"[0-9a-f]{40}", ref), step["uses"]
    runs = " ".join(step["run"] for step in scripts)
    assert "scripts/action-install.sh" in runs and "scripts/action.py" in runs and "scripts/action_images.py" in runs
    assert INSTALL.is_file() and SCRIPT.is_file()


def test_install_script_is_valid_bash_and_refuses_an_old_python(tmp_path):
    subprocess.run(["bash", "-n", str(INSTALL)], check=True)
    old = tmp_path / "python-old"
    old.write_text("#!/bin/sh\n# pretends to be Python 3.8\n"
                   "case \"$*\" in *version_info*) exit 1;; *) echo 3.8.10;; esac\n")
    old.chmod(0o755)
    proc = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, check=False,
                          env={**os.environ, "ACTION_PATH": str(REPO), "INPUT_PYTHON": str(old),
                               "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(tmp_path / "out")})
    assert proc.returncode == 2
    assert proc.stderr.strip() == f'error: input "python": mcp-sandbox needs Python >= 3.11 ({old} is 3.8.10)'
    assert not (tmp_path / "mcp-sandbox-venv").exists()


# ---------------------------------------------------------------- input validation (no scanner runs)

FAKE_SCANNER = r'''
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
log = Path(os.environ["FAKE_LOG"])
with log.open("a") as handle:
    handle.write(json.dumps({"argv": args, "cwd": os.getcwd(), "key_visible": "FAKE_KEY" in os.environ}) + "\n")
opts = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
if args[0] == "scan":
    if os.environ.get("FAKE_SAYS"):  # what a scan prints of a server's text (the terminal view, wrapped)
        print(os.environ["FAKE_SAYS"], flush=True)
        print(os.environ["FAKE_SAYS"], file=sys.stderr, flush=True)
    Path(opts["json"]).write_text(json.dumps({"verdict": "review", "score": {"value": 77}}))
    Path(opts["markdown"]).write_text("## fake report\n")
    Path(opts["sarif"]).write_text("{}")
    sys.exit(int(os.environ.get("FAKE_SCAN_RC", "0")))
if args[0] == "lock" and "--check" in args:
    Path(opts["json"]).write_text(json.dumps({"failed": False, "counts": {"error": 0, "warning": 0, "info": 0},
                                              "changes": []}))
sys.exit(int(os.environ.get("FAKE_LOCK_RC", "0")))
'''


@pytest.fixture
def fake(tmp_path):
    script = tmp_path / "fake_scanner.py"
    script.write_text(FAKE_SCANNER)
    log = tmp_path / "fake.log"

    class Fake:
        scanner = f"{sys.executable} {script}"
        env: ClassVar[dict[str, str]] = {"FAKE_LOG": str(log)}

        @staticmethod
        def calls() -> list[dict]:
            return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return Fake


BAD_INPUTS = [
    ({"target": ""}, "target", "is required"),
    ({"target": "--help"}, "target", "must not start with '-'"),
    ({"target": "no/such/folder"}, "target", "neither npm:NAME, pypi:NAME nor an existing path"),
    ({"target": "npm:x\nINJECTED=1"}, "target", "must be a single line"),
    ({"command": "zoo-plain\n--json=/etc/x"}, "command", "must be a single line"),
    ({"fail-on": "critical"}, "fail-on", "must be one of info, warning, error, never, not 'critical'"),
    ({"lock-fail-on": "yes"}, "lock-fail-on", "must be one of info, warning, error, never"),
    ({"fail-under": "101"}, "fail-under", "must be a whole number from 0 to 100, not '101'"),
    ({"fail-under": "9O"}, "fail-under", "must be a whole number from 0 to 100"),
    ({"fail-under": "-1"}, "fail-under", "must be a whole number from 0 to 100"),
    ({"max-calls": "0"}, "max-calls", "must be a whole number from 1 to 100000, not '0'"),
    ({"max-calls": "100001"}, "max-calls", "must be a whole number from 1 to 100000"),
    ({"max-calls": "5e2"}, "max-calls", "must be a whole number from 1 to 100000"),
    ({"summary": "yes"}, "summary", "must be true or false, not 'yes'"),
    ({"cache-images": "yes"}, "cache-images", "must be true or false, not 'yes'"),
    ({"lock-mode": "refresh"}, "lock-mode", "must be check or update, not 'refresh'"),
    ({"lock": "missing.lock"}, "lock", "does not exist; create it with lock-mode: update"),
    ({"lock-key": "key.pub"}, "lock-key", "only applies with a lock and lock-mode: check"),
    ({"lock": "present.lock", "lock-key": "missing.pub"}, "lock-key", "is not a file"),
    ({"sign-key-env": "MY-KEY"}, "sign-key-env", "must be an environment variable name like SIGNING_KEY"),
    ({"sign-key-env": "UNSET_SIGNING_KEY_FOR_TEST"}, "sign-key-env", "UNSET_SIGNING_KEY_FOR_TEST is not set or empty"),
    ({"server-env": "GOOD=1\nbad name=2"}, "server-env", "each line must be NAME=VALUE"),
    ({"server-env": "NOVALUE"}, "server-env", "each line must be NAME=VALUE"),
    ({"server-args": "--root '/tmp"}, "server-args", "cannot be split into arguments (No closing quotation)"),
    ({"server-args": "'a\nb'"}, "server-args", "must not contain NUL or line breaks"),
    ({"working-directory": "no/such/dir"}, "working-directory", "is not a directory"),
    ({"sarif": "adir"}, "sarif", "is a directory; give a file path"),
    ({"sarif": "out.sarif\n--json=/etc/passwd"}, "sarif", "must be a single line"),
    ({"report-dir": "a\rb"}, "report-dir", "must be a single line"),
    ({"report-dir": "present.lock"}, "report-dir", "exists and is not a directory"),
    ({"report-dir": "present.lock/reports"}, "report-dir", "cannot create the folder"),
    ({"report-dir": "rd"}, "report-dir", "cannot replace"),  # rd/report.json is a folder
    ({"sarif": "present.lock/out.sarif"}, "sarif", "cannot create the folder"),
    ({"sarif": "present.lock", "lock": "present.lock"}, "sarif", "is the lock; give another path"),
    ({"report-dir": ".", "sarif": "lock-changes.json"}, "sarif", "is the action's lock-changes.json in report-dir"),
    ({"report-dir": ".", "lock": "report.json", "lock-mode": "update"}, "lock", "is the action's report.json"),
    ({"sarif": "adir/../present.lock", "lock": "present.lock"}, "sarif", "is the lock; give another path"),
    ({"report-dir": "adir/..", "sarif": "lock-changes.json"}, "sarif", "is the action's lock-changes.json"),
    ({"report-dir": "rd", "lock": "adir/../rd/report.md", "lock-mode": "update"}, "lock", "is the action's report.md"),
    ({"url": "ftp://h/mcp"}, "url", "must be one http:// or https:// URL with a host"),
    ({"url": "https://h:99999/mcp"}, "url", "has a port that is not a number"),
    ({"url": "https://h/mcp"}, "target", "does not go with url"),
    ({"headers": "X-Team: blue"}, "headers", "applies to a remote server: give url too"),
    ({"url": "https://h/mcp", "target": "", "header-env": "X-Key"}, "header-env", "each line must be NAME=VAR"),
    ({"url": "https://h/mcp", "target": "", "headers": "no colon"}, "headers", "each line must be 'NAME: VALUE'"),
    ({"url": "https://h/mcp", "target": "", "allow-writes": "yes"}, "allow-writes", "must be true or false"),
]


@pytest.mark.parametrize(("inputs", "name", "message"), BAD_INPUTS, ids=[f"{b[1]}-{i}" for i, b in enumerate(BAD_INPUTS)])
def test_a_bad_input_is_one_error_line_and_exit_2(run_action, fake, tmp_path, inputs, name, message):
    work = tmp_path / "work"
    (work / "adir").mkdir(parents=True)
    (work / "present.lock").write_text("{}")
    (work / "server").mkdir()
    (work / "rd" / "report.json").mkdir(parents=True)
    full = {"target": "server", "working-directory": str(work), **inputs}
    result = run_action(full, scanner=fake.scanner, extra_env=fake.env)
    assert result.code == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f'error: input "{name}": '), lines[0]
    assert message in lines[0]
    assert fake.calls() == [], "the scanner ran despite a bad input"
    assert result.outputs == {}
    assert result.summary == "# earlier step\n"


def test_on_github_the_error_is_an_annotation_that_cannot_inject_commands(run_action, fake):
    result = run_action({"target": "npm:x", "fail-on": "x%0A::add-mask::y"}, scanner=fake.scanner,
                        extra_env={**fake.env, "GITHUB_ACTIONS": "true"})
    assert result.code == 2
    assert result.stderr.strip() == ("::error title=mcp-sandbox::error: input \"fail-on\": must be one of info, "
                                     "warning, error, never, not 'x%250A::add-mask::y'")


def runner_commands(log: str) -> list[str]:
    """The workflow commands GitHub's runner takes from a step's log: each line that starts with `::` after its
    leading spaces, none between `::stop-commands::TOKEN` and `::TOKEN::`."""
    commands, stopped = [], None
    for line in log.splitlines():
        text = line.lstrip()
        if stopped is not None:
            stopped = None if text == f"::{stopped}::" else stopped
        elif text.startswith("::"):
            commands.append(text)
            if text.startswith("::stop-commands::"):
                stopped = text.removeprefix("::stop-commands::")
    return commands


def test_on_github_the_scanners_output_cannot_issue_workflow_commands(run_action, fake):
    says = "              ::add-mask::mcp-sandbox\n::stop-commands::pwned\n::error title=PASS::all clear"
    result = run_action({"target": "npm:x"}, scanner=fake.scanner,
                        extra_env={**fake.env, "GITHUB_ACTIONS": "true", "FAKE_SAYS": says})
    assert result.code == 0, result
    commands = runner_commands(result.stdout + result.stderr)
    assert [c.split("::")[1] for c in commands] == ["group", "stop-commands", "endgroup"], commands
    assert "::error title=PASS::all clear" in result.stdout  # still in the log, as text


def test_inputs_reach_the_scanner_as_separate_arguments_never_through_a_shell(run_action, fake, tmp_path):
    work = tmp_path / "work dir"
    (work / "srv $(touch pwned)").mkdir(parents=True)
    result = run_action({
        "target": "srv $(touch pwned)",
        "command": "zoo-plain; touch pwned2 && echo `id`",
        "server-args": "/workspace --name 'two words' \"$HOME\"",
        "server-env": "A=1\n  B=x y;z  \n",
        "working-directory": str(work),
        "fail-on": "warning",
        "fail-under": "80",
        "max-calls": "2000",
        "sarif": "out/results.sarif",
    }, scanner=fake.scanner, extra_env=fake.env)
    assert result.code == 0, result
    (scan,) = fake.calls()
    assert scan["cwd"] == str(work)
    report_dir = tmp_path / "mcp-sandbox-report"  # RUNNER_TEMP, not the scanned folder
    assert scan["argv"] == [
        "scan", "srv $(touch pwned)", f"--json={report_dir / 'report.json'}",
        f"--sarif={work / 'out' / 'results.sarif'}", f"--markdown={report_dir / 'report.md'}", "--fail-on=warning",
        "--fail-under=80", "--max-calls=2000", "--command=zoo-plain; touch pwned2 && echo `id`", "--env=A=1", "--env=B=x y;z",
        "--", "/workspace", "--name", "two words", "$HOME",
    ]
    assert not list(work.rglob("pwned*"))
    assert sorted(p.name for p in work.iterdir()) == ["out", "srv $(touch pwned)"], "reports went into the target"
    assert result.outputs["verdict"] == "review" and result.outputs["score"] == "77"
    assert result.outputs["sarif"] == str(work / "out" / "results.sarif")
    assert result.summary == "# earlier step\n## fake report\n\n"


def test_the_url_input_scans_the_remote_server_and_the_url_is_never_printed(run_action, fake, tmp_path):
    url = "https://mcp.example.invalid/mcp?key=q7secretquery"
    result = run_action({"url": url, "headers": "X-Team: blue\n", "header-env": "Authorization=API_TOKEN",
                         "allow-writes": "true", "lock": "m.lock", "lock-mode": "update",
                         "working-directory": str(tmp_path)}, scanner=fake.scanner, extra_env=fake.env)
    assert result.code == 0, result
    scan, lock = fake.calls()
    report_dir = tmp_path / "mcp-sandbox-report"
    assert scan["argv"][:5] == ["scan", f"--url={url}", "--header=X-Team: blue", "--header-env=Authorization=API_TOKEN",
                                "--allow-writes"]
    assert scan["argv"][5] == f"--json={report_dir / 'report.json'}"
    assert lock["argv"][:2] == ["lock", f"--from={report_dir / 'report.json'}"]  # the lock is the scan's report
    assert "q7secretquery" not in result.stdout + result.stderr + result.summary
    assert "--url=https://mcp.example.invalid/[not shown]" in result.stdout


def test_a_scanner_path_with_spaces_is_run_whole(run_action, fake, tmp_path):
    """The install step writes the venv's scanner as a path under RUNNER_TEMP, which may hold spaces (a self-hosted
    runner's folder): it is run as one path, not split into `/path/with` and `space/...`."""
    (tmp_path / "srv").mkdir()
    folder = tmp_path / "runner temp"
    folder.mkdir()
    scanner = folder / "mcp-sandbox"
    scanner.write_text(f"#!/bin/sh\nexec {fake.scanner} \"$@\"\n")
    scanner.chmod(0o755)
    result = run_action({"target": "srv", "working-directory": str(tmp_path)}, scanner=str(scanner),
                        extra_env=fake.env)
    assert result.code == 0, result
    assert [call["argv"][0] for call in fake.calls()] == ["scan"]


def test_the_signing_key_reaches_only_the_commands_that_sign(run_action, fake, tmp_path):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv.lock").write_text("{}")
    env = {**fake.env, "FAKE_KEY": "-----BEGIN PRIVATE KEY-----"}
    common = {"target": "srv", "working-directory": str(tmp_path), "lock": "srv.lock", "sign-key-env": "FAKE_KEY"}
    assert run_action({**common, "lock-mode": "check"}, scanner=fake.scanner, extra_env=env).code == 0
    assert run_action({**common, "lock-mode": "update"}, scanner=fake.scanner, extra_env=env).code == 0
    scan1, check, _scan2, update = fake.calls()
    assert "--sign-env=FAKE_KEY" in scan1["argv"] and scan1["key_visible"]
    assert check["argv"][:2] == ["lock", "--check"] and not check["key_visible"]
    assert not any(a.startswith("--sign") for a in check["argv"])
    assert update["argv"][:1] == ["lock"] and "--check" not in update["argv"]
    assert "--sign-env=FAKE_KEY" in update["argv"] and update["key_visible"]


def test_summary_false_leaves_the_job_summary_alone(run_action, fake, tmp_path):
    (tmp_path / "srv").mkdir()
    result = run_action({"target": "srv", "working-directory": str(tmp_path), "summary": "false"},
                        scanner=fake.scanner, extra_env=fake.env)
    assert result.code == 0, result
    assert result.summary == "# earlier step\n"
    assert result.outputs["verdict"] == "review"


@pytest.mark.parametrize(("scan_rc", "lock_rc", "expected"), [
    (0, 0, 0), (1, 0, 1), (0, 1, 1), (0, 2, 2), (1, 2, 2), (3, 0, 3), (2, 0, 2), (130, 0, 130),
])
def test_exit_code_is_the_most_serious_step(run_action, fake, tmp_path, scan_rc, lock_rc, expected):
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv.lock").write_text("{}")
    result = run_action({"target": "srv", "working-directory": str(tmp_path), "lock": "srv.lock"},
                        scanner=fake.scanner,
                        extra_env={**fake.env, "FAKE_SCAN_RC": str(scan_rc), "FAKE_LOCK_RC": str(lock_rc)})
    assert result.code == expected, result
    assert result.outputs["exit-code"] == str(expected)
    ran_lock = len(fake.calls()) == 2
    assert ran_lock == (scan_rc in (0, 1)), "the lock is compared only with a completed scan"
    assert result.outputs["lock-failed"] == ({0: "false"}.get(lock_rc, "true") if ran_lock else "")


@pytest.mark.parametrize("dies", ["kill -9 $$", "kill -15 $$", "exit 137", "exit 4"])
def test_a_scanner_killed_or_exiting_oddly_is_a_scan_that_could_not_complete(run_action, tmp_path, dies):
    """An OOM-killed scanner (-9, or 137 through a shell) is exit 3 with exit-code 3, never a negative or
    undocumented code a workflow's `exit-code == '3'` check would miss."""
    (tmp_path / "srv").mkdir()
    (tmp_path / "srv.lock").write_text("{}")
    dying = tmp_path / "dying-scanner"
    dying.write_text(f"#!/bin/sh\n{dies}\n")
    dying.chmod(0o755)
    result = run_action({"target": "srv", "working-directory": str(tmp_path), "lock": "srv.lock"},
                        scanner=str(dying))
    assert result.code == 3, result
    assert result.outputs["exit-code"] == "3" and result.outputs["verdict"] == ""
    assert result.outputs["lock-failed"] == "", "the lock is not compared without a completed scan"
    assert "exited with code 3" in result.summary
    assert re.search(r"error: the scanner (was killed by signal \d+|exited with \d+): counted as exit 3", result.stderr)


def test_stale_reports_from_an_earlier_run_are_not_reported(run_action, tmp_path):
    (tmp_path / "srv").mkdir()
    stale = tmp_path / "mcp-sandbox-report"
    stale.mkdir()
    (stale / "report.json").write_text(json.dumps({"verdict": "pass", "score": {"value": 100}}))
    (stale / "mcp-sandbox.sarif").write_text("{}")
    (stale / "report.json.intoto.json").write_text("{}")  # an earlier run's envelope, named as this run's
    failing = tmp_path / "failing-scanner"
    failing.write_text("#!/bin/sh\necho 'error: no Docker engine answers' >&2\nexit 3\n")
    failing.chmod(0o755)
    result = run_action({"target": "srv", "working-directory": str(tmp_path)}, scanner=str(failing))
    assert result.code == 3
    assert result.outputs["verdict"] == "" and result.outputs["score"] == "" and result.outputs["sarif"] == ""
    assert result.outputs["attestation"] == "" and not (stale / "report.json.intoto.json").exists()
    assert "no report" in result.summary and "exited with code 3" in result.summary


def lock_check_config(tmp_path: Path, lock: str, mode: str = "check") -> action_inputs.Config:
    """The action's inputs for a lock check (or update) of npm:x, its report in tmp_path."""
    return action_inputs.Config(workdir=tmp_path, target="npm:x", command=None, server_args=[], server_env=[],
                                fail_on="error", fail_under=None, sarif=tmp_path / "s.sarif", report_dir=tmp_path,
                                lock=tmp_path / lock, lock_mode=mode, lock_fail_on="warning", lock_key=None,
                                sign_env=None, summary=True)


def test_summary_escapes_hostile_lock_change_text(tmp_path):
    cfg_changes = tmp_path / "lock-changes.json"
    cfg_changes.write_text(json.dumps({"failed": True, "counts": {"error": 1, "warning": 0, "info": 0}, "changes": [
        {"kind": "description_changed", "severity": "error", "tool": "t\u202e<img src=x>",
         "message": "now reads \x1b[2J| <!-- hidden --> @everyone \U000e0072 ![x](http://x)"}]}))
    cfg = lock_check_config(tmp_path, "mcp-sandbox.lock")
    text = action.lock_summary(cfg, 1)
    for raw in (*UNSAFE_RAW, "<img", "<!--", "@everyone", "![x]"):
        assert raw not in text, raw
    assert "\\u202e" in text and "\\x1b" in text and "&lt;img" in text and "@&#8203;everyone" in text
    row = next(line for line in text.splitlines() if line.startswith("| error"))
    assert row.count(" | ") == 3, "a | in untrusted text must not add table columns"


def test_summary_of_a_lock_check_shows_what_was_not_compared_and_the_findings_on_changed_text(tmp_path):
    """The lock check's JSON also has what could not be compared and the static rules' findings on the changed text
    (they fail the check like changes do): both reach the summary, escaped, not only the changes."""
    (tmp_path / "lock-changes.json").write_text(json.dumps({
        "failed": True, "counts": {"error": 1, "warning": 0, "info": 0},
        "changes": [{"kind": "description_changed", "severity": "error", "tool": "t", "message": "now reads x"}],
        "not_compared": ["the server's instructions (<b>the lock has none</b>)"],
        "findings": [{"rule_id": "S8", "severity": "error", "tool": "t|x",
                      "message": "hidden instruction <IMPORTANT> @everyone"}]}))
    cfg = lock_check_config(tmp_path, "m.lock")
    text = action.lock_summary(cfg, 1)
    assert "Not compared" in text and "&lt;b&gt;the lock has none&lt;/b&gt;" in text
    row = next(line for line in text.splitlines() if line.startswith("| error | S8 |"))
    assert row.count(" | ") == 3 and "&lt;IMPORTANT&gt;" in row and "@&#8203;everyone" in row and "t\\|x" in row


@pytest.mark.parametrize(("code", "says"), [(0, "Lock refreshed."), (1, "need `mcp-sandbox lock --accept`"),
                                           (2, "not refreshed (exit 2); see the log")])
def test_summary_of_a_lock_update_says_why_it_was_not_refreshed(tmp_path, code, says):
    """Only exit 1 is error-level changes waiting for --accept; exit 2 (an unreadable or cut report) is not."""
    cfg = lock_check_config(tmp_path, "m.lock", mode="update")
    text = action.lock_summary(cfg, code)
    assert says in text
    assert ("--accept" in text) == (code == 1)


# ---------------------------------------------------------------- against a real remote server on loopback


def test_url_locks_then_checks_a_real_remote_server(run_action, server, tmp_path):
    """The real scanner against a Streamable HTTP server of our own (tests/servers/remote_http.py): NOT sandboxed."""
    port, writes = server
    inputs = {"url": f"http://127.0.0.1:{port}/mcp", "header-env": "X-Api-Key=SECRET_TOKEN", "lock": "remote.lock",
              "working-directory": str(tmp_path), "fail-on": "never"}
    secret = {"SECRET_TOKEN": SECRET}
    updated = run_action({**inputs, "lock-mode": "update"}, extra_env=secret)
    assert updated.code == 0, updated
    report = json.loads(Path(updated.outputs["report"]).read_text())
    assert report["target"]["kind"] == "remote" and report["target"]["remote"]["sandboxed"] is False
    assert '"kind": "remote"' in (tmp_path / "remote.lock").read_text()
    checked = run_action({**inputs, "lock-mode": "check"}, extra_env=secret)
    assert checked.code == 0 and checked.outputs["lock-failed"] == "false" and checked.outputs["lock-changes"] == "0"
    for run in (updated, checked):
        assert SECRET not in run.stdout + run.stderr + run.summary and f"{port}/mcp" not in run.stdout + run.summary
    assert not writes.exists()


# ---------------------------------------------------------------- against a real sandbox (zoo test servers)


def zoo_inputs(tmp_path: Path, command: str, **more: str) -> dict[str, str]:
    return {"target": str(ZOO), "command": command, "working-directory": str(tmp_path), **more}


@pytest.mark.docker
def test_a_clean_server_passes_with_outputs_summary_and_sarif(run_action, tmp_path, no_leftovers):
    result = run_action(zoo_inputs(tmp_path, "zoo-plain", sarif="results/zoo.sarif"))
    assert result.code == 0, result
    out = result.outputs
    assert set(out) == set(action.OUTPUTS)
    assert out["verdict"] == "pass" and out["exit-code"] == "0"
    assert out["sarif"] == str(tmp_path / "results" / "zoo.sarif")
    sarif = json.loads(Path(out["sarif"]).read_text())
    jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["tool"]["driver"]["name"] == "mcp-sandbox"
    report = json.loads(Path(out["report"]).read_text())
    assert report["verdict"] == "pass" and [t["name"] for t in report["tools"]] == ["echo_text"]
    assert out["score"] == str(report["score"]["value"]) and 0 <= int(out["score"]) <= 100
    assert out["lock-failed"] == "" and out["lock-changes"] == "" and out["attestation"] == ""
    assert result.summary.startswith("# earlier step\n## ✅ mcp-sandbox: **PASS**")
    assert "echo\\_text" in result.summary
    assert result.summary.endswith(Path(out["markdown"]).read_text() + "\n")


@pytest.mark.docker
def test_a_poisoned_server_fails_the_step_and_its_text_is_inert(run_action, tmp_path, no_leftovers):
    result = run_action(zoo_inputs(tmp_path, "zoo-hostile-text"))
    assert result.code == 1, result
    assert result.outputs["verdict"] == "block" and result.outputs["exit-code"] == "1"
    assert re.fullmatch(r"\d{1,3}", result.outputs["score"])
    sarif = json.loads(Path(result.outputs["sarif"]).read_text())
    assert any(r["ruleId"].startswith("S8") for r in sarif["runs"][0]["results"])
    assert "**BLOCK**" in result.summary
    for raw in UNSAFE_RAW:
        assert raw not in result.summary, repr(raw)
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: mcp-sandbox: verdict block, score {result.outputs['score']}, scan exit 1 -> exit 1")

    assert result.outputs["sarif"] == str(tmp_path / "mcp-sandbox-report" / "mcp-sandbox.sarif")  # the default
    relaxed = run_action(zoo_inputs(tmp_path, "zoo-hostile-text", **{"fail-on": "never"}))
    assert relaxed.code == 0 and relaxed.outputs["verdict"] == "block"


@pytest.mark.docker
def test_a_scan_that_cannot_complete_exits_3_with_the_verdict_incomplete(run_action, tmp_path, no_leftovers):
    """A scan that never read the tools is not a pass: its verdict output is `incomplete`, and it has no score."""
    result = run_action(zoo_inputs(tmp_path, "zoo-crash"))
    assert result.code == 3, result
    assert result.outputs["verdict"] == "incomplete" and result.outputs["score"] == ""
    assert result.outputs["exit-code"] == "3"
    assert "mcp-sandbox" in result.summary


@pytest.mark.docker
def test_lock_update_then_check_catches_a_changed_server(run_action, tmp_path, no_leftovers):
    lock = tmp_path / "zoo.lock"
    created = run_action(zoo_inputs(tmp_path, "zoo-plain", lock="zoo.lock", **{"lock-mode": "update"}))
    assert created.code == 0, created
    assert json.loads(lock.read_text())["tools"][0]["name"] == "echo_text"
    assert created.outputs["lock-failed"] == "false"
    assert "Lock refreshed" in created.summary

    same = run_action(zoo_inputs(tmp_path, "zoo-plain", lock="zoo.lock"))
    assert same.code == 0, same
    assert same.outputs["lock-changes"] == "0" and same.outputs["lock-failed"] == "false"
    assert "Lock check against zoo.lock: 0 changes" in same.summary

    # The same name now serves other tools: the committed lock catches it even though findings don't gate.
    before = lock.read_bytes()
    changed = run_action(zoo_inputs(tmp_path, "zoo-hostile-text", lock="zoo.lock", **{"fail-on": "never"}))
    assert changed.code == 1, changed
    assert changed.outputs["lock-failed"] == "true" and int(changed.outputs["lock-changes"]) >= 2
    assert lock.read_bytes() == before, "a check never rewrites the lock"
    assert "tool\\_added" in changed.summary and "tool\\_removed" in changed.summary
    for raw in UNSAFE_RAW:
        assert raw not in changed.summary, repr(raw)
    changes = json.loads((tmp_path / "mcp-sandbox-report" / "lock-changes.json").read_text())
    assert changes["failed"] is True


@pytest.mark.docker
def test_signed_report_and_lock_verify_with_the_public_key(run_action, tmp_path, no_leftovers):
    key = tmp_path / "ci-key"
    subprocess.run([CLI, "keygen", "--out", str(key)], check=True, capture_output=True)
    env = {"MCP_TEST_SIGNING_KEY": key.read_text()}
    signed = run_action(zoo_inputs(tmp_path, "zoo-plain", lock="zoo.lock", **{"lock-mode": "update",
                                                                              "sign-key-env": "MCP_TEST_SIGNING_KEY"}),
                        extra_env=env)
    assert signed.code == 0, signed
    assert key.read_text() not in signed.stdout + signed.stderr + signed.summary
    envelope = Path(signed.outputs["attestation"])
    assert envelope.name == "report.json.intoto.json"
    verify = subprocess.run([CLI, "verify", str(envelope), "--key", f"{key}.pub", "--report",
                             signed.outputs["report"]], capture_output=True, text=True, check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert (tmp_path / "zoo.lock.intoto.json").is_file()

    checked = run_action(zoo_inputs(tmp_path, "zoo-plain", lock="zoo.lock", **{"lock-key": f"{key}.pub"}))
    assert checked.code == 0, checked
    with (tmp_path / "zoo.lock").open("a") as handle:  # one byte more, still the same JSON
        handle.write(" ")
    tampered = run_action(zoo_inputs(tmp_path, "zoo-plain", lock="zoo.lock", **{"lock-key": f"{key}.pub"}))
    assert tampered.code == 1, tampered
    assert tampered.outputs["lock-failed"] == "true"


@pytest.mark.docker
@pytest.mark.registry
def test_install_step_builds_a_venv_from_the_action_checkout(tmp_path):
    """The action's install step for real (pip from PyPI), on a copy of the checkout so the repo is left alone."""
    import shutil

    checkout = tmp_path / "action"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, checkout / name)
    for folder in ("scanner", "sandbox", "images", "scripts"):
        shutil.copytree(REPO / folder, checkout / folder, ignore=ignore)
    output = tmp_path / "github_output"
    output.write_text("")
    env = {**os.environ, "ACTION_PATH": str(checkout), "INPUT_PYTHON": sys.executable, "RUNNER_TEMP": str(tmp_path),
           "GITHUB_OUTPUT": str(output)}
    proc = subprocess.run(["bash", str(checkout / "scripts" / "action-install.sh")], capture_output=True, text=True,
                          env=env, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "mcp-sandbox 0.1.0" in proc.stdout
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert outputs == {"bin": f"{tmp_path}/mcp-sandbox-venv/bin/mcp-sandbox",
                       "python": f"{tmp_path}/mcp-sandbox-venv/bin/python"}
    # editable: the runtime image definitions are read from the action's checkout
    where = subprocess.run([outputs["python"], "-c", "import sandbox.core.images as i; print(i.IMAGES_DIR)"],
                           capture_output=True, text=True, check=True, cwd=tmp_path)
    assert where.stdout.strip() == str(checkout / "images")
    marker = tmp_path / "mcp-sandbox-venv" / "pyvenv.cfg"
    created = marker.stat().st_mtime_ns
    again = subprocess.run(["bash", str(checkout / "scripts" / "action-install.sh")], capture_output=True, text=True,
                           env=env, timeout=300, check=False)
    assert again.returncode == 0 and "mcp-sandbox 0.1.0" in again.stdout
    assert marker.stat().st_mtime_ns == created, "a second run in the same job reinstalled the venv"


def test_summary_gives_github_no_link_issue_link_or_emoji_in_a_servers_text() -> None:
    """The job summary's md() broke only mentions: `https://…`/`www.…` in a lock change's message were clickable
    links, `#1` an issue link and `:white_check_mark:` a ✅ (GitHub finds them after the backslashes are decoded)."""
    text = "see https://evil.invalid/login www.evil.invalid #1 :white_check_mark: :+1: @octocat"
    shown = action.md(text)
    rendered = shown.replace("\\", "")
    for linked in ("https://", "www.", "#1", ":white_check_mark:", ":+1:", "@octocat"):
        assert linked not in rendered, linked
    assert rendered.replace("&#8203;", "") == text
    from scanner.report.markdown import md

    assert shown == md(text)  # the Action's copy of md() escapes as the report's does


def test_summary_of_a_lock_check_counts_what_was_not_compared_past_the_rows_shown(tmp_path):
    """Only the first 20 things not compared were listed, and nothing said that more were left out."""
    (tmp_path / "lock-changes.json").write_text(json.dumps({
        "failed": False, "counts": {"error": 0, "warning": 0, "info": 0}, "changes": [],
        "not_compared": [f"prompt p{i} (the lock has none)" for i in range(25)]}))
    cfg = lock_check_config(tmp_path, "m.lock")
    text = action.lock_summary(cfg, 0)
    assert "prompt p19" in text and "prompt p20" not in text and "…and 5 more" in text
