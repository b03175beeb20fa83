"""The probe rules P1–P5, P8, P9 and P11: what the recorded calls of a tool say about how well it serves an agent.

P1–P5, P9 and P11 are pure functions over a tool's call results and its definition; P8 builds findings from a recorded event
(a definition that changed), and P6 and P7 (a crash, a timeout) are scanner/rules/probe_crashes.py's. Each rule is
data (in the registry, scanner/rules/rules.toml) plus one small function (P9, slow calls, too). Findings come with the tokens they waste (see ProbeFinding).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from scanner.probes.model import ProbeResult, is_refused
from scanner.probes.opaque_ids import unlabelled_id_chars
from scanner.probes.tooldef import input_schema, tool_name
from scanner.rules.answer_injection import check_injected_answers
from scanner.rules.paging_hint import says_what_is_left
from scanner.rules.registry import rule
from scanner.rules.static.changed import tool_findings
from scanner.report.model import Category, Finding, Severity
from scanner.tokens import tokens_for_chars
from sandbox.core.untrusted import TRUNCATION_MARK, cap_json, cap_text
from scanner.vocabulary import name_words

# ---- thresholds and token-waste estimates, all in one place ---------------------------------------------------------
TOKEN_BUDGET = 2_000  # P1 waste: response tokens over this budget
P1_WARNING_TOKENS = 5_000
P1_ERROR_TOKENS = 25_000  # agents' tool-output caps cut responses off around here
P2_INFO_SHARE = 0.10  # share of a response that is unlabelled opaque IDs
P2_WARNING_SHARE = 0.25
P2_MIN_CHARS = 200  # a response this short (e.g. just the new item's id) is not judged
P3_TOKENS = 5_000
P5_INFO_TOKENS = 1_000
P5_WARNING_TOKENS = 5_000
P9_INFO_SECONDS = 2.0  # a call answered under the timeout but this slowly: info
P9_WARNING_SECONDS = 10.0  # ... and this slowly: warning
WASTE_OPAQUE_ERROR = 1_500
WASTE_NO_PAGING_HINT = 1_000
WASTE_ERROR_WITHOUT_GUIDANCE = 700
EVIDENCE_CHARS = 300

PAGING_PARAMS = frozenset({
    "limit", "offset", "page", "cursor", "per", "size", "max", "top", "count", "head", "tail", "skip", "start", "end",
    "token", "after", "before", "first", "last", "lines", "results",
})
LESS_PARAMS = frozenset({
    "response_format", "format", "verbosity", "verbose", "detail", "details", "detail_level", "fields", "select",
    "projection", "columns", "properties", "concise", "summary", "brief", "output_format", "include_details", "mode",
})
# A numeric parameter whose name says it bounds the response (head, tail, length, maxResults, max_results, count,
# top, n, ...) is a way to ask for less, like a format switch: P5 counts both.
LIMIT_WORDS = frozenset({"limit", "head", "tail", "length", "max", "maximum", "top", "count", "n", "lines", "depth",
                         "truncate", "first", "last"})
LIMIT_TYPES = frozenset({"integer", "number"})
LESS_CHOICES = frozenset({"concise", "detailed", "summary", "brief", "full", "compact", "minimal", "short", "verbose"})
STACK_TRACE = re.compile(
    r"Traceback \(most recent call last\)|^\s+at [\w$.<>]+ \(.*:\d+:\d+\)|^\s+at .+\.(?:js|ts|mjs|cjs):\d+|"
    r"^\s+at [\w$.]+\([\w$]+\.java:\d+\)|goroutine \d+ \[|^panic: |^\s+File \".+\", line \d+",
    re.IGNORECASE | re.MULTILINE)
OPAQUE_MESSAGE = re.compile(
    r"(?:mcp error -?\d+:\s*)?(?:error:?\s*)?(?:"
    r"internal(?: server)? error|error executing tool(?: \S+)?|an? (?:unexpected |unknown )?error(?: has)? occurred|"
    r"unknown error|something went wrong|error|failed|failure|tool (?:execution|call) failed|"
    r"invalid (?:arguments?|input|params|parameters|request)|bad request|null|undefined|none|exception"
    r")[.!]?", re.IGNORECASE)
ERROR_WORDS = re.compile(
    r"\b(?:error|invalid|failed|failure|exception|required|must be|not allowed|not found|missing|unexpected|"
    r"cannot|can't|unable)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ProbeFinding:
    """A finding and the tokens an agent wastes because of it (feeds the score)."""

    finding: Finding
    token_waste: int = 0

def _finding(rule_id: str, *, tool: str | None, message: str, evidence: str | None = None,
             severity: Severity | None = None, category: Category | None = None) -> Finding:
    return rule(rule_id).finding(tool, message, severity=severity, category=category,
                                 evidence=None if evidence is None else cap_text(evidence, EVIDENCE_CHARS * 4))


def _excerpt(text: str) -> str:
    return cap_text(text.strip(), EVIDENCE_CHARS)


def _answered(results: Iterable[ProbeResult]) -> list[ProbeResult]:
    """Calls that got a response (a result or a protocol error), not timeouts or crashes."""
    return [result for result in results if result.status in ("ok", "tool_error", "protocol_error")]


def _largest(results: Iterable[ProbeResult]) -> ProbeResult | None:
    return max(results, key=lambda result: result.tokens, default=None)


# ---- P1 -------------------------------------------------------------------------------------------------------------

def check_oversized_response(tool: dict[str, Any], results: list[ProbeResult]) -> list[ProbeFinding]:
    """P1: the largest response of the tool over ~5k tokens (warning) or ~25k (error)."""
    largest = _largest(_answered(results))
    if largest is None or largest.tokens <= P1_WARNING_TOKENS:
        return []
    severity: Severity = "error" if largest.tokens > P1_ERROR_TOKENS else "warning"
    message = f"Probe '{largest.label}' returned ~{largest.tokens:,} tokens ({largest.response_chars:,} characters)."
    finding = _finding("P1", tool=tool_name(tool), message=message, severity=severity,
                       evidence=_excerpt(largest.preview))
    return [ProbeFinding(finding, token_waste=largest.tokens - TOKEN_BUDGET)]


# ---- P2 -------------------------------------------------------------------------------------------------------------

def check_opaque_ids(tool: dict[str, Any], results: list[ProbeResult]) -> list[ProbeFinding]:
    """P2: unlabelled opaque IDs over 10 % (info) or 25 % (warning) of a response."""
    worst: tuple[float, int, ProbeResult] | None = None
    for result in results:
        text = result.text()
        if result.status != "ok" or len(text) < P2_MIN_CHARS:
            continue
        id_chars = unlabelled_id_chars(text)
        share = id_chars / len(text)
        if share > P2_INFO_SHARE and (worst is None or share > worst[0]):
            worst = (share, id_chars, result)
    if worst is None:
        return []
    share, id_chars, result = worst
    severity: Severity = "warning" if share > P2_WARNING_SHARE else "info"
    message = (f"{share:.0%} of the response to probe '{result.label}' is opaque IDs "
               f"({id_chars:,} characters) without readable labels.")
    finding = _finding("P2", tool=tool_name(tool), message=message, severity=severity,
                       evidence=_excerpt(result.preview))
    return [ProbeFinding(finding, token_waste=tokens_for_chars(id_chars))]


# ---- P3 -------------------------------------------------------------------------------------------------------------

def has_paging_parameters(tool: dict[str, Any]) -> bool:
    return any(set(name_words(name)) & PAGING_PARAMS for name in _property_names(tool))


_OUR_TRUNCATION = re.compile(re.escape(TRUNCATION_MARK).replace(re.escape("{n}"), r"\d+"))


def _without_our_marks(text: str) -> str:
    """The response without the scanner's own size-cap marks, which are no paging hint of the server's."""
    return _OUR_TRUNCATION.sub("", text)


def check_no_paging_hint(tool: dict[str, Any], results: list[ProbeResult]) -> list[ProbeFinding]:
    """P3: a response over ~5k tokens that says nothing of what's left (warning; info if the tool has paging params)."""
    large = [result for result in _answered(results) if result.tokens > P3_TOKENS and not says_what_is_left(
        _without_our_marks(result.text()))]
    largest = _largest(large)
    if largest is None:
        return []
    pageable = has_paging_parameters(tool)
    severity: Severity = "info" if pageable else "warning"
    message = (f"Probe '{largest.label}' returned ~{largest.tokens:,} tokens with no cursor or note about what is "
               f"left" + (" (the tool has paging or limit parameters)." if pageable else
                          " and the tool has no paging or limit parameters."))
    finding = _finding("P3", tool=tool_name(tool), message=message, severity=severity)
    return [ProbeFinding(finding, token_waste=WASTE_NO_PAGING_HINT)]


