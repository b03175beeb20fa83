"""The report shows containment instead of asking the reader to infer it: the egress sink container's own applied
policy and listener identity, and the interfaces, addresses and routes of the server's network namespace (parsed from
/proc/net); and the server's notifications in the terminal and Markdown views. Pure: inspect documents and /proc
output as the engine and the kernel gave them on this machine (the live scan is the docker test at the end)."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from sandbox.run.netns import NETNS_FILES, NamespaceUnread, parse_namespace
from sandbox.run.policy import read_applied
from sandbox.run.sink import SINK_CAPABILITIES, SINK_UID, Sink
from scanner.report.markdown import to_markdown
from scanner.report.model import NotificationSeen, Report, SandboxInfo, TargetInfo
from scanner.report.terminal import render
from tests.sandbox_helpers import ZOO, run_cli

MARK = "\n@@MCP-SANDBOX-NETNS@@ "
# What NETNS_SCRIPT printed in a run container joined to a sink (kernel 5.x, this machine), trimmed.
OBSERVED = {
    "/proc/net/dev": "Inter-|   Receive      |  Transmit\n face |bytes    packets errs drop fifo frame compressed "
                     "multicast|bytes    packets\n    lo:     120       2    0    0    0     0          0         0"
                     "      120       2    0    0    0     0       0          0\n",
    "/proc/net/if_inet6": "20010db8000000000000000000000001 01 80 00 82       lo\n"
                          "00000000000000000000000000000001 01 80 10 80       lo\n",
    "/proc/net/fib_trie": """Main:
  +-- 0.0.0.0/0 3 0 5
     |-- 0.0.0.0
        /0 link UNICAST
     +-- 127.0.0.0/8 2 0 2
        +-- 127.0.0.0/31 1 0 0
           |-- 127.0.0.0
              /8 host LOCAL
           |-- 127.0.0.1
              /32 host LOCAL
        |-- 127.255.255.255
           /32 link BROADCAST
     +-- 198.18.0.0/15 2 0 2
        +-- 198.18.0.0/31 1 0 0
           |-- 198.18.0.0
              /15 host LOCAL
           |-- 198.18.0.1
              /32 host LOCAL
        |-- 198.19.255.255
           /32 link BROADCAST
Local:
  +-- 0.0.0.0/0 3 0 5
     +-- 127.0.0.0/8 2 0 2
           |-- 127.0.0.1
              /32 host LOCAL
