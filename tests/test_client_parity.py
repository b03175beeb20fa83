"""Parity of the scan's own MCP client (scanner.client.scan_client.ScanClient) with the MCP SDK's
`Client(mode="auto", cache=None)`: docs/own-client.md §7 items 1-10 and 18 (negotiation, listing, restarts). Each
scenario runs against both clients with one scripted server (tests/client_parity_harness.py); both must write the
same messages in the same order and end the same way, and where the spec pins a wire line or a result, the SDK's
(and so the own client's) is checked against it. Items 11-17 (calls, errors, server messages) are in
tests/test_client_parity_calls.py. In-memory streams, no Docker."""

from __future__ import annotations

from typing import Any

import pytest

from tests.client_parity_harness import (DISCOVER_RESULT, INIT_PARAMS, INIT_RESULT, META, MODERN, Run, both, error,
                                         legacy, modern, modern_list, properties, result, same)

TOOL = {"name": "echo", "inputSchema": {"type": "object"}}
DISCOVER_LINE = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}


def _tools(tools: list[dict[str, Any]], **extra: Any) -> Any:
    """A server part answering every tools/list with `tools` (and `extra` keys)."""
    def serve(message: dict[str, Any], run: Run) -> list[Any]:
        return [result(message, {"tools": tools, **extra})] if message.get("method") == "tools/list" else []
    return serve


async def _listed(client: Any, run: Run) -> Any:
    return [properties(client), await client.list_tools()]


async def _entered(client: Any, run: Run) -> Any:
    return properties(client)


# ---- 1. a handshake-era server ------------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2024-11-05"])
def test_01_handshake_era_wire_ids_and_session_properties(version: str) -> None:
    """discover -> -32601, then the exact initialize, initialized, a tools/list without params (ids 1, 2, 3); any
    handshake version answered is the negotiated one; capabilities lose unknown keys, keep `"prompts":{}`."""
    sdk = same(legacy(_tools([TOOL]), {**INIT_RESULT, "protocolVersion": version}), _listed)
    assert sdk.received == [DISCOVER_LINE, {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": INIT_PARAMS},
                            {"jsonrpc": "2.0", "method": "notifications/initialized"},
                            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}]
    props, page = sdk.outcome[1]
    assert props == {"protocol_version": version, "server_info": {"name": "scripted", "version": "1"},
                     "server_capabilities": {"tools": {}, "prompts": {}}, "instructions": "be kind"}
    assert [tool["name"] for tool in page["tools"]] == ["echo"]


def test_01_null_prompts_capability_disappears() -> None:
    """`"prompts":null` is gone from the dumped capabilities (and so prompts are not listed)."""
    init = {**INIT_RESULT, "capabilities": {"tools": {}, "prompts": None}}
    sdk = same(legacy(_tools([TOOL]), init), _entered)
    assert sdk.outcome[1]["server_capabilities"] == {"tools": {}}


# ---- 2. discover never answered -----------------------------------------------------------------------------------

def test_02_unanswered_discover_costs_ten_seconds_then_initialize_without_a_cancel() -> None:
    """A server ignoring server/discover: initialize about 10 s later whatever the read timeout, no cancel."""
    def script(message: dict[str, Any], run: Run) -> list[Any]:
        return [] if message.get("method") == "server/discover" else legacy(_tools([TOOL]))(message, run)

    sdk, own = both(script, _entered, read_timeout=0.5)
    for run in (sdk, own):
        assert run.methods() == ["server/discover", "initialize", "notifications/initialized"], run.name
        assert 9.5 <= run.times[1] - run.times[0] <= 13.0, (run.name, run.times)
    assert sdk.received == own.received and sdk.outcome == own.outcome


# ---- 3. discover answers that are not modern evidence -------------------------------------------------------------

@pytest.mark.parametrize("answer", [
    {"result": {"hello": 1}},
    {"result": {"supportedVersions": ["2025-11-25"], "capabilities": {}}},
    {"result": {"supportedVersions": [], "capabilities": {"tools": {}}}},
    {"error": {"code": -32603, "message": "boom"}},
    {"error": {"code": -32601, "message": "Method not found", "data": "server/discover"}},
    {"error": {"code": -32001, "message": "busy"}},
], ids=["hello", "handshake-versions", "no-versions", "-32603", "-32601", "-32001"])
def test_03_discover_answers_that_fall_back_to_initialize(answer: dict[str, Any]) -> None:
    """Each of these answers to discover falls back to `initialize` (id 2) and then `initialized`."""
    def script(message: dict[str, Any], run: Run) -> list[Any]:
        if message.get("method") == "server/discover":
            return [{"jsonrpc": "2.0", "id": message["id"], **answer}]
        return legacy(_tools([TOOL]))(message, run)

    sdk = same(script, _entered)
    assert sdk.methods() == ["server/discover", "initialize", "notifications/initialized"]
    assert sdk.outcome[1]["protocol_version"] == "2025-11-25"


