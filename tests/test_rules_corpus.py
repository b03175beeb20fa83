"""Corpus: tool definitions of real servers, written by hand from their published source (see each fixture's
`_source`), with every finding recorded and reviewed as a true (TP) or false (FP) positive.

Review summary: 92 findings over 5 servers (53 tools); 1 false positive (S7 on list_allowed_directories) and
3 low-value-but-correct infos (S5 "no shared prefix"). No S8/S9/S12/S13 finding fires on these honest servers,
which is the near-miss check for the poisoning rules on real text.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest

from scanner.report import Report, TargetInfo
from scanner.rules import run_rules
from scanner.rules.toolsfile import load_tools_file
from scanner.score import compute

CORPUS = Path(__file__).resolve().parent / "fixtures" / "corpus"

# (rule, severity) -> tools (None = server-level). Reviews inline.
EXPECTED: dict[str, dict[tuple[str, str], list[str | None]]] = {
    "server-filesystem.json": {
        # TP: `path` and friends carry no description; the agent infers them from the tool text (info is right).
        ("S3", "info"): ["read_file", "read_text_file", "read_media_file", "write_file", "write_file", "edit_file",
                         "edit_file", "create_directory", "list_directory", "list_directory_with_sizes",
                         "directory_tree", "directory_tree", "move_file", "move_file", "search_files",
                         "search_files", "search_files", "get_file_info"],
        # TP: read_file is the deprecated twin of read_text_file (same schema); list_directory_with_sizes is a
        # superset of list_directory. Both pairs cost an agent a choice and the tokens of two definitions.
        ("S4", "warning"): ["read_text_file", "list_directory_with_sizes"],
        # TP (low value): names carry no service prefix; clients that namespace per server make this moot.
        ("S5", "info"): [None],
        # TP: list_directory(_with_sizes) return a whole directory with no limit (a node_modules listing is huge).
        # FP: list_allowed_directories returns the handful of directories the user configured.
        ("S7", "warning"): ["list_directory", "list_directory_with_sizes", "list_allowed_directories"],
        # TP: these tools write to the filesystem; each says "within allowed directories" and sets
        # destructiveHint, so they are warnings (review), not errors.
        ("S11", "warning"): ["write_file", "edit_file", "create_directory", "move_file"],
    },
    "server-memory.json": {
        # TP: 8 of 9 descriptions are one short sentence (create_relations has exactly 15 words).
        ("S1", "warning"): ["create_entities", "add_observations", "delete_entities", "delete_observations",
                            "delete_relations", "read_graph", "search_nodes", "open_nodes"],
        # TP: the top-level array parameters have no description (their items do).
        ("S3", "info"): ["create_entities", "create_relations", "add_observations", "delete_observations"],
        # TP (low value): no service prefix.
        ("S5", "info"): [None],
    },
    "server-everything.json": {
        # TP: short demo descriptions.
        ("S1", "warning"): ["echo", "get-annotated-message", "get-env", "get-resource-links",
                            "get-resource-reference", "get-structured-content", "get-sum", "get-tiny-image",
                            "toggle-simulated-logging", "toggle-subscriber-updates", "trigger-elicitation-request",
                            "trigger-long-running-operation", "trigger-sampling-request"],
        # TP: resourceType has an enum but no description.
        ("S3", "info"): ["get-resource-reference"],
        # TP (low value): no service prefix.
        ("S5", "info"): [None],
        # TP: `data` is a URL the server fetches (openWorldHint: true, so a warning). trigger-url-elicitation also
        # takes a `url` but only hands it to the user: correctly not flagged.
        ("S11", "warning"): ["gzip-file-as-resource"],
    },
    "mcp-server-git.json": {
        # TP: one-line git-manpage descriptions ("Switches branches").
        ("S1", "warning"): ["git_status", "git_diff_unstaged", "git_diff_staged", "git_diff", "git_commit",
                            "git_add", "git_reset", "git_log", "git_create_branch", "git_checkout", "git_branch"],
        # TP: repo_path, target, message, files, revision ... have no description.
        ("S3", "info"): ["git_status", "git_diff_unstaged", "git_diff_unstaged", "git_diff_staged",
                         "git_diff_staged", "git_diff", "git_diff", "git_diff", "git_commit", "git_commit",
                         "git_add", "git_add", "git_reset", "git_log", "git_log", "git_create_branch",
                         "git_create_branch", "git_create_branch", "git_checkout", "git_checkout", "git_show",
                         "git_show"],
    },
    "mcp-server-time.json": {
        # TP: both descriptions are a few words, though the parameters are well described.
        ("S1", "warning"): ["get_current_time", "convert_time"],
    },
}
EXPECTED_VERDICT = {"server-filesystem.json": "review", "server-memory.json": "pass",
                    "server-everything.json": "review", "mcp-server-git.json": "pass",
                    "mcp-server-time.json": "pass"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_findings_match_the_review(name: str) -> None:
    parsed = load_tools_file(CORPUS / name)
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


def test_corpus_fixtures_name_their_source() -> None:
    for path in CORPUS.glob("*.json"):
        assert "_source" in json.loads(path.read_text(encoding="utf-8")), path.name
