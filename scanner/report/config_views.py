"""Views of `check-config` results (the MCP servers of client configs): the JSON document, SARIF (each result in the
config file, on the line of the server's entry), Markdown and GitHub annotations. Like every view, they show server
names and findings only: no argument, environment value or URL path is in a ConfigResult to begin with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scanner.provenance.config_lint import ConfigResult
from scanner.report.github_annotations import annotations
from scanner.report.locations import Artifact, file_artifact
from scanner.report.markdown import MAX_ROWS, md
from scanner.report.model import ConfigInfo, Finding, ScannerInfo
from scanner.report.sarif import Located, sarif_log
from scanner.report.severity import counts as severity_counts



def counts(findings: list[Finding]) -> dict[str, int]:
    return severity_counts(f.severity for f in findings)


def all_findings(results: list[ConfigResult]) -> list[Finding]:
    return [f for r in results for s in r.servers for f in s.findings]


def json_document(results: list[ConfigResult], config: ConfigInfo | None = None) -> dict[str, Any]:
    """Each file's servers and findings, a summary, and the config in use (null when there was none)."""
    return {
        "files": [r.model_dump(mode="json") for r in results],
        "summary": {"files": len(results), "servers": sum(len(r.servers) for r in results),
                    "findings": counts(all_findings(results)),
                    "suppressed": sum(len(s.suppressed) for r in results for s in r.servers)},
        "config": config.model_dump(mode="json") if config is not None else None,
    }


def _artifact(result: ConfigResult, artifacts: Mapping[str, Artifact]) -> Artifact:
    return artifacts.get(result.path) or file_artifact(result.path)


def config_sarif(results: list[ConfigResult], artifacts: Mapping[str, Artifact]) -> dict[str, Any]:
    located = []
    for result in results:
        artifact = _artifact(result, artifacts)
        for server in result.servers:
            logical = {"name": server.name, "fullyQualifiedName": f"{result.path}/{server.name}", "kind": "module"}
            located += [Located(f, logical, artifact, artifact.line(server.name), scope=logical["fullyQualifiedName"])
                        for f in [*server.findings, *server.suppressed]]
    summary = json_document(results)["summary"]
    return sarif_log(located, ScannerInfo(), {"summary": summary},
                     [_artifact(r, artifacts) for r in results])


def config_annotations(results: list[ConfigResult], artifacts: Mapping[str, Artifact], shown: set[str]) -> list[str]:
    """Annotations for the findings at or above the shown severities, each on its server's line."""
    lines = []
    for result in results:
        artifact = _artifact(result, artifacts)
        for server in result.servers:
            lines += annotations([f for f in server.findings if f.severity in shown], artifact, server.name)
    return lines


def config_markdown(results: list[ConfigResult], config: ConfigInfo | None = None) -> str:
    tally = counts(all_findings(results))
    servers = sum(len(r.servers) for r in results)
    suppressed = sum(len(s.suppressed) for r in results for s in r.servers)
    lines = [f"## mcp-sandbox check-config: {servers} server(s) in {len(results)} file(s)", "",
             f"**{tally['error']}** errors · **{tally['warning']}** warnings · **{tally['info']}** info"
             + (f" · **{suppressed}** suppressed by config {md(config.path, 300)}" if config and suppressed else "")]
    rows = [(r, s, f) for r in results for s in r.servers for f in s.findings]
    if not rows:
        return "\n".join(lines + ["", "No findings."]) + "\n"
    lines += ["", "| file | server | severity | rule | finding |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {md(r.path, 200)} | {md(s.name, 120)} | {f.severity} | {f.rule_id} {f.rule_name} | {md(f.message)} |"
              for r, s, f in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        lines += ["", f"…and {len(rows) - MAX_ROWS} more findings (see the JSON or SARIF report)."]
    return "\n".join(lines) + "\n"
