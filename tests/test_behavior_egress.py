"""B2 graded by what the tool declares and what the scanner asked it to reach, one finding per tool and host; the
network and secrets half of B1. Pure: sink events and call records built by hand (the live zoo test is in
tests/test_probes_live.py)."""

from __future__ import annotations

from typing import Any

from scanner.probes.model import ProbeResult
from scanner.probes.value_generation import INVALID_EMAIL, INVALID_HOST, INVALID_URL
from scanner.report.model import CallBehavior, CanaryEvent
from scanner.rules.behavior import evaluate_behavior
from scanner.rules.egress import argument_hosts, egress_findings, outcome

CLOSED = {"readOnlyHint": True, "openWorldHint": False}


def _tool(name: str, description: str = "Does one thing and returns it as text.",
          annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "description": description, "inputSchema": {"type": "object"}}
    if annotations is not None:
        tool["annotations"] = annotations
    return tool


def _dns(host: str) -> dict[str, Any]:
    return {"kind": "dns", "host": host, "query": host, "qtype": "A", "port": 53}


def _tcp(host: str, **more: Any) -> dict[str, Any]:
    return {"kind": "tcp", "host": host, "port": 443, "protocol": "tls", "sni": host, **more}


def _scan(tools: list[dict[str, Any]], calls: list[tuple[str, str, dict[str, Any], list[dict[str, Any]]]],
          canaries: dict[int, list[CanaryEvent]] | None = None) -> list:
    results, records = [], []
    for index, (tool, label, arguments, events) in enumerate(calls):
        results.append(ProbeResult(tool=tool, label=label, kind="generated", status="ok", arguments=arguments))
        records.append(CallBehavior(call=index, tool=tool, label=label, egress=events,
                                    canaries=(canaries or {}).get(index, [])))
    return evaluate_behavior(tools, results, records)


def _b2(findings: list) -> list:
    return [f for f in findings if f.rule_id == "B2"]


# ---- 1. what the scanner put in the arguments ------------------------------------------------------------------------

def test_the_probe_url_from_the_arguments_is_an_observation_not_egress():
    tools = [_tool("fetch", "Fetch a web page.", {"readOnlyHint": True, "openWorldHint": True})]
    found = _b2(_scan(tools, [("fetch", "fetch valid", {"url": INVALID_URL}, [_dns(INVALID_HOST), _tcp(INVALID_HOST)])]))
    assert [f.severity for f in found] == ["info"]
    assert f"reached the host it was asked to reach ({INVALID_HOST}, from the arguments)" in found[0].message
    assert "nothing left the host" in found[0].message


def test_any_host_in_the_arguments_counts_even_a_closed_world_tool_asked_to_reach_it():
    tools = [_tool("notify", "Send a note.", CLOSED)]
    found = _scan(tools, [("notify", "valid", {"to": INVALID_EMAIL, "cc": ["x@Mail.Example.Invalid"]},
                           [_dns("mail.example.invalid")])])
    assert [f.severity for f in _b2(found)] == ["info"] and not [f for f in found if f.rule_id == "B1"]


def test_near_miss_another_host_during_the_same_call_stays_b2():
    tools = [_tool("fetch", "Fetch a web page.", {"readOnlyHint": True, "openWorldHint": True})]
    found = _b2(_scan(tools, [("fetch", "valid", {"url": INVALID_URL},
                               [_dns(INVALID_HOST), _dns("telemetry.vendor.invalid")])]))
    by_host = {f.message.split()[4]: f.severity for f in found}
    assert by_host == {INVALID_HOST: "info", "telemetry.vendor.invalid": "warning"}


def test_a_subdomain_of_the_given_host_is_not_the_given_host():
    tools = [_tool("fetch", "Fetch a web page.", CLOSED)]
    found = _b2(_scan(tools, [("fetch", "valid", {"url": INVALID_URL}, [_dns(f"leak.{INVALID_HOST}")])]))
    assert [f.severity for f in found] == ["error"]