# ---- P4 -------------------------------------------------------------------------------------------------------------

def has_stack_trace(text: str) -> bool:
    return bool(STACK_TRACE.search(text))


def is_opaque_message(text: str) -> bool:
    """Empty, or nothing but a generic phrase ("Internal error", "Error executing tool X")."""
    stripped = text.strip().strip("\"'").strip()
    return not stripped or OPAQUE_MESSAGE.fullmatch(stripped) is not None


def looks_like_error(text: str) -> bool:
    return bool(ERROR_WORDS.search(text[:500]))


def mentions_input(result: ProbeResult, tool: dict[str, Any], text: str) -> bool:
    """Whether an error names the argument the error probe got wrong (or, for an enum, one of its choices)."""
    target = result.target
    if target is None:
        return True
    lowered = text.lower()
    variants = {target.lower(), target.replace("_", " ").lower(), " ".join(name_words(target))}
    if any(variant and variant in lowered for variant in variants):
        return True
    choices = _property(tool, target).get("enum")
    return isinstance(choices, list) and any(isinstance(choice, str) and choice.lower() in lowered
                                             for choice in choices)


_P4_PROBLEMS: dict[str, tuple[str, int]] = {  # problem → (message, token waste)
    "stack_trace": ("Error responses leak a stack trace (internals, paths) instead of a message", WASTE_OPAQUE_ERROR),
    "opaque": ("Error responses are empty or opaque", WASTE_OPAQUE_ERROR),
    "no_mention": ("Error responses don't mention the bad input", WASTE_ERROR_WITHOUT_GUIDANCE),
    "jsonrpc_error": ("The server answered a tool failure as a JSON-RPC error ({code}) instead of an isError result",
                      WASTE_ERROR_WITHOUT_GUIDANCE),
    "error_as_success": ("Errors are returned as successful results (no isError)", WASTE_ERROR_WITHOUT_GUIDANCE),
    "accepted_silently": ("Invalid arguments were accepted silently", WASTE_ERROR_WITHOUT_GUIDANCE),
}


