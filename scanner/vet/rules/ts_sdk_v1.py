"""TS_SDK_V1_*: TypeScript SDK v1 code (the `@modelcontextprotocol/sdk` monolith) that the split v2 packages renamed,
moved or removed (advisories: the SDK migration guide, not the protocol). The group runs only in a file importing an
`@modelcontextprotocol/*` module, and only as scanner/vet/sdk_gate.py allows. A v1 export name counts only when it is
imported from an `@modelcontextprotocol/` module (a local class named McpError is not the SDK's). One finding per
rule and line, so `import { McpError, ErrorCode }` is one TS_SDK_V1_MCPERROR."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from scanner.vet.model import Hit, ParsedFile, Token
from scanner.vet.sdk_gate import SdkGate

SCOPE = "@modelcontextprotocol/"
MONOLITH = "@modelcontextprotocol/sdk"
# The SSE transport paths SSE_TRANSPORT_DEPRECATED reports: one import line is not also a monolith finding.
SSE_PATHS = ("@modelcontextprotocol/sdk/server/sse", "@modelcontextprotocol/sdk/client/sse")
# Where a v1 subpath's exports live in v2, most specific first ('' = removed, no v2 equivalent).
PATH_MAP = (("@modelcontextprotocol/sdk/experimental/tasks", ""),
            ("@modelcontextprotocol/sdk/server/auth", "@modelcontextprotocol/server-legacy/auth"),
            ("@modelcontextprotocol/sdk/server/express", "@modelcontextprotocol/express"),
            ("@modelcontextprotocol/sdk/server/stdio", "@modelcontextprotocol/server/stdio"),
            ("@modelcontextprotocol/sdk/client/stdio", "@modelcontextprotocol/client/stdio"),
            ("@modelcontextprotocol/sdk/types", "@modelcontextprotocol/core"),
            ("@modelcontextprotocol/sdk/shared", "the @modelcontextprotocol/client or /server root export"),
            ("@modelcontextprotocol/sdk/server", "@modelcontextprotocol/server"),
            ("@modelcontextprotocol/sdk/client", "@modelcontextprotocol/client"),
            ("@modelcontextprotocol/sdk/inMemory", "@modelcontextprotocol/core"))
MODULE_RULES = (("@modelcontextprotocol/sdk/server/auth", "TS_SDK_V1_AUTH_MOVED"),
                ("@modelcontextprotocol/sdk/client/websocket", "TS_SDK_V1_WEBSOCKET"),
                ("@modelcontextprotocol/sdk/server/zod-compat", "TS_SDK_V1_ZOD_COMPAT"),
                ("@modelcontextprotocol/sdk/server/zod-json-schema-compat", "TS_SDK_V1_ZOD_COMPAT"))
V1_NAMES = {
    "McpError": "TS_SDK_V1_MCPERROR", "ErrorCode": "TS_SDK_V1_MCPERROR",
    "StreamableHTTPError": "TS_SDK_V1_HTTP_ERROR",
    "JSONRPCError": "TS_SDK_V1_JSONRPC_ERROR", "JSONRPCErrorSchema": "TS_SDK_V1_JSONRPC_ERROR",
    "isJSONRPCError": "TS_SDK_V1_JSONRPC_ERROR",
    "JSONRPCResponse": "TS_SDK_V1_JSONRPC_RESPONSE", "JSONRPCResponseSchema": "TS_SDK_V1_JSONRPC_RESPONSE",
    "isJSONRPCResponse": "TS_SDK_V1_JSONRPC_RESPONSE",
    "IsomorphicHeaders": "TS_SDK_V1_ISOMORPHIC_HEADERS", "RequestHandlerExtra": "TS_SDK_V1_HANDLER_EXTRA",
    "WebSocketClientTransport": "TS_SDK_V1_WEBSOCKET", "StreamableHTTPServerTransport": "TS_SDK_V1_NODE_HTTP_TRANSPORT",
    **dict.fromkeys(("schemaToJson", "parseSchemaAsync", "getSchemaShape", "getSchemaDescription", "isOptionalSchema",
                     "unwrapOptionalSchema", "toJsonSchemaCompat"), "TS_SDK_V1_ZOD_COMPAT"),
    "ResourceReference": "TS_SDK_V1_RESOURCE_REF", "ResourceReferenceSchema": "TS_SDK_V1_RESOURCE_REF",
}
# The v1 handler-context reads v2 moves onto `ctx` (`extra.signal` -> `ctx.mcpReq.signal`, …). `sessionId` keeps
# its name in v2, so it counts only off a parameter literally called `extra`.
EXTRA_PROPS = frozenset({"signal", "requestId", "_meta", "sendRequest", "sendNotification", "sessionId", "authInfo",
                         "requestInfo", "closeSSEStream", "closeStandaloneSSEStream"})

RuleFunction = Callable[[ParsedFile, SdkGate], Iterator[Hit]]


def applies(parsed: ParsedFile) -> bool:
    return any(t.has("import_module") and t.value.startswith(SCOPE) for t in parsed.tokens)


def _under(spec: str, prefix: str) -> bool:
    return spec == prefix or spec.startswith(prefix + "/") or spec.startswith(prefix + ".")


def _source(token: Token) -> str:
    return next((f[5:] for f in token.flags if f.startswith("from:")), "")


def _once_per_line(hits: Iterator[Hit]) -> Iterator[Hit]:
    lines: set[int] = set()
    for hit in hits:
        if hit.token.line not in lines:
            lines.add(hit.token.line)
            yield hit


def _named(rule_id: str, *, modules: tuple[str, ...] = ()) -> RuleFunction:
    """A rule over the v1 export names imported from an SDK module (high), and over v1 module paths (high)."""
    def find(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
        def hits() -> Iterator[Hit]:
            for token in parsed.tokens:
                if token.has("import_name") and _source(token).startswith(SCOPE) and \
                        V1_NAMES.get(token.value) == rule_id:
                    yield Hit(rule_id, token, "high")
                elif token.has("import_module") and any(_under(token.value, m) for m in modules):
                    yield Hit(rule_id, token, "high")
                elif rule_id == "TS_SDK_V1_RESOURCE_REF" and token.value == "ResourceTemplate" and \
                        token.has("import_name") and _under(_source(token), "@modelcontextprotocol/sdk/types"):
                    yield Hit(rule_id, token, "high")  # the wire type; the server-side class keeps its name
        yield from _once_per_line(hits())
    names = sorted(n for n, r in V1_NAMES.items() if r == rule_id)
    find.__doc__ = f"{rule_id}: {', '.join(names) or 'no names'} imported from an SDK module" + (
        f"; the modules {', '.join(modules)}" if modules else "") + " (high)."
    find.__name__ = rule_id.lower()
    return find


def _modules_of(rule_id: str) -> tuple[str, ...]:
    return tuple(m for m, r in MODULE_RULES if r == rule_id)


def _moved_to(spec: str) -> str:
    prefix, target = next(((p, t) for p, t in PATH_MAP if _under(spec, p)), ("", None))
    if target is None:
        return "Import from the v2 package that exports the symbol."
    if not target:
        return f"{prefix} was removed in v2 (tasks moved to the Extensions Track) and has no v2 equivalent."
    return f"{prefix} moves to {target}."


def monolith(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """An import of `@modelcontextprotocol/sdk` or a subpath (high), naming where the subpath moved; the SSE
    transport paths are SSE_TRANSPORT_DEPRECATED's."""
    yield from _once_per_line(
        Hit("TS_SDK_V1_MONOLITH", t, "high", _moved_to(t.value)) for t in parsed.tokens
        if t.has("import_module") and _under(t.value, MONOLITH) and not any(_under(t.value, p) for p in SSE_PATHS))


