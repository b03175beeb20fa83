"""How a `vet` result is shown: compiler-style terminal lines (`file:line:col: ID [tier/confidence] message`, which
editors and CI logs link to the line), a Markdown report, and GitHub Actions annotations on the file and line. The
source text quoted in a finding is the vetted code's, so it is escaped and capped like any untrusted text."""

from __future__ import annotations

from collections import Counter

from scanner.report.github_annotations import annotation
from scanner.vet.model import Tier, VetFinding, VetResult
from sandbox.core.untrusted import escape_for_terminal

LEVEL = {Tier.BREAKING: "error", Tier.DEPRECATED: "warning", Tier.WARNING: "warning", Tier.ADVISORY: "info"}


def terminal_line(finding: VetFinding) -> str:
    where = escape_for_terminal(f"{finding.file}:{finding.line}:{finding.column}", limit=500)
    return f"{where}: {finding.rule_id} [{finding.tier.value}/{finding.confidence}] {finding.message}"


def summary(result: VetResult) -> str:
    tiers = Counter(f.tier.value for f in result.findings)
    counts = ", ".join(f"{tiers[t.value]} {t.value}" for t in Tier if tiers[t.value]) or "no findings"
    suppressed = f", {len(result.suppressed)} suppressed by inline directives" if result.suppressed else ""
    return f"vet: {result.files_scanned} file(s) scanned: {counts}{suppressed}"


def terminal_report(result: VetResult) -> list[str]:
    lines = [terminal_line(f) for f in result.findings]
    lines += [f"suppressed: {escape_for_terminal(s.file, 500)}:{s.line}: {s.rule_id} ({s.directive})"
              for s in result.suppressed]
    lines += [f"note: {escape_for_terminal(n, 1_000)}" for n in result.notes]
    lines.append(summary(result))
    return lines


def _cell(text: str) -> str:
    return escape_for_terminal(text, limit=300).replace("|", "\\|").replace("`", "'")


def markdown(result: VetResult) -> str:
    out = ["# mcp-sandbox vet", "", summary(result), ""]
    if result.findings:
        out += ["| location | rule | tier | confidence | message |", "|---|---|---|---|---|"]
        out += [f"| `{_cell(f'{f.file}:{f.line}:{f.column}')}` | [{f.rule_id}]({f.doc_url}) | {f.tier.value} | "
                f"{f.confidence} | {_cell(f.message)} |" for f in result.findings]
        out.append("")
    if result.suppressed:
        out += ["Suppressed by inline directives:", ""]
        out += [f"- `{_cell(f'{s.file}:{s.line}')}` {s.rule_id} ({s.directive})" for s in result.suppressed]
        out.append("")
    out += [f"- note: {_cell(n)}" for n in result.notes]
    return "\n".join(out) + "\n"


def github_annotations(result: VetResult) -> list[str]:
    return [annotation(LEVEL[f.tier], f.message, title=f"{f.rule_id} [{f.tier.value}/{f.confidence}]",  # type: ignore
                       file=f.file, line=f.line) for f in result.findings]
