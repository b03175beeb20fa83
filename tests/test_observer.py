"""The observer's parts that need no container (docs/observer.md): the agent's listing is find's, its answer is
framed with the request's nonce and anything else is refused as garbled, and a Watch says which path its looks took.
The live half (real containers, hostile servers) is tests/test_observer_live.py."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from sandbox.run import observe, observer_agent as agent
from sandbox.run.observer import ObserverLost, _framed, agent_command
from sandbox.run.observer_watch import Watch

SETTINGS = {"watched": [], "cgroup_files": [], "cgroup_mark": observe.CGROUP_MARK,
            "listing_mark": observe.LISTING_MARK, "end_mark": observe.END_MARK, "max_bytes": 1 << 20}
NONCE = b"0123456789abcdef0123456789abcdef"


def _tree(root: Path) -> None:
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("hello")
    (root / "tab\there").write_text("x")
    (root / "new\nline").write_text("y")
    (root / os.fsdecode(b"bad\xffname")).write_text("z")
    (root / "link").symlink_to("/etc/passwd")
    os.mkfifo(root / "fifo")
    os.chmod(root / "d" / "f.txt", 0o640)
    os.utime(root / "d" / "f.txt", ns=(1_000_000_000_000_000_007, 1_000_000_000_123_456_789))  # (atime, mtime)


@pytest.mark.skipif(shutil.which("find") is None, reason="no find on this machine")
def test_the_agents_listing_is_finds_records(tmp_path):
    _tree(tmp_path)
    command = ["find", str(tmp_path), "-xdev", "-printf", observe.LISTING_FORMAT]
    subprocess.run(command, capture_output=True, check=True)  # the first read of each directory moves its atime
    out = agent._Capped(1 << 20)
    status = agent.listing(out, [os.fsencode(tmp_path)])
    found = subprocess.run(command, capture_output=True, check=True).stdout
    assert status == 0
    assert sorted(out.value().split(b"\0")) == sorted(found.split(b"\0"))


def test_an_unreadable_root_is_finds_status_1(tmp_path):
    out = agent._Capped(1 << 20)
    assert agent.listing(out, [os.fsencode(tmp_path / "missing")]) == 1


def test_the_agents_answer_parses_as_the_exec_paths_output(tmp_path):
    _tree(tmp_path)
    settings = {**SETTINGS, "watched": [str(tmp_path)]}
    stdout = io.BytesIO()
    agent.serve(io.BytesIO(b"snapshot " + NONCE + b"\nnonsense\n"), stdout, settings)
    ready, rest = stdout.getvalue().split(b"\n", 1)
    assert ready.startswith(agent.MARK + b" ready pid=%d gid=%d dumpable=" % (os.getpid(), os.getgid()))
    answer = bytearray(rest)
    body = _framed(answer[: answer.rindex(agent.MARK + b" refused")], NONCE)
    snap = observe.parse_snapshot(body)
    assert snap.failure is None
    assert snap.files[f"{tmp_path}/d/f.txt"].mtime == 1_000_000_000.123456789
    assert snap.files[f"{tmp_path}/d/f.txt"].mode == "640" and snap.files[f"{tmp_path}/link"].kind == "l"
    assert f"{tmp_path}/" + os.fsdecode(b"bad\xffname") in snap.files


def test_the_cap_cuts_the_listing_like_head(tmp_path):
    for index in range(50):
        (tmp_path / f"file-{index:03d}").touch()
    body = agent.snapshot_bytes({**SETTINGS, "watched": [str(tmp_path)], "max_bytes": 2_000})
    assert len(body.partition(observe.LISTING_MARK.encode() + b"\n")[2]) == 2_000  # the listing is cut, not the rest
    snap = observe.parse_snapshot(body)
    assert snap.failure is not None and "did not finish" in snap.failure and snap.files == {}


def test_counters_are_the_shell_loops_lines(tmp_path):
    (tmp_path / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom_kill 1\n")
    (tmp_path / "pids.current").write_text("7")
    text = agent.counters_text([str(tmp_path / "memory.events"), str(tmp_path / "absent"), str(tmp_path / "pids.current")])
    assert text == (f"{tmp_path}/memory.events low 0 high 0 max 3 oom_kill 1 \n{tmp_path}/pids.current 7 \n").encode()


def _answer(nonce: bytes, body: bytes, size: int | None = None, close: bytes | None = None) -> bytearray:
    return bytearray(agent.MARK + b" " + nonce + b" %d\n" % (len(body) if size is None else size) + body
                     + (close if close is not None else agent.CLOSE + b" " + nonce + b"\n"))


def test_a_whole_answer_with_this_nonce_is_its_body():
    assert _framed(_answer(NONCE, b"body\0bytes\n"), NONCE) == b"body\0bytes\n"
    assert _framed(_answer(NONCE, b"body")[:-3], NONCE) is None  # not whole yet: read on


@pytest.mark.parametrize("answer", [
    _answer(b"f" * 32, b"body"),  # another request's nonce (a stale or forged answer)
    _answer(NONCE, b"body", close=agent.CLOSE + b" " + b"f" * 32 + b"\n"),  # the end mark of another nonce
    _answer(NONCE, b"body", size=observe.MAX_SNAPSHOT_BYTES + 65_537),  # past the cap
    bytearray(b"x" * 300),  # no header at all
    _answer(NONCE, b"body") + b"more",  # more than the answer
])
def test_anything_else_is_garbled(answer):
    with pytest.raises(ObserverLost, match="garbled|more than its answer"):
        _framed(answer, NONCE)


def test_the_command_carries_the_source_and_the_settings_but_no_secret():
    command = agent_command()
    assert command[:5] == ["python3", "-I", "-S", "-c", Path(agent.__file__).read_text()]
    assert '"max_bytes": %d' % observe.MAX_SNAPSHOT_BYTES in command[5] and len(command) == 6


def test_a_watch_says_which_path_its_looks_took():
    assert Watch(None, "c", unavailable="the observer is turned off").path() == "exec (the observer is turned off)"
    lost = Watch(None, "c", lost="the observer's stream ended", by_observer=3)
    assert lost.path() == "observer, then exec (the observer's stream ended)"
    done = Watch(None, "c", by_observer=2)
    assert done.finish() == ["observer"] and done.finish() == []