def _flagged(rule_id: str, flag: str, confidence: str) -> RuleFunction:
    def find(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
        yield from _once_per_line(Hit(rule_id, t, confidence) for t in parsed.tokens if t.has(flag))  # type: ignore
    find.__doc__ = f"{rule_id}: a token the TypeScript reader marks `{flag}` ({confidence})."
    find.__name__ = rule_id.lower()
    return find


def handler_extra(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """`RequestHandlerExtra` imported (high); `extra.signal`-style reads of the v1 context (medium)."""
    def hits() -> Iterator[Hit]:
        yield from _named("TS_SDK_V1_HANDLER_EXTRA")(parsed, gate)
        for token in parsed.tokens:
            if token.has("extra_prop") and token.value in EXTRA_PROPS and not (
                    token.has("ctx_param_prop") and token.value == "sessionId"):
                yield Hit("TS_SDK_V1_HANDLER_EXTRA", token, "medium")
    yield from _once_per_line(hits())


def variadic_registration(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """`x.tool(name, …)` / `.prompt(` / `.resource(` with two or more arguments: high on a server/mcp-named
    receiver, medium on another."""
    yield from _once_per_line(
        Hit("TS_SDK_V1_VARIADIC_REG", t, "high" if t.has("mcp_receiver") else "medium") for t in parsed.tokens
        if t.has("variadic_reg"))


def zod_below_floor(parsed: ParsedFile, gate: SdkGate) -> Iterator[Hit]:
    """A `zod` import (medium) in a project whose declared zod range admits a version below 4.2.0."""
    if not gate.zod_below_floor:
        return
    yield from _once_per_line(
        Hit("TS_SDK_V1_ZOD3", t, "medium", f"The project declares zod {gate.zod_below_floor}.") for t in parsed.tokens
        if t.has("import_module") and _under(t.value, "zod"))


RULES: dict[str, RuleFunction] = {
    "TS_SDK_V1_MONOLITH": monolith,
    "TS_SDK_V1_MCPERROR": _named("TS_SDK_V1_MCPERROR"),
    "TS_SDK_V1_HTTP_ERROR": _named("TS_SDK_V1_HTTP_ERROR"),
    "TS_SDK_V1_JSONRPC_ERROR": _named("TS_SDK_V1_JSONRPC_ERROR"),
    "TS_SDK_V1_HANDLER_EXTRA": handler_extra,
    "TS_SDK_V1_SCHEMA_HANDLER": _flagged("TS_SDK_V1_SCHEMA_HANDLER", "schema_handler_arg", "high"),
    "TS_SDK_V1_VARIADIC_REG": variadic_registration,
    "TS_SDK_V1_WEBSOCKET": _named("TS_SDK_V1_WEBSOCKET", modules=_modules_of("TS_SDK_V1_WEBSOCKET")),
    "TS_SDK_V1_NODE_HTTP_TRANSPORT": _named("TS_SDK_V1_NODE_HTTP_TRANSPORT"),
    "TS_SDK_V1_ZOD_COMPAT": _named("TS_SDK_V1_ZOD_COMPAT", modules=_modules_of("TS_SDK_V1_ZOD_COMPAT")),
    "TS_SDK_V1_AUTH_MOVED": _named("TS_SDK_V1_AUTH_MOVED", modules=_modules_of("TS_SDK_V1_AUTH_MOVED")),
    "TS_SDK_V1_RESOURCE_REF": _named("TS_SDK_V1_RESOURCE_REF"),
    "TS_SDK_V1_ZOD3": zod_below_floor,
    "TS_SDK_V1_JSONRPC_RESPONSE": _named("TS_SDK_V1_JSONRPC_RESPONSE"),
    "TS_SDK_V1_COMPLETABLE_NESTING": _flagged("TS_SDK_V1_COMPLETABLE_NESTING", "completable_optional", "high"),
    "TS_SDK_V1_FINISH_AUTH": _flagged("TS_SDK_V1_FINISH_AUTH", "finish_auth_code", "medium"),
    "TS_SDK_V1_ISOMORPHIC_HEADERS": _named("TS_SDK_V1_ISOMORPHIC_HEADERS"),
}
