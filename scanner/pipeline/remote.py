"""`scan --url`: a remote Streamable HTTP server, scanned without a sandbox (it runs on someone else's machine).

    target (remote_target) → list and probe over Streamable HTTP (inventory.collect_over; probes.remote_runner)
    → served definitions (served) → lint → probe findings (probes.phase.summarize)
    → conformance (pipeline.conformance.check_remote_conformance) → assemble → redact

The same listing, lint, probe planning and assembly as a sandboxed scan; what needs the sandbox is not run and says
so (Skipped records: install and provenance "not applicable: remote", run "NOT sandboxed", behaviour rules, the
second listing "not available: remote"). Conformance runs over HTTP to the live endpoint (json-schema-dialect always;
the --spec-version/--spec wire checks, read-only, with --spec the HTTP-only W14-W17). The HTTP client sends the given headers, follows a redirect
only within the endpoint's origin (the SDK's rule), and over plain http:// ignores the proxy variables. The report is
redacted last: every secret value a server echoed becomes `[redacted]`, and the URL never appears (scheme, host and
`endpoint_sha256` do)."""

from __future__ import annotations

import logging
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import StreamableHTTPError, streamable_http_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from scanner.pipeline.assemble import ScanParts, assemble
from scanner.pipeline.client_identity import DEFAULT as CLIENT_IDENTITY
from scanner.pipeline.conformance import check_remote_conformance
from scanner.pipeline.inventory import RECORDED, AfterListing, Inventory, collect_over
from scanner.pipeline.lint import lint
from scanner.pipeline.listing import Listing
from scanner.pipeline.remote_body import IDENTITY, capper
from scanner.pipeline.remote_scrub import scrubbed
from scanner.pipeline.remote_status import HttpRefusals
from scanner.pipeline.remote_target import RemoteTarget, redact
from scanner.pipeline.scan_options import Progress, ScanOptions
from scanner.pipeline.served import served_definitions
from scanner.pipeline.transport import WireHealth
from scanner.probes import phase as probe_phase
from scanner.probes.remote_runner import probe_remote
from scanner.report.model import RemoteInfo, Report, ServerInfo, Skipped, TargetInfo

# What a remote session's end looks like besides the stdio ones: the HTTP layer's errors.
CLOSED = (httpx2.HTTPError, StreamableHTTPError)
NOT_SANDBOXED = ("NOT sandboxed: a remote server runs on someone else's machine; nothing contained or observed it "
                 "(only tools annotated read-only are called unless --allow-writes)")
NOT_RUN = (("install", "not applicable: remote (nothing is installed)"),
           ("provenance", "not applicable: remote (no package to check)"),
           ("run", NOT_SANDBOXED),
           ("relisting", "not available: remote (a second listing needs a fresh server under another client)"),
           ("behavior", "not available: remote (the B rules need the sandbox: files, processes, egress, canaries)"))


def run_remote_scan(remote: RemoteTarget, options: ScanOptions, *, allow_writes: bool = False,
                    progress: Progress = lambda _: None) -> Report:
    with _sdk_logs_off_the_terminal():
        return _scan(remote, options, allow_writes, _redacting(progress, remote))


def _scan(remote: RemoteTarget, options: ScanOptions, allow_writes: bool, progress: Progress) -> Report:
    began = time.monotonic()
    info = RemoteInfo(scheme=remote.scheme, host=remote.host, endpoint_sha256=remote.endpoint_sha256(),  # type: ignore[arg-type]
                      headers=sorted(remote.headers), secret_headers=sorted(remote.secrets), allow_writes=allow_writes)
    target = TargetInfo(kind="remote", name=remote.host, requested=remote.origin(), remote=info)
    parts = ScanParts(target=target, probes_enabled=options.probes.enabled,
                      not_run=[Skipped(stage=stage, reason=reason, chosen=True) for stage, reason in NOT_RUN])  # type: ignore[arg-type]
    parts.stage = "listing"
    health = WireHealth()
    progress("listing tools")
    inventory, probed = anyio.run(_session, remote, options, allow_writes, health, progress)
    parts.listing = Listing(inventory=inventory, health=health, probed=probed, stderr="", stderr_truncated=False,
                            exit_code=None)
    parts.served = served_definitions(inventory, health, None)
    parts.stage = "lint"
    parts.lint = lint(inventory)
    parts.stage = "probes"
    parts.probes = probe_phase.summarize(probed)
    if inventory.connected and inventory.first_tools_list_seconds is not None:
        parts.stage = "conformance"
        parts.conformance = check_remote_conformance(lambda: http_client(remote, options), remote.url, inventory,
                                                     options.conformance, options.timeouts, progress)
    parts.total_seconds = round(time.monotonic() - began, 3)
    return redacted(assemble(parts, options.config), remote)


