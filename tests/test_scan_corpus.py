"""Scan corpus: full scans (probes on) of the ten real servers issue 11 names, as a user runs them, recorded by
`scripts/scan_corpus.py` in tests/fixtures/scans/<server>.json and reviewed here finding by finding.

The static findings (S1-S14) of each scan are the ones tests/test_rules_corpus.py reviews on the same tools/list
(the test checks they are the same); every other finding (B, P, I) is reviewed below as a true (TP) or false (FP)
positive, with the reasoning. A false positive is kept, named by class (FP_CLASSES: what a reviewer rejects and the
code that causes it), and README's limitations name every class that remains: this test documents them, it does not
hide them. The eight classes of the first recording are fixed (FIXED_CLASSES: the fix and its tests).

Re-recorded 2026-12-01 after the precision fixes (branch h-precision). Verdicts, first recording -> now: filesystem
review -> review, everything block -> block (get-env returns the planted tokens), memory block -> pass,
sequential-thinking pass -> pass, desktop-commander block -> block (telemetry at start-up, from its install scripts
and from tools annotated as closed-world), git block -> pass, time pass -> pass, fetch review -> review, markitdown
pass -> pass, duckduckgo block -> review. Clean (pass, or review with no error-level security finding): 4 of 10 in
the first recording (5 counting filesystem, whose errors are P1 response sizes, not security), 8 of 10 now; the two
BLOCKs rest on findings a reviewer confirms. No FP is left in the recordings.

Timing: desktop-commander sends telemetry on every call, and the sink logs a TCP connection only after its first
bytes, up to ~2 s late, so a call's telemetry can land on the next call's record. Which tool a telemetry finding
names (and so its severity, by that tool's annotations) is legitimately ambiguous between neighbouring calls: those
reviews are `tolerant` (a finding for any tool of the set is reviewed; each may be absent) with `at_least` of the
set required, and a finding naming a tool outside the set still fails. A review marked `flaky` may be absent.

After re-running `scripts/scan_corpus.py`, re-review every entry: a changed recording is a changed server or a
changed scanner.
"""

from __future__ import annotations

import json
import re
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


FP_CLASSES: dict[str, FPClass] = {}  # the classes that remain (README's limitations name each)


@dataclass(frozen=True)
class FixedClass:
    what: str  # what a reviewer rejected in the first recording
    fix: str  # the change that fixed it, and its tests


FIXED_CLASSES = {
    "own-state-write": FixedClass(
        "B1 called a tool's write to its own store or log a change to the user's data (memory's graph file "
        "rewritten to append, desktop-commander's call log and usage counters in ~/.claude-server-commander)",
        "scanner/rules/file_kinds.py `tool state` (a path the seed did not plant, at an --env path or in an own HOME "
        "dot-directory); tests/test_file_kinds.py, tests/test_precision_live.py (git's index refresh: VCS "
        "bookkeeping, fixed before)"),
    "library-helper-process": FixedClass(
        "B5 called GitPython's persistent `git cat-file --batch` or a transient `sh -c python3 --version` a "
        "process left running",
        "scanner/rules/behavior.py `is_helper` (a non-shell child of the server: info), scanner/probes/runner.py "
        "`_settle_processes` (gone by the next look: dropped); tests/test_helper_processes.py, "
        "tests/test_precision_live.py"),
    "restart-egress-next-call": FixedClass(
        "after a restart, the fresh server's start-up traffic was charged to the next call",
        "scanner/probes/runner.py `_restart` takes a start-up record once the server answered (`start-up after "
        "restart N`); tests/test_behavior_egress.py, tests/test_precision_live.py"),
    "probe-killed-server": FixedClass(
        "a generated `pid` of 1 (the container's init) let kill_process stop the server, and P6 blamed the next "
        "probe",
        "scanner/probes/value_generation.py NO_PROCESS_PID, id_reuse never fills a pid, "
        "scanner/probes/crash_attribution.py (FinishedAt before the next call was sent: P6 names the call before); "
        "tests/test_probe_arguments.py, tests/test_crash_attribution.py, tests/test_precision_live.py"),
    "p5-limit-not-counted": FixedClass(
        "P5 said a tool with head/tail/length/maxResults had no way to ask for less",
        "scanner/rules/probe.py `is_limit_parameter`; tests/test_probe_rules.py"),
    "base64-as-opaque-ids": FixedClass(
        "P2 counted a resource's base64 `blob` as opaque IDs",
        "scanner/probes/opaque_ids.py `without_binary`, `_is_binary_payload`; tests/test_probe_opaque_ids.py"),
    "s11-default-open-world": FixedClass(
        "S11 wanted a literal openWorldHint: true although a missing hint means open world",
        "scanner/rules/static/s11_capability.py `honestly_declared`; tests/test_rules_each.py"),
    "s8-credential-example": FixedClass(
        "S8 warned on `.env` named as one example of a file to search for",
        "scanner/rules/static/s08_hidden_text.py `_listed_example`; tests/test_rules_each.py"),
}
# The static FPs, reviewed in tests/test_rules_corpus.py: (server, rule, severity, tool) -> class.
STATIC_FPS: dict[tuple[str, str, str, str | None], str] = {}


