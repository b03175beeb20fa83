"""File-level facts some rules are gated on, read from the tokens (never from comments): does the file talk MCP at
all, where it mentions capabilities or includeContext, whether it is authorization-server code."""

from __future__ import annotations

import re
from dataclasses import dataclass

from scanner.vet.model import ParsedFile

MCP_CONTEXT = re.compile(r"\bmcp\b|mcp[-_]|^mcp|modelcontextprotocol|model context protocol", re.I)
CAPABILITIES = re.compile(r"capabilities", re.I)
INCLUDE_CONTEXT = re.compile(r"includeContext|include_context")
# Authorization-SERVER code (it issues, hashes and stores registrations): the client-side auth MUSTs do not apply.
SERVER_AUTH = re.compile(r"client_secret_hash|hashed_client_secret|mcp\.server\.auth|AuthorizationServerProvider|"
                         r"register_client_endpoint", re.I)
SERVER_AUTH_TEXT = re.compile(r"(?:body|payload|request|req)\s*(?:\.\s*get\s*\(\s*|\[\s*|\.)['\"]?client_(?:name|id)"
                              r"\b", re.I)
GRANT_TYPE = re.compile(r"^grant_?type$", re.I)
REGISTRATION_SITE = re.compile(r"registration_endpoint|registration_request|register_client|^register", re.I)
NEAR = 5


@dataclass(frozen=True)
class FileFacts:
    mcp_context: bool
    capability_lines: frozenset[int]
    include_context_lines: frozenset[int]
    server_auth: bool
    grant_type_lines: tuple[int, ...]
    registration_lines: tuple[int, ...]

    def near_capabilities(self, line: int) -> bool:
        return any(abs(line - other) <= NEAR for other in self.capability_lines)

    def near_include_context(self, line: int) -> bool:
        return any(abs(line - other) <= NEAR for other in self.include_context_lines)


def facts_of(parsed: ParsedFile) -> FileFacts:
    tokens = parsed.tokens
    server_auth = any(SERVER_AUTH.search(t.value) for t in tokens) or any(
        SERVER_AUTH_TEXT.search(line) for line in parsed.lines)
    return FileFacts(
        mcp_context=any(t.kind in ("string", "name") and MCP_CONTEXT.search(t.value) for t in tokens),
        capability_lines=frozenset(t.line for t in tokens if CAPABILITIES.search(t.value)),
        include_context_lines=frozenset(t.line for t in tokens if INCLUDE_CONTEXT.search(t.value)),
        server_auth=server_auth,
        grant_type_lines=tuple(t.line for t in tokens if GRANT_TYPE.match(t.value)),
        registration_lines=tuple(t.line for t in tokens if REGISTRATION_SITE.search(t.value)))