async def _session(remote: RemoteTarget, options: ScanOptions, allow_writes: bool, health: WireHealth,
                   progress: Progress) -> tuple[Inventory, probe_phase.ProbePhaseResult]:
    """One MCP session over Streamable HTTP: list everything, then (unless --no-probes) probe."""
    probed = probe_phase.ProbePhaseResult(options=options.probes)

    async def after(client: Any, inventory: Inventory) -> None:
        probed.tools = list(inventory.tools)
        probed.outcome = await probe_remote(client, inventory.tools, options.probes, allow_writes=allow_writes,
                                            closed=CLOSED, progress=progress)

    hook = AfterListing(run=after) if options.probes.enabled else None
    refusals = HttpRefusals()
    async with http_client(remote, options, refusals) as http:
        transport = streamable_http_client(remote.url, http_client=http, terminate_on_close=True)
        inventory = await collect_over(lambda handler: sdk_client(transport, options.timeouts.startup, handler), health,
                                       options.timeouts, time.monotonic(), hook, recorded=(*RECORDED, *CLOSED),
                                       answered=(MCPError,))
    inventory.errors = [refusals.explained(error) for error in inventory.errors]
    if probed.outcome is not None and (line := refusals.calls_line()) is not None:
        probed.outcome.errors.append(line)
    return inventory, probed


def sdk_client(transport: Any, read_timeout: float, message_handler: Any) -> Client:
    """The SDK's client over a remote transport: `auto` negotiation, no response cache (every listing is asked of the
    server), as the default client identity (never the scanner's own name)."""
    return Client(transport, mode="auto", read_timeout_seconds=read_timeout,
                  client_info=CLIENT_IDENTITY.implementation(), cache=None, message_handler=message_handler)


@contextmanager
def _sdk_logs_off_the_terminal() -> Iterator[None]:
    """The SDK logs what a server sent as warnings and errors (an unfollowed redirect's Location, which may echo a
    secret header; an unparsable body, with its traceback), and with no logging set up Python prints them to stderr
    as they are: unredacted and unescaped. Each such failure is in the report (redacted), so the SDK's records are
    dropped while the remote scan runs."""
    logger = logging.getLogger("mcp")
    handler, propagate = logging.NullHandler(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _redacting(progress: Progress, remote: RemoteTarget) -> Progress:
    """`progress` with every secret value replaced, then cut to one line of 120 characters (never before: a secret
    cut short would no longer be found whole): a step may name a tool whose name holds a secret the server echoed."""
    return lambda step: progress(redact(step, remote)[0][:120])


def http_client(remote: RemoteTarget, options: ScanOptions, refusals: HttpRefusals | None = None) -> httpx2.AsyncClient:
    """The client the transport uses: the headers; no redirects of its own (the SDK follows same-origin ones only);
    plain http:// never through a proxy from the environment; every response body bounded (remote_body); each bare
    HTTP error status noted in `refusals` (remote_status)."""
    verify: ssl.SSLContext | bool = True
    if options.ca_bundle is not None and remote.scheme == "https":
        verify = ssl.create_default_context(cafile=str(options.ca_bundle))
    timeout = httpx2.Timeout(options.timeouts.startup, read=max(options.timeouts.startup, options.probes.timeout))
    return httpx2.AsyncClient(headers={**IDENTITY, **remote.all_headers()}, timeout=timeout, follow_redirects=False,
                              trust_env=remote.scheme == "https", verify=verify,
                              event_hooks={"response": [capper(), *([refusals.record] if refusals else [])]})


def redacted(report: Report, remote: RemoteTarget) -> Report:
    """The report with every secret value (and the URL) replaced, counted in `target.remote`: in its JSON text, keys
    and all; when a secret is one of the report's own words (the text no longer reads back), in its string values
    (remote_scrub)."""
    text, found = redact(report.model_dump_json(), remote)
    try:
        clean = Report.model_validate_json(text)
    except ValidationError:
        clean, found = scrubbed(report, remote)
    in_definitions = 0
    served = report._served  # noqa: SLF001 - the uncapped definitions (and server) the lock fingerprints
    if served is not None:
        clean._served, in_definitions = _redacted_served(served, remote)  # noqa: SLF001
    assert clean.target.remote is not None
    clean.target.remote.secrets_echoed = found
    clean.target.remote.secrets_in_definitions = in_definitions > 0 or _in_definitions(report, remote)
    return clean


def _redacted_served(served: dict[str, Any], remote: RemoteTarget) -> tuple[dict[str, Any], int]:
    """The uncapped definitions with every secret value replaced, and how many were: the server's identity (a
    ServerInfo, whose instructions may echo a secret too) goes through as JSON and comes back as a ServerInfo."""
    import json

    plain = {key: value.model_dump(mode="json") if isinstance(value, ServerInfo) else value
             for key, value in served.items()}
    text, found = redact(json.dumps(plain), remote)
    try:
        clean = json.loads(text)
        if "server" in clean:
            clean["server"] = ServerInfo.model_validate(clean["server"])
    except (ValueError, ValidationError):  # a secret that is one of JSON's or the model's own words (remote_scrub)
        return scrubbed(served, remote)
    return clean, found


def _in_definitions(report: Report, remote: RemoteTarget) -> bool:
    listed = report.model_dump_json(include={"server", "tools", "prompts", "resources", "resource_templates"})
    return any(value in listed for value in remote.secret_values())
