"""Building, writing and loading lockfiles; fingerprints; reading tools/list inputs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from scanner.errors import UsageError
from scanner.lock import build_lock, diff, load_lock, load_source, lock_bytes, write_lock
from scanner.lock.canonical import canonical_json, fingerprint
from scanner.report.model import AppliedPolicy, InstallInfo, Report, SandboxInfo, ServerInfo, TargetInfo

TOOL: dict[str, Any] = {
    "name": "search",
    "description": "Search notes in the workspace. \u202eevil\u202c and \U000e0041 tag",
    "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "maxLength": 100}}},
    "annotations": {"readOnlyHint": True},
}
POLICY = AppliedPolicy(network_mode="none", read_only_rootfs=True, cap_drop=["ALL"], cap_add=[],
                       no_new_privileges=True, privileged=False, user="65534:65534", pids_limit=128,
                       memory_bytes=512 * 2**20, memory_swap_bytes=512 * 2**20, nano_cpus=10**9, init=True,
                       restart_policy="no", tmpfs={"/tmp": "size=64m"}, mounts=[], env_names=["HOME"],
                       image="mcp-sandbox/install:abc", image_id="sha256:" + "1" * 64)


def live_report(tools: list[dict[str, Any]] | None = None) -> Report:
    return Report(
        target=TargetInfo(kind="npm", name="@scope/notes", requested="npm:@scope/notes@https://evil.invalid/x.tgz",
                          version="1.0.0", ecosystem="npm"),
        server=ServerInfo(name="notes", version="1.0.0", instructions="Prefer search."),
        tools=tools if tools is not None else [TOOL],
        install=InstallInfo(image="mcp-sandbox/install:abc", image_id="sha256:" + "1" * 64,
                            runtime_image="mcp-sandbox/node:22", cached=False,
                            command=["node", "/srv/index.js", "--token-url", "https://secret.invalid/?k=v"]),
        sandbox=SandboxInfo(session="s1", applied=POLICY),
    )


def test_fingerprint_is_sha256_of_rfc8785_over_the_whole_definition() -> None:
    expected = "sha256:" + hashlib.sha256(rfc8785.dumps(TOOL)).hexdigest()
    assert fingerprint(TOOL) == expected
    assert build_lock(live_report()).tools[0].fingerprint == expected


def test_canonical_json_reads_unsafe_integers_as_javascript_does() -> None:
    assert canonical_json({"n": 2**60}) == canonical_json({"n": float(2**60)})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})


def test_round_trip_is_byte_identical_and_diff_free(tmp_path: Path) -> None:
    path = tmp_path / "mcp-sandbox.lock"
    first = write_lock(build_lock(live_report()), path)
    loaded = load_lock(path)
    assert loaded == build_lock(live_report())
    assert diff(loaded, build_lock(live_report())) == []
    assert lock_bytes(build_lock(live_report())) == first == path.read_bytes()


def test_lock_is_pure_ascii_with_hidden_unicode_escaped(tmp_path: Path) -> None:
    data = write_lock(build_lock(live_report()), tmp_path / "l.lock")
    data.decode("ascii")
    assert b"\\u202e" in data and b"\\udb40\\udc41" in data


def test_lock_records_policy_image_and_scanner_but_commands_and_urls_only_as_hashes(tmp_path: Path) -> None:
    lock = build_lock(live_report())
    text = lock_bytes(lock).decode("ascii")
    assert "secret.invalid" not in text and "evil.invalid" not in text and "/srv/index.js" not in text
    install = live_report().install
    assert install is not None
    expected_command = hashlib.sha256(rfc8785.dumps(install.command)).hexdigest()
    assert lock.install is not None and lock.install.command_sha256 == expected_command
    assert lock.sandbox_policy == POLICY and lock.install.runtime_image == "mcp-sandbox/node:22"
    assert lock.target is not None and lock.target.name == "@scope/notes"
    assert lock.scanner.version and lock.server.instructions == "Prefer search."


def test_atomic_write_leaves_no_temporary_files(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    path.write_text("old")
    write_lock(build_lock(live_report()), path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.lock"]
    assert oct(path.stat().st_mode & 0o777) == oct(0o644)


@pytest.mark.parametrize("content,words", [
    (b"", "not valid JSON"),
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid UTF-8"),
    (b"[]", "expected a JSON object"),
    (b'{"lock_version": "9"}', "lock_version \"9\""),
    (b'{"lock_version": "1", "tools": []}', "malformed at server"),
    (b'{"lock_version": "1", "server": {"instructions_known": true}, "x": NaN}', "NaN is not a JSON number"),
])
def test_loading_a_bad_lock_says_what_is_wrong(tmp_path: Path, content: bytes, words: str) -> None:
    path = tmp_path / "bad.lock"
    path.write_bytes(content)
    with pytest.raises(UsageError) as exc:
        load_lock(path)
    assert words in str(exc.value) and str(path) in str(exc.value)


def test_loading_a_missing_lock(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        load_lock(tmp_path / "absent.lock")


def test_a_hand_edited_definition_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "l.lock"
    write_lock(build_lock(live_report()), path)
    document = json.loads(path.read_text())
    document["tools"][0]["definition"]["description"] = "edited"
    path.write_text(json.dumps(document))
    with pytest.raises(UsageError, match="does not match its fingerprint"):
        load_lock(path)


def test_a_hand_edited_name_is_caught(tmp_path: Path) -> None:
    """The name a lock compares by must be the definition's: an edited `name` kept its fingerprint valid."""
    path = tmp_path / "l.lock"
    write_lock(build_lock(live_report()), path)
    document = json.loads(path.read_text())
    document["tools"][0]["name"] = "renamed"
    path.write_text(json.dumps(document))
    with pytest.raises(UsageError, match="does not match its definition"):
        load_lock(path)


