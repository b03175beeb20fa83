"""I4 `publisher-repository`: a PyPI release's verified PEP 740 Trusted Publisher must publish from the repository the
project declares (`info.project_urls` / `info.home_page`), as npm's provenance is held to `repository`.

Publishers are made by `describe_publisher` from real `pypi_attestations` publisher models; the offline Sigstore
verification they stand for is tested on real signed data in test_provenance_attestations (no production-signed
GitHub publisher provenance is available here, see tests/fixtures/provenance/pypi/SOURCES.md), and the Google Cloud
publisher below goes through it for real."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx
import pytest
from pypi_attestations import GitHubPublisher, GitLabPublisher

from scanner.provenance import pypi as pypi_checks
from scanner.provenance.model import Check, Outcome, PackageProvenance
from scanner.provenance.pep740 import Pep740Result, TrustedPublisher, describe_publisher, merged_publishers
from scanner.provenance.pypi import check_pypi_package
from scanner.provenance.pypi_repository import publisher_repository_check, repository_of
from scanner.rules.provenance import check_findings

GCB_FILE = "gcb_attestation_test-0.0.0.tar.gz"
GCB_SHA256 = "461317362419124b6012e855423a9078d6de8aed3e74fa78cc74d669b23dc6cf"
GCB_PROVENANCE = (Path(__file__).parent / "fixtures" / "provenance" / "pypi" / f"{GCB_FILE}.provenance").read_bytes()


def github(repository: str) -> TrustedPublisher:
    return describe_publisher(GitHubPublisher(repository=repository, workflow="release.yml"))


def attested(publisher: TrustedPublisher | None, outcome: Outcome = "verified") -> Pep740Result:
    return Pep740Result(Check(name="attestation", outcome=outcome, rule_id="I4", evidence="stand-in"),
                        publisher=publisher, digest="sha256:0" if publisher else None)


def compare(project_urls: Any, publisher: TrustedPublisher | None = None, home_page: Any = None) -> Check:
    info = {"name": "demo-server", "version": "1.0.0", "project_urls": project_urls, "home_page": home_page}
    return publisher_repository_check(info, attested(publisher or github("good-org/demo-server")))


@pytest.mark.parametrize("url", [
    "https://github.com/good-org/demo-server",
    "https://github.com/Good-Org/Demo-Server",
    "https://www.github.com/good-org/demo-server/",
    "http://GitHub.com/good-org/demo-server#readme",
    "https://github.com/good-org/demo-server?tab=readme-ov-file",
    "git+https://github.com/good-org/demo-server.git",
    "https://github.com/good-org/demo-server/tree/main/src",
    "https://github.com/good-org/demo-server/blob/main/README.md",
    "git@github.com:good-org/demo-server.git",
    "ssh://git@github.com:22/good-org/demo-server.git",
    "  https://github.com/good-org/demo-server  ",
])
def test_spellings_of_the_declared_repository_match_the_publisher(url: str) -> None:
    assert repository_of(url) == "github.com/good-org/demo-server"
    check = compare({"Source": url})
    assert check.outcome == "verified", check


@pytest.mark.parametrize("url, expected", [
    ("https://gitlab.com/Group/Sub/Project/-/tree/main", "gitlab.com/group/sub/project"),
    ("https://gitlab.com/group/project.git", "gitlab.com/group/project"),
    ("https://gitlab.com/group/project/issues/4", "gitlab.com/group/project"),
    ("https://github.com/good-org", None),  # an owner, not a repository
    ("https://github.com/sponsors/good-org", None),
    ("https://good-org.github.io/demo-server", None),
    ("https://codeberg.org/good-org/demo-server", None),
    ("https://gitlab.example.com/group/project", None),  # self-hosted: no PyPI Trusted Publisher publishes from it
    ("file:///github.com/good-org/demo-server", None),
    ("https://github.com/good-org/demo server", None),
    ("http://[github.com/good-org/demo-server", None),  # urlsplit raises on it: not a crash
    ("not a url", None),
    ("", None),
])
def test_repository_of(url: str, expected: str | None) -> None:
    assert repository_of(url) == expected


@pytest.mark.parametrize("declared", [
    "https://github.com/good-org/demo-server-fork",
    "https://github.com/good-org-x/demo-server",
    "https://github.com/good-org/demo",
    "https://gitlab.com/good-org/demo-server",  # same path, other host
])
def test_a_near_miss_is_not_a_match(declared: str) -> None:
    assert compare({"Source": declared}).outcome == "failed"


def test_a_fork_publishing_a_taken_over_project_is_an_I4_error() -> None:
    check = compare({"Homepage": "https://example.invalid", "Source": "https://github.com/good-org/demo-server"},
                    github("attacker/demo-server"))
    assert check.outcome == "failed" and check.rule_id == "I4"
    assert "attacker/demo-server" in check.evidence and "github.com/good-org/demo-server" in check.evidence
    finding = check_findings(PackageProvenance(ecosystem="pypi", name="demo-server", checks=[check]))[0]
    assert finding.rule_id == "I4" and finding.severity == "error"


def test_a_match_with_any_source_like_url_counts_and_other_labels_are_not_read() -> None:
    urls = {"Homepage": "https://github.com/good-org/website", "Source Code": "https://github.com/good-org/demo-server",
            "Bug Tracker": "https://github.com/attacker/demo-server/issues"}
    assert compare(urls).outcome == "verified"
    # an issue tracker (or changelog, docs, funding) naming the publisher's fork does not make it the project's
    assert compare(urls, github("attacker/demo-server")).outcome == "failed"
    assert compare({"Repository": "https://gitlab.com/good/demo"},
                   describe_publisher(GitLabPublisher(repository="good/demo", workflow_filepath=".gitlab-ci.yml"))
                   ).outcome == "verified"


def test_the_legacy_home_page_field_is_read() -> None:
    assert compare(None, home_page="https://github.com/good-org/demo-server").outcome == "verified"
    assert compare(None, github("attacker/x"), home_page="https://github.com/good-org/demo-server").outcome == "failed"


@pytest.mark.parametrize("project_urls, home_page, reason", [
    (None, None, "declares no github.com or gitlab.com source repository"),
    ({}, "UNKNOWN", "declares no github.com or gitlab.com source repository"),
    ({"Documentation": "https://github.com/good-org/demo-server/wiki"}, None, "declares no github.com"),
    ({"Source": "https://codeberg.org/good-org/demo-server"}, None, "its source URLs are on codeberg.org"),
    ({"Source": ["https://github.com/good-org/demo-server"]}, None, "declares no github.com"),  # not a string
    ("https://github.com/good-org/demo-server", None, "declares no github.com"),  # not a mapping
])
def test_no_declared_github_or_gitlab_repository_is_unavailable(project_urls: Any, home_page: Any,
                                                                 reason: str) -> None:
    check = compare(project_urls, home_page=home_page)
    assert check.outcome == "unavailable" and reason in check.evidence, check
    assert "github.com/good-org/demo-server" in check.evidence  # names the repository that was not tied to one


def test_nothing_to_compare_is_never_a_pass() -> None:
    info = {"project_urls": {"Source": "https://github.com/good-org/demo-server"}}
    assert publisher_repository_check(info, attested(None, "absent")).outcome == "absent"
    assert publisher_repository_check(info, attested(None, "unavailable")).outcome == "unavailable"
    assert publisher_repository_check(info, attested(None, "failed")).outcome == "unavailable"
    assert publisher_repository_check(None, attested(github("good-org/demo-server"))).outcome == "unavailable"
    google = TrustedPublisher("Google Cloud service account x@developer.gserviceaccount.com")
    assert publisher_repository_check(info, attested(google)).outcome == "unavailable"


def test_every_publisher_of_the_release_must_be_a_declared_repository() -> None:
    both = merged_publishers([github("good-org/demo-server"), github("attacker/demo-server")])
    check = compare({"Source": "https://github.com/good-org/demo-server"}, both)
    assert check.outcome == "failed" and "attacker/demo-server" in check.evidence


# ---------------------------------------------------------------------------------- through check_pypi_package

WHEEL = "demo_server-1.0.0-py3-none-any.whl"
DIGEST = "a" * 64


def serve(project_urls: Any, info: Any = None) -> httpx.Client:
    info = info if info is not None else {"name": "demo-server", "version": "1.0.0", "project_urls": project_urls}
    release = {"info": info,
               "urls": [{"filename": WHEEL, "digests": {"sha256": DIGEST}, "url": f"https://files.invalid/{WHEEL}"}]}
    simple = {"files": [{"filename": WHEEL, "hashes": {"sha256": DIGEST},
                         "provenance": f"https://pypi.org/integrity/demo-server/1.0.0/{WHEEL}/provenance"}]}
    routes = {"/pypi/demo-server/1.0.0/json": release, "/simple/demo-server/": simple,
              f"/integrity/demo-server/1.0.0/{WHEEL}/provenance": {}}
    return httpx.Client(transport=httpx.MockTransport(
        lambda r: httpx.Response(200, json=routes[r.url.path]) if r.url.path in routes else httpx.Response(404)))


@pytest.mark.parametrize("publisher, outcome", [("good-org/demo-server", "verified"),
                                                ("attacker/demo-server", "failed")])
def test_pypi_check_compares_the_publisher_with_the_declared_repository(monkeypatch: pytest.MonkeyPatch,
                                                                        publisher: str, outcome: str) -> None:
    monkeypatch.setattr(pypi_checks, "verify_provenance",
                        lambda document, filename, sha256: attested(github(publisher)))
    pkg = check_pypi_package(serve({"Source": "https://github.com/Good-Org/demo-server.git"}), "demo-server",
                             "1.0.0", installed={WHEEL: DIGEST})
    check = pkg.check("publisher-repository")
    assert check is not None and check.outcome == outcome, check
    assert [f.rule_id for f in check_findings(pkg)] == (["I4"] if outcome == "failed" else [])


def test_a_real_google_cloud_publisher_names_no_repository_to_compare() -> None:
    """Real signed data: the Cloud Build publisher verifies, and has no repository: `unavailable`, not a pass."""
    release = {"info": {"name": "gcb-attestation-test", "version": "0.0.0",
                        "project_urls": {"Source": "https://github.com/pypi/pypi-attestations"}},
               "urls": [{"filename": GCB_FILE, "digests": {"sha256": GCB_SHA256}}]}
    url = f"https://pypi.org/integrity/gcb-attestation-test/0.0.0/{GCB_FILE}/provenance"
    routes: dict[str, Any] = {"/pypi/gcb-attestation-test/0.0.0/json": release,
                              "/simple/gcb-attestation-test/": {"files": [
                                  {"filename": GCB_FILE, "hashes": {"sha256": GCB_SHA256}, "provenance": url}]}}

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/integrity/"):
            return httpx.Response(200, content=GCB_PROVENANCE)
        answer = routes.get(request.url.path)
        return httpx.Response(200, json=copy.deepcopy(answer)) if answer else httpx.Response(404)

    pkg = check_pypi_package(httpx.Client(transport=httpx.MockTransport(handler)), "gcb-attestation-test", "0.0.0",
                             installed={GCB_FILE: GCB_SHA256})
    assert pkg.check("attestation").outcome == "verified"  # type: ignore[union-attr]
    check = pkg.check("publisher-repository")
    assert check is not None and check.outcome == "unavailable", check
    assert "names no GitHub or GitLab repository" in check.evidence


def test_release_metadata_that_is_not_a_mapping_does_not_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pypi_checks, "verify_provenance",
                        lambda document, filename, sha256: attested(github("good-org/demo-server")))
    pkg = check_pypi_package(serve(None, info=["not", "a", "mapping"]), "demo-server", "1.0.0",
                             installed={WHEEL: DIGEST})
    check = pkg.check("publisher-repository")
    assert check is not None and check.outcome == "unavailable", check
