"""The name shapes both parsers test around a literal (one definition, so the TypeScript and Python readers agree):
what counts as a handler registration, an error constructor, a client transport, a credential store."""

from __future__ import annotations

import re

CAPABILITY_KEYS = frozenset({"roots", "sampling", "logging"})
INIT_STRINGS = frozenset({"initialize", "notifications/initialized"})
HANDLERISH = re.compile(r"handler|handle|register|method|route|request|notification|(^|\.)on$", re.I)
NOT_A_METHOD_REGISTRATION = re.compile(r"tool|prompt|resource", re.I)
METHOD_OR_TYPE = re.compile(r"method|type", re.I)
CAPABILITY_CALL = re.compile(r"capabilit", re.I)
TRANSPORTISH = re.compile(r"transport|client", re.I)
ERRORISH = re.compile(r"error", re.I)
CODEISH = re.compile(r"code", re.I)
INCLUDE_CONTEXT_KEYS = frozenset({"includeContext", "include_context"})
INCLUDE_CONTEXT_VALUES = frozenset({"thisServer", "allServers"})  # deprecated with Sampling
SESSION_KEYS = frozenset({"sessionId", "session_id"})
SSE_OPTION_KEYS = frozenset({"eventStore", "event_store", "resumptionToken", "resumption_token",
                             "onresumptiontoken", "on_resumption_token", "onResumptionToken"})
STORE_VERBS = re.compile(r"^(set|setItem|put|add|write|__setitem__)$", re.I)
STOREISH = re.compile(r"save|store|persist|upsert|cache|credential", re.I)
CREDENTIALISH = re.compile(r"client_secret|clientSecret|client_id|clientId|credential", re.I)
SERVERISH_KEY = re.compile(r"server|url|uri|resource|endpoint|host|base|target|mcp", re.I)
ISSUERISH = re.compile(r"\biss\b|issuer", re.I)
TOKENISH = re.compile(r"(^|[._])tokens?([._]|$)|access_?token|oauth_?token|refresh_?token|bearer_?token", re.I)
CLIENT_SECRETISH = re.compile(r"client_secret|clientSecret", re.I)


def registration_callee(callee: str, strict: bool) -> bool:
    """Does a call named `callee` register a protocol method (its string argument is a method name)? `strict` (for
    `ping`) refuses tool/prompt/resource registrations: a tool may be named ping."""
    if strict and NOT_A_METHOD_REGISTRATION.search(callee):
        return False
    return bool(HANDLERISH.search(callee))


def literal_key_flags(name: str, literal: object) -> list[str]:
    """The flags a key gets from the literal it is set to, in either language: `transport: 'sse'`,
    `event: 'endpoint'` (the HTTP+SSE transport), `includeContext: 'thisServer'`."""
    flags = []
    if literal == "sse" and "transport" in name.lower():
        flags.append("transport_sse")
    if literal == "endpoint" and name == "event":
        flags.append("sse_endpoint_event")
    if literal in INCLUDE_CONTEXT_VALUES and name in INCLUDE_CONTEXT_KEYS:
        flags.append("include_context")
    return flags


def looks_like_token_store(container: str, value: str) -> bool:
    """An access-token cache, not a store of registered client credentials (a client_secret settles it)."""
    return not CLIENT_SECRETISH.search(value) and bool(TOKENISH.search(container) or TOKENISH.search(value))


def credential_key_flagged(key_text: str, is_string: bool) -> bool:
    """Is this store key clearly not issuer-derived: a bare string, or a server/URL/resource-named value?"""
    if not key_text or ISSUERISH.search(key_text) or CREDENTIALISH.search(key_text):
        return False
    return is_string or bool(SERVERISH_KEY.search(key_text))