def p4_problems(result: ProbeResult, tool: dict[str, Any]) -> list[str]:
    """What is wrong with one call's error handling (keys of _P4_PROBLEMS); empty when nothing is."""
    text = result.text()
    expects_error = result.kind == "error" and result.expect_error is True
    if is_refused(result):
        return []  # not an error the server answered with: the client refused its answer (P11)
    if result.status == "protocol_error" and result.kind != "error" and result.expect_error is not True:
        # A call with valid arguments: its failure belongs in an isError result (a leaked trace is said too).
        return ["jsonrpc_error", *(["stack_trace"] if has_stack_trace(text) else [])]
    if result.status in ("tool_error", "protocol_error"):
        if has_stack_trace(text):
            return ["stack_trace"]
        if is_opaque_message(text):
            return ["opaque"]
        if expects_error and not mentions_input(result, tool, text):
            return ["no_mention"]
        return []
    if result.status == "ok" and result.expect_error is True:  # an error probe, or a fixture expecting an error
        return ["error_as_success"] if looks_like_error(text) else ["accepted_silently"]
    return []


def check_unhelpful_errors(tool: dict[str, Any], results: list[ProbeResult]) -> list[ProbeFinding]:
    """P4: one finding per kind of problem, naming the probes that showed it. Success on an unknown value is fine."""
    seen: dict[str, list[ProbeResult]] = {}
    for result in results:
        for problem in p4_problems(result, tool):
            seen.setdefault(problem, []).append(result)
    findings = []
    for problem, hits in seen.items():
        text, waste = _P4_PROBLEMS[problem]
        text = text.format(code=", ".join(sorted({str(hit.error_code) for hit in hits})))
        labels = ", ".join(f"'{hit.label}'" for hit in hits)
        finding = _finding("P4", tool=tool_name(tool), message=f"{text}: {labels}.", evidence=_excerpt(hits[0].text()))
        findings.append(ProbeFinding(finding, token_waste=waste))
    return findings


