"""ERROR_CODE_32002 and ERROR_CODE_RENUMBERED: error codes the 2026-07-28 revision changes."""

from __future__ import annotations

from collections.abc import Iterator
from types import MappingProxyType

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile

RESOURCE_NOT_FOUND = "-32002"
RENUMBERED = MappingProxyType({"-32001": "-32020", "-32003": "-32021", "-32004": "-32022"})


def error_code_32002(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """The number literal -32002 (a string or a comment holding it is not a number token)."""
    for token in parsed.tokens:
        if token.kind == "number" and token.value == RESOURCE_NOT_FOUND:
            yield Hit("ERROR_CODE_32002", token, "high")


def error_code_renumbered(parsed: ParsedFile, facts: FileFacts) -> Iterator[Hit]:
    """-32001/-32003/-32004 only in an error-code position: -32000..-32019 stay implementation-defined."""
    for token in parsed.tokens:
        if token.kind == "number" and token.value in RENUMBERED and token.has("error_code"):
            yield Hit("ERROR_CODE_RENUMBERED", token, "high")


RULES = {"ERROR_CODE_32002": error_code_32002, "ERROR_CODE_RENUMBERED": error_code_renumbered}
