"""B2 egress-attempt, and the network half of B1: whom a tool's calls tried to reach, weighed against what the tool
declares and what the scanner itself asked it to reach.

The sink logs every lookup and connection; the runner hands each call its share (`CallBehavior.egress`). Here the
attempts are grouped into one finding per tool and host, with the calls that made them listed, and graded:

- info: the host was in the arguments of the call (or of an earlier call): the tool reached what it was asked to
  reach, such as the scanner's own `probe.example.invalid` — never the tool's unexplained egress;
- warning: the tool declares an open world (`openWorldHint: true`, or no openWorldHint at all, MCP's default), or its
  description names the host;
- error: the call's traffic carried a planted secret, or the tool declares a closed world (`openWorldHint: false`, or
  `readOnlyHint: true` without `openWorldHint: true`); and every attempt at start-up or outside any call.

A closed-world tool that reached a host nobody gave it is also B1: its annotations understate what it does.
Every B2 message, and the network B1 one, says what became of the attempts as the sink logged them (a DNS lookup
answered with a sink address or with no records; a TCP connect accepted, its first bytes read, nothing sent back,
then closed; one refused, closed unread, over the sink's connection limit; a UDP datagram taken, not answered), and
that nothing left the host.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sandbox.core.untrusted import cap_text
from scanner.probes.model import ProbeResult
from scanner.probes.tooldef import annotation, tool_description, tool_name
from scanner.report.model import CallBehavior, Finding, Severity
from scanner.rules.registry import rule

MAX_CALLS_IN_MESSAGE = 5
MAX_ARGUMENT_STRINGS = 500
# A DNS name inside any text: labels of letters, digits and hyphens, at least one dot, a top label of letters.
_HOST_IN_TEXT = re.compile(r"(?<![a-z0-9.-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}(?![a-z0-9-])")


# ---- what a call was asked to reach ---------------------------------------------------------------------------------

def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value, keys included (iteratively, bounded)."""
    stack, seen = [value], 0
    while stack and seen < MAX_ARGUMENT_STRINGS:
        item = stack.pop()
        if isinstance(item, str):
            seen += 1
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def argument_hosts(arguments: dict[str, Any]) -> set[str]:
    """The host names in a call's arguments: in URLs (any scheme), e-mail addresses and bare names."""
    return {match.group(0) for text in _strings(arguments) for match in _HOST_IN_TEXT.finditer(text.lower())}


def host_of(event: dict[str, Any]) -> str:
    """The best name of an attempt: the name asked for or sent (query, SNI, HTTP Host), else the address. A
    connection to an address the sink's DNS did not hand out (a literal address in the server's code) is that
    address's, whatever name its SNI or Host claims: else a server could send its secrets to a hard-coded address
    under the name it was asked to reach (B2 would grade that as asked)."""
    keys = ("host", "sni", "query", "resolved_name", "original_dst")
    if event.get("kind") == "tcp" and not event.get("resolved_name") and _literal(event.get("original_dst")):
        keys = ("original_dst",)
    for key in keys:
        value = event.get(key)
        if value:
            return str(value).lower().rstrip(".")
    return "?"


SINK_ANSWERS = {4: ipaddress.ip_network("198.18.0.0/15"), 6: ipaddress.ip_network("2001:db8::/96")}  # sink_wire's


def _literal(destination: Any) -> bool:
    """An `address:port` (`[v6]:port`) outside the sink's own answers (198.18.0.0/15, 2001:db8::/96)."""
    if not isinstance(destination, str) or not destination:
        return False
    address = destination.rsplit(":", 1)[0].strip("[]")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return False
    return parsed not in SINK_ANSWERS[parsed.version]


# ---- what the tool declares -----------------------------------------------------------------------------------------

def closed_world(tool: dict[str, Any] | None) -> str | None:
    """Why a tool's annotations promise no network: the annotation that says so, or None."""
    if tool is None:
        return None
    if annotation(tool, "openWorldHint") is False:
        return "openWorldHint: false"
    if annotation(tool, "readOnlyHint") is True and annotation(tool, "openWorldHint") is not True:
        return "readOnlyHint: true without openWorldHint: true"
    return None


def open_world(tool: dict[str, Any] | None, host: str) -> str | None:
    """Why reaching `host` fits what the tool declares (None when it does not)."""
    if tool is None or closed_world(tool) is not None:
        return None
    if _named_in(tool, host):
        return "its description names the host"
    if annotation(tool, "openWorldHint") is True:
        return "it declares openWorldHint: true"
    return "it sets no openWorldHint, and MCP's default is an open world"


