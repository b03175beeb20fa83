"""PyPI checks with the registry's response shapes (JSON API, PEP 691 Simple API) served by httpx.MockTransport."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import httpx

from scanner.provenance.pypi import check_pypi_package
from scanner.rules.provenance import check_findings

WHEEL = b"PK\x03\x04 pretend wheel bytes"
SDIST = b"\x1f\x8b pretend sdist bytes"
WHEEL_NAME, SDIST_NAME = "demo_server-1.0.0-py3-none-any.whl", "demo_server-1.0.0.tar.gz"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def json_release(files: dict[str, bytes], yanked: bool = False) -> dict[str, Any]:
    return {
        "info": {"name": "demo-server", "version": "1.0.0", "yanked": yanked,
                 "yanked_reason": "broken build" if yanked else None},
        "urls": [{"filename": f, "packagetype": "bdist_wheel" if f.endswith(".whl") else "sdist",
                  "digests": {"sha256": sha(b)}, "yanked": yanked,
                  "url": f"../../packages/xx/{f}"} for f, b in files.items()],
    }


def simple(files: dict[str, bytes], provenance: bool | None = None) -> dict[str, Any]:
    entries = []
    for f, b in files.items():
        entry: dict[str, Any] = {"filename": f, "url": f"../../packages/xx/{f}", "hashes": {"sha256": sha(b)}}
        if provenance is not None:
            entry["provenance"] = f"https://pypi.org/integrity/demo-server/1.0.0/{f}/provenance" if provenance \
                else None
        entries.append(entry)
    return {"meta": {"api-version": "1.1"}, "name": "demo-server", "files": entries}


def index(routes: dict[str, Any]) -> httpx.Client:
    def handler(request: httpx.Request) -> httpx.Response:
        answer = routes.get(request.url.path)
        if answer is None:
            return httpx.Response(404)
        if isinstance(answer, bytes):
            return httpx.Response(200, content=answer)
        return httpx.Response(200, json=answer)

    return httpx.Client(transport=httpx.MockTransport(handler))


FILES = {WHEEL_NAME: WHEEL, SDIST_NAME: SDIST}


def routes(release: dict[str, Any] | None = None, simple_doc: dict[str, Any] | None = None,
           wheel: bytes = WHEEL) -> dict[str, Any]:
    return {"/pypi/demo-server/1.0.0/json": release or json_release(FILES),
            "/simple/demo-server/": simple_doc or simple(FILES),
            # the JSON API's relative "../../packages/…" resolves against /pypi/demo-server/1.0.0/json
            f"/pypi/packages/xx/{WHEEL_NAME}": wheel}


def outcomes(pkg: Any) -> dict[str, str]:
    return {c.name: c.outcome for c in pkg.checks}


def test_agreeing_indexes_and_downloaded_wheel_verify() -> None:
    pkg = check_pypi_package(index(routes()), "Demo_Server", "1.0.0")
    assert outcomes(pkg) == {"index-hashes": "verified", "file-hashes": "verified", "yanked": "verified",
                             "wheel": "verified", "attestation": "unavailable",
                             "publisher-repository": "unavailable"}
    assert pkg.pins.sha256 == {WHEEL_NAME: sha(WHEEL), SDIST_NAME: sha(SDIST)}
    assert check_findings(pkg) == []


def test_index_disagreement_is_I2() -> None:
    other = simple({WHEEL_NAME: b"different", SDIST_NAME: SDIST})
    pkg = check_pypi_package(index(routes(simple_doc=other)), "demo-server", "1.0.0")
    assert outcomes(pkg)["index-hashes"] == "failed"
    assert [f.rule_id for f in check_findings(pkg)] == ["I2"]


def test_downloaded_bytes_not_matching_is_I2() -> None:
    pkg = check_pypi_package(index(routes(wheel=b"tampered")), "demo-server", "1.0.0")
    assert outcomes(pkg)["file-hashes"] == "failed"
    assert pkg.pins.sha256 == {}


def test_installed_hashes_from_the_install_report() -> None:
    good = check_pypi_package(index(routes()), "demo-server", "1.0.0", installed={WHEEL_NAME: sha(WHEEL)})
    bad = check_pypi_package(index(routes()), "demo-server", "1.0.0", installed={WHEEL_NAME: sha(b"x")})
    unknown = check_pypi_package(index(routes()), "demo-server", "1.0.0", installed={"other-1.0.0.whl": sha(b"x")})
    assert outcomes(good)["file-hashes"] == "verified"
    assert outcomes(bad)["file-hashes"] == "failed"
    assert outcomes(unknown)["file-hashes"] == "failed"


def test_yanked_release_is_I6() -> None:
    pkg = check_pypi_package(index(routes(release=json_release(FILES, yanked=True))), "demo-server", "1.0.0")
    assert outcomes(pkg)["yanked"] == "failed"
    assert "broken build" in pkg.check("yanked").evidence
    assert "I6" in [f.rule_id for f in check_findings(pkg)]


def test_sdist_only_release_and_sdist_install_are_I5() -> None:
    only_sdist = {SDIST_NAME: SDIST}
    r = routes(release=json_release(only_sdist), simple_doc=simple(only_sdist))
    r[f"/pypi/packages/xx/{SDIST_NAME}"] = SDIST
    pkg = check_pypi_package(index(r), "demo-server", "1.0.0")
    assert outcomes(pkg)["wheel"] == "failed"
    installed_sdist = check_pypi_package(index(routes()), "demo-server", "1.0.0", installed={SDIST_NAME: sha(SDIST)})
    assert outcomes(installed_sdist)["wheel"] == "failed"
    assert "I5" in [f.rule_id for f in check_findings(pkg)]


def test_provenance_key_null_is_absent_and_url_is_not_checked() -> None:
    absent = check_pypi_package(index(routes(simple_doc=simple(FILES, provenance=False))), "demo-server", "1.0.0")
    present = check_pypi_package(index(routes(simple_doc=simple(FILES, provenance=True))), "demo-server", "1.0.0")
    assert outcomes(absent)["attestation"] == "absent"
    assert outcomes(present)["attestation"] == "unavailable"


def test_404_everywhere_is_unavailable_never_clean() -> None:
    pkg = check_pypi_package(index({}), "demo-server", "1.0.0")
    assert set(outcomes(pkg).values()) == {"unavailable"}
    assert check_findings(pkg) == []


def test_simple_api_missing_leaves_index_hashes_unavailable() -> None:
    r = routes()
    del r["/simple/demo-server/"]
    pkg = check_pypi_package(index(r), "demo-server", "1.0.0")
    assert outcomes(pkg)["index-hashes"] == "unavailable"
    assert outcomes(pkg)["file-hashes"] == "verified"


def test_project_document_fallback_when_version_document_404s() -> None:
    release = json_release(FILES)
    project = {"info": copy.deepcopy(release["info"]), "releases": {"1.0.0": release["urls"], "0.9": []}}
    r = routes()
    del r["/pypi/demo-server/1.0.0/json"]
    r["/pypi/demo-server/json"] = project
    r[f"/packages/xx/{WHEEL_NAME}"] = WHEEL  # relative to /pypi/demo-server/json
    pkg = check_pypi_package(index(r), "demo-server", "1.0.0")
    assert outcomes(pkg)["index-hashes"] == "verified"
    assert outcomes(pkg)["file-hashes"] == "verified"
    json.dumps(pkg.model_dump())  # serialisable for the report


PLATFORM_WHEEL_NAME = "demo_server-1.0.0-cp313-cp313-manylinux_2_17_x86_64.whl"


def test_provenance_of_the_pure_wheel_does_not_speak_for_a_platform_wheel_the_install_may_use(monkeypatch) -> None:
    """uv installs the most specific wheel that fits (a manylinux one before py3-none-any): provenance verified for the
    pure wheel alone must not make the release's attestation `verified` while another file has none. The offline
    verification itself is stood in for here (it is tested on real signed data in test_provenance_attestations)."""
    from scanner.provenance import pypi as pypi_checks
    from scanner.provenance.model import Check
    from scanner.provenance.pep740 import Pep740Result, TrustedPublisher

    def verified(document: bytes, filename: str, sha256: str) -> Pep740Result:
        return Pep740Result(Check(name="attestation", outcome="verified", rule_id="I4", evidence=f"{filename} ok"),
                            publisher=TrustedPublisher("GitHub org/repo (workflow release.yml)"), digest="sha256:0")

    monkeypatch.setattr(pypi_checks, "verify_provenance", verified)
    files = {WHEEL_NAME: WHEEL, PLATFORM_WHEEL_NAME: b"PK\x03\x04 platform wheel", SDIST_NAME: SDIST}
    simple_doc = simple(files, provenance=True)
    for entry in simple_doc["files"]:
        if entry["filename"] != WHEEL_NAME:
            entry["provenance"] = None  # uploaded without a trusted publisher
    r = routes(release=json_release(files), simple_doc=simple_doc)
    for name in files:
        r[f"/integrity/demo-server/1.0.0/{name}/provenance"] = b"{}"
    pkg = check_pypi_package(index(r), "demo-server", "1.0.0")
    check = pkg.check("attestation")
    assert check is not None and check.outcome != "verified", check
    assert PLATFORM_WHEEL_NAME in check.evidence
    assert pkg.pins.publisher is None
    every = check_pypi_package(index({**r, "/simple/demo-server/": simple(files, provenance=True)}), "demo-server",
                               "1.0.0")
    assert every.check("attestation").outcome == "verified"  # type: ignore[union-attr]
    assert every.check("attestation").evidence.startswith("3 files, each verified")  # type: ignore[union-attr]
    assert every.pins.publisher == "GitHub org/repo (workflow release.yml)"


def test_a_file_of_the_release_only_the_simple_api_lists_is_I2() -> None:
    """uv installs from the Simple API, and takes a platform wheel before a pure one: a file of this release that
    the JSON API does not list was neither hash-compared nor held to provenance, so the indexes do not agree."""
    platform_wheel = "demo_server-1.0.0-cp312-cp312-manylinux_2_17_x86_64.whl"
    older = "demo_server-0.9.0-py3-none-any.whl"  # another release's file on the same page is no disagreement
    doc = simple({**FILES, platform_wheel: b"only on the simple page", older: b"old"})
    pkg = check_pypi_package(index(routes(simple_doc=doc)), "demo-server", "1.0.0")
    check = pkg.check("index-hashes")
    assert check is not None and check.outcome == "failed" and platform_wheel in check.evidence
    assert [f.rule_id for f in check_findings(pkg)] == ["I2"]
    same = check_pypi_package(index(routes(simple_doc=simple({**FILES, older: b"old"}))), "demo-server", "1.0.0")
    assert outcomes(same)["index-hashes"] == "verified"


def test_registry_text_quoted_in_evidence_is_bounded() -> None:
    """A digest (or file name) of a megabyte in the registry's answer was quoted whole in the check's evidence and
    twice more in its finding: the report and lock carried megabytes of the registry's text."""
    from scanner.provenance.model import MAX_EVIDENCE_CHARS

    release = json_release(FILES)
    release["urls"][0]["digests"]["sha256"] = "a" * 1_000_000
    pkg = check_pypi_package(index(routes(release=release)), "demo-server", "1.0.0")
    assert outcomes(pkg)["index-hashes"] == "failed"
    assert all(len(c.evidence) <= MAX_EVIDENCE_CHARS + 40 for c in pkg.checks)
    assert all(len(f.message) + len(f.evidence or "") < 3 * MAX_EVIDENCE_CHARS for f in check_findings(pkg))
