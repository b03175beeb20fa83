"""One firing case and one near miss per `vet` rule (the near miss is the closest thing that must stay clean), in
TypeScript/JavaScript and Python where the rule applies to both; and the rule registry agrees with the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.vet.catalogue import BY_ID, VET_RULES
from scanner.vet import VetOptions, vet_tree
from scanner.vet.model import Tier
from scanner.vet.rules import GROUPS
from tests.vet_helpers import vet

MCP = 'import { Server } from "@modelcontextprotocol/sdk/server/index.js";\n'
PY_MCP = "import mcp\n"

# (rule, file name, firing source, confidence it fires at, near-miss source)
CASES = [
    ("MCP_SESSION_ID", "a.ts", 'res.setHeader("Mcp-Session-Id", id);', "high",
     '// res.setHeader("Mcp-Session-Id", id);\nres.setHeader("Mcp-Method", m);'),
    ("MCP_SESSION_ID", "a.ts", "new T({ sessionIdGenerator: () => uuid() });", "medium",
     "new T({ sessionIdGenerator: undefined });"),
    ("MCP_SESSION_ID", "a.py", 'streamablehttp_client(url, session_id="abc")', "medium",
     "streamablehttp_client(url, session_id=None)"),
    ("MCP_SESSION_ID", "a.ts", "const id = transport.sessionId;", "medium", "const id = request.sessionId;"),
    ("INITIALIZE_HANDLER", "a.ts", 'switch (m) { case "initialize": break; }', "high",
     'switch (m) { case "initialized_cache": break; }'),
    ("INITIALIZE_HANDLER", "a.py", PY_MCP + 'log("initialize")', "low", 'log("initialize")'),
    ("INITIALIZE_HANDLER", "a.ts", "import { InitializeRequestSchema as I } from 'x';\nserver.setRequestHandler(I, h);",
     "high", "import { InitializeResultSchema as I } from 'x';"),
    ("ERROR_CODE_32002", "a.py", 'raise McpError(-32002, "gone")', "high", 'raise McpError(-32602, "-32002 gone")'),
    ("ERROR_CODE_RENUMBERED", "a.ts", "return { error: { code: -32003 } };", "high", "const RETRY = -32003;"),
    ("ERROR_CODE_RENUMBERED", "a.py", "if err.code == -32004: pass", "high", "limits = [-32004, 1]"),
    # tasks/update is the Tasks extension's own method (SEP-2663), new in 2026-07-28: migrated code, never legacy
    ("TASKS_LEGACY", "a.ts", 'client.request({ method: "tasks/cancel" });', "high",
     'client.request({ method: "tasks/update" });'),
    ("TASKS_LIST_REMOVED", "a.py", 'if method == "tasks/list": pass', "high", '# if method == "tasks/list": pass'),
    ("TASKS_RESULT_REMOVED", "a.ts", "server.setRequestHandler(GetTaskResultRequestSchema, h);", "high",
     "server.setRequestHandler(GetTaskRequestSchemaV2, h);"),
    ("PING_REMOVED", "a.ts", 'if (req.method === "ping") reply({});', "high",
     'app.get("/ping", h);\nserver.registerTool("ping", {}, h);\nconst t = { name: "ping" };'),
    ("PING_REMOVED", "a.py", 'server.request_handlers["x"] = handler\nif request.method == "ping": pass', "high",
     '@server.tool(name="ping")\ndef ping(): return "pong"'),
    ("RESOURCE_SUBSCRIBE_REMOVED", "a.py", 'session.send_request({"method": "resources/subscribe"})', "high",
     'session.send_request({"method": "subscriptions/listen"})'),
    ("ROOTS_LIST_CHANGED_REMOVED", "a.ts", "server.setNotificationHandler(RootsListChangedNotificationSchema, h);",
     "high", "server.setNotificationHandler(ToolListChangedNotificationSchema, h);"),
    ("LOGGING_SETLEVEL_REMOVED", "a.mjs", 'if (m === "logging/setLevel") {}', "high",
     'const level = meta["io.modelcontextprotocol/logLevel"];'),
    ("SSE_RESUMABILITY_REMOVED", "a.ts", "new StreamableHTTPServerTransport({ eventStore: store });", "high",
     "const s = new EventSource(u); s.lastEventId;"),
    ("SSE_RESUMABILITY_REMOVED", "a.py", PY_MCP + 'last = headers.get("Last-Event-ID")', "high",
     'last = headers.get("Last-Event-ID")'),
    ("ELICITATION_COMPLETE_REMOVED", "a.ts", 'notify({ method: "notifications/elicitation/complete" });', "high",
     'notify({ method: "notifications/elicitation/create" });'),
    ("ROOTS_CAP", "a.ts", "const c = { capabilities: { roots: { listChanged: true } } };", "high",
     "const tree = { roots: [] };"),
    ("ROOTS_CAP", "a.py", "caps = ClientCapabilities(roots=RootsCapability())", "high",
     "caps = ClientCapabilities(elicitation=ElicitationCapability())"),
    ("ROOTS_CAP", "a.ts", MCP + "const roots = await server.server.listRoots();", "high",
     "const roots = await fs.listRoots();"),
    ("LOGGING_CAP", "a.py", PY_MCP + 'await ctx.session.send_log_message(level="info", data="x")', "high",
     PY_MCP + "send_log_message = print  # not called"),
    ("SAMPLING_CAP", "a.ts", "const capabilities = {\n  tools: {},\n};\nconst extra = { sampling: {} };", "medium",
     "const config = { sampling: { temperature: 0 } };"),
    ("LOGGING_CAP", "a.py", 'caps = {"capabilities": {"logging": {}}}', "high", 'config = {"logging": {"level": 1}}'),
    ("INCLUDE_CONTEXT_VALUES", "a.ts", 'createMessage({ includeContext: "thisServer" });', "high",
     'createMessage({ includeContext: "none" });' + '\n' * 6 + 'const who = "thisServer";'),
    ("INCLUDE_CONTEXT_VALUES", "a.py", 'ctx = "allServers"\nrequest(include_context=ctx)', "medium",
     'request(include_context="none")\n\n\n\n\n\nwho = "allServers"'),
    ("OAUTH_DCR", "a.py", 'endpoint = metadata["registration_endpoint"]', "medium",
     'endpoint = metadata["token_endpoint"]'),
    ("SSE_TRANSPORT_DEPRECATED", "a.ts", "const t = new SSEServerTransport('/messages', res);", "high",
     "const t = new StreamableHTTPServerTransport({});"),
    ("SSE_TRANSPORT_DEPRECATED", "a.py", PY_MCP + 'config = {"transport": "sse"}', "high",
     'config = {"transport": "sse"}'),
    ("SSE_TRANSPORT_DEPRECATED", "a.js", MCP + "res.setHeader('Content-Type', 'text/event-stream');\n"
     "res.write('event: endpoint\\ndata: /messages\\n\\n');", "medium",
     MCP + "res.setHeader('Content-Type', 'text/event-stream');\nres.write('event: message\\ndata: {}\\n\\n');"),
    ("AUTH_ISS_UNVALIDATED", "a.py", PY_MCP + 'data = {"grant_type": "authorization_code", "code": code}', "medium",
     PY_MCP + 'assert params["iss"] == recorded_issuer\ndata = {"grant_type": "authorization_code", "code": code}'),
    ("AUTH_DCR_NO_APPLICATION_TYPE", "a.ts", MCP + "const body = { redirect_uris: [u], client_name: 'x' };",
     "medium", MCP + "const body = { redirect_uris: [u], client_name: 'x', application_type: 'native' };"),
    ("AUTH_CREDENTIALS_NOT_ISSUER_KEYED", "a.ts", MCP + "store.set(serverUrl, { client_id, client_secret });",
     "medium", MCP + "store.set(issuer, { client_id, client_secret });"),
]


def _vet_source(tmp_path: Path, name: str, source: str) -> list[tuple[str, str]]:
    (tmp_path / name).write_text(source + "\n", encoding="utf-8")
    return [(f.rule_id, f.confidence) for f in vet(tmp_path).findings]


@pytest.mark.parametrize(("rule", "name", "firing", "confidence", "near_miss"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_rule_fires_and_its_near_miss_does_not(tmp_path: Path, rule: str, name: str, firing: str,
                                                   confidence: str, near_miss: str) -> None:
    (tmp_path / "fire").mkdir()
    (tmp_path / "miss").mkdir()
    assert (rule, confidence) in _vet_source(tmp_path / "fire", name, firing)
    assert rule not in {r for r, _ in _vet_source(tmp_path / "miss", name, near_miss)}


def test_every_registered_protocol_rule_has_a_case_and_code() -> None:
    """(The SDK-migration advisories have theirs in tests/test_vet_sdk.py.)"""
    assert {c[0] for c in CASES} == {i for i, r in BY_ID.items() if r.tier is not Tier.ADVISORY} == set(GROUPS)


def test_the_registry_is_well_formed() -> None:
    assert len(VET_RULES) == 22 + 12 + 17
    tiers = {r.id: r.tier.value for r in VET_RULES if r.tier is not Tier.ADVISORY}
    assert len(tiers) == 22
    assert sum(t == "BREAKING" for t in tiers.values()) == 13
    assert {i for i, t in tiers.items() if t == "WARNING"} == {
        "AUTH_ISS_UNVALIDATED", "AUTH_DCR_NO_APPLICATION_TYPE", "AUTH_CREDENTIALS_NOT_ISSUER_KEYED"}
    assert all("/draft/" not in r.doc and "/specification/2026-07-28/" in r.doc for r in VET_RULES
               if r.tier is not Tier.ADVISORY)


def test_a_syntax_error_in_python_is_a_note_not_a_pass(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def (:\n", encoding="utf-8")
    result = vet(tmp_path)
    assert result.files_scanned == 0
    assert any(n.startswith("not vetted: broken.py: not valid Python") for n in result.notes)


PY_LOWLEVEL = '''from mcp.server.lowlevel import Server
server = Server("x")
@server.subscribe_resource()
async def sub(uri): ...
@server.unsubscribe_resource()
async def unsub(uri): ...
@server.set_logging_level()
async def level(lvl): ...
v2 = Server("y", on_ping=p, on_set_logging_level=l, on_roots_list_changed=r, on_subscribe_resource=s)
async def client(session):
    await session.send_ping()
    await session.send_roots_list_changed()
'''
TS_CLIENT = '''import { Client } from "@modelcontextprotocol/sdk/client/index.js";
await client.subscribeResource({ uri });
await client.setLoggingLevel("debug");
await client.sendRootsListChanged();
await redis.ping();
'''


def test_the_sdks_own_registrations_of_removed_methods_are_found(tmp_path: Path) -> None:
    """The official Python SDK's snippets register resources/subscribe and logging/setLevel with decorators (v1) or
    Server(on_…=) (v2), never writing the method string: vet once said "no findings" for them."""
    (tmp_path / "server.py").write_text(PY_LOWLEVEL, encoding="utf-8")
    (tmp_path / "client.ts").write_text(TS_CLIENT, encoding="utf-8")
    found = {(f.file, f.line, f.rule_id) for f in vet_tree(tmp_path, VetOptions()).findings
             if f.tier.value == "BREAKING"}
    assert found == {("server.py", 3, "RESOURCE_SUBSCRIBE_REMOVED"), ("server.py", 5, "RESOURCE_SUBSCRIBE_REMOVED"),
                     ("server.py", 7, "LOGGING_SETLEVEL_REMOVED"), ("server.py", 9, "PING_REMOVED"),
                     ("server.py", 9, "LOGGING_SETLEVEL_REMOVED"), ("server.py", 9, "ROOTS_LIST_CHANGED_REMOVED"),
                     ("server.py", 9, "RESOURCE_SUBSCRIBE_REMOVED"), ("server.py", 11, "PING_REMOVED"),
                     ("server.py", 12, "ROOTS_LIST_CHANGED_REMOVED"), ("client.ts", 2, "RESOURCE_SUBSCRIBE_REMOVED"),
                     ("client.ts", 3, "LOGGING_SETLEVEL_REMOVED"), ("client.ts", 4, "ROOTS_LIST_CHANGED_REMOVED")}


def test_the_same_names_outside_an_mcp_file_are_not_findings(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("bus.subscribe_resource('x')\nlog.set_logging_level(1)\nh(on_ping=f)\n",
                                     encoding="utf-8")
    assert vet_tree(tmp_path, VetOptions()).findings == []


def test_a_python_file_it_cannot_parse_names_the_python_it_was_read_with(tmp_path: Path) -> None:
    """Under Python 3.11, a 3.12 server's `type X = …` is a SyntaxError: the note once said "not valid Python",
    which the file is not, and gave no way to get it vetted."""
    import sys

    (tmp_path / "server.py").write_text("import mcp\ntype Alias = list[int]\nx = {'method': 'ping'}\n" if
                                        sys.version_info < (3, 12) else "import mcp\nx = (\n", encoding="utf-8")
    notes = vet_tree(tmp_path, VetOptions()).notes
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert any(n.startswith(f"not vetted: server.py: not valid Python {version} (SyntaxError") and
               "needs vet run under that Python" in n for n in notes), notes
