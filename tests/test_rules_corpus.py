"""Corpus: the tool definitions of ten real servers, captured live from the sandbox by `scripts/capture_corpus.py`
(five on 2026-11-29, five on 2026-12-01 from the full scans of `scripts/scan_corpus.py --reports`; each fixture's
`<server>.source.md` names the exact package version, its integrity pin and the command). Every finding the rules
produce on them is recorded below and reviewed as a true (TP) or false (FP) positive.

Review summary: 165 findings over 10 servers (82 tools), all TP. The two FPs of the first review are fixed: S11
called duckduckgo's honestly described `fetch_content` "not honestly described and annotated" because it has no
annotations, though a missing openWorldHint means open world (the MCP default): now a warning; S8's
credential-reference warning fired on desktop-commander's `start_search` usage text naming ".env" as one quoted
example of a file to find: a listed example on a line that acts on nothing is no longer a reference. About half the TPs are low-value infos (S3 "parameter has no description" on self-explanatory names like `path`,
S5 "no shared prefix").

Calibrated on this corpus (docs/rules.md, "S1 and S7 calibration"): S1's 15-word floor fired 33 times, 31 on adequate
one-line descriptions (server-everything's "Returns the sum of two numbers" for `get-sum`, server-memory's "Read
the entire knowledge graph", mcp-server-time's "Convert time between timezones", markitdown's 14-word
`convert_to_markdown`); S1 now judges what a short description says against what the tool takes and fires on two
(git_diff leaves `target`, `context_lines`, `repo_path` unexplained; git_checkout's "Switches branches"). S7 fired
on server-filesystem's `list_allowed_directories` (configured scope) and desktop-commander's `list_sessions` and
`list_searches` (the live handles the agent started; the probes saw 0 and 2 entries): FPs, fixed in the rule.
Nothing in S9/S12 fires, nor S8 (it fired once, the FP above, now fixed), which is the near-miss check for the poisoning rules on
real text, including server-everything's `instructions` (an "Easter egg" telling the model how to answer, visible
and harmless) and mcp-server-fetch's "this tool now grants you internet access" (an honest capability statement).

Known gaps (false negatives, not asserted here): server-everything's `get-env` returns every environment variable of
the server (a credential exposure) and no rule flags it; mcp-server-git's commit/checkout/reset change the repository
but no S11 kind covers version-control mutations. The sandbox's behaviour probes are where those show
(tests/test_scan_corpus.py).

After `scripts/capture_corpus.py --latest`, re-review every entry: a changed expectation is a changed server.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from scanner.report.model import Report, TargetInfo
from scanner.rules.static.engine import run_rules
from scanner.tools_file import load_tools_file
from scanner.report.score import compute

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "corpus"

# (rule, severity) -> tools (None = server-level), one entry per finding. Reviews inline.
EXPECTED: dict[str, dict[tuple[str, str], list[str | None]]] = {
    # npm @modelcontextprotocol/server-filesystem 2026.8.31: 14 tools, 27 findings, 27 TP (1 FP fixed in S7).
    "server-filesystem.json": {
        # TP (18, low value): `path`, `content`, `edits`, `source`, `destination`, `pattern`, `excludePatterns` carry
        # no description; the agent infers them from the tool text. Info is the right weight.
        ("S3", "info"): ["read_file", "read_text_file", "read_media_file", "write_file", "write_file", "edit_file",
                         "edit_file", "create_directory", "list_directory", "list_directory_with_sizes",
                         "directory_tree", "directory_tree", "move_file", "move_file", "search_files",
                         "search_files", "search_files", "get_file_info"],
        # TP (2): read_file is the deprecated twin of read_text_file (same parameters, its own description says
        # "DEPRECATED: Use read_text_file"); list_directory_with_sizes is list_directory plus sizes. Each pair costs
        # the agent a choice and the tokens of two definitions.
        ("S4", "warning"): ["read_text_file", "list_directory_with_sizes"],
        # TP (1, low value): names carry no service prefix (read_file clashes easily); clients that namespace tools
        # per server make it moot.
        ("S5", "info"): [None],
        # TP (2): both return a whole directory with no limit or paging (a node_modules listing is huge); sortBy is
        # not a bound. list_allowed_directories used to fire here too: FP (it lists the handful of directories the
        # user configured, and takes no input), fixed in S7.
        ("S7", "warning"): ["list_directory", "list_directory_with_sizes"],
        # TP (4): write_file, edit_file, move_file and create_directory write to the filesystem [fs-write]. Each says
        # "within allowed directories" (so S12 stays quiet) and is annotated (readOnlyHint false), so these are
        # warnings: verdict review, not block.
        ("S11", "warning"): ["write_file", "edit_file", "create_directory", "move_file"],
    },
    # npm @modelcontextprotocol/server-memory 2026.8.31: 9 tools, 5 findings, 5 TP.
    "server-memory.json": {
        # Not flagged since the S1 calibration, correctly: one short precise sentence per one-parameter tool ("Read
        # the entire knowledge graph", "Delete multiple relations from the knowledge graph"); the 15-word floor
        # fired on 8 of them.
        # TP (4): the top-level array parameters have no description (their item fields do).
        ("S3", "info"): ["create_entities", "create_relations", "add_observations", "delete_observations"],
        # TP (1, low value): no service prefix.
        ("S5", "info"): [None],
        # Not flagged, correctly: delete_* remove graph entries, not files (no S11 fs-delete), and are annotated
        # destructiveHint true. The graph file is fixed by MEMORY_FILE_PATH, not chosen by the agent: pass.
    },
    # npm @modelcontextprotocol/server-everything 2026.8.31 (stdio): 13 tools, 4 prompts, instructions; 4 findings,
    # 4 TP. The capability-gated tools (roots, sampling, elicitation) are not served to a client that declares none.
    "server-everything.json": {
        # Not flagged since the S1 calibration, correctly: short demo descriptions of tools with at most two
        # parameters, each described ("Returns the sum of two numbers", "Echoes back the input string"); the
        # 15-word floor fired on 11.
        # TP (1): resourceType has an enum but no description.
        ("S3", "info"): ["get-resource-reference"],
        # TP (1, low value): no service prefix.
        ("S5", "info"): [None],
        # TP (1): `data` is a URL the server fetches [http-request]; openWorldHint true and an honest description,
        # so a warning (verdict review). The instructions cap it with GZIP_ALLOWED_DOMAINS; the sandbox has no
        # network anyway.
        ("S11", "warning"): ["gzip-file-as-resource"],
        # TP (1): argument `state` of args-prompt has no description.
        ("S14", "info"): [None],
    },
    # PyPI mcp-server-git 2026.10.19: 12 tools, 24 findings, 24 TP.
    "mcp-server-git.json": {
        # TP (2): git_diff's "Shows differences between branches or commits" leaves all three parameters
        # (repo_path, target, context_lines) undescribed and unnamed: the agent guesses what `target` takes.
        # git_checkout's "Switches branches" is two words for a tool that changes the working tree. The other nine
        # one-line git descriptions name their object and leave at most two self-explanatory parameters; the
        # 15-word floor fired on them too (11 in all).
        ("S1", "warning"): ["git_diff", "git_checkout"],
        # TP (22): repo_path, context_lines, target, message, files, max_count, branch_name, base_branch, revision
        # have no description (git_branch is the one tool whose parameters are described).
        ("S3", "info"): ["git_status", "git_diff_unstaged", "git_diff_unstaged", "git_diff_staged",
                         "git_diff_staged", "git_diff", "git_diff", "git_diff", "git_commit", "git_commit",
                         "git_add", "git_add", "git_reset", "git_log", "git_log", "git_create_branch",
                         "git_create_branch", "git_create_branch", "git_checkout", "git_checkout", "git_show",
                         "git_show"],
        # Not flagged, correctly: every name shares the git_ prefix (no S5); every tool is annotated (no S13).
    },
    # PyPI mcp-server-time 2026.10.19: 2 tools, 0 findings. Not flagged since the S1 calibration, correctly:
    # "Convert time between timezones" and "Get current time in a specific timezone" with every parameter
    # described (the 15-word floor fired on both).
    "mcp-server-time.json": {},
    # npm @modelcontextprotocol/server-sequential-thinking 2026.8.31: 1 tool, 0 findings. A 440-word description,
    # nine described parameters, annotated readOnlyHint/openWorldHint false: nothing to flag.
    "server-sequential-thinking.json": {},
    # npm @wonderwhy-er/desktop-commander 0.2.52: 26 tools, 91 findings, 91 TP (1 FP fixed in S8).
    "desktop-commander.json": {
        # TP (3): `key` and `value` of set_config_value and `input` of interact_with_process: vague names with no
        # schema description.
        ("S2", "warning"): ["set_config_value", "set_config_value", "interact_with_process"],
        # TP (74, low value): parameters with no schema description; most are explained in the (long) tool text.
        ("S3", "info"): ["get_config", "set_config_value", "set_config_value", "set_config_value", "read_file",
                         "read_file", "read_file", "read_file", "read_file", "read_file", "read_file", "read_file",
                         "read_multiple_files", "write_file", "write_file", "write_file", "write_file", "write_pdf",
                         "write_pdf", "write_pdf", "write_pdf", "create_directory", "list_directory",
                         "list_directory", "list_directory", "move_file", "move_file", "start_search",
                         "start_search", "start_search", "start_search", "start_search", "start_search",
                         "start_search", "start_search", "start_search", "start_search", "start_search",
                         "start_search", "get_more_search_results", "get_more_search_results",
                         "get_more_search_results", "stop_search", "get_file_info", "edit_block", "edit_block",
                         "edit_block", "edit_block", "edit_block", "edit_block", "edit_block", "edit_block",
                         "start_process", "start_process", "start_process", "start_process", "start_process",
                         "read_process_output", "read_process_output", "read_process_output",
                         "read_process_output", "read_process_output", "interact_with_process",
                         "interact_with_process", "interact_with_process", "interact_with_process",
                         "interact_with_process", "force_terminate", "kill_process", "get_recent_tool_calls",
                         "get_recent_tool_calls", "get_recent_tool_calls", "get_prompts", "get_prompts"],
        # TP (1): edit_block's `content` has neither a type nor an enum.
        ("S3", "warning"): ["edit_block"],
        # TP (1, low value): no shared service prefix (read_file, write_file clash with server-filesystem's).
        ("S5", "info"): [None],
        # TP (1): ~15,000 estimated tokens of definitions, sent to the model every session.
        ("S6", "warning"): [None],
        # TP (2): list_directory says "Top-level directory shows ALL items" (only nested levels are capped at
        # 100; `depth` bounds recursion, not entries); list_processes returns the host's whole process table (the
        # sandbox has no `ps`, so the probe got an error, but a desktop has hundreds). list_sessions and
        # list_searches used to fire too: FP (no-argument lists of the "active" sessions and searches the agent
        # itself started; the probes saw 0 and 2), fixed in S7.
        ("S7", "warning"): ["list_directory", "list_processes"],
        # Not flagged since the precision fixes, correctly: start_search's usage guidance ("Looking for
        # configuration/setup files: '.env', 'dockerfile', 'tsconfig.json'") names `.env` as one quoted example of a
        # file-name search, on a line that reads, sends or includes nothing (S8's credential-reference detector
        # skips a listed example; it used to fire here: FP class s8-credential-example, fixed).
        # TP (3): write_pdf's `options` (and a nested `pdfOptions`) accept any property.
        ("S10", "warning"): ["write_pdf", "write_pdf", "write_pdf"],
        # TP (6): file writes (write_file, write_pdf, create_directory, move_file, edit_block) [fs-write] and
        # start_process [exec], each described and annotated: warnings, verdict review.
        ("S11", "warning"): ["write_file", "write_pdf", "create_directory", "move_file", "edit_block",
                             "start_process"],
    },
    # PyPI mcp-server-fetch 2026.10.24: 1 tool, 1 finding, 1 TP.
    "mcp-server-fetch.json": {
        # TP (1): `url` is fetched [http-request]; described, openWorldHint true and readOnlyHint true beside a
        # read-only fetch: honest, so a warning (verdict review). Its "this tool now grants you internet access"
        # is a capability statement, not an override (no S8), correctly.
        ("S11", "warning"): ["fetch"],
    },
    # PyPI markitdown-mcp 0.0.1a8: 1 tool, 2 findings, 2 TP.
    "markitdown-mcp.json": {
        # Not flagged since the S1 calibration, correctly: "Convert a resource described by an http:, https:, file:
        # or data: URI to markdown" (14 words) says what it takes and returns; the 15-word floor fired.
        # TP (1, low value): `uri` has no schema description (the tool text explains it).
        ("S3", "info"): ["convert_to_markdown"],
        # TP (1): no annotations at all. No S11 although it fetches http: URIs: the name and the `uri` parameter
        # match no http-request pattern (a false negative, left to the probes: B2 sees its lookups).
        ("S13", "warning"): [None],
    },
    # PyPI duckduckgo-mcp-server 0.7.0: 3 tools, 11 findings, 11 TP (1 FP fixed in S11).
    "duckduckgo-mcp-server.json": {
        # TP (9, low value): the parameters are described in each tool's "Args:" text, not in the schema.
        ("S3", "info"): ["search", "search", "search", "fetch_content", "fetch_content", "fetch_content",
                         "fetch_content", "fetch_content", "expand_link"],
        # TP (1): fetch_content ("Fetch and extract the main text content from a webpage", 251 words) is an
        # http-request tool with no annotations: a missing openWorldHint means open world (the MCP default), so it
        # is honestly declared and a warning (it used to be an error that decided a BLOCK: FP class
        # s11-default-open-world, fixed in `honestly_declared`).
        ("S11", "warning"): ["fetch_content"],
        # TP (1): no tool has annotations (readOnlyHint, destructiveHint ...).
        ("S13", "warning"): [None],
    },
}
EXPECTED_VERDICT = {"server-filesystem.json": "review", "server-memory.json": "pass",
                    "server-everything.json": "review", "mcp-server-git.json": "pass",
                    "mcp-server-time.json": "pass", "server-sequential-thinking.json": "pass",
                    "desktop-commander.json": "review", "mcp-server-fetch.json": "review",
                    "markitdown-mcp.json": "pass", "duckduckgo-mcp-server.json": "review"}
EXPECTED_TOOL_COUNT = {"server-filesystem.json": 14, "server-memory.json": 9, "server-everything.json": 13,
                       "mcp-server-git.json": 12, "mcp-server-time.json": 2, "server-sequential-thinking.json": 1,
                       "desktop-commander.json": 26, "mcp-server-fetch.json": 1, "markitdown-mcp.json": 1,
                       "duckduckgo-mcp-server.json": 3}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_findings_match_the_review(name: str) -> None:
    parsed = load_tools_file(CORPUS / name)
    assert len(parsed.tools) == EXPECTED_TOOL_COUNT[name]
    findings = run_rules(parsed.tools, parsed.prompts, parsed.instructions, parsed.server_info,
                         payload_bytes=parsed.payload_bytes)
    got: dict[tuple[str, str], list[str | None]] = defaultdict(list)
    for finding in findings:
        got[(finding.rule_id, finding.severity)].append(finding.tool)
    assert {k: sorted(v, key=str) for k, v in got.items()} == \
        {k: sorted(v, key=str) for k, v in EXPECTED[name].items()}
    score, verdict = compute(findings, parsed.tools)
    assert verdict == EXPECTED_VERDICT[name]
    assert 0 < score.value <= 100 and len(score.tools) == len(parsed.tools)
    Report(target=TargetInfo(kind="file", name=name, requested=name), findings=findings, score=score,
           verdict=verdict)


def test_corpus_everything_serves_prompts_and_instructions() -> None:
    # The live capture carries what the hand-written fixture missed: S8 and S14 run on real prompts and instructions.
    parsed = load_tools_file(CORPUS / "server-everything.json")
    assert len(parsed.prompts) == 4 and parsed.instructions and "Easter Egg" in parsed.instructions


def load_script(name: str):  # type: ignore[no-untyped-def]
    """A script of scripts/ as a module (scan_corpus.py imports its sibling capture_corpus.py)."""
    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_corpus_fixtures_name_their_source() -> None:
    servers = {s.fixture: s for s in load_script("capture_corpus").SERVERS}
    fixtures = sorted(p.stem for p in CORPUS.glob("*.json"))
    assert fixtures == sorted(servers) == sorted(n.removesuffix(".json") for n in EXPECTED)
    for stem in fixtures:
        document = json.loads((CORPUS / f"{stem}.json").read_text(encoding="utf-8"))
        assert set(document) <= {"tools", "prompts", "instructions", "serverInfo", "protocolVersion"}, stem
        assert document["serverInfo"].get("name"), stem
        source = (CORPUS / f"{stem}.source.md").read_text(encoding="utf-8")
        server = servers[stem]
        assert f"`{server.package}` **{server.version}**" in source, stem  # the script pins what was captured
        assert re.search(r"Captured: 2026-1[12]-\d\d, live", source), stem
        assert re.search(rf"mcp-sandbox scan {server.ecosystem}:\S*{re.escape(server.version)} ", source), stem
