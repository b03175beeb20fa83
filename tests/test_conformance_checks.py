"""The 2026-07-28 wire checks (W2-W13), each over a hand-made `Observed`: a firing case and a near miss per check,
and the gating that keeps a server of the earlier revision from being faulted for answering in it."""

from __future__ import annotations

from typing import Any

import pytest

from scanner.conformance import revision_details as details
from scanner.conformance import stateless
from scanner.conformance.checks import CHECKS, conclude, not_run
from scanner.conformance.model import Answer, ConformanceOptions, Observed
from scanner.pipeline.conformance import dead_server
from scanner.rules.registry import rule

TOOLS = Answer("tools/list", result={"tools": []})
CACHEABLE = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}
INIT_OK = Answer("initialize", result={"protocolVersion": "2025-11-25"})


def _error(method: str, code: int, message: str = "") -> Answer:
    return Answer(method, error={"code": code, "message": message})


def _discover(versions: list[str] | None = None, **extra: Any) -> Answer:
    return Answer("server/discover", result={"supportedVersions": versions or ["2026-07-28"], "capabilities": {},
                                             **extra})


def _observed(full: bool = True, **fields: Any) -> Observed:
    return Observed(full=full, **{"first": TOOLS, **fields})


MODERN = {"discover": _discover(**CACHEABLE)}


# ---- requires-initialize-handshake, stateless-no-session, stateless-no-init -----------------------------------

def test_a_refused_stateless_request_with_a_working_handshake_needs_the_handshake() -> None:
    refused = _observed(full=False, first=_error("tools/list", -32600, "Server not initialized"), handshake=INIT_OK)
    verdict = stateless.requires_initialize_handshake(refused)
    assert verdict.outcome == "violation" and "-32600" in verdict.detail and "initialize" in verdict.evidence
    hang = _observed(full=False, first=Answer("tools/list", timed_out=True, seconds=10), handshake=INIT_OK)
    assert stateless.requires_initialize_handshake(hang).outcome == "violation"


def test_near_misses_of_the_handshake_check() -> None:
    assert stateless.requires_initialize_handshake(_observed()).outcome == "passed"
    unsupported = _observed(first=_error("tools/list", -32022, "Unsupported protocol version"), handshake=INIT_OK)
    assert stateless.requires_initialize_handshake(unsupported).outcome == "not-applicable"
    dead = _observed(first=Answer("tools/list", timed_out=True), handshake=Answer("initialize", timed_out=True))
    assert stateless.requires_initialize_handshake(dead).outcome == "inconclusive"
    assert dead_server(dead, "") is not None  # ... and the scan is incomplete, not clean


def test_with_the_full_suite_one_refusal_is_one_finding_under_its_most_specific_rule() -> None:
    session = _observed(first=_error("tools/list", -32000, "Bad Request: No valid session ID"), handshake=INIT_OK)
    init = _observed(first=_error("tools/list", -32600, "Server not initialized"), handshake=INIT_OK)
    assert [stateless.stateless_no_session(session).outcome, stateless.stateless_no_init(session).outcome,
            stateless.requires_initialize_handshake(session).outcome] == ["violation", "not-applicable",
                                                                          "not-applicable"]
    assert [stateless.stateless_no_session(init).outcome, stateless.stateless_no_init(init).outcome,
            stateless.requires_initialize_handshake(init).outcome] == ["not-applicable", "violation",
                                                                       "not-applicable"]
    assert stateless.stateless_no_init(_observed()).outcome == "passed"
    findings, _ = conclude(init)
    assert [f.rule_id for f in findings if f.rule_id in ("W2", "W5", "W6")] == ["W6"]


# ---- missing-server-discover ---------------------------------------------------------------------------------

@pytest.mark.parametrize("answer", [_error("server/discover", -32601, "Method not found"),
                                    Answer("server/discover", result={"capabilities": {}}),
                                    Answer("server/discover", timed_out=True, seconds=10)])
def test_a_discover_that_does_not_answer_fires(answer: Answer) -> None:
    assert stateless.missing_server_discover(_observed(discover=answer)).outcome == "violation"


def test_a_discover_result_passes_and_a_closed_stream_is_inconclusive() -> None:
    verdict = stateless.missing_server_discover(_observed(discover=_discover(["2025-11-25", "2026-07-28"])))
    assert verdict.outcome == "passed" and "names 2026-07-28" in verdict.detail
    closed = Answer("server/discover", closed=True)
    assert stateless.missing_server_discover(_observed(discover=closed)).outcome == "inconclusive"


def test_a_minus_32022_refusal_from_a_server_that_claims_the_revision_is_not_waved_through() -> None:
    # Before: not applicable ("a server that does not serve the revision") although discover names 2026-07-28, so
    # a server that serves 2026-07-28 only after server/discover (a handshake by another name) passed every check.
    unsupported = _error("tools/list", -32022, "Unsupported protocol version")
    claims = _observed(full=False, first=unsupported, **MODERN)
    findings, _ = conclude(claims)
    assert [(f.rule_id, f.severity) for f in findings] == [("W2", "error")]
    assert "server/discover names 2026-07-28" in findings[0].message
    assert stateless.requires_initialize_handshake(_observed(first=unsupported, discover=_discover(
        ["2025-11-25"]))).outcome == "not-applicable"  # near miss: it says it does not serve 2026-07-28 (W3)