@dataclass(frozen=True)
class Review:
    rule: str
    severity: str
    tools: tuple[str | None, ...]  # one entry per finding
    fp: str | None  # an FP_CLASSES key; None: a true positive
    why: str
    match: str = ""  # a text the message holds, where one rule and tool has findings of different kinds
    flaky: bool = False  # may be absent from a recording
    tolerant: bool = False  # any tool of the set may be absent (timing decides which call a finding lands on) ...
    at_least: int = 0  # ... as long as this many of them are there


@dataclass(frozen=True)
class Expected:
    verdict: str  # as recorded
    reviewed_verdict: str  # what a reviewer confirms: the verdict with the FPs taken out
    reviews: tuple[Review, ...] = ()


DC_TELEMETRY = ("telemetry.desktopcommander.app", "dc-telemetry-proxy-83847352264.europe-west1.run.app")
DC_CLOSED_WORLD = ("edit_block", "force_terminate", "get_config", "get_file_info", "get_more_search_results",
                   "get_prompts", "get_recent_tool_calls", "get_usage_stats", "kill_process", "list_directory",
                   "list_processes", "list_searches", "list_sessions", "move_file", "read_multiple_files",
                   "read_process_output", "set_config_value", "start_search", "write_file", "write_pdf")
DC_OPEN_WORLD = ("create_directory", "give_feedback_to_desktop_commander", "interact_with_process", "read_file",
                 "start_process", "stop_search")
DC_OWN_STATE = ("get_config", "get_file_info", "get_more_search_results", "get_prompts", "get_recent_tool_calls",
                "get_usage_stats", "list_directory", "list_processes", "list_searches", "list_sessions", "read_file",
                "read_multiple_files", "read_process_output", "start_search")
SLACK = 3  # telemetry or a log write may land on a neighbouring call: this many tools of a set may be missing


def _tolerant(tools: tuple[str, ...]) -> dict[str, Any]:
    return {"tolerant": True, "at_least": len(tools) - SLACK}


