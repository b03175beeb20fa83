"""The --spec checks of what a 2026-07-28 server's answers look like (W7-W10), and of the deprecated features it
still uses (W11-W13). The answer checks apply only to a server that claims 2026-07-28 in server/discover, on a
connection the probe did not have to open with initialize: a server that does not claim it answers in the revision
it serves, and initialize puts even a dual-era server on 2025-11-25 for the rest of the connection, where no
resultType, ttlMs or -32601-for-ping is asked of it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from scanner.conformance.model import Answer, Observed, Verdict
from scanner.conformance.wording import answer_text

CACHE_SCOPES = ("public", "private")
PRE_FINAL_CODES = {-32001: -32020, -32003: -32021, -32004: -32022}
FINAL_CODES = (-32020, -32021, -32022)


def _results(observed: Observed) -> list[tuple[str, dict[str, Any]]]:
    """The results the answer checks read: the stateless tools/list, server/discover and the other lists."""
    answers: list[tuple[str, Answer | None]] = [("tools/list", observed.first), ("server/discover", observed.discover),
                                                *observed.lists.items()]
    return [(method, result) for method, answer in answers
            if answer is not None and (result := answer.result_dict()) is not None]


def _result_check(observed: Observed, lacks: Callable[[dict[str, Any]], bool], what: str) -> Verdict:
    if (why := observed.unjudged_answers()) is not None:
        return Verdict("not-applicable", why)
    results = _results(observed)
    if not results:
        return Verdict("inconclusive", "no result to read (every request was refused or unanswered)")
    missing = [method for method, result in results if lacks(result)]
    read = ", ".join(method for method, _ in results)
    if not missing:
        return Verdict("passed", f"every result read carries {what} ({read})")
    return Verdict("violation", f"results without {what}: {', '.join(missing)}",
                   evidence=f"read the results of {read}; {len(missing)} lack {what}")


def missing_result_type(observed: Observed) -> Verdict:
    """The schema's ResultType is `"complete" | "input_required" | string`: any non-empty string is a resultType."""
    return _result_check(observed, lambda result: not (isinstance(result.get("resultType"), str) and
                                                       result["resultType"]), 'a resultType ("complete", ...)')


def _cacheable(result: dict[str, Any]) -> bool:
    """ttlMs is a JSON number (the schema's `number`, @minimum 0: 1500.0 and 0.5 are as valid as 1500), cacheScope one
    of the two scopes."""
    ttl = result.get("ttlMs")
    number = isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and math.isfinite(ttl)
    return number and ttl >= 0 and result.get("cacheScope") in CACHE_SCOPES


def missing_cacheable_fields(observed: Observed) -> Verdict:
    return _result_check(observed, lambda result: not _cacheable(result),
                         'ttlMs and a cacheScope of "public" or "private"')


def _unjudged(observed: Observed, answer: Answer | None, sent: str) -> Verdict | None:
    """Why an answer check cannot judge: the server does not claim the revision, the connection runs under
    2025-11-25 (the probe sent initialize), or `sent` got no answer."""
    if (why := observed.unjudged_answers()) is not None:
        return Verdict("not-applicable", why)
    if answer is None or not answer.answered:
        return Verdict("inconclusive", f"{sent} got {_text(answer)}")
    return None


def legacy_error_code_renumbered(observed: Observed) -> Verdict:
    answer = observed.bogus_version
    if (unjudged := _unjudged(observed, answer, "tools/list declaring version 2099-01-01")) is not None:
        return unjudged
    assert answer is not None
    if answer.code in PRE_FINAL_CODES:
        final = PRE_FINAL_CODES[answer.code]
        return Verdict("violation", f"an unsupported protocol version was answered with the pre-final code "
                       f"{answer.code} (2026-07-28: {final})",
                       evidence=f"-> tools/list with _meta protocolVersion 2099-01-01\n<- {answer_text(answer)}")
    if answer.code in FINAL_CODES:
        return Verdict("passed", f"an unsupported protocol version was answered with {answer.code}")
    if answer.error is None:
        return Verdict("inconclusive", "tools/list declaring protocol version 2099-01-01 was answered with a result "
                       "(the version accepted silently), so no error code to read")
    return Verdict("inconclusive", f"an unsupported protocol version was answered with {answer_text(answer)}")


def ping_still_answered(observed: Observed) -> Verdict:
    ping = observed.ping
    if (unjudged := _unjudged(observed, ping, "ping")) is not None:
        return unjudged
    assert ping is not None
    if ping.result is not None:
        return Verdict("violation", "ping, which 2026-07-28 removes, was answered with a result",
                       evidence=f"-> ping with _meta (2026-07-28)\n<- {answer_text(ping)}")
    if ping.code == -32601:
        return Verdict("passed", "ping was answered with -32601 (Method not found)")
    return Verdict("inconclusive", f"ping was answered with {answer_text(ping)}")


def _deprecated(observed: Observed, method: str, feature: str) -> Verdict:
    count = observed.unasked.count(method)
    if not count and observed.cut_short:
        return Verdict("inconclusive", f"no {method} from the server, but it was gone before the probe ended (and "
                       "its quiet window): not watched to the end")
    if not count:
        window = f" and a {observed.window_seconds:g} s quiet window" if observed.window_seconds > 0 else \
            " (on the response streams of its requests: HTTP has no standing stream to watch)"
        return Verdict("passed", f"no {method} from the server during the probe{window}")
    modern = observed.unjudged_answers() is None
    severity = "warning" if modern else "info"
    claim = ("it claims 2026-07-28, and the probe's requests did not ask for it" if modern else
             "right in the 2025-11-25 semantics the connection ran under; deprecated in 2026-07-28")
    return Verdict("violation", f"the server sent {method} {count} time(s) unasked ({feature}: {claim})",
                   evidence=f"<- {method} (x{count}), while the probe ran or in the quiet window", severity=severity)


def deprecated_sampling(observed: Observed) -> Verdict:
    return _deprecated(observed, "sampling/createMessage", "sampling")


def deprecated_roots(observed: Observed) -> Verdict:
    return _deprecated(observed, "roots/list", "roots")


def deprecated_logging(observed: Observed) -> Verdict:
    verdict = _deprecated(observed, "notifications/message", "logging")
    if "notifications/message" in observed.first_session_notifications and verdict.outcome == "passed":
        return Verdict("passed", f"{verdict.detail}; the first session saw notifications/message (in its tool "
                       "calls, which may ask for logging; not judged here)")
    return verdict


def _text(answer: Answer | None) -> str:
    return "nothing (not sent)" if answer is None else answer_text(answer)
