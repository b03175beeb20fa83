"""Reading the egress sink's count of other protocols (sandbox/run/sink_other.py): `nft -j` output, as the sink's
nftables writes it, and hostile or odd shapes. The live check is tests/test_hidden_behaviour_live.py (ping_relay)."""

from __future__ import annotations

from sandbox.run.sink_other import SET_SIZE, _elements
from scanner.rules.egress import egress_findings

MEASURED = {"nftables": [
    {"metainfo": {"version": "1.1.3", "json_schema_version": 1}},
    {"set": {"family": "inet", "name": "other4", "table": "mcp_sink", "type": ["ipv4_addr", "inet_proto"],
             "size": 256, "flags": ["dynamic"], "elem": [{"concat": ["198.18.1.7", "icmp"]},
                                                         {"concat": ["198.18.1.8", "udplite"]}]}},
    {"set": {"family": "inet", "name": "other6", "table": "mcp_sink", "size": 256}},
    {"chain": {"family": "inet", "table": "mcp_sink", "name": "output"}},
]}


def test_each_destination_and_protocol_is_an_attempt():
    events, full = _elements(MEASURED)
    assert events == [{"kind": "other", "protocol": "icmp", "original_dst": "198.18.1.7"},
                      {"kind": "other", "protocol": "udplite", "original_dst": "198.18.1.8"}] and not full
    (finding,) = egress_findings(events[:1], during="during the scan")
    assert finding.rule_id == "B2" and finding.severity == "error"
    assert "icmp packet to 198.18.1.7, counted by the sink's firewall" in finding.message


def test_a_full_set_and_odd_shapes():
    many = {"nftables": [{"set": {"name": "other6", "elem": [{"elem": {"val": {"concat": [f"2001:db8::{n:x}", "icmp"]}}}
                                                             for n in range(SET_SIZE)]}}]}
    events, full = _elements(many)
    assert full and len(events) == SET_SIZE and events[0]["original_dst"] == "2001:db8::0"
    for odd in (None, [], {"nftables": "x"}, {"nftables": [{"set": {"name": "other4", "elem": [1, {"concat": "x"}]}}]},
                {"nftables": [{"set": {"name": "elsewhere", "elem": [{"concat": ["a", "b"]}]}}]}):
        assert _elements(odd) == ([], False)
