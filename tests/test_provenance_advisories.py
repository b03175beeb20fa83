"""I10: advisories from a local OSV export; no source means "not checked", never "no known vulnerabilities"."""

from __future__ import annotations

import json

import httpx
import pytest

from scanner.provenance.advisories import LocalOsvExport, OsvApi, affects, check_advisories


def _advisory(ident: str, ecosystem: str, name: str, *, versions=(), events=None, kind="ECOSYSTEM") -> dict:
    affected = {"package": {"ecosystem": ecosystem, "name": name}, "versions": list(versions)}
    if events is not None:
        affected["ranges"] = [{"type": kind, "events": events}]
    return {"id": ident, "summary": f"summary of {ident}", "affected": [affected]}


@pytest.fixture
def export(tmp_path):
    folder = tmp_path / "osv" / "PyPI"
    folder.mkdir(parents=True)
    advisories = [
        _advisory("GHSA-aaaa", "PyPI", "Example_Server", events=[{"introduced": "0"}, {"fixed": "1.5.0"},
                                                                 {"introduced": "2.0"}, {"fixed": "2.1"}]),
        _advisory("MAL-2026-1", "npm", "evil-mcp", versions=["1.0.16"]),
        _advisory("GHSA-bbbb", "npm", "semver-pkg", events=[{"introduced": "1.2.0"}, {"last_affected": "1.4.2"}],
                  kind="SEMVER"),
    ]
    for item in advisories:
        (folder / f"{item['id']}.json").write_text(json.dumps(item))
    (folder / "broken.json").write_text("{not json")
    return LocalOsvExport(tmp_path / "osv")


@pytest.mark.parametrize(
    ("ecosystem", "name", "version", "expected"),
    [
        ("pypi", "example-server", "1.4.9", True),  # name normalised; inside [0, 1.5.0)
        ("pypi", "example-server", "1.5.0", False),  # the fix
        ("pypi", "example-server", "2.0.5", True),  # second introduced range
        ("pypi", "example-server", "2.1", False),
        ("npm", "semver-pkg", "1.4.2", True),  # last_affected is inclusive
        ("npm", "semver-pkg", "1.4.3", False),
        ("npm", "semver-pkg", "1.1.9", False),
        ("npm", "other-pkg", "1.3.0", False),
    ],
)
def test_range_and_version_matching(export, ecosystem, name, version, expected):
    hits = [a for a in export.advisories(ecosystem, name) if affects(a, ecosystem, name, version)]
    assert bool(hits) is expected


def test_an_affected_release_fails_the_check_with_i10(export):
    check, findings = check_advisories(export, "pypi", "example-server", "2.0.5")
    assert check.outcome == "failed" and "GHSA-aaaa" in check.evidence
    assert [(f.rule_id, f.severity) for f in findings] == [("I10", "warning")]


def test_a_malicious_package_advisory_is_an_error(export):
    _, findings = check_advisories(export, "npm", "evil-mcp", "1.0.16")
    assert [(f.rule_id, f.severity) for f in findings] == [("I10", "error")]


def test_a_clean_release_is_verified_against_the_named_source(export):
    check, findings = check_advisories(export, "npm", "semver-pkg", "2.0.0")
    assert check.outcome == "verified" and "local OSV export" in check.evidence and findings == []


def test_no_source_or_a_missing_folder_is_not_checked(tmp_path):
    assert check_advisories(None, "npm", "x", "1.0.0")[0].outcome == "unavailable"
    check, findings = check_advisories(LocalOsvExport(tmp_path / "missing"), "npm", "x", "1.0.0")
    assert check.outcome == "unavailable" and findings == []


def test_an_api_that_cannot_answer_is_not_checked():
    transport = httpx.MockTransport(lambda request: httpx.Response(503))
    with httpx.Client(transport=transport) as client:
        check, findings = check_advisories(OsvApi(client, url="https://osv.invalid/v1/query"), "npm", "x", "1.0.0")
    assert check.outcome == "unavailable" and "503" in check.evidence and findings == []