EXPECTED: dict[str, Expected] = {
    "server-filesystem": Expected("review", "review", (
        Review("P1", "error", ("read_file", "read_media_file", "read_text_file"), None,
               "reading the seeded 20,000-line log returns 1.3-1.7 MB whole: the default reads everything"),
        Review("P3", "info", ("read_file", "read_text_file"), None,
               "no cursor or note in the large response; head/tail exist (info)"),
        Review("P3", "warning", ("read_media_file",), None, "no cursor and no paging parameter at all"),
        Review("P5", "warning", ("read_media_file",), None, "a 425k-token response with no way to ask for less"),
        Review("P5", "info", ("directory_tree",), None, "~2k tokens and no depth or size parameter (info)"),
        # Gone since the precision fixes, correctly: P5 on read_file/read_text_file (head/tail are limits) and P2
        # on read_media_file (the "IDs" were README.md's base64 blob).
    )),
    "server-everything": Expected("block", "block", (
        Review("B3", "error", ("get-env",), None,
               "get-env returns the whole environment, planted tokens included: the confirmed BLOCK"),
        Review("B2", "warning", ("gzip-file-as-resource",), None,
               "fetches its default raw.githubusercontent.com URL; openWorldHint true, so a warning naming it"),
        Review("P9", "warning", ("trigger-long-running-operation",), None,
               "10 s to answer: a demo of a long operation, measured right"),
    )),
    # No B1 since the precision fixes, correctly: add_observations and create_relations append to the graph by
    # rewriting its file at MEMORY_FILE_PATH, the server's own store (tool state); nothing existing is destroyed.
    "server-memory": Expected("pass", "pass"),
    "server-sequential-thinking": Expected("pass", "pass"),
    "desktop-commander": Expected("block", "block", (
        Review("B2", "error", (None,) * 4, None,
               "four hosts at start-up, before any call (its telemetry, its site, Chrome's version list): start-up "
               "egress stays an error"),
        *(Review("B2", "error", DC_CLOSED_WORLD, None, f"every call of a tool annotated closed-world (or read-only "
                 f"without openWorldHint) sends telemetry to {host}", match=host, **_tolerant(DC_CLOSED_WORLD))
          for host in DC_TELEMETRY),
        *(Review("B2", "warning", DC_OPEN_WORLD, None, f"telemetry to {host} from tools declaring (or defaulting "
                 "to) an open world: a warning naming the host", match=host, **_tolerant(DC_OPEN_WORLD))
          for host in DC_TELEMETRY),
        Review("B1", "error", DC_CLOSED_WORLD, None,
               "annotated read-only without openWorldHint or openWorldHint false, yet every call sends telemetry",
               match="tried to reach", **_tolerant(DC_CLOSED_WORLD)),
        Review("B1", "info", DC_OWN_STATE, None,
               "its own call log, usage counters and config under ~/.claude-server-commander, named as tool state "
               "(an info a reviewer can read, not a change to the user's files)", match="tool state",
               **_tolerant(DC_OWN_STATE)),
        Review("I7", "error", (None,) * 3, None,
               "install scripts of desktop-commander (its telemetry) and puppeteer (a Chrome download) tried hosts"),
        Review("I5", "warning", (None,), None, "three packages run install scripts"),
        Review("P1", "warning", ("get_recent_tool_calls", "read_file"), None, "8.5k and 15.6k-token responses"),
        Review("P4", "warning", ("get_config",), None, "a wrong-typed and an out-of-enum `origin` were accepted"),
        # Gone since the precision fixes, correctly: P6 and the restart's B2 (kill_process now gets a pid no
        # process has and answers ESRCH, so the server is never stopped), P5 (maxResults and offset/length are
        # limits), B5 on `sh -c python3 --version` (gone by the next look).
    )),
    "mcp-server-git": Expected("pass", "pass", (
        Review("B1", "info", ("git_status",), None,
               "git status refreshes .git/index (stat cache): named VCS bookkeeping, an info"),
        Review("B5", "info", ("git_commit", "git_log"), None,
               "GitPython's persistent `git cat-file --batch(-check)` helpers, the server's own children: an info"),
    )),
    "mcp-server-time": Expected("pass", "pass"),
    "mcp-server-fetch": Expected("review", "review", (
        Review("B2", "info", ("fetch",), None,
               "the lookup of probe.example.invalid, the URL the probe gave it: an observation, never its egress"),
    )),
    "markitdown-mcp": Expected("pass", "pass", (
        Review("B2", "info", ("convert_to_markdown",), None, "the probe's own URI, looked up and connected: info"),
    )),
    "duckduckgo-mcp-server": Expected("review", "review", (
        Review("B2", "info", ("fetch_content",), None, "the probe's own URL: info"),
        Review("B2", "warning", ("search",), None,
               "html.duckduckgo.com, the host its description names, with no annotations (open world by default)"),
    )),
}
# The verdict of each server in the first recording (before the precision fixes), for the record.
FIRST_RECORDING = {"server-filesystem": "review", "server-everything": "block", "server-memory": "block",
                   "server-sequential-thinking": "pass", "desktop-commander": "block", "mcp-server-git": "block",
                   "mcp-server-time": "pass", "mcp-server-fetch": "review", "markitdown-mcp": "pass",
                   "duckduckgo-mcp-server": "block"}


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
    """The recorded non-static findings no review covers, and the reviewed ones not recorded: every tool of a plain
    review; for a tolerant one, the shortfall below `at_least`; nothing for a flaky one."""
    reviews = EXPECTED[server].reviews
    left = {i: list(r.tools) for i, r in enumerate(reviews)}
    extra = [f for f in recording(server)["findings"]
             if not f["rule"].startswith("S") and not _review_of(f, reviews, left)]
    missing = [(r.rule, r.severity, tool) for i, r in enumerate(reviews) if not r.flaky and not r.tolerant
               for tool in left[i]]
    missing += [(r.rule, r.severity, f"{len(r.tools) - len(left[i])} of at least {r.at_least}")
                for i, r in enumerate(reviews) if r.tolerant and len(r.tools) - len(left[i]) < r.at_least]
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


def test_fixed_classes_are_no_longer_listed_as_limitations_and_are_documented() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    limitations = readme[readme.index("## Limitations"):]
    rules_doc = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert not set(FIXED_CLASSES) & set(FP_CLASSES)
    for name, fixed in FIXED_CLASSES.items():
        assert f"`{name}`" not in limitations and f"`{name}`" in rules_doc, name
        for test in re.findall(r"tests/test_\w+\.py", fixed.fix):
            assert (ROOT / test).is_file(), test


def test_the_reviewed_verdicts_leave_no_official_server_blocked_without_a_confirmed_reason() -> None:
    clean = [s for s, e in EXPECTED.items() if e.reviewed_verdict in ("pass", "review")
             and not any(f["severity"] == "error" and f["rule"][0] in "BIS" for f in recording(s)["findings"])]
    assert sorted(clean) == ["duckduckgo-mcp-server", "markitdown-mcp", "mcp-server-fetch", "mcp-server-git",
                             "mcp-server-time", "server-filesystem", "server-memory", "server-sequential-thinking"]
    for server in set(EXPECTED) - set(clean):  # blocked: on true positives only
        assert all(r.fp is None for r in EXPECTED[server].reviews if r.severity == "error"), server
    assert sum(v in ("pass", "review") for v in FIRST_RECORDING.values()) == 5  # filesystem, seq, time, fetch, md


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
