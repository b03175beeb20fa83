"""The installed-image cache's LRU eviction (sandbox/core/image_cache.py, image_use.py): the choice as a pure function,
the last-use sidecar, and a real engine with throwaway images this test makes (scoped by a label of its own, so the
cached installs of other scans on the engine are never candidates)."""

from __future__ import annotations

import functools
import io
import json
import time
import uuid
from pathlib import Path

import pytest
from docker.errors import APIError, NotFound

from sandbox.core import image_use, labels
from sandbox.core.image_reads import ReadStore, StoredRead
from sandbox.core.image_cache import CachedImage, Policy, choose, disk_usage
from scanner.cli.gc import eviction_policy, parse_duration
from scanner.errors import UsageError

DAY = 86400.0
NOW = 1_000_000_000.0


def image(name: str, days_ago: float, size: int = 100, in_use: bool = False) -> CachedImage:
    return CachedImage(image_id=name, tags=(f"mcp-sandbox-installed:{name}",), size=size,
                       last_used=NOW - days_ago * DAY, in_use=in_use)


def ids(chosen: list[CachedImage]) -> list[str]:
    return [i.image_id for i in chosen]


def test_keep_n_removes_the_least_recently_used() -> None:
    images = [image("new", 1), image("old", 30), image("mid", 5)]
    assert ids(choose(images, Policy(keep=1), NOW)) == ["old", "mid"]
    assert ids(choose(images, Policy(keep=3), NOW)) == []


def test_older_than() -> None:
    images = [image("new", 1), image("old", 30)]
    assert ids(choose(images, Policy(older_than=7 * DAY), NOW)) == ["old"]
    assert ids(choose(images, Policy(older_than=60 * DAY), NOW)) == []


def test_size_cap_evicts_lru_until_the_rest_fits() -> None:
    images = [image("a", 1, 300), image("b", 2, 300), image("c", 3, 300)]
    assert ids(choose(images, Policy(max_bytes=650), NOW)) == ["c"]
    assert ids(choose(images, Policy(max_bytes=250), NOW)) == ["c", "b", "a"]
    assert ids(choose(images, Policy(max_bytes=900), NOW)) == []


def test_in_use_and_recently_used_images_stay() -> None:
    images = [image("busy", 30, in_use=True), image("fresh", 0.001), image("idle", 30)]
    assert ids(choose(images, Policy(keep=0), NOW)) == ["idle"]
    # Under a size cap the next least recently used idle one goes instead of a busy one.
    capped = [image("busy", 30, 500, in_use=True), image("idle", 20, 500), image("newer", 10, 500)]
    assert ids(choose(capped, Policy(max_bytes=1000, min_idle=0), NOW)) == ["idle"]


def test_the_sidecar_records_the_latest_use(tmp_path: Path) -> None:
    path = tmp_path / "use.sqlite"
    assert image_use.last_uses(path) == {}
    assert image_use.record_use("sha256:a", 10.0, path) and image_use.record_use("sha256:a", 5.0, path)
    assert image_use.last_uses(path) == {"sha256:a": 10.0}
    image_use.forget(["sha256:a"], path)
    assert image_use.last_uses(path) == {}


