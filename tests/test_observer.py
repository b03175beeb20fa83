"""The observer's parts that need no container (docs/observer.md): the agent's listing is find's, its answer is
framed with the request's nonce and anything else is refused as garbled, and a Watch says which path its looks took.
The live half (real containers, hostile servers) is tests/test_observer_live.py."""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from sandbox.run import observe, observer_agent as agent
from sandbox.run.exec_stream import FRAME
from sandbox.run.observer import Observer, ObserverLost, _framed, _Stream, agent_command
from sandbox.run.observer_watch import Watch
from scanner.probes.call_behavior import fill_record, reads_after
from scanner.report.model import CallBehavior

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


# ---- the canaries' opens (inotify: seen even when the reader keeps the access time still) -----------------------------

def _read_noatime(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY | os.O_NOATIME)  # the owner of a file may; its atime stays still
    try:
        os.read(descriptor, 100)
    finally:
        os.close(descriptor)


def test_the_agent_says_which_watched_files_were_opened_even_with_o_noatime(tmp_path):
    canaries = [tmp_path / "credentials", tmp_path / "id_rsa", tmp_path / "hosts.yml"]
    for canary in canaries:
        canary.write_text("secret")
    opens = agent.Opens([str(canary) for canary in canaries])
    assert opens.line() == agent.OPENED + b" ok \n"  # watched from the first answer on
    before = os.stat(canaries[1]).st_atime_ns
    _read_noatime(canaries[1])
    assert os.stat(canaries[1]).st_atime_ns == before  # what the listing alone would have missed
    os.lstat(canaries[0])  # a look at its metadata (the listing's own) is no open
    assert opens.line() == agent.OPENED + b" ok 1\n"
    assert opens.line() == agent.OPENED + b" ok \n"  # said once, in the answer after the read
    canaries[2].read_text()
    _read_noatime(canaries[0])
    assert opens.line() == agent.OPENED + b" ok 0,2\n"


def test_a_file_the_agent_cannot_watch_is_said_and_no_files_is_none(tmp_path):
    assert agent.Opens([str(tmp_path / "missing")]).line().startswith(agent.OPENED + b" failed:inotify_add_watch")
    assert agent.Opens([]).line() == agent.OPENED + b" none\n"


def _observer(opens: tuple[str, ...]) -> Observer:
    return Observer(api=None, exec_id="x", stream=None, host_pid=None, opens=opens)  # type: ignore[arg-type]


def test_the_observer_reads_the_opens_line_and_refuses_a_garbled_one():
    observer = _observer(("/home/probe/.aws/credentials", "/home/probe/.ssh/id_rsa"))
    assert observer._opened(agent.OPENED + b" ok 1\nrest") == (("/home/probe/.ssh/id_rsa",), b"rest")
    assert observer._opened(agent.OPENED + b" ok \nrest") == ((), b"rest")
    assert observer._opened(agent.OPENED + b" failed:inotify_init1-errno-24\nrest") == ((), b"rest")
    assert observer.opens_unwatched == "failed:inotify_init1-errno-24"
    for garbled in (b"rest", agent.OPENED + b" ok 7\n", agent.OPENED + b" ok x\n"):
        with pytest.raises(ObserverLost, match="garbled"):
            observer._opened(garbled)


def test_opens_in_a_diff_are_reads_and_a_failed_look_says_its_own_opens(tmp_path):
    entry = observe.FileEntry(path="/h/c", kind="f", size=6, mtime=1.0, atime=1.0, mode="600", ctime=1.0)
    before = observe.Snapshot(0.0, {"/h/c": entry}, observe.parse_counters(""))
    after = observe.Snapshot(1.0, {"/h/c": entry}, observe.parse_counters(""), opened=("/h/c",))
    assert observe.diff(before, after).read == ["/h/c"]
    assert observe.diff(before, observe.Snapshot(1.0, {"/h/c": entry}, observe.parse_counters(""))).read == []
    left, right = socket.socketpair()
    observer = Observer(api=None, exec_id="x", stream=_Stream(left), host_pid=None, opens=("/h/c", "/h/d"))
    with right:
        failed_listing = agent.OPENED + b" ok 0\n" + b"no listing"
        whole = agent.OPENED + b" ok 1\n" + agent.snapshot_bytes({**SETTINGS, "watched": [str(tmp_path)]})
        for body in (failed_listing, whole):
            nonce_line = threading.Thread(target=_answer_next, args=(right, body))
            nonce_line.start()
            snapshot = observer.snapshot()
            nonce_line.join()
            if body is failed_listing:  # its call's record has no diff, but the open is that call's
                assert snapshot.failed and snapshot.opened == ("/h/c",)
        assert not snapshot.failed and snapshot.opened == ("/h/d",)