def test_argument_hosts_finds_urls_emails_and_bare_names():
    hosts = argument_hosts({"u": "git+https://user@Code.Example.Invalid/x", "m": ["a@b.example.invalid"],
                            "h": "plain.example.invalid", "n": 3, "path": "/workspace/notes"})
    assert hosts == {"code.example.invalid", "b.example.invalid", "plain.example.invalid"}


# ---- 2. severity follows the declaration -----------------------------------------------------------------------------

def test_open_world_or_no_annotations_is_a_warning_naming_the_host():
    tools = [_tool("search", "Search the web."), _tool("lookup", "Look a word up.", {"openWorldHint": True}),
             _tool("maybe", "Look a word up.", {"destructiveHint": False})]
    found = _b2(_scan(tools, [(name, "valid", {"q": "probe"}, [_dns("api.words.invalid")])
                              for name in ("search", "lookup", "maybe")]))
    assert [(f.tool, f.severity) for f in found] == [("search", "warning"), ("lookup", "warning"), ("maybe", "warning")]
    assert all("api.words.invalid" in f.message for f in found)
    assert "MCP's default is an open world" in found[0].message and "openWorldHint: true" in found[1].message


def test_a_description_naming_the_host_is_a_warning():
    tools = [_tool("web_search", "Search the web with DuckDuckGo and return the results.", {"destructiveHint": False})]
    found = _b2(_scan(tools, [("web_search", "valid", {"query": "probe"}, [_tcp("html.duckduckgo.invalid")])]))
    assert [f.severity for f in found] == ["warning"] and "description names the host" in found[0].message


def test_closed_world_tools_reaching_an_unasked_host_are_errors_and_b1():
    tools = [_tool("get_time", "Return the current time.", CLOSED),
             _tool("read_page", "Read a page.", {"readOnlyHint": True})]
    found = _scan(tools, [("get_time", "valid", {}, [_dns("t.vendor.invalid")]),
                          ("read_page", "valid", {}, [_dns("t.vendor.invalid")])])
    assert [(f.tool, f.severity) for f in _b2(found)] == [("get_time", "error"), ("read_page", "error")]
    b1 = [f for f in found if f.rule_id == "B1"]
    assert [(f.tool, f.severity) for f in b1] == [("get_time", "error"), ("read_page", "error")]
    assert "openWorldHint: false" in b1[0].message and "t.vendor.invalid" in b1[0].message
    assert "readOnlyHint: true without openWorldHint: true" in b1[1].message


def test_near_miss_read_only_and_declared_open_world_is_not_b1():
    tools = [_tool("fetch", "Fetch a web page.", {"readOnlyHint": True, "openWorldHint": True})]
    found = _scan(tools, [("fetch", "valid", {}, [_dns("cdn.pages.invalid")])])
    assert [f.severity for f in _b2(found)] == ["warning"] and not [f for f in found if f.rule_id == "B1"]


def test_a_planted_secret_in_the_traffic_is_an_error_whatever_the_tool_declares():
    tools = [_tool("sync", "Sync settings.", {"openWorldHint": True})]
    found = _b2(_scan(tools, [("sync", "valid", {"url": INVALID_URL}, [_tcp(INVALID_HOST, method="POST", path="/c")])],
                      canaries={0: [CanaryEvent(where="/home/mcp/.aws/credentials", how="egress")]}))
    assert [f.severity for f in found] == ["error"] and "planted secret" in found[0].message
    assert "POST /c" in found[0].message


def test_start_up_and_outside_calls_stay_errors():
    record = CallBehavior(call=-1, tool=None, label="start-up and listing", egress=[_dns("boot.vendor.invalid")])
    found = evaluate_behavior([_tool("x", annotations={"openWorldHint": True})], [], [record])
    assert [(f.rule_id, f.severity, f.tool) for f in found] == [("B2", "error", None)]
    assert "during start-up and listing" in found[0].message and "nothing left the host" in found[0].message
    late = egress_findings([_dns("late.vendor.invalid"), _tcp("late.vendor.invalid")], during="outside any probe call")
    assert len(late) == 1 and late[0].severity == "error"


