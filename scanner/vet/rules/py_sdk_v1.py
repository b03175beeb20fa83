"""PY_SDK_V1_*: Python SDK v1 code that the v2 `mcp` package renamed or removed (advisories: the SDK migration guide,
not the protocol). The group runs only in a file that imports `mcp` (a local class named FastMCP elsewhere is not the
SDK) and only as scanner/vet/sdk_gate.py allows. A v1 name counts only when the file imports it from an `mcp` module
or reads it as an attribute (`exceptions.McpError`): one imported from elsewhere is that module's (fastmcp keeps its
own McpError alias working under mcp 2). Wire JSON keeps camelCase in v2, so dict keys and strings are never read as
the renamed model fields: only attribute access and keyword arguments are."""

from __future__ import annotations

import re
from collections.abc import Iterator

from scanner.vet.model import Hit, ParsedFile, Token
from scanner.vet.sdk_gate import SdkGate

V1_MODULES = {"mcp.server.fastmcp": "PY_SDK_V1_FASTMCP", "mcp.client.websocket": "PY_SDK_V1_WEBSOCKET",
              "mcp.server.websocket": "PY_SDK_V1_WEBSOCKET"}
V1_NAMES = {"McpError": "PY_SDK_V1_MCPERROR", "streamablehttp_client": "PY_SDK_V1_STREAMABLEHTTP_CLIENT",
            "websocket_client": "PY_SDK_V1_WEBSOCKET", "RFC7523OAuthClientProvider": "PY_SDK_V1_OAUTH",
            "JWTParameters": "PY_SDK_V1_OAUTH"}
CAMEL_FIELDS = frozenset({"inputSchema", "outputSchema", "isError", "nextCursor"})
MCP_ENV = re.compile(r"^MCP_[A-Z][A-Z0-9_]*$")
OAUTHISH = re.compile(r"oauth|clientcredentials", re.I)
SDK_CLIENTS = frozenset({"Client", "MCPClient"})


def applies(parsed: ParsedFile) -> bool:
    """The file imports `mcp` or an `mcp.*` module."""
    return any(t.value == "mcp" or t.value.startswith("mcp.") for t in parsed.tokens
               if t.has("import_module") or t.has("import_name"))


def _under(value: str, module: str) -> bool:
    return value == module or value.startswith(module + ".")


def _from_mcp(token: Token) -> bool:
    return any(f.startswith("from:") and _under(f[5:], "mcp") for f in token.flags)


def _sdk_names(parsed: ParsedFile) -> frozenset[str]:
    """The v1 names this file imports from an `mcp` module (a use of one of them is the SDK's); all of them after a
    `from mcp… import *`."""
    imported = {t.value for t in parsed.tokens if t.has("import_name") and _from_mcp(t)}
    return frozenset(V1_NAMES) if "*" in imported else frozenset(imported & V1_NAMES.keys())


def _v1_name(rule_id: str, token: Token, sdk_names: frozenset[str]) -> Hit | None:
    """A v1-only name: on its import from `mcp` (high), at a use of the SDK's name or an attribute read (medium)."""
    if token.kind != "name" or V1_NAMES.get(token.value) != rule_id:
        return None
    if token.has("import_name"):
        return Hit(rule_id, token, "high") if _from_mcp(token) else None
    return Hit(rule_id, token, "medium") if token.value in sdk_names or token.has("attribute") else None


def _v1_module(rule_id: str, token: Token) -> Hit | None:
    if token.has("import_module") and any(_under(token.value, m) for m, r in V1_MODULES.items() if r == rule_id):
        return Hit(rule_id, token, "high")
    return None


def _kwarg(token: Token, name: str, callee: re.Pattern[str] | frozenset[str]) -> bool:
    if not (token.has("kwarg") and token.value == name):
        return False
    called = next((f[7:] for f in token.flags if f.startswith("callee:")), "")
    return bool(callee.search(called)) if isinstance(callee, re.Pattern) else called in callee


