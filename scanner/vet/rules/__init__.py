"""The `vet` rule groups, one module each: every rule is data (its entry in scanner/vet/rules.toml) plus one function
`(ParsedFile, FileFacts) -> Iterator[Hit]`. GROUPS maps each rule id to its function; the engine runs them all and a
test checks that GROUPS plus ADVISORY and rules.toml list the same ids. ADVISORY holds the two SDK-migration groups,
`(ParsedFile, SdkGate) -> Iterator[Hit]`, each with the precondition a file must meet (it imports the SDK), by
language: the engine runs them as scanner/vet/sdk_gate.py decides."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import MappingProxyType

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile
from scanner.vet.rules import (auth, capabilities, error_codes, handshake, py_sdk_v1, removed_methods, sessions, tasks,
                               transport, ts_sdk_v1)
from scanner.vet.sdk_gate import SdkGate

RuleFunction = Callable[[ParsedFile, FileFacts], Iterator[Hit]]

GROUPS: MappingProxyType[str, RuleFunction] = MappingProxyType({
    **sessions.RULES, **handshake.RULES, **error_codes.RULES, **tasks.RULES, **removed_methods.RULES,
    **capabilities.RULES, **transport.RULES, **auth.RULES,
})

AdvisoryFunction = Callable[[ParsedFile, SdkGate], Iterator[Hit]]


class AdvisoryGroup:
    def __init__(self, applies: Callable[[ParsedFile], bool], rules: dict[str, AdvisoryFunction]) -> None:
        self.applies, self.rules = applies, MappingProxyType(rules)


PY_ADVISORIES = AdvisoryGroup(py_sdk_v1.applies, py_sdk_v1.RULES)
TS_ADVISORIES = AdvisoryGroup(ts_sdk_v1.applies, ts_sdk_v1.RULES)
ADVISORY: MappingProxyType[str, AdvisoryFunction] = MappingProxyType({**py_sdk_v1.RULES, **ts_sdk_v1.RULES})