@pytest.mark.parametrize(("text", "seconds"), [("30d", 30 * DAY), ("12h", 43200.0), ("90m", 5400.0), ("2w", 14 * DAY)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, "--older-than") == seconds


def test_a_bad_duration_is_refused() -> None:
    with pytest.raises(UsageError, match="not a duration"):
        parse_duration("soon", "--older-than")


class _BusyEngine:
    """An API client whose disk-usage report is refused as busy `busy` times (a second client's report is summing
    up), then answered, or refused for another reason."""

    def __init__(self, busy: int, explanation: str = "a disk usage operation is already running") -> None:
        self.busy, self.explanation, self.asked = busy, explanation, 0

    def df(self) -> dict[str, list[object]]:
        self.asked += 1
        if self.asked <= self.busy:
            raise APIError("500 Server Error", explanation=self.explanation)
        return {"Images": []}


def test_a_busy_disk_usage_report_is_asked_for_again_until_it_is_answered() -> None:
    engine, pauses = _BusyEngine(busy=3), []
    assert disk_usage(engine, sleep=pauses.append) == {"Images": []}  # type: ignore[arg-type]
    assert engine.asked == 4 and pauses == [0.2, 0.4, 0.8]


def test_another_refusal_or_a_report_busy_past_the_wait_is_raised() -> None:
    other = _BusyEngine(busy=1, explanation="no space left on device")
    with pytest.raises(APIError, match="500"):
        disk_usage(other, sleep=lambda _: None)  # type: ignore[arg-type]
    assert other.asked == 1
    stuck = _BusyEngine(busy=1_000)
    with pytest.raises(APIError):
        disk_usage(stuck, wait=0.0, sleep=lambda _: None)  # type: ignore[arg-type]
    assert stuck.asked == 1


class _RefusingApi:
    """Two old cached installs; the engine refuses to remove the first for a reason other than a container using it
    (its storage driver failed), or, with `status` 409, because a container started from it since the listing."""

    def __init__(self, status: int) -> None:
        self.status, self.removed = status, []
        self.listed = [{"Id": f"sha256:{n}", "RepoTags": [f"{labels.INSTALLED_REPOSITORY}:{n}"], "Size": 100,
                        "Created": 0, "Labels": {labels.KIND: labels.KIND_INSTALLED, labels.CREATED: "1"}}
                       for n in ("first", "second")]

    def images(self, filters: object) -> list[dict[str, object]]:
        return self.listed

    def df(self) -> dict[str, list[object]]:
        return {"Images": []}

    def containers(self, all: bool) -> list[object]:  # noqa: A002 - the Docker SDK's keyword
        return []

    def remove_image(self, tag: str, force: bool) -> None:
        if tag.endswith(":first"):
            raise APIError("refused", response=_Response(self.status), explanation="driver \x1b[2J failed to remove")
        self.removed.append(tag)


class _Response:
    def __init__(self, status: int) -> None:
        self.status_code = status


class _RefusingEngine:
    def __init__(self, status: int) -> None:
        self.api = _RefusingApi(status)


def test_an_image_the_engine_refuses_to_remove_is_said_and_the_next_is_still_removed(tmp_path: Path) -> None:
    from sandbox.core import image_cache

    engine = _RefusingEngine(500)
    result = image_cache.evict(engine, Policy(keep=0), NOW, use_path=tmp_path / "use.sqlite",  # type: ignore[arg-type]
                               reads=ReadStore(tmp_path / "reads.sqlite"))
    assert result.removed == [f"{labels.INSTALLED_REPOSITORY}:second"] == engine.api.removed
    assert result.refused == [f"{labels.INSTALLED_REPOSITORY}:first (the engine refused: driver \x1b[2J failed to "
                              "remove)"] and result.failed == []
    in_use = _RefusingEngine(409)  # the near miss: a container took it since the listing, kept and not an error
    result = image_cache.evict(in_use, Policy(keep=0), NOW, use_path=tmp_path / "use.sqlite",  # type: ignore[arg-type]
                               reads=ReadStore(tmp_path / "reads.sqlite"))
    assert result.failed == [f"{labels.INSTALLED_REPOSITORY}:first"] and result.refused == []


def test_gc_images_names_a_refused_cached_install_and_exits_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import typer

    from sandbox.core import engine, gc
    from scanner.cli.gc import collect_garbage

    monkeypatch.setattr(engine, "connect", lambda: _RefusingEngine(500))
    monkeypatch.setattr(gc, "sweep", lambda client, everything=False: gc.SweepResult())
    monkeypatch.setenv("MCP_SANDBOX_STATE_DIR", str(tmp_path))  # its last uses and kept reads: this test's own
    with pytest.raises(typer.Exit) as ended:
        collect_garbage(everything=True, cached_images=True, keep=None, older_than=None)
    assert ended.value.exit_code == 3
    out = capsys.readouterr()
    assert "1 images" in out.out
    assert out.err.startswith(f"could not remove cached install {labels.INSTALLED_REPOSITORY}:first (the engine "
                              "refused: driver")
    assert "\x1b" not in out.err  # the engine's words are shown inert


def _remove_images(client, *names: str) -> None:  # type: ignore[no-untyped-def]
    """The test's images, each gone whether or not the test removed it already."""
    for name in names:
        try:
            client.api.remove_image(name, force=True)
        except NotFound:
            pass


def _throwaway(client, base: str, tag: str, run: str, created: float,  # type: ignore[no-untyped-def]
               more: dict[str, str] | None = None) -> str:
    dockerfile = f"FROM {base}\n".encode()
    built, _ = client.images.build(fileobj=io.BytesIO(dockerfile), tag=tag, rm=True, labels={
        labels.KIND: labels.KIND_INSTALLED, labels.CREATED: str(int(created)), f"{labels.PREFIX}.test-run": run,
        **(more or {})})
    return str(built.id)


@pytest.mark.docker
def test_cached_installs_are_listed_by_several_clients_at_once(docker_client) -> None:  # type: ignore[no-untyped-def]
    # Before: a second `gc --images`, or another batch's `--cache-size`, asking while the engine summed up its disk
    # usage for the first ended as an internal error (500 "a disk usage operation is already running", Docker < 23).
    from concurrent.futures import ThreadPoolExecutor

    from sandbox.core import engine, image_cache

    clients = [engine.connect() for _ in range(4)]
    try:
        with ThreadPoolExecutor(len(clients)) as pool:
            listings = list(pool.map(lambda client: [image_cache.cached_images(client, {}) for _ in range(3)],
                                     clients))
    finally:
        for client in clients:
            client.close()
    seen = {frozenset(image.image_id for image in listing) for per_client in listings for listing in per_client}
    assert len(seen) == 1  # each of the twelve listings, every one answered, saw the same cached installs


@pytest.mark.docker
def test_eviction_on_a_real_engine(docker_client, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from sandbox.core import image_cache, images

    base = images.image_tag("node")
    base_id = docker_client.images.get(base).id
    run = uuid.uuid4().hex[:12]
    now = time.time()
    old_tag, new_tag, busy_tag = (f"mcp-sandbox-installed:gc-test-{run}-{n}" for n in ("old", "new", "busy"))
    old = _throwaway(docker_client, base, old_tag, run, now - 30 * DAY)
    new = _throwaway(docker_client, base, new_tag, run + "-other", now - 40 * DAY)
    # The same content builds the same image: retag a distinct one by giving it its own label set.
    busy = _throwaway(docker_client, base, busy_tag, run, now - 50 * DAY)
    uses = tmp_path / "use.sqlite"
    image_use.record_use(new, now, uses)  # created long ago, used just now: the sidecar wins over the label
    container = docker_client.api.create_container(busy, command=["true"], labels={f"{labels.PREFIX}.test-run": run})
    try:
        scoped = image_cache.cached_images(docker_client, image_use.last_uses(uses), {f"{labels.PREFIX}.test-run": run})
        assert {i.image_id for i in scoped} == {old, busy}
        reads = ReadStore(tmp_path / "reads.sqlite")
        for image in (old, busy):
            assert reads.save(image, "k", StoredRead({"f": b"1"}))
        result = image_cache.evict(docker_client, Policy(keep=0, min_idle=0), now, use_path=uses,
                                   select={f"{labels.PREFIX}.test-run": run}, reads=reads)
        assert result.removed == [old_tag]
        assert reads.load(old, "k") is None and reads.load(busy, "k") is not None  # the reads of the removed go
        assert busy_tag in result.kept_in_use
        every = image_cache.cached_images(docker_client, image_use.last_uses(uses),
                                          {f"{labels.PREFIX}.test-run": run + "-other"})
        assert [i.last_used for i in every] == [pytest.approx(now)]
        fresh = image_cache.evict(docker_client, Policy(older_than=DAY, min_idle=0), now, use_path=uses,
                                  select={f"{labels.PREFIX}.test-run": run + "-other"})
        assert fresh.removed == []  # used just now, though made 40 days ago
        gone = "sha256:" + "0" * 64
        assert reads.save(gone, "k", StoredRead({"f": b"1"}))
        # Every installed image listed (no selection), none removed: only the reads of an image gone are dropped.
        image_cache.evict(docker_client, Policy(keep=10**6, min_idle=0), now, use_path=uses, reads=reads)
        assert reads.load(gone, "k") is None and reads.load(busy, "k") is not None
        assert docker_client.images.get(base).id == base_id  # the runtime base image is never a candidate
        assert docker_client.images.get(busy).id == busy
    finally:
        docker_client.api.remove_container(container["Id"], force=True)
        _remove_images(docker_client, old_tag, new_tag, busy_tag)  # some evicted by the test


@pytest.mark.docker
def test_an_image_labelled_installed_by_its_author_is_never_evicted(docker_client):  # type: ignore[no-untyped-def]
    """The kind label is the image's author's to set (a `docker:` target's LABEL, or inherited by an image built FROM
    an installed one): an image named outside the cache's repository is someone else's, whatever it says."""
    from sandbox.core import image_cache, images

    run = uuid.uuid4().hex[:12]
    outside, inside = f"mcp-sandbox-test/labelled-installed:{run}", f"mcp-sandbox-installed:gc-test-{run}"
    foreign = _throwaway(docker_client, images.image_tag("node"), outside, run, time.time() - 30 * DAY)
    select = {f"{labels.PREFIX}.test-run": run}
    try:
        assert image_cache.cached_images(docker_client, {}, select) == []
        assert image_cache.evict(docker_client, Policy(keep=0, min_idle=0), time.time(), select=select).removed == []
        assert docker_client.images.get(outside).id == foreign
        docker_client.api.tag(foreign, *inside.split(":"))  # named in the cache's repository too: still not the cache's
        assert image_cache.cached_images(docker_client, {}, select) == []
    finally:
        _remove_images(docker_client, outside, inside)


@pytest.mark.docker
def test_an_untagged_cached_install_is_evicted_by_its_id(docker_client,  # type: ignore[no-untyped-def]
                                                         tmp_path: Path) -> None:
    """An engine before API 1.42 lists an untagged image as RepoTags ["<none>:<none>"]; removing that name is a 400,
    which ended `gc --images` as an internal error (exit 3) with the rest of the eviction undone."""
    from sandbox.core import image_cache, images

    base = images.image_tag("node")
    run = uuid.uuid4().hex[:12]
    tag = f"mcp-sandbox-installed:gc-test-{run}"
    untagged = _throwaway(docker_client, base, tag, run, time.time() - 30 * DAY)
    retagged = _throwaway(docker_client, base, tag, run + "-again", time.time() - 30 * DAY)  # takes the tag
    try:
        listed = image_cache.cached_images(docker_client, {}, {f"{labels.PREFIX}.test-run": run})
        assert [(i.image_id, i.tags) for i in listed] == [(untagged, ())]
        result = image_cache.evict(docker_client, Policy(keep=0, min_idle=0), time.time(),
                                   use_path=tmp_path / "use.sqlite", select={f"{labels.PREFIX}.test-run": run},
                                   reads=ReadStore(tmp_path / "reads.sqlite"))
        assert result.removed == [untagged[:19]] and result.failed == []
    finally:
        _remove_images(docker_client, untagged, retagged)


def test_gc_images_keeps_what_was_used_in_the_last_15_minutes_unless_all() -> None:
    just_used = CachedImage(image_id="a", tags=("mcp-sandbox-installed:a",), size=1, last_used=NOW - 60)
    assert choose([just_used], eviction_policy(None, None, everything=False), NOW) == []
    assert ids(choose([just_used], eviction_policy(None, None, everything=True), NOW)) == ["a"]
    assert ids(choose([image("old", 1)], eviction_policy(None, None, everything=False), NOW)) == ["old"]


@pytest.mark.docker
def test_gc_images_leaves_the_cached_install_a_running_scan_just_looked_up(  # type: ignore[no-untyped-def]
        docker_client, tmp_path: Path, monkeypatch, capsys) -> None:
    """A scan looks its cached install up (recording the use), then starts its containers from it. `gc --images` run
    in that gap (a cron job on a worker, as docs/scale.md suggests) removed the image: before the fix the scan's
    server could not be created (ImageNotFound) and the scan ended incomplete, exit 3."""
    from sandbox.core import image_cache, images
    from sandbox.core.session import SandboxSession
    from sandbox.install.container import MANIFEST_LABEL, cached_install
    from scanner.cli.gc import collect_garbage

    monkeypatch.setenv("MCP_SANDBOX_STATE_DIR", str(tmp_path))  # this test's own last-use sidecar
    base = images.image_tag("node")
    run = uuid.uuid4().hex[:12]
    tag = f"mcp-sandbox-installed:gc-test-{run}"
    _throwaway(docker_client, base, tag, run, time.time() - 30 * DAY,
               {MANIFEST_LABEL: json.dumps({"name": "zoo", "version": "1.0.0"})})
    # Only this test's image is a candidate: the other cached installs on the engine are not the test's to evict.
    monkeypatch.setattr(image_cache, "evict",
                        functools.partial(image_cache.evict, select={f"{labels.PREFIX}.test-run": run}))
    session = SandboxSession(docker_client)
    try:
        installed = cached_install(session, tag, base)  # the scan's lookup
        assert installed is not None
        collect_garbage(everything=False, cached_images=True, keep=None, older_than=None)  # gc, meanwhile
        session.create_container("run", image=installed.image, command=["true"])  # the scan's server
        assert "kept 1 cached installs used in the last 15 minutes" in capsys.readouterr().out
    finally:
        session.teardown()
        _remove_images(docker_client, tag)
