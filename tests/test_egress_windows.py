"""Egress attempts go to the call the sink accepted them during, however late a drain hands them out
(scanner/probes/egress_windows.py): the sink logs a TCP connection only once it read its first bytes, stamped with
the time it accepted it."""

from __future__ import annotations

import base64

from scanner.probes.egress_windows import MAX_DESTINATIONS_PER_RECORD, MAX_EGRESS_PER_RECORD, EgressWindows
from scanner.report.model import CallBehavior

TOKEN = "sk-canary-0123456789abcdef"


def _tcp(ts: float, host: str = "late.invalid", data: str = "") -> dict:
    return {"ts": ts, "kind": "tcp", "host": host, "port": 443, "first_bytes": data}


def _windows() -> tuple[EgressWindows, list[CallBehavior], list[str]]:
    behavior: list[CallBehavior] = []
    errors: list[str] = []
    return EgressWindows(behavior, {TOKEN: "HOME/.aws/credentials"}, errors), behavior, errors


def _record(call: int, sandbox: int = 0) -> CallBehavior:
    return CallBehavior(call=call, tool=None if call < 0 else f"t{call}", label="x", sandbox=sandbox)


def test_a_connection_logged_after_the_next_call_was_sent_is_still_the_earlier_calls():
    windows, behavior, _ = _windows()
    startup, first, second = _record(-1), _record(0), _record(1)
    windows.open(startup, float("-inf"))
    windows.place([], pending=startup)
    windows.open(first, 100.0)
    windows.place([_tcp(100.5, "first.invalid")], pending=first)
    behavior.append(first)
    windows.open(second, 101.0)
    # the second call's drain hands out first's slow connection (accepted at 100.9) beside its own
    windows.place([_tcp(100.9, "slow.invalid", base64.b64encode(TOKEN.encode()).decode()), _tcp(101.2, "own.invalid")],
                  pending=second)
    behavior.append(second)
    assert [e["host"] for e in first.egress] == ["first.invalid", "slow.invalid"]
    assert [e["host"] for e in second.egress] == ["own.invalid"]
    assert [(c.how, c.encoding) for c in first.canaries] == [("egress", "base64")] and not second.canaries
    assert behavior == [first, second]  # the start-up record had nothing: not kept


def test_a_start_up_attempt_drained_during_a_call_keeps_the_start_up_record_in_its_place():
    windows, behavior, _ = _windows()
    old_call, startup, call = _record(3, sandbox=0), _record(-1, sandbox=1), _record(4, sandbox=1)
    behavior.append(old_call)
    windows.open(old_call, 50.0)
    windows.open(startup, 60.0)  # the restart began at 60
    windows.place([_tcp(55.0, "dying.invalid")], pending=startup)  # the crashed call's, logged at the restart
    windows.open(call, 70.0)
    windows.place([_tcp(65.0, "boot.invalid"), _tcp(10.0, "ancient.invalid")], pending=call)
    assert [e["host"] for e in old_call.egress] == ["dying.invalid", "ancient.invalid"]
    assert [e["host"] for e in startup.egress] == ["boot.invalid"]
    assert behavior == [old_call, startup]  # kept, before its sandbox's calls (the runner appends `call` next)


def test_before_the_first_window_is_the_first_records_and_a_record_holds_at_most_the_cap():
    windows, _, errors = _windows()
    startup = _record(-1)
    windows.open(startup, 100.0)
    windows.place([_tcp(99.0 + i / 1000) for i in range(MAX_EGRESS_PER_RECORD + 5)]
                  + [{"kind": "dns", "query": "no-ts.invalid"}], pending=startup)
    # repeats of one host past the cap are not kept; an attempt to another host is
    assert len(startup.egress) == MAX_EGRESS_PER_RECORD + 1 and startup.egress[-1]["query"] == "no-ts.invalid"
    windows.place(RuntimeError("the sink is gone"))
    windows.place(None)
    assert errors == ["could not read the egress log: the sink is gone"]


def test_the_last_drain_keeps_a_start_up_record_that_had_nothing_when_it_was_made():
    # no call was made (nothing to probe): the runner's last drain finds a start-up connection logged late
    windows, behavior, _ = _windows()
    startup = _record(-1)
    windows.open(startup, float("-inf"))
    windows.place([], pending=startup)
    windows.place([_tcp(5.0, "boot.invalid")])
    assert behavior == [startup] and [e["host"] for e in startup.egress] == ["boot.invalid"]


def test_a_flood_to_one_host_does_not_push_another_host_out_of_the_record():
    """250 lookups of the asked-for host, then the secret to another: the record keeps the other host (B2 groups by
    host) and the canary is found in it."""
    windows, _, errors = _windows()
    call = _record(0)
    windows.open(call, 100.0)
    flood = [{"ts": 100.0 + i / 10_000, "kind": "dns", "query": "probe.example.invalid"} for i in range(250)]
    exfil = _tcp(100.5, "collector.exfil.invalid", base64.b64encode(TOKEN.encode()).decode())
    windows.place([*flood, exfil], pending=call)
    hosts = [event.get("host") or event.get("query") for event in call.egress]
    assert len(call.egress) == MAX_EGRESS_PER_RECORD + 1 and hosts[-1] == "collector.exfil.invalid"
    assert [c.how for c in call.canaries] == ["egress"]
    windows.finish()
    assert errors == []  # every host is in the record: nothing to say


def test_hosts_past_the_second_cap_are_counted_and_said_once():
    windows, _, errors = _windows()
    call = _record(0)
    windows.open(call, 100.0)
    windows.place([_tcp(100.0 + i / 10_000, f"h{i}.invalid") for i in range(MAX_DESTINATIONS_PER_RECORD + 3)],
                  pending=call)
    assert len(call.egress) == MAX_DESTINATIONS_PER_RECORD
    windows.finish()
    assert errors == [f"egress attempts to hosts not reported (over {MAX_DESTINATIONS_PER_RECORD} attempts in one "
                      "call's record): 3 during probe 'x' of 't0'; B2 may miss their hosts"]


def test_the_drain_hands_out_every_new_attempt_and_each_once():
    """Before, a drain handed out 200 and marked the rest as handed out: a flood pushed the real attempt out for good."""
    from sandbox.run.sink import EgressEvent
    from scanner.probes.egress_drain import EgressDrain

    class _Sink:
        logged = [EgressEvent(ts=100.0 + i / 1000, kind="dns", query=f"q{i}.invalid") for i in range(250)]

        def events(self, settled: bool = False) -> list[EgressEvent]:
            return list(self.logged)

    drain = EgressDrain(_Sink())  # type: ignore[arg-type]
    first = drain("server")
    assert len(first) == 250 and first[-1]["query"] == "q249.invalid"
    _Sink.logged.append(EgressEvent(ts=101.0, kind="tcp", host="collector.exfil.invalid"))
    assert [event["host"] for event in drain("server")] == ["collector.exfil.invalid"]


def test_a_token_hex_encoded_across_dns_labels_is_a_canary_in_the_lookup():
    windows, _, _ = _windows()
    call = _record(0)
    windows.open(call, 100.0)
    encoded = TOKEN.encode().hex()
    windows.place([{"ts": 100.1, "kind": "dns", "query": f"{encoded[:30]}.{encoded[30:]}.exfil.invalid"}], pending=call)
    assert [(c.how, c.encoding) for c in call.canaries] == [("egress", "hex")]
    windows.place([{"ts": 100.2, "kind": "dns", "query": "plain.exfil.invalid"}], pending=call)  # near miss
    assert len(call.canaries) == 1
