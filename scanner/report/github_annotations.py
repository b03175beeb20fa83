"""GitHub Actions annotations: one workflow command per finding (`::error file=…,line=…,title=…::message`).

Untrusted text is shown with visible escapes and capped (sandbox.core.untrusted), then encoded per the workflow-command
rules: `%`, CR and LF in the message, and also `:` and `,` in property values, so a tool name can neither end the
command early nor start another one."""

from __future__ import annotations

from collections.abc import Iterable

from scanner.report.locations import Artifact
from scanner.report.model import Finding, Severity
from sandbox.core.untrusted import escape_for_terminal

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
MESSAGE_CHARS = 1_000
TITLE_CHARS = 200


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(severity: Severity, message: str, *, title: str, file: str | None = None, line: int | None = None) \
        -> str:
    """One workflow command; every argument is treated as untrusted."""
    properties = []
    if file is not None:
        properties.append(f"file={escape_property(escape_for_terminal(file, limit=1_000))}")
        if line is not None:
            properties.append(f"line={int(line)}")
    properties.append(f"title={escape_property(escape_for_terminal(title, limit=TITLE_CHARS))}")
    return f"::{COMMANDS[severity]} {','.join(properties)}::{escape_data(escape_for_terminal(message, MESSAGE_CHARS))}"


def finding_annotation(finding: Finding, artifact: Artifact | None, subject: str | None = None) -> str:
    """The annotation of one finding: title `RULE name`, message `subject: message` (the tool, else `subject`)."""
    about = finding.tool if finding.tool is not None else subject
    message = finding.message if about is None else f"{about}: {finding.message}"
    return annotation(finding.severity, message, title=f"{finding.rule_id} {finding.rule_name}",
                      file=artifact.file if artifact else None,
                      line=artifact.line(about) if artifact and artifact.file else None)


def annotations(findings: Iterable[Finding], artifact: Artifact | None, subject: str | None = None) -> list[str]:
    return [finding_annotation(f, artifact, subject) for f in findings]
