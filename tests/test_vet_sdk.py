"""The SDK-migration advisories (PY_SDK_V1_*, TS_SDK_V1_*): one firing case and one near miss per rule, in a folder
whose manifest declares SDK v2 (so the group runs); and the gate: v2 runs them, v1 holds them back with one counted
note, both TypeScript families run them, anything undetermined runs them with every finding saying so."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scanner.vet import VetOptions, vet_tree
from scanner.vet.catalogue import BY_ID
from scanner.vet.model import Tier
from scanner.vet.rules import ADVISORY
from tests.vet_helpers import CORPUS, vet

PY_V2 = '[project]\nname = "a"\ndependencies = ["mcp>=2.1,<3"]\n'
TS_V2 = '{"dependencies": {"@modelcontextprotocol/server": "^2.0.0"}}'
PY = "import mcp\n"
TS = "import { McpServer } from '@modelcontextprotocol/server';\n"
V1 = "import { Server } from '@modelcontextprotocol/sdk/server/index.js';\n"

# (rule, file name, firing source, confidence, near-miss source)
CASES = [
    ("PY_SDK_V1_FASTMCP", "a.py", "from mcp.server.fastmcp import FastMCP", "high",
     "from mcp.server.mcpserver import MCPServer\nclass FastMCP: pass"),
    ("PY_SDK_V1_MCPERROR", "a.py", PY + "try: pass\nexcept mcp.McpError: pass", "medium",
     PY + "from mcp.shared.exceptions import MCPError"),
    ("PY_SDK_V1_MCPERROR", "a.py", "from mcp.shared.exceptions import McpError as E", "high",
     "class McpError(Exception): pass"),  # no mcp import: the group does not run
    ("PY_SDK_V1_CAMEL_FIELDS", "a.py", PY + "schema = tool.inputSchema", "medium",
     PY + 'wire = {"inputSchema": {}, "isError": False}\nschema = tool.input_schema'),
    ("PY_SDK_V1_STREAMABLEHTTP_CLIENT", "a.py", "from mcp.client.streamable_http import streamablehttp_client",
     "high", "from mcp.client.streamable_http import streamable_http_client"),
    ("PY_SDK_V1_WEBSOCKET", "a.py", "from mcp.client.websocket import websocket_client", "high",
     "from mcp.client.stdio import stdio_client\nimport websockets"),
    ("PY_SDK_V1_GET_CONTEXT", "a.py", PY + "ctx = server.get_context()", "medium",
     PY + "def tool(x: int, ctx: Context): return get_context()"),
    ("PY_SDK_V1_TIMEDELTA", "a.py", PY + "session.call_tool('x', {}, read_timeout_seconds=timedelta(seconds=3))",
     "high", PY + "session.call_tool('x', {}, read_timeout_seconds=3.0)\ncache(ttl=timedelta(seconds=3))"),
    ("PY_SDK_V1_ENV", "a.py", PY + "import os\nport = os.environ.get('MCP_PORT')", "medium",
     PY + "port = settings.get('MCP_PORT')"),
    ("PY_SDK_V1_OAUTH", "a.py", PY + "p = ClientCredentialsProvider(url, scopes=['read'])", "medium",
     PY + "p = ClientCredentialsProvider(url, scope='read')\nq = Search(scopes=['a'])"),
    ("PY_SDK_V1_OAUTH", "a.py", PY + "p = OAuthClientProvider(server_url=u, timeout=30)", "high",
     PY + "p = OAuthClientProvider(server_url=u)"),
    ("PY_SDK_V1_CACHE_FALSE", "a.py", PY + "c = Client(server, cache=False)", "high",
     PY + "c = Client(server, cache=None)\nh = httpx.AsyncClient(cache=False)"),
    ("PY_SDK_V1_FILERESOURCE", "a.py", PY + "r = FileResource(uri=u, path=p, is_binary=True)", "high",
     PY + "r = FileResource(uri=u, path=p, mime_type='image/png')\nf = Blob(is_binary=True)"),
    ("PY_SDK_V1_HTTPX", "a.py", PY + "import httpx", "medium", PY + "import httpx2\nhttpx = None"),
    ("TS_SDK_V1_MONOLITH", "a.ts", V1, "high",
     TS + "import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';"),
    ("TS_SDK_V1_MCPERROR", "a.ts", "import { McpError as E } from '@modelcontextprotocol/sdk/types.js';", "high",
     TS + "class McpError extends Error {}"),
    ("TS_SDK_V1_HTTP_ERROR", "a.js",
     "const { StreamableHTTPError } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');", "high",
     "const { SdkHttpError } = require('@modelcontextprotocol/client');"),
    ("TS_SDK_V1_JSONRPC_ERROR", "a.ts", "import type { JSONRPCError } from '@modelcontextprotocol/sdk/types.js';",
     "high", "import type { JSONRPCErrorResponse } from '@modelcontextprotocol/core';"),
    ("TS_SDK_V1_HANDLER_EXTRA", "a.ts", TS + "server.setRequestHandler('tools/call', async (req, extra) => "
     "extra.signal);", "medium",
     TS + "server.setRequestHandler('tools/call', async (req, ctx) => ctx.mcpReq.signal);\n"
     "server.setRequestHandler('tools/list', async (req, e) => e.sessionId);"),
    ("TS_SDK_V1_SCHEMA_HANDLER", "a.ts", V1 + "server.setRequestHandler(CallToolRequestSchema, h);", "high",
     TS + "server.setRequestHandler('tools/call', h);\nserver.setRequestHandler(CallToolResultSchema, h);"),
    ("TS_SDK_V1_VARIADIC_REG", "a.ts", TS + "server.tool('greet', { name: z.string() }, h);", "high",
     TS + "server.registerTool('greet', { inputSchema: z.object({}) }, h);\nrouter.tool('x');"),
    ("TS_SDK_V1_VARIADIC_REG", "a.ts", TS + "app.prompt('p', cb);", "medium", TS + "app.prompt('p');"),
    ("TS_SDK_V1_WEBSOCKET", "a.ts", "import { WebSocketClientTransport } from "
     "'@modelcontextprotocol/sdk/client/websocket.js';", "high", TS + "const ws = new WebSocket(u);"),
    ("TS_SDK_V1_NODE_HTTP_TRANSPORT", "a.ts", "import { StreamableHTTPServerTransport } from "
     "'@modelcontextprotocol/sdk/server/streamableHttp.js';", "high",
     "import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';"),
    ("TS_SDK_V1_ZOD_COMPAT", "a.ts", TS + "import { schemaToJson } from '@modelcontextprotocol/server';", "high",
     TS + "import { fromJsonSchema } from '@modelcontextprotocol/server';\nimport { schemaToJson } from './local';"),
    ("TS_SDK_V1_AUTH_MOVED", "a.ts", "import { mcpAuthRouter } from '@modelcontextprotocol/sdk/server/auth/router.js';",
     "high", "import { mcpAuthRouter } from '@modelcontextprotocol/server-legacy/auth';"),
    ("TS_SDK_V1_RESOURCE_REF", "a.ts", "import { ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';",
     "high", "import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';"),
    ("TS_SDK_V1_JSONRPC_RESPONSE", "a.ts", "import * as types from '@modelcontextprotocol/sdk/types.js';\n"
     "types.JSONRPCResponseSchema.parse(m);", "high",
     TS + "import { JSONRPCResultResponseSchema } from '@modelcontextprotocol/core';"),
    ("TS_SDK_V1_COMPLETABLE_NESTING", "a.ts", TS + "const a = completable(z.string().optional(), cb);", "high",
     TS + "const a = completable(z.string(), cb).optional();"),
    ("TS_SDK_V1_FINISH_AUTH", "a.ts", TS + "await transport.finishAuth(code);", "medium",
     TS + "await transport.finishAuth(new URL(u).searchParams);\nawait transport.finishAuth(params);"),
    ("TS_SDK_V1_ISOMORPHIC_HEADERS", "a.ts", "import type { IsomorphicHeaders } from '@modelcontextprotocol/sdk/types.js';",
     "high", TS + "const h: Headers = new Headers();"),
]


def _repo(where: Path, name: str, source: str, manifest: str | None = None) -> Path:
    """A checkout (bounded by .git, so no manifest above it counts) holding one file and a v2 manifest."""
    (where / ".git").mkdir(parents=True)
    if manifest is None:
        manifest = PY_V2 if name.endswith(".py") else TS_V2
    (where / ("pyproject.toml" if name.endswith(".py") else "package.json")).write_text(manifest, encoding="utf-8")
    (where / name).write_text(source + "\n", encoding="utf-8")
    return where


def _advisories(root: Path) -> list[tuple[str, str]]:
    return [(f.rule_id, f.confidence) for f in vet(root).findings if f.tier is Tier.ADVISORY]


@pytest.mark.parametrize(("rule", "name", "firing", "confidence", "near_miss"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_advisory_fires_and_its_near_miss_does_not(tmp_path: Path, rule: str, name: str, firing: str,
                                                       confidence: str, near_miss: str) -> None:
    assert (rule, confidence) in _advisories(_repo(tmp_path / "fire", name, firing))
    assert rule not in {r for r, _ in _advisories(_repo(tmp_path / "miss", name, near_miss))}


def test_zod_below_the_v2_floor(tmp_path: Path) -> None:
    source = TS + "import { z } from 'zod';"
    low = '{"dependencies": {"@modelcontextprotocol/server": "^2.0.0", "zod": "^3.25 || ^4.0"}}'
    ok = '{"dependencies": {"@modelcontextprotocol/server": "^2.0.0", "zod": "^4.2.0"}}'
    fired = vet(_repo(tmp_path / "low", "a.ts", source, low)).findings
    assert [(f.rule_id, f.confidence) for f in fired] == [("TS_SDK_V1_ZOD3", "medium")]
    assert "The project declares zod ^3.25 || ^4.0." in fired[0].message
    assert _advisories(_repo(tmp_path / "ok", "a.ts", source, ok)) == []


def test_httpx_declared_directly_is_not_an_advisory(tmp_path: Path) -> None:
    declared = '[project]\nname = "a"\ndependencies = ["mcp>=2.1,<3", "httpx>=0.27"]\n'
    assert _advisories(_repo(tmp_path, "a.py", PY + "import httpx", declared)) == []


def test_every_advisory_has_a_case_and_code() -> None:
    advisories = {i for i, r in BY_ID.items() if r.tier is Tier.ADVISORY}
    assert {c[0] for c in CASES} | {"TS_SDK_V1_ZOD3"} == advisories == set(ADVISORY)
    assert sum(i.startswith("PY_SDK_V1_") for i in advisories) == 12
    assert sum(i.startswith("TS_SDK_V1_") for i in advisories) == 17
    assert all(BY_ID[i].doc.startswith("https://") and "/draft/" not in BY_ID[i].doc for i in advisories)


def test_an_inline_directive_silences_an_advisory_and_counts_it(tmp_path: Path) -> None:
    root = _repo(tmp_path, "a.py", PY + "import httpx  # mcp-vet-disable-line PY_SDK_V1_HTTPX")
    result = vet(root)
    assert result.findings == [] and [(s.rule_id, s.directive) for s in result.suppressed] == [
        ("PY_SDK_V1_HTTPX", "disable-line")]


@pytest.mark.parametrize(("corpus", "prefix"), [("sdk_py_v2", "PY_SDK_V1_"), ("sdk_ts_v2", "TS_SDK_V1_")])
def test_every_advisory_fires_in_its_dirty_server(corpus: str, prefix: str) -> None:
    result = vet(CORPUS / corpus)
    assert {f.rule_id for f in result.findings if f.tier is Tier.ADVISORY} == {i for i in ADVISORY if
                                                                                i.startswith(prefix)}
    assert all("could not be determined" not in f.message for f in result.findings)
    assert all(f.message.startswith(f"{BY_ID[f.rule_id].title}: per the SDK migration guide, ")
               for f in result.findings)


SERVERS = {"py": CORPUS / "sdk_py_v2" / "server.py", "ts": CORPUS / "sdk_ts_v2" / "server.ts"}


def _gated(tmp_path: Path, manifests: str | None, language: str) -> tuple[list[str], dict[str, int], list[str]]:
    """The dirty advisory server beside the manifests of tests/fixtures/vet/sdk/<manifests> (None: no manifest)."""
    where = tmp_path / "repo"
    (where / ".git").mkdir(parents=True)
    if manifests is not None:
        for manifest in (CORPUS / "sdk" / manifests).iterdir():
            if manifest.suffix not in (".py", ".ts"):
                shutil.copy(manifest, where / manifest.name)
    shutil.copy(SERVERS[language], where / SERVERS[language].name)
    result = vet(where)
    return [f.message for f in result.findings if f.tier is Tier.ADVISORY], result.held_back, result.notes


@pytest.mark.parametrize(("manifests", "language", "group", "twin"), [
    ("py_v1_uvlock", "py", "PY_SDK_V1", "py_none"), ("ts_v1", "ts", "TS_SDK_V1", "ts_v2")])
def test_a_v1_declaration_holds_the_group_back_in_one_counted_note(tmp_path: Path, manifests: str, language: str,
                                                                   group: str, twin: str) -> None:
    """Held back: as many as the same file reports beside a manifest that lets the group run (and, like the v1
    one, does not declare httpx or zod)."""
    expected = len(_gated(tmp_path / "twin", twin, language)[0])
    messages, held_back, notes = _gated(tmp_path / "v1", manifests, language)
    assert messages == [] and held_back == {group: expected}
    said = [n for n in notes if "held back" in n]
    assert len(said) == 1 and said[0].startswith(f"{expected} {group}_* migration advisories held back: ")


@pytest.mark.parametrize(("manifests", "language"), [("py_v2_requirements", "py"), ("ts_v2", "ts"),
                                                     ("ts_both", "ts")])
def test_a_v2_or_staged_declaration_runs_the_group(tmp_path: Path, manifests: str, language: str) -> None:
    messages, held_back, _ = _gated(tmp_path, manifests, language)
    assert messages and held_back == {}
    assert not any("could not be determined" in m for m in messages)


@pytest.mark.parametrize(("manifests", "language", "why"), [
    ("py_none", "py", "pyproject.toml names mcp without a version"),
    ("py_both", "py", "pyproject.toml admits both mcp 1.x and 2.x"),
    ("ts_none", "ts", "no manifest up to the repository boundary names an @modelcontextprotocol SDK package"),
    (None, "py", "no manifest up to the repository boundary names mcp")])
def test_an_undetermined_sdk_runs_the_group_annotated(tmp_path: Path, manifests: str | None, language: str,
                                                      why: str) -> None:
    messages, held_back, _ = _gated(tmp_path, manifests, language)
    assert messages and held_back == {}
    assert all(f"(the SDK version could not be determined: {why}" in m for m in messages)


def test_the_protocol_rules_are_never_gated(tmp_path: Path) -> None:
    where = _repo(tmp_path, "a.py", "from mcp.server.fastmcp import FastMCP\nCODE = {'code': -32002}",
                  '[project]\nname = "a"\ndependencies = ["mcp==1.26.0"]\n')
    assert [f.rule_id for f in vet(where).findings] == ["ERROR_CODE_32002"]


def test_a_wheel_metadata_is_a_manifest(tmp_path: Path) -> None:
    """An unpacked wheel has no pyproject.toml: its one dist-info's Requires-Dist settles the major and httpx."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg-1.0.dist-info").mkdir()
    (tmp_path / "pkg-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.4\nName: pkg\nRequires-Dist: httpx[socks]>=0.27\nRequires-Dist: mcp<3,>=2.3\n",
        encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "server.py").write_text("import httpx\nfrom mcp.server.fastmcp import FastMCP\n",
                                               encoding="utf-8")
    result = vet(tmp_path)
    assert result.sdk == {"pkg-1.0.dist-info/METADATA": "2"}
    assert [(f.rule_id, "could not be determined" in f.message) for f in result.findings] == [
        ("PY_SDK_V1_FASTMCP", False)]