@pytest.mark.parametrize("discover", [
    {**DISCOVER_RESULT, "ttlMs": -1},
    {"supported_versions": [MODERN], "capabilities": {"tools": {}}, "_meta": DISCOVER_RESULT["_meta"]},
    {"supportedVersions": ["2025-11-25", MODERN, "2099-01-01"], "capabilities": {}},
], ids=["negative-ttl", "field-names", "mixed-versions"])
def test_03_lenient_discover_results_are_adopted(discover: dict[str, Any]) -> None:
    """A discover result the model accepts (a negative ttlMs floored, field names instead of aliases, unknown
    versions beside 2026-07-28) is adopted: nothing else is sent."""
    sdk = same(modern(lambda message, run: [], discover), _entered)
    assert sdk.received == [DISCOVER_LINE]
    assert sdk.outcome[1]["protocol_version"] == MODERN


# ---- 4. a 2026-07-28 server ---------------------------------------------------------------------------------------

def _modern_lists(message: dict[str, Any], run: Run) -> list[Any]:
    key = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
           "resources/templates/list": "resourceTemplates"}.get(message.get("method", ""))
    return [result(message, {key: [], "ttlMs": 0, "cacheScope": "private", "resultType": "complete"})] if key else []


async def _every_list(client: Any, run: Run) -> Any:
    return [properties(client), await client.list_tools(), await client.list_tools(cursor="c2"),
            await client.list_prompts(), await client.list_resources(cursor="r"),
            await client.list_resource_templates()]


def test_04_modern_requests_carry_exactly_the_three_meta_keys_after_their_own() -> None:
    """No initialize and no initialized; ids from 2; every request's params end with the same `_meta` as discover."""
    sdk = same(modern(_modern_lists), _every_list)
    assert sdk.received == [DISCOVER_LINE] + [
        {"jsonrpc": "2.0", "id": index, "method": method, "params": {**params, "_meta": META}}
        for index, (method, params) in enumerate([
            ("tools/list", {}), ("tools/list", {"cursor": "c2"}), ("prompts/list", {}),
            ("resources/list", {"cursor": "r"}), ("resources/templates/list", {})], start=2)]
    assert list(sdk.received[2]["params"]) == ["cursor", "_meta"]
    assert sdk.outcome[1][0] == {"protocol_version": MODERN, "server_info": {"name": "modern", "version": "2"},
                                 "server_capabilities": {"tools": {}}, "instructions": "modern"}


@pytest.mark.parametrize("meta", [{}, {"io.modelcontextprotocol/serverInfo": {"name": 5}},
                                  {"io.modelcontextprotocol/serverInfo": "modern"}],
                         ids=["absent", "bad-name", "a-string"])
def test_04_server_info_is_none_without_a_valid_stamp(meta: dict[str, Any]) -> None:
    """A discover result with no serverInfo stamp, or a malformed one, is adopted with server_info None."""
    sdk = same(modern(_modern_lists, {**DISCOVER_RESULT, "_meta": meta}), _entered)
    assert sdk.outcome[1]["protocol_version"] == MODERN and sdk.outcome[1]["server_info"] is None


# ---- 5-7. -32022 and refused handshakes ---------------------------------------------------------------------------

def _unsupported(data: Any) -> Any:
    def answer(message: dict[str, Any]) -> list[Any]:
        return [error(message, -32022, "Unsupported protocol version", data)]
    return answer


def _negotiation(discover: Any, initialize: Any) -> Any:
    """A server answering discover with `discover(message, count)` and initialize with `initialize(message)`."""
    def script(message: dict[str, Any], run: Run) -> list[Any]:
        method = message.get("method")
        if method == "server/discover":
            return discover(message, run.methods().count(method))
        if method == "initialize":
            return initialize(message)
        return []
    return script


def _handshake(message: dict[str, Any]) -> list[Any]:
    return [result(message, INIT_RESULT)]


SUPPORTED_MODERN = {"supported": [MODERN], "requested": MODERN}