def test_what_became_of_each_attempt_is_said_as_the_sink_logged_it():
    said = outcome([
        {**_dns("a.invalid"), "answer": "198.18.1.0", "transport": "udp"},
        {"kind": "dns", "host": "a.invalid", "qtype": "TXT", "transport": "tcp"},
        _tcp("a.invalid", original_dst="198.18.1.0:443", bytes_read=517),
        {"kind": "tcp", "port": 8080, "note": "over 32 concurrent connections: closed unread", "protocol": "none"},
        {"kind": "udp", "bytes_read": 12}])
    assert said == ("DNS A lookup answered by the sink with a sink address (198.18.1.0); DNS-over-TCP TXT lookup "
                    "answered by the sink with no records; TCP connect to 198.18.1.0:443 accepted by the sink (517 "
                    "bytes read, a TLS ClientHello; nothing sent back, then closed); TCP connect to :8080 refused: the "
                    "sink closed it unread (over its concurrent-connection limit); and 1 more; nothing left the host")
    assert outcome([{"kind": "tcp", "port": 8080, "note": "over 32 concurrent connections: closed unread"}]) == (
        "TCP connect to :8080 refused: the sink closed it unread (over its concurrent-connection limit); nothing left "
        "the host")
    assert outcome([{"kind": "udp", "bytes_read": 12}]) == ("UDP datagram (12 bytes) taken by the sink, not "
                                                           "answered; nothing left the host")
    # a connection that sent nothing before the sink's deadline: no protocol claimed for zero bytes
    assert "(0 bytes read; nothing sent back" in outcome([_tcp("a.invalid", protocol="none")])


def test_every_b2_and_the_network_b1_say_what_became_of_the_attempt():
    tools = [_tool("get_time", "Returns the time.", CLOSED), _tool("fetch", "Fetch a page.", {"openWorldHint": True})]
    events = [{**_dns("t.vendor.invalid"), "answer": "198.18.1.3"},
              _tcp("t.vendor.invalid", original_dst="198.18.1.3:443", bytes_read=300)]
    found = _scan(tools, [("get_time", "valid", {}, events), ("fetch", "valid", {"url": INVALID_URL},
                                                              [_dns(INVALID_HOST)])])
    start = evaluate_behavior(tools, [], [CallBehavior(call=-1, tool=None, label="start-up and listing",
                                                       egress=[{"kind": "udp", "bytes_read": 48}])])
    network = [f for f in [*found, *start] if f.rule_id == "B2" or "network" in f.message]
    assert {(f.rule_id, f.tool) for f in network} == {("B2", "get_time"), ("B1", "get_time"), ("B2", "fetch"),
                                                      ("B2", None)}
    for finding in network:
        assert finding.message.rstrip(".").endswith("nothing left the host"), finding.message
    b1 = next(f for f in network if f.rule_id == "B1")
    assert ("DNS A lookup answered by the sink with a sink address (198.18.1.3); TCP connect to 198.18.1.3:443 "
            "accepted by the sink (300 bytes read, a TLS ClientHello; nothing sent back, then closed)") in b1.message


# ---- 3. one finding per tool and host --------------------------------------------------------------------------------

def test_one_finding_per_tool_and_host_with_the_calls_listed():
    tools = [_tool("read_file", "Read a file.", {"readOnlyHint": False})]
    labels = ["valid", "error: missing required 'path'", "error: wrong type for 'path'"] + [f"x{i}" for i in range(40)]
    found = _b2(_scan(tools, [("read_file", label, {"path": "/workspace/a"}, [_dns("telemetry.vendor.invalid"),
                                                                             _tcp("telemetry.vendor.invalid")])
                              for label in labels]))
    assert len(found) == 1
    assert "in 43 calls ('valid', 'error: missing required 'path'', " in found[0].message
    assert "and 38 more" in found[0].message


# ---- 4. secrets: B1 beside B3 ----------------------------------------------------------------------------------------

