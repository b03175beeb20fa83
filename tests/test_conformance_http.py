"""The HTTP-only conformance checks (W14-W17) and the wire suite over Streamable HTTP (`scan --url ... --spec`):
two loopback servers of our own (tests/servers/conformance_http.py), the SDK's compliant 2026-07-28 serving and a
non-compliant twin, scanned through the CLI; and each check's firing case and near misses over hand-made facts."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

from scanner.conformance import http_checks as http
from scanner.conformance.checks import conclude, not_run
from scanner.conformance.http_wire import HttpWire, header_value, routing_headers
from scanner.conformance.model import Answer, ConformanceOptions, HttpObserved, Metadata, Observed, SseSniff
from tests.loopback_server import start_loopback_server
from tests.test_remote_scan import SECRET, _cli

SERVER = Path(__file__).parent / "servers" / "conformance_http.py"
HTTP_RULES = ("W14", "W15", "W16", "W17")
MODERN = Answer("server/discover", result={"supportedVersions": ["2026-07-28"], "capabilities": {}})
OLD = Answer("server/discover", result={"supportedVersions": ["2025-11-25"], "capabilities": {}})
TOOLS = Answer("tools/list", result={"tools": []}, status=200)
REFUSED = Answer("tools/list", error={"code": -32020, "message": "mcp-method header does not match"}, status=400)


def _start(mode: str, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    return start_loopback_server(SERVER, mode, log)


@pytest.fixture(scope="module", params=["compliant", "noncompliant"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, Path]]:
    log = tmp_path_factory.mktemp(request.param) / "methods.log"
    process, port = _start(request.param, log)
    yield request.param, port, log
    process.terminate()
    process.wait(10)


def _scan(port: int, tmp_path: Path, *flags: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/mcp?team=q7secretquery"
    result = _cli(["scan", "--url", url, "--header-env", "X-Api-Key=SECRET_TOKEN", "--no-probes", "--json", "r.json",
                   *flags], tmp_path)
    return result, json.loads((tmp_path / "r.json").read_text())


def test_the_suite_runs_over_http_and_the_http_checks_judge_each_server(served: tuple[str, int, Path],
                                                                        tmp_path: Path) -> None:
    mode, port, log = served
    result, report = _scan(port, tmp_path, "--spec", "2026-07-28")
    assert result.returncode in (0, 1), result.stderr[-2000:]
    outcomes = {check["rule_id"]: check["outcome"] for check in report["conformance"]["checks"]}
    assert set(outcomes) == {f"W{n}" for n in range(1, 18)}
    assert {outcomes[f"W{n}"] for n in range(1, 14)} == {"passed"}  # the SDK's serving, both times
    fired = {finding["rule_id"] for finding in report["findings"] if finding["rule_id"].startswith("W")}
    if mode == "compliant":
        assert [outcomes[r] for r in HTTP_RULES] == ["passed"] * 4 and not fired
    else:
        assert [outcomes[r] for r in HTTP_RULES] == ["violation"] * 4 and fired == set(HTTP_RULES)
        assert report["verdict"] == "pass"  # category conformance: never the security verdict
    assert "conformance" not in {s["stage"] for s in report["skipped"]}
    text = (tmp_path / "r.json").read_text() + result.stdout + result.stderr
    assert SECRET not in text and "q7secretquery" not in text and f"{port}/mcp" not in text
    assert "tools/call" not in log.read_text().split()  # read-only: conformance sends no tools/call


def test_spec_version_alone_runs_the_core_checks_and_no_http_one(served: tuple[str, int, Path],
                                                                 tmp_path: Path) -> None:
    _, port, _ = served
    result, report = _scan(port, tmp_path, "--spec-version", "2026-07-28")
    assert result.returncode == 0, result.stderr[-2000:]
    assert [c["rule_id"] for c in report["conformance"]["checks"]] == ["W1", "W2", "W3", "W4"]


def test_the_default_revision_runs_json_schema_dialect_over_a_remote_listing(tmp_path: Path,
                                                                             served: tuple[str, int, Path]) -> None:
    _, port, log = served
    before = log.read_text() if log.exists() else ""
    _, report = _scan(port, tmp_path)
    assert [c["rule_id"] for c in report["conformance"]["checks"]] == ["W1"]
    assert "resources/read" not in log.read_text()[len(before):]  # no wire probe at the default revision


def test_a_handshake_only_server_over_http_needs_the_session_and_gets_it_ended(tmp_path: Path) -> None:
    log = tmp_path / "legacy.log"
    process, port = _start("legacy", log)
    try:
        _, full = _scan(port, tmp_path, "--spec", "2026-07-28")
        spec_log = log.read_text().split("\n")
        _, core = _scan(port, tmp_path, "--spec-version", "2026-07-28")
    finally:
        process.terminate()
        process.wait(10)
    assert {f["rule_id"] for f in full["findings"] if f["rule_id"].startswith("W")} == {"W3", "W5"}
    assert {f["rule_id"] for f in core["findings"] if f["rule_id"].startswith("W")} == {"W2", "W3"}
    outcomes = {c["rule_id"]: c["outcome"] for c in full["conformance"]["checks"]}
    assert outcomes["W14"] == "not-applicable" and outcomes["W17"] == "passed"  # a 405 GET: no old transport
    # the probe's requests after its initialize carried the session (discover got -32601, not the 400 of no session),
    # and it was ended at the close: once by the listing's SDK client, once by the probe
    assert "-32601" in next(c["detail"] for c in full["conformance"]["checks"] if c["rule_id"] == "W3")
    assert spec_log.count("DELETE known") == 2


# ---- each check over hand-made facts ----------------------------------------------------------------------------

def _observed(discover: Answer = MODERN, **facts: Any) -> Observed:
    return Observed(full=True, first=facts.pop("first", TOOLS), discover=discover, transport="http",
                    http=HttpObserved(**facts))


def test_required_headers_fires_on_an_accepted_mismatch_and_on_refused_correct_headers() -> None:
    accepted = _observed(header_mismatch=TOOLS, header_missing=REFUSED)
    verdict = http.required_headers(accepted)
    assert verdict.outcome == "violation" and "prompts/list" in verdict.detail and "missing" not in verdict.detail
    wrongly = Answer("tools/list", error={"code": -32600, "message": "Unexpected header Mcp-Method"}, status=400)
    assert http.required_headers(_observed(first=wrongly, header_mismatch=REFUSED,
                                           header_missing=REFUSED)).outcome == "violation"


def test_near_misses_of_required_headers() -> None:
    assert http.required_headers(_observed(header_mismatch=REFUSED, header_missing=REFUSED)).outcome == "passed"
    assert http.required_headers(_observed(OLD, header_mismatch=TOOLS, header_missing=TOOLS)).outcome == \
        "not-applicable"  # a 2025-11-25 server owes no header validation
    other = Answer("tools/list", error={"code": -32600, "message": "Bad Request"}, status=400)
    assert http.required_headers(_observed(header_mismatch=other, header_missing=REFUSED)).outcome == "inconclusive"
    # the header probes of a dual-era server went out in the 2025-11-25 session the probe's initialize opened
    in_session = _observed(first=Answer("tools/list", error={"code": -32600, "message": "Bad Request"}),
                           header_mismatch=TOOLS, header_missing=TOOLS)
    in_session.handshake = Answer("initialize", result={"protocolVersion": "2025-11-25"})
    assert http.required_headers(in_session).outcome == "not-applicable"


def _auth(**document: Any) -> Metadata:
    return Metadata(where="the origin's /.well-known/oauth-authorization-server", document={"issuer": "x", **document})


def test_dcr_and_iss_fire_on_the_metadata_and_not_without_it() -> None:
    dcr = _observed(auth_server=_auth(registration_endpoint="https://as.invalid/register"))
    assert http.dcr_still_advertised(dcr).outcome == "violation" and http.dcr_still_advertised(dcr).severity == \
        "warning"
    assert http.auth_metadata_missing_iss(dcr).outcome == "violation"
    assert http.auth_metadata_missing_iss(_observed(OLD, auth_server=_auth())).severity == "info"
    cimd = _observed(auth_server=_auth(registration_endpoint="https://as.invalid/register",
                                       client_id_metadata_document_supported=True,
                                       authorization_response_iss_parameter_supported=True))
    assert http.dcr_still_advertised(cimd).outcome == http.auth_metadata_missing_iss(cimd).outcome == "passed"
    none = _observed(auth_notes=["no OAuth metadata on the endpoint's origin (the server may not use OAuth)"])
    assert http.dcr_still_advertised(none).outcome == http.auth_metadata_missing_iss(none).outcome == "inconclusive"
    assert "may not use OAuth" in http.dcr_still_advertised(none).detail


def test_legacy_sse_fires_only_on_an_endpoint_event() -> None:
    legacy = _observed(sniffs=[SseSniff(where="the endpoint", status=405),
                               SseSniff(where="the sse path beside the endpoint", status=200, stream=True,
                                        first_event="endpoint")])
    assert http.legacy_sse_transport(legacy).outcome == "violation"
    standalone = _observed(sniffs=[SseSniff(where="the endpoint", status=200, stream=True, first_event="message"),
                                   SseSniff(where="the sse path beside the endpoint", status=404)])
    assert http.legacy_sse_transport(standalone).outcome == "passed"
    silent = _observed(sniffs=[SseSniff(where="the endpoint", error="no response within 3 s")])
    assert http.legacy_sse_transport(silent).outcome == "inconclusive"


def test_a_stdio_suite_does_not_list_the_http_checks() -> None:
    stdio = Observed(full=True, first=TOOLS, discover=MODERN)
    assert not {r.rule_id for r in conclude(stdio)[1]} & set(HTTP_RULES)
    assert {r.rule_id for r in conclude(_observed())[1]} >= set(HTTP_RULES)
    assert len(not_run(ConformanceOptions("2026-07-28", full=True), "x", "http")) == 16


def test_routing_headers_and_the_read_only_wire() -> None:
    params = {"uri": "zoo://caf\u00e9", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    headers = routing_headers("resources/read", params)
    assert headers["MCP-Protocol-Version"] == "2026-07-28" and headers["Mcp-Method"] == "resources/read"
    assert headers["Mcp-Name"] == "=?base64?em9vOi8vY2Fmw6k=?=" and header_value("plain-name") == "plain-name"
    assert header_value("=?base64?x?=").startswith("=?base64?PT9")

    async def call() -> None:
        async with httpx2.AsyncClient() as client:
            await HttpWire(client, "http://127.0.0.1:9/mcp").request("tools/call", {"name": "x"}, 1)

    with pytest.raises(ValueError, match="never sends tools/call"):
        anyio.run(call)


def test_the_metadata_lookups_stay_on_the_endpoints_origin() -> None:
    from scanner.conformance.http_discovery import _issuers, issuer_urls

    tenant = [str(url) for url, _ in issuer_urls(httpx2.URL("https://as.invalid/tenant1"))]
    assert tenant == ["https://as.invalid/.well-known/oauth-authorization-server/tenant1",
                      "https://as.invalid/.well-known/openid-configuration/tenant1",
                      "https://as.invalid/tenant1/.well-known/openid-configuration"]
    assert [str(url) for url, _ in issuer_urls(httpx2.URL("https://as.invalid/"))] == [
        "https://as.invalid/.well-known/oauth-authorization-server", "https://as.invalid/.well-known/openid-configuration"]
    notes: list[str] = []
    endpoint = httpx2.URL("https://mcp.invalid/mcp")
    same = _issuers({"authorization_servers": ["https://auth.invalid/", "https://mcp.invalid/t"]}, endpoint, notes)
    assert [str(url) for url in same] == ["https://mcp.invalid/t"] and "not contacted" in notes[0]


@pytest.mark.parametrize("status", [429, 503])
def test_a_remote_server_that_stops_serving_mid_probe_makes_the_stage_incomplete_not_a_finding(status: int) -> None:
    # Before: a rate limiter's 429 (or a gateway's 503) with a plain-text body was read as the server's error
    # answer: server/discover "answered with error" fired missing-server-discover (an error) on a complete scan.
    from scanner.conformance.http_probe import observe_http
    from scanner.conformance.probe import ProbePlan
    from scanner.pipeline.conformance import dead_server

    served: list[str] = []
    refusal = [status]

    def server(request: httpx2.Request) -> httpx2.Response:
        if request.method != "POST":  # the metadata and legacy-transport GETs
            return httpx2.Response(404)
        served.append(json.loads(request.content)["method"])
        if len(served) > 1:
            return httpx2.Response(refusal[0], text="slow down", headers={"content-type": "text/plain"})
        return httpx2.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})

    async def probe() -> Observed:
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(server)) as client:
            plan = ProbePlan(full=True, client_info={"name": "c", "version": "1"}, capabilities={}, first_timeout=2,
                             timeout=2, quiet_seconds=0)
            return (await observe_http(client, "http://mcp.invalid/mcp", plan))[0]

    observed = anyio.run(probe)
    findings, records = conclude(observed)
    assert findings == [] and served[:2] == ["tools/list", "server/discover"]
    assert next(r for r in records if r.rule_id == "W3").outcome == "inconclusive"
    problem = dead_server(observed, "")
    assert problem is not None and "HTTP 429, 502, 503 or 504" in problem
    # near miss: a 400 with no JSON-RPC body is the server's own refusal (a 2025-11-25 server's), still judged
    served.clear()
    refusal[0] = 400
    refused = anyio.run(probe)
    assert dead_server(refused, "") is None
    assert [f.rule_id for f in conclude(refused)[0]] == ["W3"]