# ---- P5 -------------------------------------------------------------------------------------------------------------

def can_ask_for_less(tool: dict[str, Any]) -> bool:
    """A parameter like response_format, verbosity or fields, an enum offering concise/detailed, or a numeric limit
    (head, tail, length, maxResults, count, top, n, ...)."""
    properties = input_schema(tool).get("properties")
    for name, prop in (properties.items() if isinstance(properties, dict) else []):
        if name.lower() in LESS_PARAMS or "_".join(name_words(name)) in LESS_PARAMS:
            return True
        choices = prop.get("enum") if isinstance(prop, dict) else None
        if isinstance(choices, list) and any(str(choice).lower() in LESS_CHOICES for choice in choices):
            return True
        if is_limit_parameter(name, prop):
            return True
    return False


def is_limit_parameter(name: str, prop: Any) -> bool:
    """A number named as a bound on the response: `head`, `tail`, `length`, `maxResults`, `max_results`, `top`, `n`.
    A string `head` (a git ref) or a bare `offset` (moves the window, does not shorten it) is not."""
    if not set(name_words(name)) & LIMIT_WORDS or not isinstance(prop, dict):
        return False
    kinds = prop.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    if not kinds:  # `anyOf: [{type: integer}, {type: null}]`, as pydantic writes an optional int
        kinds = [branch.get("type") for branch in prop.get("anyOf") or [] if isinstance(branch, dict)]
    return bool(set(map(str, kinds)) & LIMIT_TYPES)


def check_no_way_to_ask_for_less(tool: dict[str, Any], results: list[ProbeResult]) -> list[ProbeFinding]:
    """P5: the tool returned over ~1k (info) or ~5k (warning) tokens and has no way to ask for less."""
    largest = _largest(result for result in results if result.status == "ok")
    if largest is None or largest.tokens <= P5_INFO_TOKENS or can_ask_for_less(tool):
        return []
    severity: Severity = "warning" if largest.tokens > P5_WARNING_TOKENS else "info"
    message = (f"Probe '{largest.label}' returned ~{largest.tokens:,} tokens and the tool has no parameter to ask for "
               f"a shorter response.")
    return [ProbeFinding(_finding("P5", tool=tool_name(tool), message=message, severity=severity))]


# ---- P9 -------------------------------------------------------------------------------------------------------------

def check_slow_calls(tool: dict[str, Any], results: list[ProbeResult]) -> list[ProbeFinding]:
    """P9: the slowest answered call of the tool took P9_INFO_SECONDS or more (info), P9_WARNING_SECONDS (warning).
    A timeout is P7's, not this rule's."""
    slowest = max(_answered(results), key=lambda result: result.latency_ms, default=None)
    if slowest is None or slowest.latency_ms < P9_INFO_SECONDS * 1000:
        return []
    seconds = slowest.latency_ms / 1000
    severity: Severity = "warning" if seconds >= P9_WARNING_SECONDS else "info"
    message = (f"Probe '{slowest.label}' took {seconds:.1f} s to answer (at or over {P9_INFO_SECONDS:g} s; "
               f"{P9_WARNING_SECONDS:g} s is a warning).")
    return [ProbeFinding(_finding("P9", tool=tool_name(tool), message=message, severity=severity))]


def check_refused_answers(tool: dict[str, Any], results: list[ProbeResult]) -> list[ProbeFinding]:
    """P11: the probes whose answers the MCP client refused (is_refused), with the first one's reason."""
    refused = [result for result in results if is_refused(result)]
    if not refused:
        return []
    labels = ", ".join(f"'{label}'" for label in dict.fromkeys(result.label for result in refused))
    message = f"The MCP client refused the tool's answer to probe {labels} (it breaks the tool's outputSchema or the " \
              "MCP schema of a tools/call result)."
    return [ProbeFinding(_finding("P11", tool=tool_name(tool), message=message,
                                  evidence=_excerpt(refused[0].error or "")))]


