"""The checks of a fresh server's first contact: is a stateless 2026-07-28 request answered (W2, W5, W6), does
server/discover answer (W3), which code answers a missing resource (W4). Each reads `Observed` only.

The stateless first request is classified once; with --spec a refusal that names a session or initialization is
reported under the most specific rule (stateless-no-session, stateless-no-init) and requires-initialize-handshake
then notes it, so one observation is one finding."""

from __future__ import annotations

import re
from typing import Literal

from scanner.conformance.model import Answer, Observed, Verdict
from scanner.conformance.wording import answer_text, quote

UNSUPPORTED_VERSION = -32022
RESOURCE_NOT_FOUND_LEGACY = -32002
INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
_SESSION = re.compile(r"session", re.IGNORECASE)
_INIT = re.compile(r"initiali[sz]", re.IGNORECASE)

FirstKind = Literal["answered", "no-tools", "session", "init", "refused", "unsupported-version", "hang", "closed",
                    "not-sent"]


def first_kind(first: Answer | None) -> FirstKind:
    """What became of the stateless first request."""
    if first is None:
        return "not-sent"
    result = first.result_dict()
    if result is not None and isinstance(result.get("tools"), list):
        return "answered"
    if first.error is not None:
        if first.code == UNSUPPORTED_VERSION:
            return "unsupported-version"
        return "session" if _SESSION.search(first.message) else "init" if _INIT.search(first.message) else "refused"
    if first.result is not None:
        return "no-tools"
    return "closed" if first.closed else "hang"


def _handshake_works(observed: Observed) -> bool:
    return observed.handshake is not None and observed.handshake.result_dict() is not None


def _first_evidence(observed: Observed) -> str:
    assert observed.first is not None
    lines = [f"-> tools/list with _meta (2026-07-28, clientInfo, clientCapabilities), no initialize before it",
             f"<- {answer_text(observed.first)}"]
    if observed.handshake is not None:
        lines += ["-> initialize (2025-11-25) on the same connection", f"<- {answer_text(observed.handshake)}"]
    return "\n".join(lines)


def requires_initialize_handshake(observed: Observed) -> Verdict:
    kind = first_kind(observed.first)
    if kind == "answered":
        return Verdict("passed", "answered a stateless first tools/list (no initialize before it)")
    if kind == "unsupported-version" and observed.claims_revision and observed.discover is not None:
        return Verdict("violation", "refused a stateless first tools/list with -32022 (unsupported protocol version) "
                       "although server/discover names 2026-07-28: a client need not call server/discover first, "
                       "and one that does not gets nothing", evidence=f"{_first_evidence(observed)}\n"
                       f"-> server/discover\n<- supportedVersions names 2026-07-28")
    if kind == "unsupported-version":
        return Verdict("not-applicable", "refused the 2026-07-28 request explicitly with -32022 (unsupported protocol "
                       f"version: \"{quote(observed.first.message)}\"): a server that does not serve the revision")
    if kind in ("not-sent", "closed", "no-tools") or not _handshake_works(observed):
        return Verdict("inconclusive", f"the stateless first request got {_what(observed.first)}, and initialize "
                       "after it was not answered either: nothing shows the server needs the handshake")
    late = observed.late_first
    if kind == "hang" and late is not None and first_kind(late) == "answered":
        return Verdict("inconclusive", f"the stateless first tools/list was answered with tools after {late.seconds:g} "
                       f"s, past the probe's {observed.first.seconds:g} s wait, when initialize had been sent: too "
                       "slow to tell whether the server needs the handshake")
    if observed.full and kind in ("session", "init"):
        rule = "stateless-no-session" if kind == "session" else "stateless-no-init"
        return Verdict("not-applicable", f"the refusal names {'a session' if kind == 'session' else 'initialization'}"
                       f": reported as {rule}")
    return Verdict("violation", f"the server did not answer a stateless first tools/list ({answer_text(observed.first)})"
                   " but answered initialize after it: it still needs the handshake", evidence=_first_evidence(observed))


