"""The fixtures agree with the protocol and with what our own rules check: every message is JSON-RPC 2.0, every
method one the revision (or the conformance probe) knows, every answer passes the W-rule validators of
scanner/conformance, and a fixture broken on purpose is caught (so these checks can fail)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scanner.conformance import probe, revision_details, stateless
from scanner.conformance.model import Answer, Observed
from scanner.fixtures import methods, wire
from scanner.fixtures.catalogue import all_fixtures
from scanner.fixtures.wire import Fixture
from scanner.vet.catalogue import VET_RULES
from tests.fixture_checks import contradictions, jsonrpc_problems, pairs

FIXTURES = {fixture.path: fixture for fixture in all_fixtures()}


@pytest.mark.parametrize("path", sorted(FIXTURES))
def test_every_message_is_json_rpc_2(path: str) -> None:
    assert jsonrpc_problems(FIXTURES[path].as_json()) == []


@pytest.mark.parametrize("path", sorted(FIXTURES))
def test_no_fixture_contradicts_the_w_rules(path: str) -> None:
    assert contradictions(FIXTURES[path].as_json()) == []


def test_every_method_is_one_the_revision_or_the_probe_knows() -> None:
    known = methods.REQUESTS | methods.NOTIFICATIONS | set(methods.REMOVED)
    deliberate = {"orders/export"}  # http/routing-header-mismatch: an unknown method, answered 404 / -32601
    used = {exchange["message"]["method"] for fixture in FIXTURES.values()
            for exchange in fixture.as_json()["exchanges"] if exchange["message"] and "method" in exchange["message"]}
    assert used - known == deliberate
    probed = {"tools/list", "server/discover", "resources/read", *(method for _, method in probe.LISTS)}
    assert probed <= methods.REQUESTS and "ping" in methods.REMOVED  # the probe and the fixtures agree


def test_every_removed_method_names_the_vet_rule_that_finds_it() -> None:
    rules = {rule.id: rule for rule in VET_RULES}
    for method, rule_id in methods.REMOVED.items():
        assert method in rules[rule_id].detects, (method, rule_id)


def test_the_fixtures_use_the_probes_meta_keys() -> None:
    assert (wire.PROTOCOL_VERSION_KEY, wire.CLIENT_INFO_KEY, wire.CLIENT_CAPABILITIES_KEY) == (
        probe.PROTOCOL_VERSION_KEY, probe.CLIENT_INFO_KEY, probe.CLIENT_CAPABILITIES_KEY)
    assert wire.UNSERVED_REVISION == probe.BOGUS_VERSION


def _answer(fixture: Fixture, request_id: int) -> Answer:
    for request, reply in pairs(fixture.as_json()):
        if request["message"]["id"] == request_id:
            message = reply["message"]
            return Answer(request["message"]["method"], result=message.get("result"), error=message.get("error"))
    raise AssertionError(f"no answer to {request_id} in {fixture.path}")


def test_the_conformance_checks_pass_the_fixtures_answers() -> None:
    """The W checks themselves, fed the fixtures' answers as if the probe had seen them."""
    discover, refused, downgrade = (FIXTURES[f"stateless/{name}"] for name in
                                    ("server-discover", "request-meta-refused", "downgrade-refused"))
    observed = Observed(full=True, first=_answer(discover, 2), discover=_answer(discover, 1),
                        bogus_version=_answer(refused, 1), ping=_answer(downgrade, 3))
    verdicts = {check.__name__: check(observed).outcome for check in (
        stateless.requires_initialize_handshake, stateless.missing_server_discover,
        revision_details.missing_result_type, revision_details.missing_cacheable_fields,
        revision_details.legacy_error_code_renumbered, revision_details.ping_still_answered)}
    assert set(verdicts.values()) == {"passed"}, verdicts


def _broken(path: str, step: int, change: Any) -> dict[str, Any]:
    document = copy.deepcopy(FIXTURES[path].as_json())
    change(document["exchanges"][step - 1]["message"])
    return document


@pytest.mark.parametrize(("path", "step", "change", "caught"), [
    ("stateless/server-discover", 4, lambda m: m["result"].pop("resultType"), "W7"),
    ("stateless/server-discover", 4, lambda m: m["result"].pop("ttlMs"), "W8"),
    ("stateless/request-meta-refused", 2, lambda m: m["error"].update(code=-32004), "W9"),
    ("stateless/downgrade-refused", 6, lambda m: m.update(result={"resultType": "complete"}) or m.pop("error"),
     "W10"),
    ("stateless/request-meta", 6, lambda m: None, "W13"),  # a log line for request 3: fine, see the near miss below
    ("mrtr/input-required-retries", 12, lambda m: m["result"].update(resultType="input_required"), "input_required"),
    ("tasks/task-handle-lifecycle", 2, lambda m: m["result"].update(resultType="tasks"), "W7"),
])
def test_a_fixture_broken_on_purpose_is_caught(path: str, step: int, change: Any, caught: str) -> None:
    problems = contradictions(_broken(path, step, change))
    if path == "stateless/request-meta":  # near miss: the unchanged log line belongs to a request that asked
        assert problems == []
        return
    assert any(caught in problem for problem in problems), problems


def test_a_log_line_for_a_request_that_did_not_ask_is_caught() -> None:
    document = copy.deepcopy(FIXTURES["stateless/request-meta"].as_json())
    exchanges = document["exchanges"]
    exchanges.insert(3, copy.deepcopy(exchanges[5]))  # the log line now follows request 2, which set no logLevel
    assert any("W13" in problem for problem in contradictions(document))


def test_a_server_request_on_the_wire_is_caught() -> None:
    document = copy.deepcopy(FIXTURES["mrtr/input-required-retries"].as_json())
    document["exchanges"].insert(1, {"step": 0, "direction": wire.TO_CLIENT, "expect": "",
                                     "message": {"jsonrpc": "2.0", "id": 90, "method": "sampling/createMessage",
                                                 "params": {}}})
    problems = contradictions(document)
    assert any("W11" in problem for problem in problems), problems