TOOL_CHECKS: tuple[Callable[[dict[str, Any], list[ProbeResult]], list[ProbeFinding]], ...] = (
    check_oversized_response, check_opaque_ids, check_no_paging_hint, check_unhelpful_errors,
    check_no_way_to_ask_for_less, check_slow_calls, check_refused_answers,
)


def evaluate_probes(tools: list[dict[str, Any]], results: list[ProbeResult]) -> list[ProbeFinding]:
    """Run P1–P5, P9, P11 and B7 for every tool over its recorded calls (P6–P8 come from the builders below)."""
    by_tool: dict[str, list[ProbeResult]] = {}
    for result in results:
        by_tool.setdefault(result.tool, []).append(result)
    findings: list[ProbeFinding] = []
    for tool in tools:
        calls = by_tool.get(tool_name(tool), [])
        if calls:
            for check in TOOL_CHECKS:
                findings.extend(check(tool, calls))
            findings.extend(ProbeFinding(finding) for finding in check_injected_answers(tool, calls))
    return findings


# ---- P8: builders from recorded events (P6 and P7: scanner/rules/probe_crashes.py) --------------------------------

def definition_diff(before: dict[str, Any], after: dict[str, Any]) -> str:
    """A unified diff of two tool definitions (canonical JSON), size-capped."""
    def lines(value: dict[str, Any]) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()
    diff = difflib.unified_diff(lines(before), lines(after), "before", "after", lineterm="")
    return cap_text("\n".join(diff), 4_000)


def definition_change_findings(before: list[dict[str, Any]], after: list[dict[str, Any]], *,
                               after_call: str | None = None) -> list[Finding]:
    """P8: tools whose definition changed (error), or that appeared or vanished (warning), during the session; then
    the static rules' findings that the changed or new definitions brought (see changed_definition_findings)."""
    old = {tool_name(tool): cap_json(tool) for tool in before}  # capped: depth-bounded and size-bounded
    new = {tool_name(tool): cap_json(tool) for tool in after}
    whole_old, whole_new = _whole(before), _whole(after)  # compared whole: a change past the caps is one too
    when = f" after {after_call}" if after_call else " during the session"
    findings = []
    for name in sorted(old.keys() & new.keys()):
        if whole_old.get(name) != whole_new.get(name) or old[name] != new[name]:
            past = " (past what the report keeps of it: the evidence cannot show it)" if old[name] == new[name] else ""
            findings.append(_finding("P8", tool=name, message=f"The definition of tool '{name}' changed{when}{past}.",
                                     evidence=definition_diff(old[name], new[name])))
    for name in sorted(new.keys() - old.keys()):
        findings.append(_finding("P8", tool=name, severity="warning", message=f"Tool '{name}' appeared{when}.",
                                 evidence=definition_diff({}, new[name])))
    for name in sorted(old.keys() - new.keys()):
        findings.append(_finding("P8", tool=name, severity="warning", message=f"Tool '{name}' disappeared{when}."))
    return findings + changed_definition_findings(old, new, when)


def _whole(tools: list[dict[str, Any]]) -> dict[str, str]:
    """Each tool's whole definition as canonical JSON, by name (one too deep to write is left out: its capped
    copy is compared instead)."""
    whole = {}
    for tool in tools:
        try:
            whole[tool_name(tool)] = json.dumps(tool, sort_keys=True, ensure_ascii=False, default=repr)
        except (RecursionError, ValueError):
            continue
    return whole


def changed_definition_findings(old: dict[str, Any], new: dict[str, Any], when: str) -> list[Finding]:
    """S1-S14 on each definition that changed or appeared, minus what the earlier definition already had: a
    description that turned poisonous after the first call gets its own S8, not only a P8 diff."""
    findings = []
    for name in sorted(new):
        if name not in old or old[name] != new[name]:
            findings += [f.model_copy(update={"message": f"{f.message} (in the definition re-listed{when})"})
                         for f in tool_findings(old.get(name), new[name])]
    return findings


def _property_names(tool: dict[str, Any]) -> list[str]:
    properties = input_schema(tool).get("properties")
    return list(properties) if isinstance(properties, dict) else []


def _property(tool: dict[str, Any], name: str) -> dict[str, Any]:
    properties = input_schema(tool).get("properties")
    prop = properties.get(name) if isinstance(properties, dict) else None
    return prop if isinstance(prop, dict) else {}