""",
    "/proc/net/route": "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
                       "lo\t00000000\t00000000\t0001\t0\t0\t0\t00000000\t0\t0\t0\n",
    "/proc/net/ipv6_route": (
        "20010db8000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 "
        "00000100 00000001 00000000 00200200       lo\n"
        "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 "
        "00000400 00000001 00000000 00200200       lo\n"
        "00000000000000000000000000000001 80 00000000000000000000000000000000 00 00000000000000000000000000000000 "
        "00000000 00000003 00000000 80200001       lo\n"
        "00000000000000000000000000000000 00 00000000000000000000000000000000 00 00000000000000000000000000000000 "
        "ffffffff 00000001 00000000 00200200       lo\n"),
}
# A namespace with a way out: a Docker bridge interface and its default route via the gateway.
BRIDGED = {
    "/proc/net/dev": OBSERVED["/proc/net/dev"] + "  eth0:    5000      10    0    0    0     0          0         0"
                                                 "     7000      12    0    0    0     0       0          0\n",
    "/proc/net/fib_trie": "Main:\n     +-- 172.17.0.0/16 2 0 2\n        |-- 172.17.0.0\n           /16 link UNICAST\n"
                          "        |-- 172.17.0.2\n           /32 host LOCAL\n",
    "/proc/net/route": OBSERVED["/proc/net/route"].splitlines()[0] + "\n"
                       "eth0\t00000000\t010011AC\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
                       "eth0\t000011AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n",
}
SINK_INSPECT = {
    "HostConfig": {"NetworkMode": "none", "ReadonlyRootfs": True, "CapDrop": ["ALL"], "CapAdd": SINK_CAPABILITIES,
                   "SecurityOpt": ["no-new-privileges"], "PidsLimit": 64, "Memory": 64 * 2**20,
                   "MemorySwap": 64 * 2**20, "NanoCpus": 500_000_000, "RestartPolicy": {"Name": "no"}},
    "Config": {"User": "0:0", "Env": ["PATH=/usr/bin"], "Image": "mcp-sandbox-sink:1"}, "Image": "sha256:cd",
}
READY = {"kind": "ready", "uid": SINK_UID, "NoNewPrivs": "1",
         **{name: "0000000000000000" for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}}
EVIL = "evil\x1b]0;owned\x07\x1b[2J\u202e<!-- x --> @someone"


def _output(files: dict[str, str]) -> str:
    return "".join(f"{MARK}{name}\n{body}" for name, body in files.items())


def _sink_policy():
    return Sink(session=None, container_id="c" * 64, image="sink:1", start_seconds=0.2, ready=READY,  # type: ignore[arg-type]
                started_at=0.0, applied=read_applied(SINK_INSPECT)).policy()


def _report(**sandbox) -> Report:
    return Report(target=TargetInfo(kind="npm", name="demo", requested="npm:demo"),
                  sandbox=SandboxInfo(session="s1", network="observe", **sandbox))


def _terminal(report: Report) -> str:
    out = io.StringIO()
    render(report, Console(file=out, width=200, force_terminal=False, color_system=None))
    return out.getvalue()


# ---- extraction -----------------------------------------------------------------------------------------------------

def test_the_sink_namespace_is_only_lo_with_the_sink_addresses_and_routes_to_lo():
    namespace = parse_namespace(_output(OBSERVED))
    assert [(i.name, i.tx_bytes, i.rx_bytes, i.ipv6) for i in namespace.interfaces] == [
        ("lo", 120, 120, ["2001:db8::1/128", "::1/128"])]
    assert namespace.ipv4 == ["127.0.0.1/8", "198.18.0.1/15"]
    # the kernel's local-table entries and its catch-all null route are not configured routes
    assert [(r.family, r.destination, r.device, r.gateway) for r in namespace.routes] == [
        ("ipv4", "0.0.0.0/0", "lo", None), ("ipv6", "2001:db8::1/128", "lo", None), ("ipv6", "::/0", "lo", None)]
    assert namespace.off_host == []


def test_an_interface_or_a_gateway_off_the_host_is_named():
    namespace = parse_namespace(_output({**OBSERVED, **BRIDGED}))
    assert [i.name for i in namespace.interfaces] == ["lo", "eth0"] and namespace.ipv4 == ["172.17.0.2/16"]
    assert namespace.off_host == ["interface eth0", "route 0.0.0.0/0 via 172.17.0.1", "route 172.17.0.0/16 via eth0"]


def test_output_without_the_interface_list_is_not_a_namespace():
    with pytest.raises(NamespaceUnread):
        parse_namespace("sh: 1: cannot open /proc/net/dev\n")
    assert set(OBSERVED) == set(NETNS_FILES)  # the fixture covers every file the exec prints


def test_the_sink_policy_is_the_applied_container_and_the_dropped_listener():
    policy = _sink_policy()
    assert policy is not None
    assert (policy.applied.network_mode, policy.applied.cap_drop, policy.applied.cap_add) == (
        "none", ["ALL"], SINK_CAPABILITIES)
    assert policy.applied.read_only_rootfs and policy.applied.no_new_privileges and policy.applied.user == "0:0"
    assert policy.listener_uid == SINK_UID and policy.listener_no_new_privs
    assert set(policy.listener_capabilities.values()) == {"0000000000000000"}
    assert Sink(None, "c", "i", 0, READY, 0).policy() is None  # type: ignore[arg-type]  # nothing read back: none


def test_the_containment_round_trips_through_the_report_json():
    report = _report(sink=_sink_policy(), namespace=parse_namespace(_output(OBSERVED)))
    again = Report.model_validate_json(report.model_dump_json())
    assert again.sandbox == report.sandbox
    dumped = json.loads(report.model_dump_json())["sandbox"]
    assert dumped["sink"]["applied"]["cap_add"] == SINK_CAPABILITIES and dumped["namespace"]["off_host"] == []


# ---- views ----------------------------------------------------------------------------------------------------------

def test_terminal_and_markdown_show_the_sink_policy_and_the_namespace():
    report = _report(sink=_sink_policy(), namespace=parse_namespace(_output(OBSERVED)))
    text, markdown = _terminal(report), to_markdown(report)
    for view in (text, markdown.replace("\\", "").replace("&#8203;", "")):  # md()'s escapes, zero-width spaces
        assert "network none, cap_drop ALL, cap_add NET_ADMIN, SETGID, SETPCAP, SETUID, read-only root" in view
        assert "uid 10003, capabilities all zero, no-new-privs" in view
        assert "lo (sent 120 B, received 120 B): 2001:db8::1/128, ::1/128" in view
        assert "127.0.0.1/8, 198.18.0.1/15" in view and "0.0.0.0/0 dev lo" in view
        assert "no way: no interface but lo" in view
    bridged = _report(namespace=parse_namespace(_output({**OBSERVED, **BRIDGED})))
    assert "NOT CONTAINED: interface eth0, route 0.0.0.0/0 via 172.17.0.1" in _terminal(bridged)


def test_a_namespace_that_could_not_be_read_says_so():
    report = _report(namespace_unread="could not read the server's network namespace: the container is gone")
    assert "server namespace  not read: could not read" in _terminal(report)
    assert "Containment" not in _terminal(Report(target=report.target))  # no sandbox: no section


def test_notifications_are_shown_by_method_escaped_and_capped():
    seen = [NotificationSeen(method="notifications/tools/list_changed", count=3),
            NotificationSeen(method="notifications/message", count=40, first_params='{"data": "' + EVIL + '"}'),
            *(NotificationSeen(method=f"notifications/x{i}", count=1) for i in range(12))]
    report = Report(target=TargetInfo(kind="npm", name="demo", requested="npm:demo"), notifications=seen)
    text, markdown = _terminal(report), to_markdown(report)
    assert "Notifications (55 notifications)" in text
    lines = text.splitlines()
    first = lines.index("Notifications (55 notifications)")
    assert lines[first + 1].startswith("  notifications/message ×40  first params:")
    assert "notifications/tools/list_changed ×3" in lines[first + 2] and "… 4 more methods (see --json)" in text
    assert "\x1b" not in text and "\u202e" not in text and "\\e]0;owned" in text
    assert "**Notifications** (55 notifications from the server)" in markdown
    assert "notifications/tools/list\\_changed ×3" in markdown and "…and 4 more methods" in markdown
    assert "<!--" not in markdown and "@someone" not in markdown and "\x1b" not in markdown
    assert "Notifications" not in _terminal(Report(target=report.target))


# ---- a real scan ----------------------------------------------------------------------------------------------------

@pytest.mark.docker
def test_a_real_scan_reports_the_sink_policy_the_namespace_and_what_became_of_each_attempt(no_leftovers):
    done = run_cli("scan", str(ZOO), "--command", "zoo-probe-egress", "--json", "-", "--fail-on", "never",
                   "--probe-timeout", "3", "--startup-timeout", "20")
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    sandbox = report["sandbox"]
    sink = sandbox["sink"]
    assert (sink["applied"]["network_mode"], sink["applied"]["cap_drop"], sink["applied"]["cap_add"]) == (
        "none", ["ALL"], SINK_CAPABILITIES)
    assert sink["applied"]["read_only_rootfs"] and sink["applied"]["no_new_privileges"]
    assert sink["listener_uid"] == SINK_UID and set(sink["listener_capabilities"].values()) == {"0000000000000000"}
    namespace = sandbox["namespace"]
    assert [i["name"] for i in namespace["interfaces"]] == ["lo"] and namespace["off_host"] == []
    assert "198.18.0.1/15" in namespace["ipv4"] and "127.0.0.1/8" in namespace["ipv4"]
    assert {"family": "ipv4", "destination": "0.0.0.0/0", "device": "lo", "gateway": None} in namespace["routes"]
    assert sandbox["applied"]["network_mode"] == f"container:{sandbox['applied']['network_mode'][10:]}"
    b2 = {f["message"].split()[4]: f["message"] for f in report["findings"] if f["rule_id"] == "B2"}
    telemetry = b2["telemetry.zoo-vendor.invalid"]  # get_time: a lookup, then an HTTP GET on port 80
    assert "DNS A lookup answered by the sink with a sink address (198.18." in telemetry, telemetry
    assert ":80 accepted by the sink (" in telemetry and "an HTTP request; nothing sent back, then closed" in telemetry
    assert all(m.endswith("nothing left the host.") for m in b2.values()), b2
    b1 = [f["message"] for f in report["findings"] if f["rule_id"] == "B1" and "network" in f["message"]]
    assert b1 and "answered by the sink" in b1[0] and b1[0].endswith("nothing left the host.")
