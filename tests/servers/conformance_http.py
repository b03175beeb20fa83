"""Streamable HTTP servers on loopback for the HTTP-only conformance checks (W14-W17; tests/test_conformance_http.py).

    python conformance_http.py compliant PORT LOG      the SDK's own 2026-07-28 serving (it validates the routing
                                                       headers), OAuth metadata as the specification lays it out
                                                       (protected-resource metadata naming a same-origin issuer whose
                                                       metadata offers CIMD and RFC 9207 iss), no HTTP+SSE endpoint
    python conformance_http.py noncompliant PORT LOG   the same tools behind a layer that overwrites Mcp-Method with the
                                                       body's method (so a missing or mismatched header is accepted);
                                                       authorization-server metadata at the origin with only DCR and no
                                                       iss support; the old two-endpoint transport's `event: endpoint`
                                                       on GET /sse
    python conformance_http.py legacy PORT LOG         a hand-written 2025-11-25-only server: no session, no answer
                                                       (400, "No valid session ID"); initialize mints Mcp-Session-Id;
                                                       server/discover is -32601; DELETE ends the session

Every JSON-RPC method the server receives is appended to LOG (one a line), so a test can see what was sent. The MCP
endpoint is /mcp. Test-only: never a real domain, loopback only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from starlette.responses import JSONResponse, Response, StreamingResponse

Scope = dict[str, Any]


def mcp_app() -> Any:
    server = MCPServer("conformance-zoo")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup(key: str) -> str:
        """Look up a key in the read-only catalogue."""
        return f"value of {key[:40]}"

    @server.resource("zoo://catalogue")
    def catalogue() -> str:
        """The catalogue."""
        return "one entry"

    return server.streamable_http_app(stateless_http=True, json_response=True)


def metadata(port: int, compliant: bool) -> dict[str, dict[str, Any]]:
    origin = f"http://127.0.0.1:{port}"
    if compliant:
        return {"/.well-known/oauth-protected-resource/mcp": {"resource": f"{origin}/mcp",
                                                              "authorization_servers": [f"{origin}/"]},
                "/.well-known/oauth-authorization-server": {
                    "issuer": f"{origin}/", "authorization_endpoint": f"{origin}/authorize",
                    "token_endpoint": f"{origin}/token", "registration_endpoint": f"{origin}/register",
                    "client_id_metadata_document_supported": True,
                    "authorization_response_iss_parameter_supported": True}}
    return {"/.well-known/oauth-authorization-server": {
        "issuer": f"{origin}/", "authorization_endpoint": f"{origin}/authorize", "token_endpoint": f"{origin}/token",
        "registration_endpoint": f"{origin}/register"}}


async def _body(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def app(port: int, log: Path, compliant: bool) -> Any:
    inner = mcp_app()
    documents = metadata(port, compliant)

    async def serve(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        path = scope["path"]
        if path in documents:
            await JSONResponse(documents[path])(scope, receive, send)
            return
        if path == "/sse" and not compliant:
            await StreamingResponse(iter([b"event: endpoint\r\ndata: /messages/?session_id=zoo1\r\n\r\n"]),
                                    media_type="text/event-stream")(scope, receive, send)
            return
        if path != "/mcp":
            await Response(status_code=404)(scope, receive, send)
            return
        body = await _body(receive) if scope["method"] == "POST" else b""
        method = _method(body)
        if method:
            with log.open("a", encoding="utf-8") as out:
                out.write(method + "\n")
        if method and not compliant:  # the non-compliant layer: the header always "matches" the body
            headers = [(k, v) for k, v in scope["headers"] if k.lower() != b"mcp-method"]
            if any(k.lower() == b"mcp-protocol-version" for k, _ in headers):
                headers.append((b"mcp-method", method.encode()))
            scope = {**scope, "headers": headers}
        sent = False

        async def replay() -> dict[str, Any]:
            nonlocal sent
            if sent:
                return await receive()
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await inner(scope, replay, send)

    return serve


def legacy_app(log: Path) -> Any:
    """Only the 2025-11-25 handshake shape, with a session id (what the probe must tell from a 2026-07-28 server)."""
    sessions: set[str] = set()

    async def serve(scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        session = headers.get("mcp-session-id")
        if scope["method"] == "GET":
            await Response(status_code=405)(scope, receive, send)
            return
        if scope["method"] == "DELETE":
            with log.open("a", encoding="utf-8") as out:
                out.write(f"DELETE {'known' if session in sessions else 'unknown'}\n")
            sessions.discard(session or "")
            await Response(status_code=200)(scope, receive, send)
            return
        body = await _body(receive)
        message = json.loads(body) if body else {}
        method = message.get("method")
        with log.open("a", encoding="utf-8") as out:
            out.write(f"{method}\n")
        if method == "initialize":
            sessions.add("zoo-session-1")
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "legacy", "version": "1"}}
            await JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result},
                               headers={"Mcp-Session-Id": "zoo-session-1"})(scope, receive, send)
        elif "id" not in message:
            await Response(status_code=202)(scope, receive, send)
        elif session not in sessions:
            await JSONResponse({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32000, "message": "Bad Request: No valid session ID provided"}}, 400)(scope, receive, send)
        elif method == "tools/list":
            await JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": []}})(scope, receive, send)
        else:
            await JSONResponse({"jsonrpc": "2.0", "id": message["id"], "error": {
                "code": -32601, "message": "Method not found"}})(scope, receive, send)

    return serve


def _method(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) and isinstance(message.get("method"), str) else None


def main() -> None:
    mode, port, log = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    served = legacy_app(log) if mode == "legacy" else app(port, log, mode == "compliant")
    config = uvicorn.Config(served, host="127.0.0.1", port=port, log_level="warning",
                            lifespan="off" if mode == "legacy" else "on")
    print("ready", flush=True)
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()