def write_json(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value))
    return path


def test_source_reads_a_listing_with_instructions(tmp_path: Path) -> None:
    source = load_source(write_json(tmp_path / "t.json", {"tools": [TOOL], "instructions": "hi",
                                                           "serverInfo": {"name": "n", "version": "2"},
                                                           "prompts": [{"name": "p"}]}))
    assert source.instructions_known and source.report.server.instructions == "hi"
    assert source.report.server.name == "n" and source.report.prompts == [{"name": "p"}]


def test_source_reads_a_bare_array_and_a_jsonrpc_response(tmp_path: Path) -> None:
    bare = load_source(write_json(tmp_path / "a.json", [TOOL]))
    assert not bare.instructions_known and bare.report.tools == [TOOL]
    rpc = load_source(write_json(tmp_path / "r.json", {"jsonrpc": "2.0", "id": 1, "result": {"tools": [TOOL]}}))
    assert rpc.report.tools == [TOOL]


def test_source_reads_a_saved_report(tmp_path: Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(live_report().model_dump_json())
    source = load_source(path)
    assert source.instructions_known and build_lock(source.report) == build_lock(live_report())


@pytest.mark.parametrize("value,words", [
    ({"nothing": 1}, "not a tools/list result"),
    ({"tools": {}}, "`tools` must be a JSON array"),
    ({"tools": ["x"]}, "`tools[0]` must be an object"),
    ({"tools": [], "instructions": 5}, "`instructions` must be a string"),
    ({"tools": [], "prompts": [1]}, "`prompts[0]` must be an object"),
    ({"schema_version": "1", "target": {"kind": "zip"}}, "looks like an mcp-sandbox report but is malformed"),
])
def test_source_errors_are_one_clear_line(tmp_path: Path, value: Any, words: str) -> None:
    with pytest.raises(UsageError) as exc:
        load_source(write_json(tmp_path / "bad.json", value))
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_source_rejects_nesting_too_deep_to_parse(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text('{"tools": [' + "[" * 100_000 + "]" * 100_000 + "]}")
    with pytest.raises(UsageError, match="nested too deeply"):
        load_source(path)


def _deep_tool(levels: int) -> dict[str, Any]:
    schema: Any = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"x": schema}}
    return {"name": "deep", "inputSchema": schema}


def test_lock_of_a_deeply_nested_tool_round_trips(tmp_path: Path) -> None:
    source = load_source(write_json(tmp_path / "t.json", {"tools": [_deep_tool(62)]}))  # 126 levels
    path = tmp_path / "l.lock"
    write_lock(build_lock(source.report), path)
    assert load_lock(path).tools[0].definition == _deep_tool(62)


def test_a_tool_too_deep_to_pin_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"`tools\[0\]` nests deeper than 128 levels"):
        load_source(write_json(tmp_path / "t.json", {"tools": [_deep_tool(65)]}))


def test_duplicate_tools_are_all_kept_in_the_lock() -> None:
    twin = dict(TOOL, description="second")
    assert [t.name for t in build_lock(live_report([TOOL, twin])).tools] == ["search", "search"]

