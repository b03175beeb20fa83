"""The checks only a Streamable HTTP target can be asked (W14-W17, with --spec against a `--url` target): the routing
headers, the OAuth metadata's dynamic client registration and RFC 9207 `iss` support, and the legacy HTTP+SSE
transport. Each reads `Observed.http` only. Metadata and transport findings are info from a server that does not
claim 2026-07-28 and warning from one that does; a lookup that found nothing is a note, never a finding."""

from __future__ import annotations

from scanner.conformance.model import LEGACY_SESSION, Answer, HttpObserved, Observed, SseSniff, Verdict
from scanner.conformance.wording import answer_text, quote

HEADER_MISMATCH = -32020
NOT_CLAIMED = "the server does not claim 2026-07-28 in server/discover, so it owes no 2026-07-28 header validation"
HEADER_WORDS = ("header", "mcp-method", "mcp-name", "protocol-version")


def _http(observed: Observed) -> HttpObserved:
    return observed.http or HttpObserved()


def _severity(observed: Observed) -> str:
    return "warning" if observed.claims_revision else "info"


def _refused_right(answer: Answer) -> bool:
    return answer.code == HEADER_MISMATCH and answer.status == 400


def _status(answer: Answer) -> str:
    return f"HTTP {answer.status} " if answer.status is not None else ""


def required_headers(observed: Observed) -> Verdict:
    """A 2026-07-28 server accepts the routing headers and rejects a request whose headers are missing or disagree
    with the body (400, -32020 HeaderMismatch)."""
    if not observed.claims_revision:
        return Verdict("not-applicable", NOT_CLAIMED)
    first = observed.first
    if first is not None and first.error is not None and any(w in first.message.lower() for w in HEADER_WORDS):
        return Verdict("violation", f"a tools/list with correct MCP-Protocol-Version and Mcp-Method headers was refused"
                       f" ({_status(first)}{answer_text(first)})",
                       evidence=f"-> tools/list, Mcp-Method: tools/list\n<- {_status(first)}{answer_text(first)}")
    if observed.legacy_session:  # the header probes went out in the session initialize opened: 2025-11-25's rules
        return Verdict("not-applicable", LEGACY_SESSION)
    probes = (("a Mcp-Method header naming prompts/list", _http(observed).header_mismatch),
              ("no Mcp-Method header", _http(observed).header_missing))
    accepted = [(what, answer) for what, answer in probes if answer is not None and answer.result is not None]
    if accepted:
        lines = [f"-> tools/list with {what}\n<- {_status(answer)}a result" for what, answer in accepted]
        return Verdict("violation", "accepted a tools/list with " + " and one with ".join(w for w, _ in accepted) +
                       " (2026-07-28: 400 Bad Request with -32020 HeaderMismatch)", evidence="\n".join(lines))
    unclear = [f"{what}: {_status(answer)}{answer_text(answer)}" if answer else f"{what}: not sent"
               for what, answer in probes if answer is None or not _refused_right(answer)]
    if unclear:
        return Verdict("inconclusive", "refused, but not with 400 and -32020 HeaderMismatch: " + "; ".join(unclear))
    return Verdict("passed", "the correct routing headers were accepted; a mismatched and a missing Mcp-Method were "
                   "refused with 400 and -32020")


def dcr_still_advertised(observed: Observed) -> Verdict:
    found = _http(observed).auth_server
    if found is None:
        return Verdict("inconclusive", _no_metadata(observed))
    registration = isinstance(found.document.get("registration_endpoint"), str)
    cimd = found.document.get("client_id_metadata_document_supported") is True
    if registration and not cimd:
        return Verdict("violation", f"the authorization-server metadata ({found.where}) advertises a "
                       "registration_endpoint (Dynamic Client Registration, deprecated in 2026-07-28) and no "
                       "client_id_metadata_document_supported", severity=_severity(observed),
                       evidence=f"GET {found.where}: registration_endpoint present, "
                       "client_id_metadata_document_supported absent or not true")
    if registration:
        return Verdict("passed", f"the authorization-server metadata ({found.where}) offers Client ID Metadata "
                       "Documents; registration_endpoint stays as a fallback")
    return Verdict("passed", f"the authorization-server metadata ({found.where}) advertises no registration_endpoint")


def auth_metadata_missing_iss(observed: Observed) -> Verdict:
    found = _http(observed).auth_server
    if found is None:
        return Verdict("inconclusive", _no_metadata(observed))
    issuer = found.document.get("issuer")
    no_issuer = "" if isinstance(issuer, str) and issuer else "; it has no issuer either (RFC 8414: REQUIRED)"
    if found.document.get("authorization_response_iss_parameter_supported") is not True:
        return Verdict("violation", f"the authorization-server metadata ({found.where}) does not set "
                       f"authorization_response_iss_parameter_supported to true (RFC 9207){no_issuer}",
                       severity=_severity(observed), evidence=f"GET {found.where}: "
                       "authorization_response_iss_parameter_supported absent or not true")
    return Verdict("passed", f"the authorization-server metadata ({found.where}) sets "
                   f"authorization_response_iss_parameter_supported{no_issuer}")


def _no_metadata(observed: Observed) -> str:
    notes = _http(observed).auth_notes
    return "; ".join(notes) if notes else "the OAuth metadata lookups were not made"


def legacy_sse_transport(observed: Observed) -> Verdict:
    sniffs = _http(observed).sniffs
    if not sniffs:
        return Verdict("inconclusive", "the legacy-transport GETs were not made")
    legacy = [sniff for sniff in sniffs if sniff.stream and sniff.first_event == "endpoint"]
    if legacy:
        places = " and ".join(sniff.where for sniff in legacy)
        return Verdict("violation", f"a GET on {places} opened the HTTP+SSE transport of 2024-11-05 (its first event "
                       "is `endpoint`), deprecated since 2025-03-26", evidence="\n".join(
                           f"-> GET {sniff.where}, Accept: text/event-stream\n<- HTTP {sniff.status} "
                           "text/event-stream, first event: endpoint" for sniff in legacy))
    said = "; ".join(_sniff_text(sniff) for sniff in sniffs)
    if all(sniff.error for sniff in sniffs):
        return Verdict("inconclusive", f"no GET was answered: {said}")
    return Verdict("passed", f"no endpoint event: {said}")


def _sniff_text(sniff: SseSniff) -> str:
    if sniff.error:
        return f"{sniff.where}: {sniff.error}"
    if sniff.stream:
        first = f"first event '{quote(sniff.first_event, 60)}'" if sniff.first_event else "no event in the window"
        return f"{sniff.where}: HTTP {sniff.status} SSE stream, {first}"
    return f"{sniff.where}: HTTP {sniff.status}"