def test_a_read_only_or_closed_world_tool_reading_a_canary_is_b1_too():
    tools = [_tool("get_weather", "Weather.", {"readOnlyHint": True}), _tool("tidy", "Tidy.", {"readOnlyHint": False})]
    read = [CanaryEvent(where="/home/mcp/.ssh/id_rsa", how="read")]
    found = _scan(tools, [("get_weather", "valid", {}, []), ("tidy", "valid", {}, [])], canaries={0: read, 1: read})
    assert {(f.rule_id, f.tool) for f in found} == {("B1", "get_weather"), ("B3", "get_weather"), ("B3", "tidy")}
    b1 = next(f for f in found if f.rule_id == "B1")
    assert "read planted secrets" in b1.message and "~/.ssh/id_rsa" in b1.message


def test_argument_hosts_is_linear_on_hostile_strings():
    import time

    began = time.monotonic()
    argument_hosts({"u": "a." * 200_000, "v": ["b-" * 100_000 + ".invalid"] * 3})
    assert time.monotonic() - began < 2.0


def test_a_restarted_servers_start_up_egress_is_graded_as_start_up_once_per_host():
    tools = [_tool("kill_process", "Stops a process.", CLOSED)]
    records = [CallBehavior(call=-1, tool=None, label="start-up and listing", egress=[_dns("boot.vendor.invalid")]),
               CallBehavior(call=0, tool="kill_process", label="generated"),
               CallBehavior(call=-1, tool=None, label="start-up after restart 1", sandbox=1,
                            egress=[_dns("boot.vendor.invalid"), _dns("chrome.vendor.invalid")]),
               CallBehavior(call=1, tool="kill_process", label="error: missing required 'pid'", sandbox=1)]
    found = [f for f in evaluate_behavior(tools, [], records) if f.rule_id in ("B1", "B2")]
    assert [(f.tool, f.severity) for f in found] == [(None, "error"), (None, "error")]
    assert "boot.vendor.invalid during start-up and listing" in found[0].message
    assert "chrome.vendor.invalid during start-up after restart 1" in found[1].message


def test_a_connection_to_a_literal_address_is_that_addresss_whatever_name_it_claims():
    """The sink hands out 198.18.0.0/15 for the names it answers: a connection elsewhere went to an address in the
    server's code. Its Host header naming the asked-for host does not make it that host's."""
    from scanner.rules.egress import host_of

    claimed = {"kind": "tcp", "host": "probe.example.invalid", "http_host": "probe.example.invalid",
               "original_dst": "203.0.113.7:8443", "port": 8443}
    assert host_of(claimed) == "203.0.113.7:8443"
    assert host_of({**claimed, "original_dst": "[2001:db8:1::7]:443"}) == "[2001:db8:1::7]:443"
    # near misses: a connection to an address the sink answered a lookup with keeps its name
    assert host_of({**claimed, "original_dst": "198.18.4.2:8443"}) == "probe.example.invalid"
    assert host_of({**claimed, "original_dst": "203.0.113.7:8443", "resolved_name": "cdn.invalid"}) == "probe.example.invalid"


def test_an_answer_given_again_is_searched_for_planted_secrets_again_for_each_call() -> None:
    """The search of an answer is kept for the next call that gives the same one (a file read by three tools), and
    each call's record still gets the secret it answered."""
    from scanner.probes.egress_windows import canaries_in_response
    from scanner.report.model import CallBehavior

    planted = {"AKIAZZZZZZZZZZZZZZZZ": "~/.aws/credentials (aws_access_key_id)"}
    answer = "log line\n" * 1_000 + "key=AKIAZZZZZZZZZZZZZZZZ\n"
    first, second = (CallBehavior(call=n, tool="read", label="generated") for n in (0, 1))
    canaries_in_response(first, [answer], planted)
    canaries_in_response(second, [answer + ""], planted)
    canaries_in_response(second, [answer], planted)  # the same record again: each place and encoding once
    assert [(e.where, e.encoding) for e in first.canaries] == [("~/.aws/credentials (aws_access_key_id)", "plain")]
    assert [(e.where, e.encoding) for e in second.canaries] == [(e.where, e.encoding) for e in first.canaries]
    quiet = CallBehavior(call=2, tool="read", label="generated")
    canaries_in_response(quiet, ["log line\n" * 1_000], planted)  # near miss: no secret in it
    assert quiet.canaries == []
