"""The `vet` rule groups, one module each: every rule is data (its entry in scanner/vet/rules.toml) plus one function
`(ParsedFile, FileFacts) -> Iterator[Hit]`. GROUPS maps each rule id to its function; the engine runs them all and a
test checks that GROUPS and rules.toml list the same ids."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import MappingProxyType

from scanner.vet.facts import FileFacts
from scanner.vet.model import Hit, ParsedFile
from scanner.vet.rules import auth, capabilities, error_codes, handshake, removed_methods, sessions, tasks, transport

RuleFunction = Callable[[ParsedFile, FileFacts], Iterator[Hit]]

GROUPS: MappingProxyType[str, RuleFunction] = MappingProxyType({
    **sessions.RULES, **handshake.RULES, **error_codes.RULES, **tasks.RULES, **removed_methods.RULES,
    **capabilities.RULES, **transport.RULES, **auth.RULES,
})