@pytest.mark.parametrize("first, second, methods, outcome", [
    (SUPPORTED_MODERN, None, ["server/discover"] * 2, ("returned",)),
    (SUPPORTED_MODERN, SUPPORTED_MODERN, ["server/discover"] * 2, ("raised", "rpc", -32022)),
    ({"supported": ["2099-01-01"], "requested": MODERN}, None, ["server/discover"], ("raised", "rpc", -32022)),
    ({"supported": ["2025-06-18"], "requested": MODERN}, None, ["server/discover", "initialize",
                                                               "notifications/initialized"], ("returned",)),
    (None, None, ["server/discover", "initialize", "notifications/initialized"], ("returned",)),
    ({"supported": [MODERN]}, None, ["server/discover", "initialize", "notifications/initialized"], ("returned",)),
], ids=["modern-then-adopted", "modern-twice", "unknown-only", "handshake-version", "no-data", "no-requested"])
def test_05_discover_refused_with_32022(first: Any, second: Any, methods: list[str], outcome: tuple[Any, ...]) -> None:
    """-32022 naming 2026-07-28: a second, identical discover (id 2); twice: MCPError(-32022); only unknown
    versions: raise without initialize; a handshake version, or data that is not UnsupportedProtocolVersionErrorData
    (no data, no `requested`): initialize."""
    def discover(message: dict[str, Any], count: int) -> list[Any]:
        if count == 2 and second is None:
            return [result(message, DISCOVER_RESULT)]
        return _unsupported(first if count == 1 else second)(message)

    sdk = same(_negotiation(discover, _handshake), _entered)
    assert sdk.methods() == methods
    assert sdk.outcome[:len(outcome)] == outcome
    if methods == ["server/discover"] * 2:
        assert sdk.received[1] == {**DISCOVER_LINE, "id": 2}


def test_06_initialize_refused_with_32022_probes_discover_once_more() -> None:
    """discover -32603, initialize -32022 naming 2026-07-28: discover, initialize, discover, initialize (ids 1-4),
    then the second -32022 is raised."""
    def discover(message: dict[str, Any], count: int) -> list[Any]:
        return [error(message, -32603, "internal")]

    sdk = same(_negotiation(discover, _unsupported(SUPPORTED_MODERN)), _entered)
    assert [(line.get("id"), line.get("method")) for line in sdk.received] == [
        (1, "server/discover"), (2, "initialize"), (3, "server/discover"), (4, "initialize")]
    assert sdk.outcome == ("raised", "rpc", -32022, "Unsupported protocol version", SUPPORTED_MODERN)


@pytest.mark.parametrize("answer, outcome", [
    ({**INIT_RESULT, "protocolVersion": MODERN},
     ("raised", "RuntimeError", f"Unsupported protocol version from the server: {MODERN}")),
    ({**INIT_RESULT, "protocolVersion": "1999-01-01"},
     ("raised", "RuntimeError", "Unsupported protocol version from the server: 1999-01-01")),
    ({"x": 1}, ("raised", "ValidationError")),
    ({key: value for key, value in INIT_RESULT.items() if key != "serverInfo"}, ("raised", "ValidationError")),
    ({**INIT_RESULT, "capabilities": []}, ("raised", "ValidationError")),
], ids=["modern-version", "unknown-version", "x-1", "no-server-info", "capabilities-list"])
def test_07_initialize_results_the_sdk_refuses(answer: dict[str, Any], outcome: tuple[Any, ...]) -> None:
    """An initialize answer naming a version outside the handshake set is a RuntimeError; one the 2025-11-25 surface
    model rejects is a ValidationError; nothing is sent after it."""
    sdk = same(_negotiation(lambda message, count: [error(message, -32601, "nope")],
                            lambda message: [result(message, answer)]), _entered)
    assert sdk.methods() == ["server/discover", "initialize"]
    assert sdk.outcome == outcome


def test_07_initialize_error_is_raised() -> None:
    """Any error but -32022 answering initialize is raised as sent (code, message, data)."""
    sdk = same(_negotiation(lambda message, count: [error(message, -32601, "nope")],
                            lambda message: [error(message, -32603, "no thanks", {"why": 1})]), _entered)
    assert sdk.outcome == ("raised", "rpc", -32603, "no thanks", {"why": 1})


# ---- 8-10. list results ------------------------------------------------------------------------------------------

LISTS = {"tools/list": ("tools", [TOOL]), "prompts/list": ("prompts", [{"name": "p"}]),
         "resources/list": ("resources", [{"name": "r", "uri": "file:///r"}]),
         "resources/templates/list": ("resourceTemplates", [{"name": "t", "uriTemplate": "file:///{x}"}])}


