"""B7 injected-answer: a tool's answer that carries hidden text or instructions aimed at the model (S8's phrasing,
searched in what the probe calls got back: the answer text, or the error a call was refused with).

An agent reads a tool's answer as it reads the user: an answer that says "ignore your previous instructions", hides
text in Unicode tag characters or tells the model to forward mail to an address poisons every session that calls
the tool, whatever its definition says. In the sandbox nothing the server fetches comes from elsewhere (the egress
sink answers every connection), so the text is the server's own; against a remote server (`scan --url`) it may
quote a third party, which the agent would read all the same.
"""

from __future__ import annotations

from typing import Any

from sandbox.core.untrusted import cap_text
from scanner.probes.model import ProbeResult
from scanner.probes.tooldef import tool_name
from scanner.report.model import Finding
from scanner.rules.registry import rule
from scanner.rules.static.s08_hidden_text import answer_hits

RULE = rule("B7")
MAX_LABEL_CHARS = 120


def check_injected_answers(tool: dict[str, Any], results: list[ProbeResult]) -> list[Finding]:
    """B7 for the tool: the first of its calls whose answer (or refusal) carries hidden text or instructions."""
    for result in results:
        for text in (result.response or result.preview, result.error, result.error_data):
            hits = answer_hits(text) if text else []
            if hits:
                kinds = ", ".join(f"{message} [{kind}]" for kind, message, _ in hits)
                label = cap_text(result.label, MAX_LABEL_CHARS)
                return [RULE.finding(tool_name(tool), f"The answer to probe '{label}' carries {kinds}: the model "
                                     "reads it as an instruction.", evidence=hits[0][2])]
    return []
