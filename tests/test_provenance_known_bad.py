"""I8 known-bad releases and I9 typosquats: data-driven checks run before anything is installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scanner.provenance.known_bad import known_bad_finding, load_known_bad
from scanner.provenance.names import comparison_name, edit_distance
from scanner.provenance.typosquat import load_well_known, typosquat_finding
from scanner.ecosystems.registry import ecosystem


@pytest.mark.parametrize("ecosystem, name, spec", [
    ("npm", "postmark-mcp", "1.0.16"),
    ("npm", "Postmark_MCP", "v1.0.16"),
    ("npm", "postmark.mcp", "^1.0.0"),
    ("npm", "postmark-mcp", "~1.0.10"),
    ("npm", "postmark-mcp", "1.0.x"),
    ("npm", "postmark-mcp", ">=1.0.0 <2"),
    ("npm", "postmark-mcp", "latest"),
    ("npm", "postmark-mcp", ""),
    ("pypi", "litellm", "==1.82.7"),
    ("pypi", "LiteLLM", "1.82.8"),
    ("pypi", "lite_llm", "==1.107"),
    ("pypi", "litellm", ">=1.80"),
    ("pypi", "litellm", "~=1.82.0"),
])
def test_known_bad_or_could_resolve_to_it_is_refused(ecosystem: str, name: str, spec: str) -> None:
    found = known_bad_finding(ecosystem, name, spec)  # type: ignore[arg-type]
    assert found is not None
    assert (found.rule_id, found.severity, found.category) == ("I8", "error", "security")


@pytest.mark.parametrize("ecosystem, name, spec", [
    ("npm", "postmark-mcp", "1.0.15"),
    ("npm", "postmark-mcp", "<1.0.16"),
    ("npm", "postmark-mcp", "^1.0.17"),
    ("npm", "postmark-mcp", "1.0.0 - 1.0.15"),
    ("pypi", "litellm", "==1.82.6"),
    ("pypi", "litellm", "<1.82.7"),
    ("pypi", "litellm", ">=1.82.9,<1.107"),
    ("pypi", "litellm", "!=1.82.7,!=1.82.8,!=1.107.0"),
    ("npm", "litellm", "1.82.7"),  # the list is per ecosystem
    ("pypi", "postmark-mcp", "1.0.16"),
    ("npm", "postmark-mcp-client", "1.0.16"),
])
def test_releases_that_cannot_be_bad_pass(ecosystem: str, name: str, spec: str) -> None:
    assert known_bad_finding(ecosystem, name, spec) is None  # type: ignore[arg-type]


def test_the_list_is_data(tmp_path: Path) -> None:
    data = {"schema_version": 1, "releases": [
        {"ecosystem": "npm", "name": "some-server", "versions": ["2.0.0"], "reason": "test entry"}]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    custom = load_known_bad(path)
    assert known_bad_finding("npm", "some_server", "2.0.0", custom) is not None
    assert known_bad_finding("npm", "postmark-mcp", "1.0.16", custom) is None
    shipped = {(b.ecosystem, b.name, b.version) for b in load_known_bad()}
    assert shipped == {("npm", "postmark-mcp", "1.0.16"), ("pypi", "litellm", "1.82.7"),
                       ("pypi", "litellm", "1.82.8"), ("pypi", "litellm", "1.107.0")}


def exact_version(name: str, spec: str) -> str | None:
    return ecosystem(name).exact_version(spec)


def could_resolve_to(name: str, spec: str, version: str) -> bool:
    return ecosystem(name).could_resolve_to(spec, version)


def test_names_and_versions_normalise() -> None:
    assert comparison_name("Lite_LLM.x-y") == "litellmxy"
    assert exact_version("pypi", "==1.82.07") == "1.82.7"
    assert exact_version("npm", "v1.0.16") == "1.0.16"
    assert exact_version("npm", "^1.0.16") is None
    assert exact_version("pypi", ">=1") is None


@pytest.mark.parametrize("spec, expected", [
    ("^0.2.3", False), ("^0.0.16", False), ("~1", True), ("1.0", True), (">1.0.15", True), ("<=1.0.15", False),
    ("1.0.0 - 1.0", True), ("^0.9 || 1.0.16", True), ("next", True), ("1.0.16-beta.1", False), (">1", False),
])
def test_npm_ranges(spec: str, expected: bool) -> None:
    assert could_resolve_to("npm", spec, "1.0.16") is expected


def test_edit_distance() -> None:
    assert edit_distance("filesystem", "filesytem") == 1
    assert edit_distance("git", "gti") == 1  # transposition counts as one edit
    assert edit_distance("abc", "xyz", limit=1) == 2  # stops past the limit


@pytest.mark.parametrize("ecosystem, name", [
    ("npm", "@modelcontextprotocol/server-filesytem"),
    ("npm", "@modelcontextprotoco1/server-github"),
    ("npm", "server-filesystem"),  # the official name without its scope
    ("npm", "@modelcontextprotocol/server_memory"),  # separators differ: another npm package
    ("pypi", "mcp-server-gti"),
    ("pypi", "mcp-servre-fetch"),
])
def test_typosquats_are_flagged(ecosystem: str, name: str) -> None:
    found = typosquat_finding(ecosystem, name)  # type: ignore[arg-type]
    assert found is not None and found.rule_id == "I9"


@pytest.mark.parametrize("ecosystem, name", [
    ("npm", "@modelcontextprotocol/server-filesystem"),
    ("npm", "left-pad"),
    ("npm", "mcpx"),  # too short to judge
    ("pypi", "MCP_Server.Git"),  # the same PyPI project under PEP 503
    ("pypi", "requests"),
])
def test_real_and_unrelated_names_are_not_flagged(ecosystem: str, name: str) -> None:
    assert typosquat_finding(ecosystem, name) is None  # type: ignore[arg-type]


def test_well_known_names_are_not_typosquats_of_each_other() -> None:
    known = load_well_known()
    for ecosystem, names in known.items():
        for name in names:
            assert typosquat_finding(ecosystem, name, known) is None, name  # type: ignore[arg-type]


def test_the_shipped_lists_are_read_once_and_callers_get_copies(monkeypatch: pytest.MonkeyPatch) -> None:
    from scanner.provenance import known_bad, typosquat
    known_bad._shipped_document.cache_clear()
    known_bad._shipped_known_bad.cache_clear()
    known_bad._shipped_names.cache_clear()
    known_bad._shipped_index.cache_clear()
    typosquat._shipped_well_known.cache_clear()
    reads: list[str] = []
    real_files = known_bad.resources.files

    def counting(package: str):  # type: ignore[no-untyped-def]
        reads.append(package)
        return real_files(package)
    monkeypatch.setattr(known_bad.resources, "files", counting)
    for _ in range(200):
        assert known_bad_finding("npm", "postmark-mcp", "1.0.16") is not None
        assert typosquat_finding("npm", "@modelcontextprotocol/server-filesystme") is not None
    assert len(reads) == 2  # one known-bad file, one well-known file, whatever the number of packages
    first = load_known_bad()
    first.clear()
    load_well_known()["npm"].clear()
    assert load_known_bad() and load_well_known()["npm"]


@pytest.mark.parametrize("ecosystem, name, nearest", [
    ("pypi", "mcp-server-tim", "mcp-server-time"),  # 1 edit; mcp-server-git (listed first) is 2
    ("pypi", "mcp-server-fetc", "mcp-server-fetch"),
])
def test_a_typosquat_names_the_nearest_well_known_package(ecosystem: str, name: str, nearest: str) -> None:
    found = typosquat_finding(ecosystem, name)  # type: ignore[arg-type]
    assert found is not None and f"the well-known {nearest} (1 edit away)" in found.message
