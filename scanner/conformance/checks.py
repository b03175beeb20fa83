"""The conformance checks, registered once: each is a rule of the W family (scanner/rules/rules.toml) and one small
function over what the probe observed. `conclude` runs the ones the options ask for and turns each verdict into the
report's record and, for a violation, a finding of the rule; `dialect_findings` is json-schema-dialect, which reads
the listed tools and runs in every scan."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from scanner.conformance import http_checks as http
from scanner.conformance import revision_details as details
from scanner.conformance import stateless
from scanner.conformance.dialect import INVALID_IN_2020, DialectSigns, dialect_signs
from scanner.conformance.wording import quote
from scanner.conformance.model import CheckResult, ConformanceOptions, NEXT_REVISION, Observed, Transport, Verdict
from scanner.report.model import Finding
from scanner.report.severity import Severity
from scanner.report.score import tool_name
from scanner.rules.registry import rule

Suite = Literal["revision", "full"]  # --spec-version REVISION runs "revision"; --spec REVISION runs both
SCHEMA_FIELDS = ("inputSchema", "outputSchema")


@dataclass(frozen=True)
class Check:
    rule_id: str
    suite: Suite
    run: Callable[[Observed], Verdict]
    http_only: bool = False  # a Streamable HTTP concern: run for --url targets only, not part of a stdio suite

    def applies(self, full: bool, transport: Transport) -> bool:
        return (self.suite == "revision" or full) and (transport == "http" or not self.http_only)


CHECKS: tuple[Check, ...] = (
    Check("W2", "revision", stateless.requires_initialize_handshake),
    Check("W3", "revision", stateless.missing_server_discover),
    Check("W4", "revision", stateless.legacy_resource_error_code),
    Check("W5", "full", stateless.stateless_no_session),
    Check("W6", "full", stateless.stateless_no_init),
    Check("W7", "full", details.missing_result_type),
    Check("W8", "full", details.missing_cacheable_fields),
    Check("W9", "full", details.legacy_error_code_renumbered),
    Check("W10", "full", details.ping_still_answered),
    Check("W11", "full", details.deprecated_sampling),
    Check("W12", "full", details.deprecated_roots),
    Check("W13", "full", details.deprecated_logging),
    Check("W14", "full", http.required_headers, http_only=True),
    Check("W15", "full", http.dcr_still_advertised, http_only=True),
    Check("W16", "full", http.auth_metadata_missing_iss, http_only=True),
    Check("W17", "full", http.legacy_sse_transport, http_only=True),
)


def conclude(observed: Observed) -> tuple[list[Finding], list[CheckResult]]:
    """Every check of the suite `observed.full` names: a finding per violation, a record per check."""
    findings: list[Finding] = []
    records: list[CheckResult] = []
    for check in CHECKS:
        if not check.applies(observed.full, observed.transport):
            continue
        verdict = check.run(observed)
        found = rule(check.rule_id)
        records.append(CheckResult(check=found.name, rule_id=found.id, outcome=verdict.outcome, detail=verdict.detail))
        if verdict.outcome == "violation":
            severity = Severity(verdict.severity) if verdict.severity else None
            findings.append(found.finding(None, verdict.detail, evidence=verdict.evidence, severity=severity))
    return findings, records


def not_run(options: ConformanceOptions, reason: str, transport: Transport = "stdio") -> list[CheckResult]:
    """The record of every check the options ask for, when the probe could not run (never a silent pass)."""
    return [CheckResult(check=rule(check.rule_id).name, rule_id=check.rule_id, outcome="inconclusive",
                        detail=f"not run: {reason}")
            for check in CHECKS if check.applies(options.full, transport)]


def dialect_findings(tools: list[Any], options: ConformanceOptions) -> tuple[list[Finding], CheckResult]:
    """json-schema-dialect over the listed tools: one finding per tool and schema with old-dialect signs. Info at
    the default revision; against 2026-07-28 a warning for a form 2020-12 rejects in a schema read as 2020-12. A
    declared old draft stays info (the specification lets a schema name its dialect and only recommends 2020-12), as
    do `definitions` and refs into it, which 2020-12 still accepts (deprecated)."""
    found = rule("W1")
    later = options.spec_version == NEXT_REVISION
    findings: list[Finding] = []
    for index, tool in enumerate(tools):
        for field in SCHEMA_FIELDS:
            schema = tool.get(field) if isinstance(tool, dict) else None
            signs = dialect_signs(schema)
            if not signs.old:
                continue
            message, evidence, invalid = _dialect_finding(field, schema, signs)
            severity = Severity.WARNING if later and invalid else Severity.INFO
            findings.append(found.finding(tool_name(index, tool), message, evidence=evidence, severity=severity))
    names = sorted({finding.tool or "" for finding in findings})
    detail = (f"{len(findings)} schema(s) of {len(names)} tool(s) in an older dialect" if findings else
              f"no old-dialect sign in the schemas of {len(tools)} tool(s)")
    return findings, CheckResult(check=found.name, rule_id=found.id,
                                 outcome="violation" if findings else "passed", detail=detail)


def _dialect_finding(field: str, schema: dict[str, Any], signs: DialectSigns) -> tuple[str, str | None, bool]:
    """The finding's message and evidence, and whether the schema is invalid in the 2020-12 it is read as."""
    bound = " (the walk stopped at its bound: the schema was not read to the end)" if signs.truncated else ""
    if signs.declared:
        return (f"{field} declares $schema {signs.declared}: allowed, but clients need support only JSON Schema "
                f"2020-12 (recommended), so one without {signs.declared} refuses it{bound}",
                f"{field}.$schema = {quote(str(schema.get('$schema')), 120)}", False)
    named = schema.get("$schema")
    what = f"declares $schema {quote(named, 80)}" if isinstance(named, str) else "has no $schema"
    rejected = [form for form in signs.forms if form in INVALID_IN_2020]
    deprecated = [form for form in signs.forms if form not in INVALID_IN_2020]
    also = f"; it also uses {'; '.join(deprecated)}, valid there but deprecated" if deprecated else ""
    if rejected:
        return (f"{field} {what}, so it is read as JSON Schema 2020-12, which rejects {'; '.join(rejected)}{also}"
                f"{bound}", None, True)
    return (f"{field} {what} and uses {'; '.join(deprecated)}: valid in JSON Schema 2020-12, which it is read as, "
            f"but deprecated there{bound}", None, False)
