"""Corpus: the tool definitions of five real servers, captured live from the sandbox on 2026-11-29 by
`scripts/capture_corpus.py` (each fixture's `<server>.source.md` names the exact package version, its integrity pin
and the command). Every finding the rules produce on them is recorded below and reviewed as a true (TP) or false (FP)
positive.

Review summary: 90 findings over 5 servers (50 tools). All 90 are true positives; about half are low-value infos
(S3 "parameter has no description" on self-explanatory names like `path`, S5 "no shared prefix"). One false positive
was found and fixed in the rule: S7 fired on server-filesystem's `list_allowed_directories`, a no-argument list of the
directories the user configured (see `test_s7_near_miss_list_of_configured_scope`). Nothing in S8/S9/S10/S12/S13 fires
on these honest servers, which is the near-miss check for the poisoning rules on real text, including
server-everything's `instructions` (an "Easter egg" telling the model how to answer, visible and harmless).

Known gaps (false negatives, not asserted here): server-everything's `get-env` returns every environment variable of
the server (a credential exposure) and no rule flags it; mcp-server-git's commit/checkout/reset change the repository
but no S11 kind covers version-control mutations. The sandbox's behaviour probes are where those show.

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
    # npm @modelcontextprotocol/server-memory 2026.8.31: 9 tools, 13 findings, 13 TP.
    "server-memory.json": {
        # TP (8): one short sentence each ("Read the entire knowledge graph"); create_relations, at 15+ words with
        # its "active voice" hint, is correctly not flagged.
        ("S1", "warning"): ["create_entities", "add_observations", "delete_entities", "delete_observations",
                            "delete_relations", "read_graph", "search_nodes", "open_nodes"],
        # TP (4): the top-level array parameters have no description (their item fields do).
        ("S3", "info"): ["create_entities", "create_relations", "add_observations", "delete_observations"],
        # TP (1, low value): no service prefix.
        ("S5", "info"): [None],
        # Not flagged, correctly: delete_* remove graph entries, not files (no S11 fs-delete), and are annotated
        # destructiveHint true. The graph file is fixed by MEMORY_FILE_PATH, not chosen by the agent: pass.
    },
    # npm @modelcontextprotocol/server-everything 2026.8.31 (stdio): 13 tools, 4 prompts, instructions; 15 findings,
    # 15 TP. The capability-gated tools (roots, sampling, elicitation) are not served to a client that declares none.
    "server-everything.json": {
        # TP (11): short demo descriptions ("Echoes back the input string"). simulate-research-query and
        # gzip-file-as-resource are long enough.
        ("S1", "warning"): ["echo", "get-annotated-message", "get-env", "get-resource-links",
                            "get-resource-reference", "get-structured-content", "get-sum", "get-tiny-image",
                            "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-long-running-operation"],
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
    # PyPI mcp-server-git 2026.10.19: 12 tools, 33 findings, 33 TP.
    "mcp-server-git.json": {
        # TP (11): one-line git-manpage descriptions ("Switches branches", "Shows the commit logs"); git_show's
        # 16 words pass.
        ("S1", "warning"): ["git_status", "git_diff_unstaged", "git_diff_staged", "git_diff", "git_commit",
                            "git_add", "git_reset", "git_log", "git_create_branch", "git_checkout", "git_branch"],
        # TP (22): repo_path, context_lines, target, message, files, max_count, branch_name, base_branch, revision
        # have no description (git_branch is the one tool whose parameters are described).
        ("S3", "info"): ["git_status", "git_diff_unstaged", "git_diff_unstaged", "git_diff_staged",
                         "git_diff_staged", "git_diff", "git_diff", "git_diff", "git_commit", "git_commit",
                         "git_add", "git_add", "git_reset", "git_log", "git_log", "git_create_branch",
                         "git_create_branch", "git_create_branch", "git_checkout", "git_checkout", "git_show",
                         "git_show"],
        # Not flagged, correctly: every name shares the git_ prefix (no S5); every tool is annotated (no S13).
    },
    # PyPI mcp-server-time 2026.10.19: 2 tools, 2 findings, 2 TP.
    "mcp-server-time.json": {
        # TP (2, low value): "Convert time between timezones" is 4 words; the parameters are well described, but
        # the description still leaves the time format (HH:MM) to the parameter text.
        ("S1", "warning"): ["get_current_time", "convert_time"],
    },
}
EXPECTED_VERDICT = {"server-filesystem.json": "review", "server-memory.json": "pass",
                    "server-everything.json": "review", "mcp-server-git.json": "pass",
                    "mcp-server-time.json": "pass"}
EXPECTED_TOOL_COUNT = {"server-filesystem.json": 14, "server-memory.json": 9, "server-everything.json": 13,
                       "mcp-server-git.json": 12, "mcp-server-time.json": 2}


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


def _capture_script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("capture_corpus", ROOT / "scripts" / "capture_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_corpus_fixtures_name_their_source() -> None:
    servers = {s.fixture: s for s in _capture_script().SERVERS}
    fixtures = sorted(p.stem for p in CORPUS.glob("*.json"))
    assert fixtures == sorted(servers) == sorted(n.removesuffix(".json") for n in EXPECTED)
    for stem in fixtures:
        document = json.loads((CORPUS / f"{stem}.json").read_text(encoding="utf-8"))
        assert set(document) <= {"tools", "prompts", "instructions", "serverInfo", "protocolVersion"}, stem
        assert document["serverInfo"].get("name"), stem
        source = (CORPUS / f"{stem}.source.md").read_text(encoding="utf-8")
        server = servers[stem]
        assert f"`{server.package}` **{server.version}**" in source, stem  # the script pins what was captured
        assert "Captured: 2026-11-29, live" in source, stem
        assert re.search(rf"mcp-sandbox scan {server.ecosystem}:\S*{re.escape(server.version)} ", source), stem