def test_python_tree_reads_the_hash_pinned_requirements():
    from scanner.provenance.pypi import python_tree

    text = (
        "anyio==4.16.0 \\\n    --hash=sha256:" + "a" * 64 + " \\\n    --hash=sha256:" + "b" * 64 + "\n"
        "    # via mcp\n"
        "mcp==2.3.0 \\\n    --hash=sha256:" + "c" * 64 + "\n"
    )
    tree = python_tree(text)
    assert [(d.name, d.version, d.integrity) for d in tree.dependencies] == [
        ("anyio", "4.16.0", "sha256:" + "a" * 64), ("mcp", "2.3.0", "sha256:" + "c" * 64)]


def test_the_osv_api_s_later_pages_are_read_before_the_check_says_verified():
    """OSV paginates a query's answer (next_page_token); an advisory on page 2 must not be missed as "none"."""
    hit = _advisory("GHSA-page2", "npm", "paged-pkg", versions=["1.0.0"])

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body.get("page_token") == "p2":
            return httpx.Response(200, json={"vulns": [hit]})
        return httpx.Response(200, json={"vulns": [], "next_page_token": "p2"})

    with httpx.Client(transport=httpx.MockTransport(answer)) as client:
        check, findings = check_advisories(OsvApi(client, url="https://osv.invalid/v1/query"), "npm", "paged-pkg",
                                           "1.0.0")
    assert check.outcome == "failed" and "GHSA-page2" in check.evidence
    assert [f.rule_id for f in findings] == ["I10"]


def test_an_osv_api_that_never_stops_paginating_is_not_checked():
    endless = httpx.MockTransport(lambda request: httpx.Response(200, json={"vulns": [], "next_page_token": "more"}))
    with httpx.Client(transport=endless) as client:
        check, findings = check_advisories(OsvApi(client, url="https://osv.invalid/v1/query"), "npm", "x", "1.0.0")
    assert check.outcome == "unavailable" and findings == []


def test_an_export_without_advisories_for_the_ecosystem_is_not_checked(tmp_path):
    """A folder holding the export still zipped (osv.dev serves all.zip), or another ecosystem's advisories only,
    was never asked about this package: "not checked", not "no advisory lists it"."""
    zipped = tmp_path / "zipped"
    zipped.mkdir()
    (zipped / "all.zip").write_bytes(b"PK\x03\x04")
    check, findings = check_advisories(LocalOsvExport(zipped), "pypi", "litellm", "1.82.7")
    assert check.outcome == "unavailable" and "no PyPI advisories" in check.evidence and findings == []
    npm_only = tmp_path / "npm"
    npm_only.mkdir()
    (npm_only / "MAL-1.json").write_text(json.dumps(_advisory("MAL-1", "npm", "evil-mcp", versions=["1.0.0"])))
    assert check_advisories(LocalOsvExport(npm_only), "pypi", "litellm", "1.82.7")[0].outcome == "unavailable"
    assert check_advisories(LocalOsvExport(npm_only), "npm", "other", "1.0.0")[0].outcome == "verified"


@pytest.mark.parametrize("answer", [
    {"vulns": {"GHSA-x": {}}},  # an object where the list goes
    {"vulns": ["GHSA-x"]},  # an advisory that is no object
    {"vulns": [{"id": "GHSA-x", "affected": [{"package": "x"}]}]},  # a package that is no object
    {"vulns": [{"id": "GHSA-x", "affected": {"package": {}}}]},
    {"vulns": [{"id": "GHSA-x", "affected": [{"package": {"ecosystem": "npm", "name": "x"}, "versions": "1.0.0"}]}]},
    ["not", "an", "object"],
])
def test_an_unreadable_osv_answer_is_data_never_a_crash(answer):
    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=answer))
    with httpx.Client(transport=transport) as client:
        check, findings = check_advisories(OsvApi(client, url="https://osv.invalid/v1/query"), "npm", "x", "1.0.0")
    assert check.outcome in ("unavailable", "verified") and findings == []


def test_a_malformed_file_in_a_local_export_does_not_hide_the_others(export):
    folder = export.directory / "PyPI"
    (folder / "odd-package.json").write_text(json.dumps({"id": "ODD-1", "affected": [{"package": ["x"]}]}))
    (folder / "odd-affected.json").write_text(json.dumps({"id": "ODD-2", "affected": "x"}))
    (folder / "list.json").write_text(json.dumps([1, 2]))
    check, _ = check_advisories(export, "pypi", "example-server", "2.0.5")
    assert check.outcome == "failed" and "GHSA-aaaa" in check.evidence
