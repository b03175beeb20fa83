"""Against the real registries (through this machine's proxy): integrity and hashes are recorded; what the proxy
does not serve (signatures, attestations, PEP 740) is reported `unavailable`, never clean."""

from __future__ import annotations

import json

import pytest

from scanner.registry.client import fetch, make_client
from scanner.provenance.npm import check_npm_package, packument_url
from scanner.provenance.pypi import check_pypi_package
from scanner.rules.provenance import check_findings

pytestmark = pytest.mark.registry


def latest(url: str) -> str:
    with make_client() as client:
        got = fetch(client, url, accept="application/json")
    if not got.ok:
        pytest.skip(f"registry not reachable: {got.reason}")
    data = json.loads(got.content)
    return data["dist-tags"]["latest"] if "dist-tags" in data else data["info"]["version"]


def test_npm_server_filesystem_integrity_is_recorded() -> None:
    name = "@modelcontextprotocol/server-filesystem"
    version = latest(packument_url(name))
    with make_client() as client:
        pkg = check_npm_package(client, name, version)
    assert pkg.check("integrity").outcome == "verified", pkg.check("integrity").evidence
    assert pkg.pins.integrity and pkg.pins.integrity.startswith("sha512-")
    assert pkg.check("registry-signature").outcome in ("verified", "unavailable")
    assert pkg.check("registry-signature").outcome != "failed"
    assert check_findings(pkg) == []


def test_pypi_mcp_server_git_hashes_are_recorded() -> None:
    version = latest("https://pypi.org/pypi/mcp-server-git/json")
    with make_client() as client:
        pkg = check_pypi_package(client, "mcp-server-git", version)
    outcomes = {c.name: c.outcome for c in pkg.checks}
    assert outcomes["index-hashes"] == "verified"
    assert outcomes["file-hashes"] == "verified"
    assert outcomes["yanked"] == "verified"
    assert any(f.endswith(".whl") for f in pkg.pins.sha256)
    assert all(len(h) == 64 for h in pkg.pins.sha256.values())
    assert outcomes["attestation"] in ("absent", "unavailable")