def _refused_for(observed: Observed, wanted: Literal["session", "init"], what: str) -> Verdict:
    kind = first_kind(observed.first)
    if kind == "answered":
        return Verdict("passed", "answered a stateless first tools/list: no session or handshake was required")
    if kind == wanted and _handshake_works(observed):
        return Verdict("violation", f"the stateless first tools/list was refused for want of {what} "
                       f"({answer_text(observed.first)}); initialize after it was answered",
                       evidence=_first_evidence(observed))
    return Verdict("not-applicable", f"the stateless first request was not refused for want of {what} "
                   f"({_what(observed.first)}; see requires-initialize-handshake)")


def stateless_no_session(observed: Observed) -> Verdict:
    return _refused_for(observed, "session", "a session")


def stateless_no_init(observed: Observed) -> Verdict:
    return _refused_for(observed, "init", "initialization")


def missing_server_discover(observed: Observed) -> Verdict:
    discover = observed.discover
    if discover is None or discover.closed:
        return Verdict("inconclusive", f"server/discover got {_what(discover)}")
    evidence = f"-> server/discover with _meta (2026-07-28)\n<- {answer_text(discover)}"
    if discover.error is not None:
        hint = " (Method not found: not implemented)" if discover.code == METHOD_NOT_FOUND else ""
        return Verdict("violation", f"server/discover was answered with {answer_text(discover)}{hint}",
                       evidence=evidence)
    if discover.timed_out:
        if not (first_kind(observed.first) == "answered" or _handshake_works(observed)):
            return Verdict("inconclusive", f"server/discover got {answer_text(discover)}, and no request before it "
                           "was answered either")
        return Verdict("violation", f"server/discover got {answer_text(discover)} while the server answered the "
                       "request before it", evidence=evidence)
    result = discover.result_dict() or {}
    missing = [key for key, kind in (("capabilities", dict), ("supportedVersions", list))
               if not isinstance(result.get(key), kind)]
    if missing:
        return Verdict("violation", f"server/discover answered without {' or '.join(missing)}", evidence=evidence)
    versions = ", ".join(quote(str(v), 40) for v in result["supportedVersions"][:8])
    if not observed.claims_revision:  # implemented, but the server says it does not serve the revision checked
        return Verdict("violation", f"server/discover answered, but supportedVersions [{versions}] does not name "
                       "2026-07-28: the server does not serve the revision", evidence=evidence)
    return Verdict("passed", f"server/discover answered: supportedVersions [{versions}] (names 2026-07-28)")


def legacy_resource_error_code(observed: Observed) -> Verdict:
    if observed.resource_read is None:
        if "resources" not in observed.capabilities:
            return Verdict("not-applicable", "the server offers no resources")
        return Verdict("inconclusive", "resources/read was not sent (the server closed first)")
    read = observed.resource_read
    if read.code == INVALID_PARAMS:
        return Verdict("passed", "a missing resource was answered with -32602 (Invalid params)")
    if read.code != RESOURCE_NOT_FOUND_LEGACY:
        return Verdict("inconclusive", f"a missing resource was answered with {answer_text(read)}, neither -32002 nor "
                       "-32602")
    if not observed.claims_revision:
        return Verdict("not-applicable", "a missing resource was answered with -32002, the right code of the revision "
                       "the server serves (it does not claim 2026-07-28); on 2026-07-28 requests it must be -32602")
    if observed.legacy_session:
        return Verdict("not-applicable", "a missing resource was answered with -32002, the right code of 2025-11-25, "
                       "which the probe's initialize selected for the connection")
    return Verdict("violation", "a missing resource was answered with the removed code -32002 (2026-07-28: -32602 "
                   "Invalid params)", evidence=f"-> resources/read of a URI no server has\n<- {answer_text(read)}")


def _what(answer: Answer | None) -> str:
    return "nothing (not sent)" if answer is None else answer_text(answer)
