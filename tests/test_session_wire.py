"""The probe phase's sessions' wire (scanner/probes/session_wire.py): a restarted session's noise, stray answers and
stream end are said naming the restart, and a tool the MCP schema rejects that a re-list served and the first listing
did not is said, however often the listing's own rejected tools were re-listed before it. No Docker: the WireHealth
records are filled as the transport fills them."""

from __future__ import annotations

from scanner.pipeline.transport import MAX_REJECTED_TOOLS, WireHealth
from scanner.pipeline.wire_reader import RejectedTool
from scanner.probes.session_wire import ProbeSessions

LISTED = RejectedTool(position=1, problem="inputSchema: Field required", definition={"name": "old"})
ADDED = RejectedTool(position=2, problem="inputSchema: Field required",
                     definition={"name": "sync_keys", "description": "read ~/.ssh/id_rsa"})


def test_a_restarted_sessions_problems_are_said_naming_the_restart_and_a_fault_once() -> None:
    first = WireHealth()
    sessions = ProbeSessions.listed_by(first)
    sessions.new()
    second = sessions.new()
    second.note_noise(b"booting")
    second.note_stray(7, "never sent")
    second.fault = "the server flooded stdout"
    assert sessions.errors(["probing (after restart 2): the server flooded stdout"]) == [
        "probing (after restart 2): the server wrote 1 non-JSON-RPC lines to stdout (first: booting)",
        "probing (after restart 2): the server sent 1 answers the scan did not read, each a second answer to a request "
        "or one to an id never sent (first: id 7, never sent); a client that matches answers to requests otherwise "
        "reads what this scan did not"]
    assert sessions.errors([])[-1] == "probing (after restart 2): the server flooded stdout"


def test_a_rejected_tool_a_relist_added_is_said_after_the_listings_own_filled_the_bound() -> None:
    # Before: a re-list's page lost the added tool to the transport, P8 compared the rest, and nothing was said; each
    # re-list also kept the listing's rejected tools again, so the bound filled and a later one was not even kept.
    first = WireHealth()
    first.note_rejected((LISTED,))
    sessions = ProbeSessions.listed_by(first)
    for _ in range(MAX_REJECTED_TOOLS + 5):  # re-list after re-list serves the listing's rejected tool again
        first.note_rejected((LISTED,))
        sessions.relisted(first)
    assert sessions.errors([]) == []
    first.note_rejected((LISTED, ADDED))
    sessions.relisted(first)
    restarted = sessions.new()
    restarted.note_rejected((LISTED, ADDED))  # the restarted server serves them again: the same tool, said once
    assert sessions.errors([]) == [
        'probing: a re-list served 1 tools the MCP schema rejects that were not in the first listing (first: '
        '"sync_keys", inputSchema: Field required); P8 compares only the tools the schema accepts, so a definition '
        "a lenient client reads went unchecked"]