def _named_in(tool: dict[str, Any], host: str) -> bool:
    """The host, or the name under its public suffix (duckduckgo of html.duckduckgo.com), is a word of the text."""
    title = tool.get("title")
    text = f"{tool_description(tool)} {title if isinstance(title, str) else ''}".lower()
    labels = [label for label in host.split(".") if label]
    candidates = {host, *(labels[-2:-1] if len(labels) >= 2 else [])}
    return any(len(name) >= 4 and re.search(rf"(?<![a-z0-9]){re.escape(name)}(?![a-z0-9])", text)
               for name in candidates)


# ---- what became of it ----------------------------------------------------------------------------------------------

MAX_FATES = 4
_PROTOCOL_SEEN = {"tls": "a TLS ClientHello", "http": "an HTTP request", "unknown": "unrecognised bytes"}


def fate(event: dict[str, Any]) -> str:
    """What the sink did with one attempt, as precisely as its log says (see images/sink/listener.py)."""
    kind, note = str(event.get("kind")), str(event.get("note") or "")
    if kind == "dns":
        via = "DNS-over-TCP" if event.get("transport") == "tcp" else "DNS"
        lookup = f"{via} {event.get('qtype') or '?'} lookup"
        answer = event.get("answer")
        return (f"{lookup} answered by the sink with a sink address ({answer})" if answer
                else f"{lookup} answered by the sink with no records")
    read = event.get("bytes_read") if isinstance(event.get("bytes_read"), int) else 0
    if kind == "other":
        return (f"{event.get('protocol') or '?'} packet to {event.get('original_dst') or '?'}, counted by the sink's "
                "firewall (no listener: not answered, its payload not read)")
    if kind == "tcp":
        where = event.get("original_dst") or (f":{event['port']}" if isinstance(event.get("port"), int) else None)
        connect = f"TCP connect to {where}" if where else "a TCP connect"
        if "closed unread" in note:
            return f"{connect} refused: the sink closed it unread (over its concurrent-connection limit)"
        if note.startswith("sink error"):
            return f"{connect} accepted by the sink and closed after an error reading it"
        seen = _PROTOCOL_SEEN.get(str(event.get("protocol")))
        what = f"{read} bytes read" + (f", {seen}" if seen and read else "")
        return f"{connect} accepted by the sink ({what}; nothing sent back, then closed)"
    return f"UDP datagram ({read} bytes) taken by the sink, not answered"


def outcome(events: Iterable[dict[str, Any]]) -> str:
    """What the sink did with the attempts (the first few distinct fates), and that nothing left the host."""
    fates = list(dict.fromkeys(fate(event) for event in events))
    shown = "; ".join(fates[:MAX_FATES])
    more = len(fates) - MAX_FATES
    return shown + (f"; and {more} more" if more > 0 else "") + "; nothing left the host"


def _detail(events: list[dict[str, Any]]) -> str:
    kinds = sorted({str(e.get("protocol") if e.get("kind") == "other" else e.get("kind")) for e in events})
    ports = sorted({int(e["port"]) for e in events if isinstance(e.get("port"), int) and e.get("kind") != "dns"})
    seen = [f"{e['method']} {e.get('path') or ''}".strip() for e in events if e.get("method")]
    return (", ".join(kinds) + (f" to port {', '.join(map(str, ports))}" if ports else "")
            + (f", {', '.join(sorted(set(seen))[:3])}" if seen else ""))


def _evidence(events: list[dict[str, Any]]) -> str:
    return cap_text("; ".join(str(e) for e in events[:5]), 1_000)


def _finding(rule_id: str, tool: str | None, message: str, severity: Severity, evidence: str) -> Finding:
    return rule(rule_id).finding(tool, cap_text(message, 1_000), severity=severity, evidence=evidence)


def start_up_egress(behavior: list[CallBehavior]) -> list[dict[str, Any]]:
    """The attempts recorded outside any call (the probe phase's start-up and listing record)."""
    return [event for record in behavior if record.tool is None for event in record.egress]