def _lists(extra: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> Any:
    def serve(message: dict[str, Any], run: Run) -> list[Any]:
        key, items = LISTS.get(message.get("method", ""), (None, []))
        items = tools if tools is not None and key == "tools" else items
        return [result(message, {key: items, **extra})] if key else []
    return serve


async def _four_lists(client: Any, run: Run) -> Any:
    return [await client.list_tools(), await client.list_prompts(), await client.list_resources(),
            await client.list_resource_templates()]


def test_08_handshake_era_lists_lose_the_later_revision_keys() -> None:
    """At 2025-11-25 `ttlMs:-5, cacheScope:"bogus", resultType:"weird"` pass on all four lists, dumped with the
    model's defaults (ttlMs 0, cacheScope private, resultType complete)."""
    sdk = same(legacy(_lists({"ttlMs": -5, "cacheScope": "bogus", "resultType": "weird", "extra": 1})), _four_lists)
    assert sdk.outcome[0] == "returned"
    for page in sdk.outcome[1]:
        assert (page["ttlMs"], page["cacheScope"], page["resultType"]) == (0, "private", "complete")
        assert "extra" not in page


@pytest.mark.parametrize("extra, outcome", [
    ({"ttlMs": 0, "cacheScope": "private"}, ("raised", "ValidationError")),
    ({"resultType": "complete", "cacheScope": "private"}, ("raised", "ValidationError")),
    ({"resultType": "complete", "ttlMs": 0}, ("raised", "ValidationError")),
    ({"resultType": "complete", "ttlMs": 0, "cacheScope": "bogus"}, ("raised", "ValidationError")),
    ({"resultType": "complete", "ttlMs": -3, "cacheScope": "public"}, ("returned",)),
    ({"resultType": "complete", "ttlMs": "5", "cacheScope": "public"}, ("returned",)),
    ({"resultType": "input_required", "ttlMs": 1, "cacheScope": "public"}, ("returned",)),
], ids=["no-resultType", "no-ttlMs", "no-cacheScope", "bad-cacheScope", "ttl-minus-3", "ttl-string", "input-req"])
@pytest.mark.parametrize("method", list(LISTS))
def test_08_modern_lists_need_their_cache_keys(method: str, extra: dict[str, Any], outcome: tuple[Any, ...]) -> None:
    """At 2026-07-28 a list without resultType, ttlMs or a valid cacheScope is a ValidationError; ttlMs -3 is
    read as 0, "5" as 5; an input_required resultType on a list is just a listing."""
    async def one(client: Any, run: Run) -> Any:
        return await {"tools/list": client.list_tools, "prompts/list": client.list_prompts,
                      "resources/list": client.list_resources,
                      "resources/templates/list": client.list_resource_templates}[method]()

    sdk = same(modern(_lists(extra)), one)
    assert sdk.outcome[:len(outcome)] == outcome
    if outcome == ("returned",):
        assert sdk.outcome[1]["ttlMs"] == max(int(extra["ttlMs"]), 0)


GOOD = {"name": "good", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": "yes"}, "x-extra": 1}
LOSES_THE_PAGE = {
    "no-input-type": ({"name": "bad", "inputSchema": {"properties": {}}}, ("legacy", "modern")),
    "output-string": ({"name": "bad", "inputSchema": {"type": "object"}, "outputSchema": {"type": "string"}},
                      ("legacy",)),
    "properties-list": ({"name": "bad", "inputSchema": {"type": "object", "properties": []}}, ("legacy",)),
}


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("case", list(LOSES_THE_PAGE))
def test_09_one_tool_the_surface_rejects_loses_the_whole_page(case: str, era: str) -> None:
    """A tool without `inputSchema.type` (both eras), an outputSchema of type string or a non-object
    `inputSchema.properties` (2025-11-25): a ValidationError for the whole page, its good tool too; where the era
    allows it, the page is read, lax values coerced and unknown keys dropped."""
    bad, fails_in = LOSES_THE_PAGE[case]
    modern_keys = {"ttlMs": 0, "cacheScope": "private", "resultType": "complete"}
    script = legacy(_tools([GOOD, bad])) if era == "legacy" else modern(_tools([GOOD, bad], **modern_keys))
    sdk = same(script, lambda client, run: client.list_tools())
    if era in fails_in:
        assert sdk.outcome == ("raised", "ValidationError")
    else:
        assert sdk.outcome[0] == "returned"
        assert sdk.outcome[1]["tools"][0] == {"name": "good", "inputSchema": {"type": "object"},
                                              "annotations": {"readOnlyHint": True}}


def _header(header: str, kind: Any = "string") -> dict[str, Any]:
    return {"type": "object", "properties": {"region": {"type": kind, "x-mcp-header": header}}}


def test_10_tools_with_an_invalid_x_mcp_header_leave_the_modern_page() -> None:
    """At 2026-07-28 a tool whose x-mcp-header is not a token, is on an object property, or repeats another
    ignoring case is dropped from the page; a valid one stays. At 2025-11-25 nothing is dropped."""
    twice = {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "Region"},
                                              "b": {"type": "integer", "x-mcp-header": "region"}}}
    tools = [{"name": "ok", "inputSchema": _header("Region")}, {"name": "bang", "inputSchema": _header("bad header!")},
             {"name": "empty", "inputSchema": _header("")}, {"name": "object", "inputSchema": _header("R", "object")},
             {"name": "twice", "inputSchema": twice}, {"name": "listed-type", "inputSchema": _header("R", ["string"])},
             {"name": "mapped-type", "inputSchema": _header("R", {"k": 1})}, TOOL]
    modern_keys = {"ttlMs": 0, "cacheScope": "private", "resultType": "complete"}
    sdk = same(modern(_tools(tools, **modern_keys)), lambda client, run: client.list_tools())
    assert [tool["name"] for tool in sdk.outcome[1]["tools"]] == ["ok", "echo"]
    sdk = same(legacy(_tools(tools)), lambda client, run: client.list_tools())
    assert len(sdk.outcome[1]["tools"]) == len(tools)


OUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def _paged_tools(message: dict[str, Any], run: Run) -> list[Any]:
    """tools/list: no cursor -> [a] (complete); cursor "2" -> [b]; cursor "3" -> [] ; then, listed again without a
    cursor, [b] alone. tools/call: structured content that breaks any output schema requiring `n`."""
    if message.get("method") == "tools/list":
        cursor = (message.get("params") or {}).get("cursor")
        fresh = [line for line in run.received if line.get("method") == "tools/list"
                 and "cursor" not in (line.get("params") or {})]
        tools = {None: [{**TOOL, "name": "a", "outputSchema": OUT}] if len(fresh) == 1 else
                 [{**TOOL, "name": "b", "outputSchema": OUT}],
                 "2": [{**TOOL, "name": "b", "outputSchema": OUT}], "3": []}[cursor]
        return [result(message, modern_list(tools) if "_meta" in message.get("params", {}) else {"tools": tools})]
    if message.get("method") == "tools/call":
        return [result(message, {"content": [], "structuredContent": {"n": "x"}, "resultType": "complete"})]
    return []


async def _pages_then_calls(client: Any, run: Run) -> Any:
    steps = [await client.list_tools(), await client.list_tools(cursor="2"), await client.list_tools(cursor="3")]
    for name in ("a", "b"):
        try:
            await client.call_tool(name, {})
        except RuntimeError as exc:
            steps.append(str(exc))
    steps.append(await client.list_tools())
    try:
        await client.call_tool("a", {})
    except RuntimeError as exc:
        steps.append(str(exc))
    return steps


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_10_cursor_pages_add_schemas_and_a_complete_listing_forgets(era: str) -> None:
    """Output schemas remembered from a cursor page add to those known (no tools/list before calling a or b); a
    listing without cursor or nextCursor forgets a, so calling a lists tools first."""
    sdk = same((legacy if era == "legacy" else modern)(_paged_tools), _pages_then_calls)
    assert [line.get("method") for line in sdk.received if "id" in line][-6:] == [
        "tools/list", "tools/call", "tools/call", "tools/list", "tools/call", "tools/list"]
    assert [text.split("\n")[0] for text in sdk.outcome[1][3:5]] == [
        f"Invalid structured content returned by tool {name}: 'x' is not of type 'integer'" for name in ("a", "b")]
    assert len(sdk.outcome[1]) == 6  # the last call of a raised nothing: a is not listed any more, so not checked


# ---- 18. restarts -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_18_a_restart_negotiates_again_with_ids_from_1(era: str) -> None:
    """A new client on a new connection discovers again (and initializes again), its ids from 1."""
    script = legacy(_tools([TOOL])) if era == "legacy" else modern(_modern_lists)
    sdk = same(script, _listed, sessions=2)
    ids = [(line.get("id"), line.get("method")) for line in sdk.received]
    first = ([(1, "server/discover"), (2, "initialize"), (None, "notifications/initialized"), (3, "tools/list")]
             if era == "legacy" else [(1, "server/discover"), (2, "tools/list")])
    assert ids == first + first
    assert [outcome[0] for outcome in sdk.outcome] == ["returned", "returned"]