def test_a_discover_that_does_not_name_the_revision_fails_the_readiness_gate() -> None:
    # Before: W3 passed and W2 took the -32022 as "does not serve the revision" (not applicable), so
    # --spec-version 2026-07-28 exited 0 for a server that says it does not serve 2026-07-28.
    refusing = _observed(full=False, first=_error("tools/list", -32022, "Unsupported protocol version"),
                         handshake=INIT_OK, discover=_discover(["2025-11-25"]))
    findings, _ = conclude(refusing)
    assert [(f.rule_id, f.severity) for f in findings] == [("W3", "error")]
    assert "does not name 2026-07-28" in findings[0].message


# ---- legacy-resource-error-code ------------------------------------------------------------------------------

def test_minus_32002_fires_only_from_a_server_that_claims_the_revision() -> None:
    legacy_code = _error("resources/read", -32002, "Resource not found")
    claimed = _observed(capabilities={"resources": {}}, resource_read=legacy_code, **MODERN)
    assert stateless.legacy_resource_error_code(claimed).outcome == "violation"
    unclaimed = _observed(capabilities={"resources": {}}, resource_read=legacy_code,
                          discover=_error("server/discover", -32601))
    verdict = stateless.legacy_resource_error_code(unclaimed)
    assert verdict.outcome == "not-applicable" and "-32602" in verdict.detail
    right = _observed(capabilities={"resources": {}}, resource_read=_error("resources/read", -32602), **MODERN)
    assert stateless.legacy_resource_error_code(right).outcome == "passed"
    assert stateless.legacy_resource_error_code(_observed()).outcome == "not-applicable"  # no resources offered


# ---- the answers of a server that claims 2026-07-28 ----------------------------------------------------------

def test_missing_result_type_and_cacheable_fields() -> None:
    bare = _observed(first=Answer("tools/list", result={"tools": []}), **MODERN)
    assert details.missing_result_type(bare).outcome == "violation"
    assert details.missing_cacheable_fields(bare).outcome == "violation"
    assert "tools/list" in details.missing_cacheable_fields(bare).detail
    full = _observed(first=Answer("tools/list", result={"tools": [], **CACHEABLE}), **MODERN)
    assert details.missing_result_type(full).outcome == details.missing_cacheable_fields(full).outcome == "passed"
    extension = _observed(first=Answer("tools/list", result={"tools": [], **CACHEABLE, "resultType": "task"}),
                          **MODERN)  # ResultType is "complete" | "input_required" | string in the 2026-07-28 schema
    assert details.missing_result_type(extension).outcome == "passed"
    for kind in ("", None, 1):
        odd = _observed(first=Answer("tools/list", result={"tools": [], **CACHEABLE, "resultType": kind}), **MODERN)
        assert details.missing_result_type(odd).outcome == "violation"
    negative_ttl = _observed(first=Answer("tools/list", result={"tools": [], **CACHEABLE, "ttlMs": -1}), **MODERN)
    assert details.missing_cacheable_fields(negative_ttl).outcome == "violation"
    for ttl in (1500.0, 0.5):  # the schema's ttlMs is a `number` (minimum 0), not an integer
        real = _observed(first=Answer("tools/list", result={"tools": [], **CACHEABLE, "ttlMs": ttl}), **MODERN)
        assert details.missing_cacheable_fields(real).outcome == "passed"
    for ttl in (True, "60000", float("nan")):  # near misses: not a JSON number of milliseconds
        wrong = _observed(first=Answer("tools/list", result={"tools": [], **CACHEABLE, "ttlMs": ttl}), **MODERN)
        assert details.missing_cacheable_fields(wrong).outcome == "violation"


@pytest.mark.parametrize("check", [details.missing_result_type, details.missing_cacheable_fields,
                                   details.legacy_error_code_renumbered, details.ping_still_answered])
def test_a_server_that_does_not_claim_the_revision_is_not_faulted_for_its_answers(check: Any) -> None:
    legacy = _observed(discover=_error("server/discover", -32601), ping=Answer("ping", result={}),
                       bogus_version=_error("tools/list", -32004))
    assert check(legacy).outcome == "not-applicable"


def test_legacy_error_code_renumbered() -> None:
    assert details.legacy_error_code_renumbered(
        _observed(bogus_version=_error("tools/list", -32004), **MODERN)).outcome == "violation"
    assert details.legacy_error_code_renumbered(
        _observed(bogus_version=_error("tools/list", -32022), **MODERN)).outcome == "passed"
    silent = _observed(bogus_version=Answer("tools/list", result={"tools": []}), **MODERN)
    assert details.legacy_error_code_renumbered(silent).outcome == "inconclusive"