def new_hosts(events: list[dict[str, Any]], reported: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events whose host is not among the `reported` ones' (one finding per host)."""
    seen = {host_of(event) for event in reported}
    return [event for event in events if host_of(event) not in seen]


def egress_findings(events: list[dict[str, Any]], *, during: str, tool: str | None = None) -> list[Finding]:
    """B2 errors for attempts no call explains (start-up, or outside any call): one finding per host."""
    by_host: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_host.setdefault(host_of(event), []).append(event)
    return [_finding("B2", tool, f"A network attempt to {host} {during} ({_detail(seen)}): {outcome(seen)}.",
                     Severity.ERROR, _evidence(seen)) for host, seen in by_host.items()]


# ---- per tool and host ----------------------------------------------------------------------------------------------

@dataclass
class _Attempts:
    """Every call of one tool that tried one host."""

    tool: str
    host: str
    labels: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    asked: bool = True  # the host was in the arguments of every call that reached it (or of one before it)
    carried_canary: bool = False

    def calls(self) -> str:
        shown = ", ".join(f"'{label}'" for label in self.labels[:MAX_CALLS_IN_MESSAGE])
        more = len(self.labels) - MAX_CALLS_IN_MESSAGE
        count = f"{len(self.labels)} call" + ("s" if len(self.labels) != 1 else "")
        return f"{count} ({shown}" + (f" and {more} more" if more > 0 else "") + ")"


def _group(results: list[ProbeResult], records: list[CallBehavior]) -> list[_Attempts]:
    groups: dict[tuple[str, str], _Attempts] = {}
    given: set[str] = set()  # every host any call so far was given, in this session
    for record in records:
        if record.call < 0 or record.tool is None or not record.egress:
            continue
        result = results[record.call] if record.call < len(results) else None
        given |= argument_hosts(result.arguments) if result is not None else set()
        canary = any(event.how == "egress" for event in record.canaries)
        for host in dict.fromkeys(host_of(event) for event in record.egress):
            group = groups.setdefault((record.tool, host), _Attempts(record.tool, host))
            group.labels.append(record.label)
            group.events.extend(event for event in record.egress if host_of(event) == host)
            group.asked = group.asked and host in given
            group.carried_canary = group.carried_canary or canary
    return list(groups.values())


def _graded(attempt: _Attempts, tool: dict[str, Any] | None) -> tuple[Severity, str]:
    if attempt.carried_canary:
        return Severity.ERROR, "its traffic carried a planted secret"
    if attempt.asked:
        return Severity.INFO, f"it reached the host it was asked to reach ({attempt.host}, from the arguments)"
    closed = closed_world(tool)
    if closed is not None:
        return Severity.ERROR, f"the host was in no argument, and the tool is annotated {closed}"
    declared = open_world(tool, attempt.host)
    return Severity.WARNING, f"the host was in no argument; {declared or 'the tool declares nothing about it'}"


def tool_egress_findings(tools: list[dict[str, Any]], results: list[ProbeResult],
                         records: list[CallBehavior]) -> list[Finding]:
    """B2 (one per tool and host, graded) and B1 for closed-world tools that reached a host nobody gave them."""
    by_name = {tool_name(tool): tool for tool in tools}
    findings: list[Finding] = []
    dishonest: dict[str, list[_Attempts]] = {}
    for attempt in _group(results, records):
        tool = by_name.get(attempt.tool)
        severity, why = _graded(attempt, tool)
        findings.append(_finding(
            "B2", attempt.tool, f"A network attempt to {attempt.host} by tool '{attempt.tool}' in {attempt.calls()} "
            f"({_detail(attempt.events)}): {why}. What became of it: {outcome(attempt.events)}.", severity,
            _evidence(attempt.events)))
        if not attempt.asked and closed_world(tool) is not None:
            dishonest.setdefault(attempt.tool, []).append(attempt)
    findings.extend(_dishonest(name, by_name.get(name), attempts) for name, attempts in dishonest.items())
    return findings


def _dishonest(name: str, tool: dict[str, Any] | None, attempts: list[_Attempts]) -> Finding:
    """B1: a closed-world tool's calls reached hosts nobody gave them; the hosts and what became of the attempts."""
    hosts = [attempt.host for attempt in attempts]
    more = len(hosts) - MAX_CALLS_IN_MESSAGE
    events = [event for attempt in attempts for event in attempt.events]
    return _finding(
        "B1", name, f"Tool '{name}' is annotated {closed_world(tool)} but its calls tried to reach "
        f"{', '.join(hosts[:MAX_CALLS_IN_MESSAGE])}" + (f" and {more} more" if more > 0 else "")
        + f" over the network. What became of it: {outcome(events)}.", Severity.ERROR, ", ".join(hosts[:20]))
