"""Pure logic of the sandbox spine: target parsing, policy comparison, attach-frame demultiplexing, launch choice."""

from __future__ import annotations

import dataclasses
import socket
import struct

import anyio
import pytest

from sandbox.run.attach import AttachedStdio, StreamFault, StreamLimits
from sandbox.core.errors import PolicyNotApplied, UserInputError
from sandbox.run.policy import AppliedPolicy, RunPolicy, enforce, mismatches
from scanner.errors import UsageError
from scanner.pipeline.launch import choose_command
from scanner.pipeline.targets import parse_target


@pytest.mark.parametrize(
    ("text", "kind", "name", "version"),
    [
        ("npm:@modelcontextprotocol/server-everything", "npm", "@modelcontextprotocol/server-everything", None),
        ("npm:@scope/pkg@1.2.3", "npm", "@scope/pkg", "1.2.3"),
        ("npm:left-pad@latest", "npm", "left-pad", "latest"),
        ("pypi:mcp-server-time==2026.10.19", "pypi", "mcp-server-time", "2026.10.19"),
        ("pypi:Mcp_Server.Git", "pypi", "Mcp_Server.Git", None),
    ],
)
def test_registry_targets_parse(text, kind, name, version):
    target = parse_target(text)
    assert (target.kind, target.name, target.version_spec) == (kind, name, version)


@pytest.mark.parametrize("text", ["npm:", "npm:UPPER", "npm:a b", "npm:x@^1.0", "pypi:x>=1", "pypi:x==1.0; rm -rf",
                                  "pypi:-bad", "nothing-here-at-all"])
def test_bad_targets_are_usage_errors(text):
    with pytest.raises(UsageError):
        parse_target(text)


def test_local_folder_needs_a_manifest(tmp_path):
    with pytest.raises(UsageError, match="no package.json or pyproject.toml"):
        parse_target(str(tmp_path))
    (tmp_path / "package.json").write_text('{"name": "my-server"}')
    target = parse_target(str(tmp_path))
    assert (target.kind, target.ecosystem, target.name) == ("folder", "npm", "my-server")


@pytest.mark.parametrize(("manifest", "text", "message"), [
    ("pyproject.toml", 'project = "x"\n', "has no valid \\[project\\].name"),  # a table that is a string
    ("pyproject.toml", "[tool.x]\n", "has no valid \\[project\\].name"),
    ("package.json", '["my-server"]', 'has no valid "name"'),  # JSON, but no object
])
def test_a_manifest_of_the_wrong_shape_is_a_usage_error_not_a_crash(tmp_path, manifest, text, message):
    (tmp_path / manifest).write_text(text)
    with pytest.raises(UsageError, match=message):
        parse_target(str(tmp_path))


def test_a_manifest_that_names_the_package_is_a_folder_target(tmp_path):  # the near miss of the above
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "my-server"\n')
    assert (parse_target(str(tmp_path)).ecosystem, parse_target(str(tmp_path)).name) == ("pypi", "my-server")


def _applied(policy: RunPolicy, **changes) -> AppliedPolicy:
    good = AppliedPolicy(
        network_mode=policy.network_mode, read_only_rootfs=True, cap_drop=["ALL"], cap_add=[], no_new_privileges=True,
        privileged=False, user=policy.user, pids_limit=policy.pids_limit, memory_bytes=policy.memory_bytes,
        memory_swap_bytes=policy.memory_bytes, nano_cpus=policy.nano_cpus, init=True, restart_policy="no",
        tmpfs=policy.tmpfs(), mounts=[], env_names=sorted(policy.environment()), image="i", image_id="sha256:x",
    )
    return dataclasses.replace(good, **changes)


def test_policy_applied_in_full_passes():
    policy = RunPolicy()
    assert mismatches(policy, _applied(policy)) == []


@pytest.mark.parametrize(
    "changes",
    [{"network_mode": "bridge"}, {"read_only_rootfs": False}, {"cap_drop": []}, {"cap_add": ["NET_RAW"]},
     {"no_new_privileges": False}, {"user": "0:0"}, {"pids_limit": None}, {"memory_swap_bytes": -1},
     {"mounts": ["/home/me"]}, {"env_names": ["HOME", "LANG", "PATH", "AWS_SECRET_ACCESS_KEY"]}, {"tmpfs": {}}],
)
def test_any_weaker_applied_policy_stops_the_scan(changes):
    policy = RunPolicy()
    with pytest.raises(PolicyNotApplied):
        enforce(policy, _applied(policy, **changes))


def _frame(stream: int, payload: bytes) -> bytes:
    return struct.pack(">BxxxI", stream, len(payload)) + payload


def _demux(data: bytes, limits: StreamLimits | None = None) -> tuple[list[bytes | StreamFault], bytes]:
    ours, theirs = socket.socketpair()

    async def main() -> list[bytes | StreamFault]:
        received: list[bytes | StreamFault] = []
        async with AttachedStdio(ours, limits) as stdio:
            theirs.sendall(data)
            theirs.shutdown(socket.SHUT_WR)
            async for item in stdio.lines:
                received.append(item)
                if isinstance(item, StreamFault):
                    break
            stderr = bytes(stdio.stderr.data)
        return received, stderr

    try:
        return anyio.run(main)
    finally:
        theirs.close()


def test_frames_are_split_into_stdout_lines_and_stderr():
    data = _frame(1, b'{"a":1}\n{"b"') + _frame(2, b"log line\n") + _frame(1, b":2}\npartial")
    lines, stderr = _demux(data)
    assert lines == [b'{"a":1}', b'{"b":2}', b"partial"]
    assert stderr == b"log line\n"


def test_an_overlong_line_becomes_a_fault_not_memory_growth():
    data = _frame(1, b"x" * 5000)
    lines, _ = _demux(data, StreamLimits(max_line_bytes=1024))
    assert isinstance(lines[-1], StreamFault) and "line over" in lines[-1].reason


def test_stderr_keeps_only_its_tail():
    lines, stderr = _demux(_frame(2, b"a" * 3000 + b"END"), StreamLimits(stderr_tail_bytes=100))
    assert len(stderr) == 100 and stderr.endswith(b"END")


def test_launch_command_choice():
    bins = {"srv": "/opt/server/node_modules/.bin/srv"}
    assert choose_command("@x/srv", bins, None, ["stdio"]) == ["/opt/server/node_modules/.bin/srv", "stdio"]
    two = {"my-server": "/b/my-server", "helper": "/b/helper"}
    assert choose_command("my_server", two, None, []) == ["/b/my-server"]
    with pytest.raises(UserInputError, match="several commands"):
        choose_command("other", two, None, [])
    with pytest.raises(UserInputError, match="installs no command"):
        choose_command("other", {}, None, [])
    assert choose_command("other", {}, "node dist/index.js --stdio", ["x"]) == ["node", "dist/index.js", "--stdio", "x"]
    with pytest.raises(UserInputError, match="cannot be parsed"):
        choose_command("other", {}, "'unterminated", [])
