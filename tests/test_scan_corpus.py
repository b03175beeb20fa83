"""Scan corpus: full scans (probes on) of the ten real servers issue 11 names, as a user runs them, recorded by
`scripts/scan_corpus.py` in tests/fixtures/scans/<server>.json and reviewed here finding by finding.

The static findings (S1-S14) of each scan are the ones tests/test_rules_corpus.py reviews on the same tools/list
(the test checks they are the same); every other finding (B, P, I) is reviewed below as a true (TP) or false (FP)
positive, with the reasoning. False positives are kept, named by class (FP_CLASSES: what a reviewer rejects and the
code that causes it), and README's limitations name every class: this test documents them, it does not hide them.

Recorded 2026-12-01 with mcp-sandbox 0.1.0 at the S1/S7 calibration. Verdicts as recorded / as a reviewer confirms
them (the FPs taken out): filesystem review/review, everything block/block (get-env returns the planted tokens),
memory block/pass, sequential-thinking pass/pass, desktop-commander block/block (telemetry at start-up, from its
install scripts and from tools annotated as closed-world), git block/pass, time pass/pass, fetch review/review,
markitdown pass/pass, duckduckgo block/review. Clean (pass, or review with no error finding): 4 of 10 as recorded,
7 of 10 with the FPs fixed (8 counting filesystem, whose errors are P1 response sizes, not security).

After re-running `scripts/scan_corpus.py`, re-review every entry: a changed recording is a changed server or a
changed scanner. A review marked flaky may be absent from a recording (a race the scanner does not control).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.test_rules_corpus import EXPECTED as STATIC_REVIEW, load_script

ROOT = Path(__file__).resolve().parent.parent
SCANS = ROOT / "tests" / "fixtures" / "scans"


@dataclass(frozen=True)
class FPClass:
    what: str  # what a reviewer rejects
    cause: str  # the code that causes it


FP_CLASSES = {
    "own-state-write": FPClass(
        "B1 calls a tool's write to the server's own store, log or VCS bookkeeping a change to the user's data "
        "(memory's graph file rewritten to append, desktop-commander's call log and usage counters, git's index "
        "refresh on status)", "scanner/rules/behavior.py (B1 file changes: every changed path counts)"),
    "library-helper-process": FPClass(
        "B5 calls a library's long-lived helper, or a transient child the server spawns for itself, a process left "
        "running (GitPython's `git cat-file --batch`, desktop-commander's `sh -c python3 --version`)",
        "scanner/rules/behavior.py (B5: any process alive after the call that was not before it)"),
    "restart-egress-next-call": FPClass(
        "after a probe restarts the server, the fresh server's start-up traffic is charged to the next call "
        "(desktop-commander's kill_process blamed for desktopcommander.app and googlechromelabs.github.io)",
        "scanner/probes/runner.py `_restart` (no egress drain between the restart and the next call)"),
    "probe-killed-server": FPClass(
        "a generated argument made the tool stop the server itself (kill_process with pid 1, the container's "
        "init), and P6 blames the next call's bad input for the exit",
        "scanner/probes/value_generation.py (1 for an integer `pid`) and scanner/rules/probe.py P6 (the probe "
        "during which the exit was noticed)"),
    "p5-limit-not-counted": FPClass(
        "P5 says a tool has no way to ask for a shorter response when it has head/tail/length/maxResults",
        "scanner/rules/probe.py `can_ask_for_less` (counts format/verbosity parameters, not limits)"),
    "base64-as-opaque-ids": FPClass(
        "P2 counts a base64 `blob` of a resource (file content) as opaque IDs",
        "scanner/probes/opaque_ids.py (every long token-like run is an ID)"),
    "s11-default-open-world": FPClass(
        "S11 calls an honestly described network tool with no annotations 'not honestly described and annotated' "
        "although a missing openWorldHint means open world (the MCP default)",
        "scanner/rules/static/s11_capability.py `honestly_declared` (requires openWorldHint: true literally)"),
    "s8-credential-example": FPClass(
        "S8's credential-reference warning fires on a search tool's usage text naming `.env` as a file to find",
        "scanner/rules/static/s08_hidden_text.py (the credential-reference detector matches a bare `.env`)"),
}
# The static FPs, reviewed in tests/test_rules_corpus.py: (server, rule, severity, tool) -> class.
STATIC_FPS = {("duckduckgo-mcp-server", "S11", "error", "fetch_content"): "s11-default-open-world",
              ("desktop-commander", "S8", "warning", "start_search"): "s8-credential-example"}


@dataclass(frozen=True)
class Review:
    rule: str
    severity: str
    tools: tuple[str | None, ...]  # one entry per finding
    fp: str | None  # an FP_CLASSES key; None: a true positive
    why: str
    match: str = ""  # a text the message holds, where one rule and tool has findings of different kinds
    flaky: bool = False  # may be absent from a recording


@dataclass(frozen=True)
class Expected:
    verdict: str  # as recorded
    reviewed_verdict: str  # what a reviewer confirms: the verdict with the FPs taken out
    reviews: tuple[Review, ...] = ()


DC_TELEMETRY = ("telemetry.desktopcommander.app", "dc-telemetry-proxy-83847352264.europe-west1.run.app")
DC_RESTART = ("desktopcommander.app", "googlechromelabs.github.io")
DC_CLOSED_WORLD = ("edit_block", "force_terminate", "get_config", "get_file_info", "get_more_search_results",
                   "get_prompts", "get_recent_tool_calls", "get_usage_stats", "kill_process", "list_directory",
                   "list_processes", "list_searches", "list_sessions", "move_file", "read_multiple_files",
                   "read_process_output", "set_config_value", "start_search", "write_file", "write_pdf")
DC_OPEN_WORLD = ("create_directory", "give_feedback_to_desktop_commander", "interact_with_process", "read_file",
                 "start_process", "stop_search")
DC_OWN_STATE = ("create_directory", "get_config", "get_file_info", "get_more_search_results", "get_prompts",
                "get_recent_tool_calls", "get_usage_stats", "list_directory", "list_processes", "list_searches",
                "list_sessions", "read_file", "read_multiple_files", "read_process_output", "start_search",
                "stop_search")

EXPECTED: dict[str, Expected] = {
    "server-filesystem": Expected("review", "review", (
        Review("P1", "error", ("read_file", "read_media_file", "read_text_file"), None,
               "reading the seeded 20,000-line log returns 1.3-1.7 MB whole: the default reads everything"),
        Review("P3", "info", ("read_file", "read_text_file"), None,
               "no cursor or note in the large response; head/tail exist (info)"),
        Review("P3", "warning", ("read_media_file",), None, "no cursor and no paging parameter at all"),
        Review("P5", "warning", ("read_media_file",), None, "a 425k-token response with no way to ask for less"),
        Review("P5", "warning", ("read_file", "read_text_file"), "p5-limit-not-counted",
               "head/tail are exactly the way to ask for less"),
        Review("P5", "info", ("directory_tree",), None, "~2k tokens and no depth or size parameter (info)"),
        Review("P2", "warning", ("read_media_file",), "base64-as-opaque-ids",
               "the 'opaque IDs' are the base64 blob of README.md, the file content asked for"),
    )),
    "server-everything": Expected("block", "block", (
        Review("B3", "error", ("get-env",), None,
               "get-env returns the whole environment, planted tokens included: the confirmed BLOCK"),
        Review("B2", "warning", ("gzip-file-as-resource",), None,
               "fetches its default raw.githubusercontent.com URL; openWorldHint true, so a warning naming it"),
        Review("P9", "warning", ("trigger-long-running-operation",), None,
               "10 s to answer: a demo of a long operation, measured right"),
    )),
    "server-memory": Expected("block", "pass", (
        Review("B1", "error", ("add_observations", "create_relations"), "own-state-write",
               "they append to the knowledge graph by rewriting its file (MEMORY_FILE_PATH): the tool's own store, "
               "nothing existing is destroyed, so destructiveHint false is honest"),
    )),
    "server-sequential-thinking": Expected("pass", "pass"),
    "desktop-commander": Expected("block", "block", (
        Review("B2", "error", (None,) * 4, None,
               "four hosts at start-up, before any call (its telemetry, its site, Chrome's version list): start-up "
               "egress stays an error"),
        *(Review("B2", "error", DC_CLOSED_WORLD, None, f"every call of a tool annotated closed-world (or read-only "
                 f"without openWorldHint) sends telemetry to {host}", match=host) for host in DC_TELEMETRY),
        *(Review("B2", "warning", DC_OPEN_WORLD, None, f"telemetry to {host} from tools declaring (or defaulting "
                 "to) an open world: a warning naming the host", match=host) for host in DC_TELEMETRY),
        *(Review("B2", "error", ("kill_process",), "restart-egress-next-call",
                 f"{host} is a start-up host of the restarted server (after the P6 restart), seen in the first "
                 "call after it", match=f"attempt to {host} ") for host in DC_RESTART),
        Review("B1", "error", DC_CLOSED_WORLD, None,
               "annotated read-only without openWorldHint or openWorldHint false, yet every call sends telemetry",
               match="tried to reach"),
        Review("B1", "error", DC_OWN_STATE, "own-state-write",
               "the 'changes' are its own call log, usage counters and tool history under "
               "~/.claude-server-commander, not the user's files", match="during probe"),
        Review("I7", "error", (None,) * 3, None,
               "install scripts of desktop-commander (its telemetry) and puppeteer (a Chrome download) tried hosts"),
        Review("I5", "warning", (None,), None, "three packages run install scripts"),
        Review("P1", "warning", ("get_recent_tool_calls", "read_file"), None, "8.5k and 15.6k-token responses"),
        Review("P5", "warning", ("get_recent_tool_calls", "read_file"), "p5-limit-not-counted",
               "maxResults and offset/length are the way to ask for less"),
        Review("P4", "warning", ("get_config",), None, "a wrong-typed and an out-of-enum `origin` were accepted"),
        Review("P6", "error", ("kill_process",), "probe-killed-server",
               "the generated call killed pid 1 ('Successfully terminated process 1'), the server itself; the "
               "missing-pid probe after it only found it gone"),
        Review("B5", "error", ("start_process",), "library-helper-process",
               "`sh -c python3 --version`, the server's own interpreter check, caught alive at the snapshot",
               flaky=True),
    )),
    "mcp-server-git": Expected("block", "pass", (
        Review("B1", "error", ("git_status",), "own-state-write",
               "git status refreshes .git/index (stat cache) on every run: VCS bookkeeping, not the user's data"),
        Review("B5", "warning", ("git_commit", "git_log"), "library-helper-process",
               "GitPython's persistent `git cat-file --batch(-check)` helpers, kept for reuse, end with the server"),
    )),
    "mcp-server-time": Expected("pass", "pass"),
    "mcp-server-fetch": Expected("review", "review", (
        Review("B2", "info", ("fetch",), None,
               "the lookup of probe.example.invalid, the URL the probe gave it: an observation, never its egress"),
    )),
    "markitdown-mcp": Expected("pass", "pass", (
        Review("B2", "info", ("convert_to_markdown",), None, "the probe's own URI, looked up and connected: info"),
    )),
    "duckduckgo-mcp-server": Expected("block", "review", (
        Review("B2", "info", ("fetch_content",), None, "the probe's own URL: info"),
        Review("B2", "warning", ("search",), None,
               "html.duckduckgo.com, the host its description names, with no annotations (open world by default)"),
    )),
}


def recording(server: str) -> dict[str, Any]:
    return json.loads((SCANS / f"{server}.json").read_text(encoding="utf-8"))


def _review_of(finding: dict[str, Any], reviews: tuple[Review, ...], left: dict[int, list[str | None]]) -> bool:
    """Consume the first review that covers this finding (rule, severity, tool and its `match`)."""
    for index, review in enumerate(reviews):
        if (review.rule, review.severity) == (finding["rule"], finding["severity"]) \
                and review.match in finding["message"] and finding["tool"] in left[index]:
            left[index].remove(finding["tool"])
            return True
    return False


def unreviewed(server: str) -> tuple[list[dict[str, Any]], list[tuple[str, str, str | None]]]:
    """The recorded non-static findings no review covers, and the reviewed (non-flaky) ones not recorded."""
    reviews = EXPECTED[server].reviews
    left = {i: list(r.tools) for i, r in enumerate(reviews)}
    extra = [f for f in recording(server)["findings"]
             if not f["rule"].startswith("S") and not _review_of(f, reviews, left)]
    missing = [(r.rule, r.severity, tool) for i, r in enumerate(reviews) if not r.flaky for tool in left[i]]
    return extra, missing


@pytest.mark.parametrize("server", sorted(EXPECTED))
def test_every_recorded_finding_is_reviewed(server: str) -> None:
    extra, missing = unreviewed(server)
    assert extra == [] and missing == []


@pytest.mark.parametrize("server", sorted(EXPECTED))
def test_static_findings_are_the_reviewed_static_corpus(server: str) -> None:
    got: dict[tuple[str, str], list[str | None]] = defaultdict(list)
    for finding in recording(server)["findings"]:
        if finding["rule"].startswith("S"):
            got[(finding["rule"], finding["severity"])].append(finding["tool"])
    assert {k: sorted(v, key=str) for k, v in got.items()} == \
        {k: sorted(v, key=str) for k, v in STATIC_REVIEW[f"{server}.json"].items()}


@pytest.mark.parametrize("server", sorted(EXPECTED))
def test_recorded_verdict_matches_the_review(server: str) -> None:
    recorded = recording(server)
    assert (recorded["status"], recorded["skipped"], recorded["errors"]) == ("complete", [], [])
    assert recorded["verdict"] == EXPECTED[server].verdict
    assert recorded["tools"] > 0 and recorded["probes"] > 0


def test_reviewed_verdicts_differ_only_where_a_false_positive_decides() -> None:
    for server, expected in EXPECTED.items():
        fps = [r for r in expected.reviews if r.fp] + [k for k in STATIC_FPS if k[0] == server]
        assert expected.verdict == expected.reviewed_verdict or fps, server


def test_every_false_positive_class_is_named_and_in_the_readme_limitations() -> None:
    used = {r.fp for e in EXPECTED.values() for r in e.reviews if r.fp} | set(STATIC_FPS.values())
    assert used == set(FP_CLASSES)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    limitations = readme[readme.index("## Limitations"):]
    for name in FP_CLASSES:
        assert f"`{name}`" in limitations, name
    for (server, rule, severity, tool) in STATIC_FPS:
        assert tool in STATIC_REVIEW[f"{server}.json"][(rule, severity)]


def test_recordings_are_the_scripts_pinned_servers() -> None:
    servers = {s.fixture: s for s in load_script("scan_corpus").SERVERS}
    assert sorted(p.stem for p in SCANS.glob("*.json")) == sorted(servers) == sorted(EXPECTED)
    for name, server in servers.items():
        recorded = recording(name)
        assert recorded["version"] == server.version, name  # the target pins the version: no drift
        assert recorded["command"][2] == server.target(server.version), name


@pytest.mark.docker
@pytest.mark.registry
def test_rescan_of_mcp_server_time_matches_its_recording(tmp_path: Path) -> None:
    # The target pins mcp-server-time==2026.10.19, so a newer release cannot change the result.
    script = load_script("scan_corpus")
    server = next(s for s in script.SERVERS if s.fixture == "mcp-server-time")
    fresh = script.scan(server, tmp_path, None)
    recorded = recording("mcp-server-time")
    for key in ("version", "command", "verdict", "status", "skipped", "errors", "score", "tools", "findings"):
        assert fresh[key] == recorded[key], key