def test_a_canary_opened_in_a_call_whose_look_failed_is_still_read():
    """The watches need no listing: a call whose look failed (a directory made unreadable) still has the canaries it
    opened, and those opened before the look after it go to that call's record (no diff is taken against it)."""
    canaries = {"AKIA": "/h/c (aws)", "TOKEN": "env GITHUB_TOKEN"}
    entry = observe.FileEntry(path="/h/c", kind="f", size=6, mtime=1.0, atime=1.0, mode="600", ctime=1.0)
    before = observe.Snapshot(0.0, {"/h/c": entry}, observe.parse_counters(""))
    failed = observe.Snapshot(1.0, {}, observe.parse_counters(""), failure="find exited with status 1",
                              opened=("/h/c", "/h/x"))
    record = CallBehavior(call=0, tool="t", label="l", sandbox=0)
    fill_record(record, before, failed, canaries)
    assert record.snapshot.startswith("failed (") and [e.where for e in record.canaries] == ["/h/c"]
    fresh = observe.Snapshot(2.0, {"/h/c": entry}, observe.parse_counters(""), opened=("/h/c",))
    reads_after([record], 0, fresh, canaries)
    assert [e.where for e in record.canaries] == ["/h/c"]  # once
    other = CallBehavior(call=1, tool="t", label="l", sandbox=0)
    reads_after([other], 0, fresh, canaries)
    reads_after([CallBehavior(call=2, tool="t", label="l", sandbox=1)], 0, fresh, canaries)  # another sandbox's
    assert [e.where for e in other.canaries] == ["/h/c"]


def _answer_next(peer: socket.socket, body: bytes) -> None:
    """Read one request off `peer` and answer it with `body`, framed as the engine frames the exec's stdout."""
    request = b""
    while not request.endswith(b"\n"):
        request += peer.recv(100)
    nonce = request.split()[1]
    answer = bytes(_answer(nonce, body))
    peer.sendall(FRAME.pack(1, len(answer)) + answer)


def test_canary_opens_the_observer_cannot_watch_are_said_once_in_errors():
    from scanner.probes.call_looks import note_observer_gaps
    from scanner.probes.model import ProbeCall

    call = ProbeCall(tool="read_file", label="valid", arguments={}, kind="generated")
    observer = _observer(("/home/probe/.aws/credentials",))
    watching = Watch(None, "c", observer=observer)
    errors: list[str] = []
    note_observer_gaps(watching, call, errors)
    assert errors == []  # watched (or not said otherwise yet): nothing to say
    observer.opens_unwatched = "failed:inotify_init1-errno-24"
    note_observer_gaps(watching, call, errors)
    note_observer_gaps(watching, call, errors)
    assert len(errors) == 1 and "inotify_init1-errno-24" in errors[0] and "O_NOATIME" in errors[0]


def _vanishing(monkeypatch, name: bytes, times: int) -> list[bytes]:
    """os.lstat in the agent raising FileNotFoundError for `name` the first `times` times it is asked (a file
    renamed away between the folder's listing and its lstat); the folders listed, in order."""
    listed: list[bytes] = []
    real_lstat, real_listdir = os.lstat, os.listdir
    left = [times]

    def lstat(path):
        if path.endswith(b"/" + name) and left[0] > 0:
            left[0] -= 1
            raise FileNotFoundError(2, "No such file or directory", path)
        return real_lstat(path)

    def listdir(path):
        listed.append(path)
        return real_listdir(path)

    monkeypatch.setattr(agent.os, "lstat", lstat)
    monkeypatch.setattr(agent.os, "listdir", listdir)
    return listed


def test_an_entry_that_vanished_mid_listing_has_its_folder_read_again(tmp_path, monkeypatch):
    (tmp_path / "state.json").write_text("{}")
    (tmp_path / "other").write_text("x")
    listed = _vanishing(monkeypatch, b"state.json", times=agent.READ_TRIES - 1)
    out = agent._Capped(1 << 20)
    assert agent.listing(out, [os.fsencode(tmp_path)]) == 0  # whole: the last read found every entry
    assert listed == [os.fsencode(tmp_path)] * agent.READ_TRIES
    paths = {record.split(b"\t")[-1] for record in out.value().split(b"\0") if record}
    assert paths == {os.fsencode(tmp_path), os.fsencode(tmp_path / "state.json"), os.fsencode(tmp_path / "other")}


def test_entries_that_keep_vanishing_make_the_listing_not_whole(tmp_path, monkeypatch):
    (tmp_path / "state.json").write_text("{}")
    _vanishing(monkeypatch, b"state.json", times=agent.READ_TRIES)
    out = agent._Capped(1 << 20)
    assert agent.listing(out, [os.fsencode(tmp_path)]) == 1  # a server renaming in a tight loop cannot hide it


def test_an_unreadable_entry_is_not_read_again(tmp_path, monkeypatch):
    (tmp_path / "f").write_text("x")
    listed: list[bytes] = []
    real_listdir = os.listdir
    monkeypatch.setattr(agent.os, "listdir", lambda path: listed.append(path) or real_listdir(path))
    monkeypatch.setattr(agent.os, "lstat", lambda path: (_ for _ in ()).throw(PermissionError(13, "denied"))
                        if path.endswith(b"/f") else os.stat(path, follow_symlinks=False))
    out = agent._Capped(1 << 20)
    assert agent.listing(out, [os.fsencode(tmp_path)]) == 1 and listed == [os.fsencode(tmp_path)]
