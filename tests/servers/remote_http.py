"""Streamable HTTP test servers on loopback, for the `--url` door (run as a subprocess by tests/remote_helpers.py).

    python remote_http.py mcp PORT WRITES_FILE   an MCP server: a read-only `lookup`, a read-only `echo_headers`
                                                 (answers with the headers of the request that called it), and a
                                                 `delete_records` write tool that appends a line to WRITES_FILE
    python remote_http.py redirect PORT TO_URL   answers every request with a 307 to TO_URL (another origin)

Each prints `ready` once it listens. Test-only: never a real domain, loopback only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations
from starlette.responses import RedirectResponse

LAST_HEADERS: dict[str, str] = {}  # of the latest HTTP request (the tests call one tool at a time)


def mcp_app(writes_file: Path) -> Any:
    server = MCPServer("remote-zoo")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def lookup(key: str) -> str:
        """Look up a key in the read-only catalogue."""
        return f"value of {key[:40]}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo_headers() -> str:
        """Show the HTTP headers this request arrived with."""
        return "\n".join(f"{name}: {value}" for name, value in sorted(LAST_HEADERS.items()))

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def delete_records(table: str) -> str:
        """Delete every record of a table."""
        with writes_file.open("a", encoding="utf-8") as out:
            out.write(f"deleted {table}\n")
        return "deleted"

    app = server.streamable_http_app(stateless_http=True, json_response=True)

    async def remember_headers(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            LAST_HEADERS.clear()
            LAST_HEADERS.update({k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]})
        await app(scope, receive, send)

    return remember_headers


def redirect_app(to_url: str) -> Any:
    async def redirect(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            await RedirectResponse(to_url, status_code=307)(scope, receive, send)

    return redirect


def main() -> None:
    mode, port, extra = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    app = mcp_app(Path(extra)) if mode == "mcp" else redirect_app(extra)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    print("ready", flush=True)
    server.run()


if __name__ == "__main__":
    main()