def fastmcp(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """`mcp.server.fastmcp` imported (high): a hard ModuleNotFoundError under v2."""
    yield from (h for h in (_v1_module("PY_SDK_V1_FASTMCP", t) for t in parsed.tokens) if h)


def mcperror(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    names = _sdk_names(parsed)
    yield from (h for h in (_v1_name("PY_SDK_V1_MCPERROR", t, names) for t in parsed.tokens) if h)


def camel_fields(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """`tool.inputSchema` or `Tool(inputSchema=…)` (medium); `{"inputSchema": …}` builds wire JSON and is clean."""
    for token in parsed.tokens:
        if token.value in CAMEL_FIELDS and (token.has("attribute") or token.has("kwarg")):
            yield Hit("PY_SDK_V1_CAMEL_FIELDS", token, "medium")


def streamablehttp_client(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    names = _sdk_names(parsed)
    yield from (h for h in (_v1_name("PY_SDK_V1_STREAMABLEHTTP_CLIENT", t, names) for t in parsed.tokens) if h)


def websocket(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """The websocket modules (high) and `websocket_client` (import high, use medium)."""
    names = _sdk_names(parsed)
    for token in parsed.tokens:
        hit = _v1_module("PY_SDK_V1_WEBSOCKET", token) or _v1_name("PY_SDK_V1_WEBSOCKET", token, names)
        if hit:
            yield hit


def get_context(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """`server.get_context` (medium); a bare local get_context() and the injected `ctx` parameter are not it."""
    for token in parsed.tokens:
        if token.kind == "name" and token.value == "get_context" and token.has("attribute"):
            yield Hit("PY_SDK_V1_GET_CONTEXT", token, "medium")


def timedelta_timeout(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """A `*timeout*=timedelta(…)` keyword argument (high)."""
    for token in parsed.tokens:
        if token.has("kwarg") and token.has("timedelta_value") and "timeout" in token.value.lower():
            yield Hit("PY_SDK_V1_TIMEDELTA", token, "high")


def mcp_env(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """An `MCP_*` string in a file that reads the environment (os.environ / getenv), medium."""
    if not any(t.kind == "name" and t.value in ("environ", "getenv") for t in parsed.tokens):
        return
    for token in parsed.tokens:
        if token.kind == "string" and MCP_ENV.match(token.value):
            yield Hit("PY_SDK_V1_ENV", token, "medium")


def oauth(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """RFC7523OAuthClientProvider / JWTParameters; `scopes=` on an OAuth provider (medium); `timeout=` on
    OAuthClientProvider (high)."""
    names = _sdk_names(parsed)
    for token in parsed.tokens:
        hit = _v1_name("PY_SDK_V1_OAUTH", token, names)
        if hit:
            yield hit
        elif _kwarg(token, "scopes", OAUTHISH):
            yield Hit("PY_SDK_V1_OAUTH", token, "medium")
        elif _kwarg(token, "timeout", frozenset({"OAuthClientProvider"})):
            yield Hit("PY_SDK_V1_OAUTH", token, "high")


def cache_false(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """`Client(cache=False)` (high); httpx.AsyncClient(cache=False) is another API."""
    for token in parsed.tokens:
        if _kwarg(token, "cache", SDK_CLIENTS) and token.has("false_value"):
            yield Hit("PY_SDK_V1_CACHE_FALSE", token, "high")


def file_resource(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """`FileResource(is_binary=…)` (high)."""
    for token in parsed.tokens:
        if _kwarg(token, "is_binary", frozenset({"FileResource"})):
            yield Hit("PY_SDK_V1_FILERESOURCE", token, "high")


def httpx_import(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """`import httpx` / `from httpx import …` (medium) when the manifest does not declare httpx itself."""
    if gate.httpx_declared:
        return
    for token in parsed.tokens:
        if (token.has("import_name") or token.has("import_module")) and _under(token.value, "httpx"):
            yield Hit("PY_SDK_V1_HTTPX", token, "medium")


RULES = {"PY_SDK_V1_FASTMCP": fastmcp, "PY_SDK_V1_MCPERROR": mcperror, "PY_SDK_V1_CAMEL_FIELDS": camel_fields,
         "PY_SDK_V1_STREAMABLEHTTP_CLIENT": streamablehttp_client, "PY_SDK_V1_WEBSOCKET": websocket,
         "PY_SDK_V1_GET_CONTEXT": get_context, "PY_SDK_V1_TIMEDELTA": timedelta_timeout, "PY_SDK_V1_ENV": mcp_env,
         "PY_SDK_V1_OAUTH": oauth, "PY_SDK_V1_CACHE_FALSE": cache_false, "PY_SDK_V1_FILERESOURCE": file_resource,
         "PY_SDK_V1_HTTPX": httpx_import}