def test_ping_still_answered() -> None:
    assert details.ping_still_answered(_observed(ping=Answer("ping", result={}), **MODERN)).outcome == "violation"
    assert details.ping_still_answered(_observed(ping=_error("ping", -32601), **MODERN)).outcome == "passed"
    assert details.ping_still_answered(_observed(ping=_error("ping", -32603), **MODERN)).outcome == "inconclusive"


def test_after_the_probe_fell_back_to_initialize_a_dual_era_server_is_not_judged_on_its_2025_answers() -> None:
    # initialize puts a dual-era server on 2025-11-25 for the rest of the connection (versioning: "An initialize
    # request selects legacy semantics, scoped to the stdio process"): -32002, no resultType, ping are right there
    refused = _error("tools/list", -32600, "Bad request")
    legacy_answers = dict(first=refused, handshake=INIT_OK, capabilities={"resources": {}},
                          resource_read=_error("resources/read", -32002), lists={"resources/list": Answer(
                              "resources/list", result={"resources": []})}, ping=Answer("ping", result={}),
                          bogus_version=_error("tools/list", -32004), unasked=["notifications/message"], **MODERN)
    findings, records = conclude(_observed(**legacy_answers))
    assert [(f.rule_id, f.severity) for f in findings] == [("W2", "error"), ("W13", "info")]
    outcomes = {record.rule_id: record.outcome for record in records}
    assert {outcomes[rule] for rule in ("W4", "W7", "W8", "W9", "W10")} == {"not-applicable"}
    # near miss: a modern-only server refuses initialize, so the connection stays on 2026-07-28 and is judged
    refused_init = {**legacy_answers, "handshake": _error("initialize", -32601, "Method not found")}
    judged = {f.rule_id for f in conclude(_observed(**refused_init))[0]}
    assert {"W4", "W8", "W9", "W10"} <= judged


# ---- deprecated features seen on the wire ---------------------------------------------------------------------

@pytest.mark.parametrize(("check", "method"), [(details.deprecated_sampling, "sampling/createMessage"),
                                               (details.deprecated_roots, "roots/list"),
                                               (details.deprecated_logging, "notifications/message")])
def test_deprecated_traffic_is_info_from_a_legacy_server_and_a_warning_from_one_that_claims_the_revision(
        check: Any, method: str) -> None:
    legacy = check(_observed(unasked=[method, "notifications/progress"], discover=_error("server/discover", -32601)))
    assert (legacy.outcome, legacy.severity) == ("violation", "info")
    assert check(_observed(unasked=[method], **MODERN)).severity == "warning"
    assert check(_observed(unasked=["notifications/progress"], window_seconds=3)).outcome == "passed"


# ---- the registry --------------------------------------------------------------------------------------------

def test_the_suites_and_the_records() -> None:
    assert [rule(check.rule_id).name for check in CHECKS if check.suite == "revision"] == [
        "requires-initialize-handshake", "missing-server-discover", "legacy-resource-error-code"]
    findings, records = conclude(_observed(full=False, discover=_error("server/discover", -32601, "Method not found")))
    assert [r.check for r in records] == ["requires-initialize-handshake", "missing-server-discover",
                                          "legacy-resource-error-code"]
    assert [(f.rule_id, f.severity, f.tool) for f in findings] == [("W3", "error", None)]
    assert len(conclude(_observed(full=True))[1]) == 12
    skipped = not_run(ConformanceOptions(spec_version="2026-07-28", full=True), "could not start")
    assert len(skipped) == 12 and {r.outcome for r in skipped} == {"inconclusive"}


def test_server_text_in_a_detail_is_escaped_and_capped() -> None:
    refused = _observed(full=False, first=_error("tools/list", -32600, "not initialized\x1b[2J" + "x" * 500),
                        handshake=INIT_OK)
    detail = stateless.requires_initialize_handshake(refused).detail
    assert "\x1b" not in detail and "\\x1b" in detail and len(detail) < 400


# ---- the scan options ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["--spec-version", "2027-01-01"], "error: --spec-version '2027-01-01' is not a revision the scanner checks; "
                                       "use 2025-11-25 or 2026-07-28"),
    (["--spec", "draft"], "error: --spec 'draft' is not a revision"),
    (["--spec-version", "2025-11-25", "--spec", "2026-07-28"], "error: --spec-version 2025-11-25 and --spec "
                                                               "2026-07-28 name two revisions; give one"),
])
def test_a_bad_revision_is_exit_2_before_anything_runs(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], args: list[str],
                                                       message: str) -> None:
    from tests.cli_helpers import run_cli

    code, output = run_cli(monkeypatch, capsys, "scan", "npm:left-pad", *args)
    assert code == 2 and message in output and "Traceback" not in output


def test_the_revision_options() -> None:
    from scanner.cli.scan import _conformance_options

    assert _conformance_options(None, None) == ConformanceOptions()
    assert not ConformanceOptions().probes_wire  # the default revision starts no fresh server
    assert _conformance_options("2026-07-28", None) == ConformanceOptions("2026-07-28", full=False)
    assert _conformance_options(None, "2026-07-28") == ConformanceOptions("2026-07-28", full=True)
    assert _conformance_options("2026-07-28", "2026-07-28").probes_wire