def test_a_python_v1_name_counts_only_when_it_is_the_sdks(tmp_path: Path) -> None:
    """fastmcp 4 (on mcp 2) keeps `McpError = MCPError` in fastmcp.exceptions for its users: importing it from there
    was a high PY_SDK_V1_MCPERROR and each use a medium one, though nothing of it breaks under mcp 2."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["mcp>=2"]\n', encoding="utf-8")
    (tmp_path / "compat.py").write_text(
        "import mcp\nfrom fastmcp.exceptions import McpError\nfrom mcp.shared.exceptions import MCPError\n"
        "McpError = MCPError\nraise McpError('x')\n", encoding="utf-8")
    (tmp_path / "old.py").write_text(
        "from mcp.shared.exceptions import McpError as E, MCPError\nfrom mcp.shared import exceptions\n"
        "raise E('x')\nx = exceptions.McpError\n", encoding="utf-8")
    (tmp_path / "star.py").write_text("from mcp.shared.exceptions import *\nraise McpError('x')\n", encoding="utf-8")
    found = [(f.file, f.line, f.confidence) for f in vet_tree(tmp_path, VetOptions()).findings
             if f.rule_id == "PY_SDK_V1_MCPERROR"]
    assert found == [("old.py", 1, "high"), ("old.py", 3, "medium"), ("old.py", 4, "medium"),
                     ("star.py", 2, "medium")]
