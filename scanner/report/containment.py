"""What the terminal and Markdown views say about the sandbox's containment and the server's notifications, as
plain text rows (each view escapes them its own way: interface names and notification params came from the sandbox).

Containment is shown, not inferred: the egress sink container's own applied policy and its listener's identity, the
interfaces, addresses and routes of the server's network namespace, and what of it could lead off the host."""

from __future__ import annotations

from sandbox.run.netns import NetworkNamespace
from sandbox.run.policy import AppliedPolicy, SinkPolicy
from scanner.report.model import NotificationSeen, Report

MAX_NOTIFICATION_ROWS = 10
MAX_PARAMS_CHARS = 160
MAX_LISTED = 12  # addresses or routes on one row


def _listed(items: list[str]) -> str:
    more = len(items) - MAX_LISTED
    return ", ".join(items[:MAX_LISTED]) + (f" and {more} more" if more > 0 else "") if items else "none"


def _container(applied: AppliedPolicy) -> str:
    caps = f"cap_drop {_listed(applied.cap_drop)}, cap_add {_listed(applied.cap_add)}"
    flags = [f"network {applied.network_mode or '?'}", caps,
             "read-only root" if applied.read_only_rootfs else "WRITABLE root",
             "no-new-privileges" if applied.no_new_privileges else "no no-new-privileges",
             *(["PRIVILEGED"] if applied.privileged else []), f"user {applied.user or '(image default)'}",
             f"mounts {_listed(applied.mounts)}"]
    return ", ".join(flags)


def _listener(sink: SinkPolicy) -> str:
    caps = sink.listener_capabilities
    zero = bool(caps) and all(value.strip("0") == "" for value in caps.values())
    shown = "all zero" if zero else ", ".join(f"{name} {value}" for name, value in caps.items()) or "not reported"
    return (f"uid {sink.listener_uid if sink.listener_uid is not None else '?'}, capabilities {shown}"
            + (", no-new-privs" if sink.listener_no_new_privs else ""))


def _interfaces(namespace: NetworkNamespace) -> str:
    return "; ".join(f"{i.name} (sent {i.tx_bytes:,} B, received {i.rx_bytes:,} B)"
                     + (f": {_listed(i.ipv6)}" if i.ipv6 else "") for i in namespace.interfaces) or "none"


def _routes(namespace: NetworkNamespace) -> str:
    return _listed([f"{r.destination} " + (f"via {r.gateway} dev {r.device}" if r.gateway else f"dev {r.device}")
                    for r in namespace.routes])


def containment_rows(report: Report) -> list[tuple[str, str]]:
    """(label, text) rows: the sink's applied policy and listener, the namespace, and what leads off the host."""
    sandbox = report.sandbox
    if sandbox is None or (sandbox.sink is None and sandbox.namespace is None and sandbox.namespace_unread is None):
        return []
    rows: list[tuple[str, str]] = []
    if sandbox.sink is not None:
        rows += [("egress sink container", _container(sandbox.sink.applied)),
                 ("sink listener (after setup)", _listener(sandbox.sink))]
    elif sandbox.network == "none":
        rows.append(("egress sink", "none (network none: nothing answers)"))
    namespace = sandbox.namespace
    if namespace is None:
        rows.append(("server namespace", f"not read: {sandbox.namespace_unread or 'unknown why'}"))
        return rows
    rows += [("interfaces", _interfaces(namespace)), ("IPv4 addresses", _listed(namespace.ipv4)),
             ("routes", _routes(namespace))]
    rows.append(("off the host", "NOT CONTAINED: " + _listed(namespace.off_host) if namespace.off_host else
                 "no way: no interface but lo, no route to anything else"))
    return rows


def notification_rows(report: Report) -> tuple[list[NotificationSeen], int]:
    """The most frequent notification methods (at most MAX_NOTIFICATION_ROWS), and how many methods are left out."""
    ordered = sorted(report.notifications, key=lambda seen: (-seen.count, seen.method))
    return ordered[:MAX_NOTIFICATION_ROWS], max(0, len(ordered) - MAX_NOTIFICATION_ROWS)


def notification_total(report: Report) -> int:
    return sum(seen.count for seen in report.notifications)
