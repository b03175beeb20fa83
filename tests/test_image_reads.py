"""The store of what scans read out of installed images (sandbox/core/image_reads.py), and how the scan's installed
files use it (scanner/pipeline/installed_files.py, source_scan.read_key): pure logic over real SQLite files."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from sandbox.core import image_reads
from sandbox.core.image_files import ImageFiles, ReadLimits
from sandbox.core.image_reads import FILE_NAME, ReadStore, StoredRead
from scanner.pipeline import installed_files
from scanner.pipeline.installed_files import InstalledFiles, SourceRead
from scanner.pipeline.source_scan import read_key

IMAGE = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64


@pytest.fixture
def store(tmp_path: Path) -> ReadStore:
    return ReadStore(tmp_path / "state" / FILE_NAME)


def test_a_kept_read_comes_back_whole_and_only_for_its_image_and_key(store: ReadStore) -> None:
    read = StoredRead({"file:a.py": b"print(1)\n", "file:empty.py": b""}, {"cut": None, "too_big": ["big.js"]})
    assert store.load(IMAGE, "k") is None  # no file yet, and none is made by a load
    assert not store.path.exists()
    assert store.save(IMAGE, "k", read)
    assert store.load(IMAGE, "k") == read
    assert store.load(OTHER, "k") is None and store.load(IMAGE, "k2") is None


def test_a_kept_reads_files_come_back_in_the_order_read(store: ReadStore) -> None:
    """A kept read keeps the order the files were read in (the archive's), as a read of the image gives them."""
    names = [f"file:{name}.py" for name in ("zeta", "alpha", "mid", "beta", "omega", "a")]
    assert store.save(IMAGE, "k", StoredRead({name: name.encode() for name in names}))
    loaded = store.load(IMAGE, "k")
    assert loaded is not None and list(loaded.blobs) == names


def test_saving_again_replaces_the_kept_read(store: ReadStore) -> None:
    assert store.save(IMAGE, "k", StoredRead({"file:a.py": b"1", "file:b.py": b"2"}))
    assert store.save(IMAGE, "k", StoredRead({"file:c.py": b"3"}))
    assert store.load(IMAGE, "k") == StoredRead({"file:c.py": b"3"})


def test_a_read_over_the_entry_bound_is_not_kept(store: ReadStore, monkeypatch: pytest.MonkeyPatch) -> None:
    small = StoredRead({"file:a": b"x" * 10})
    monkeypatch.setattr(image_reads, "MAX_ENTRY_BYTES", small.size())
    assert not store.save(IMAGE, "big", StoredRead({"file:a": b"x" * 11}))
    assert store.save(IMAGE, "small", small)  # the near miss: at the bound
    assert store.load(IMAGE, "big") is None and store.load(IMAGE, "small") is not None


def test_an_entrys_size_counts_its_names_and_what_else_it_said() -> None:
    """A hostile package of thousands of empty files under long names is no free entry: the bounds count the names
    and the meta as well as the bytes."""
    names = {f"file:pkg/{'d' * 200}/{n}.js": b"" for n in range(1_000)}
    read = StoredRead(names, {"missing": ["/x" * 100]})
    assert read.size() > 1_000 * 200 and read.size() == sum(map(len, names)) + len(read.meta_text())


def test_an_entry_kept_by_the_count_of_its_bytes_alone_is_as_if_absent(store: ReadStore) -> None:
    """An entry an earlier version kept (its size then its blobs' bytes only) no longer adds up: read again."""
    assert store.save(IMAGE, "k", StoredRead({"file:a.py": b"1"}))
    with sqlite3.connect(store.path) as connection:
        connection.execute("UPDATE reads SET bytes = 1 WHERE key = 'k'")
    assert store.load(IMAGE, "k") is None


def test_the_oldest_reads_go_when_the_store_is_over_its_bound(store: ReadStore,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(image_reads, "MAX_STORE_BYTES", 2 * StoredRead({"f": b"x" * 10}).size())
    for n, key in enumerate(("first", "second", "third")):
        assert store.save(IMAGE, key, StoredRead({"f": b"x" * 10}), now=1000.0 + n)
    assert store.load(IMAGE, "first") is None
    assert store.load(IMAGE, "second") is not None and store.load(IMAGE, "third") is not None


def test_forget_and_prune_drop_the_reads_of_images_gone(store: ReadStore) -> None:
    third = "sha256:" + "c" * 64
    for image in (IMAGE, OTHER, third):
        assert store.save(image, "k", StoredRead({"f": image.encode()}))
    store.forget([OTHER])
    assert store.load(OTHER, "k") is None and store.load(IMAGE, "k") is not None
    store.prune([IMAGE, "sha256:" + "d" * 64], listed_at=time.time() + 1)
    assert store.load(IMAGE, "k") is not None and store.load(third, "k") is None


def test_a_prune_keeps_what_was_kept_after_its_listing(store: ReadStore) -> None:
    """A batch's eviction runs while other scans commit images and keep their reads: a read kept after the listing
    the prune goes by is of an image the listing could not see, and stays."""
    assert store.save(IMAGE, "k", StoredRead({"f": b"1"}), now=100.0)
    assert store.save(OTHER, "k", StoredRead({"f": b"2"}), now=300.0)
    store.prune([], listed_at=200.0)
    assert store.load(IMAGE, "k") is None and store.load(OTHER, "k") is not None


def test_a_file_name_that_is_no_utf8_comes_back_as_it_was(store: ReadStore) -> None:
    """Tar member names are decoded with surrogateescape: a package can name a file `\\xff.js`. Kept and taken back
    as the same string, never an error that would fail the scan."""
    name = b"file:pkg/\xff\xfe.js".decode("utf-8", "surrogateescape")
    read = StoredRead({name: b"x = 1", "file:pkg/plain.js": b""}, {"too_big": [name[5:]]})
    assert store.save(IMAGE, "k", read)
    assert store.load(IMAGE, "k") == read


def test_a_kept_read_whose_blobs_do_not_add_up_is_as_if_absent(store: ReadStore) -> None:
    assert store.save(IMAGE, "k", StoredRead({"file:a.py": b"1", "file:b.py": b"2"}))
    with sqlite3.connect(store.path) as connection:
        connection.execute("DELETE FROM blobs WHERE name = ?", (b"file:b.py",))
    assert store.load(IMAGE, "k") is None
    assert store.save(IMAGE, "other", StoredRead({"file:a.py": b"1"}))
    with sqlite3.connect(store.path) as connection:
        connection.execute("UPDATE blobs SET data = X'3132' WHERE key = 'other'")  # the same count, more bytes
    assert store.load(IMAGE, "other") is None


@pytest.mark.parametrize("damage", ["not a database", "a folder in the file's place"])
def test_a_store_that_cannot_be_used_is_a_read_of_the_image_never_an_error(tmp_path: Path, damage: str) -> None:
    path = tmp_path / FILE_NAME
    if damage == "not a database":
        path.write_bytes(b"\x00garbage" * 100)
    else:
        path.mkdir()
    store = ReadStore(path)
    assert not store.save(IMAGE, "k", StoredRead({"f": b"1"}))
    assert store.load(IMAGE, "k") is None
    store.forget([IMAGE])
    store.prune([], listed_at=time.time())


def test_a_state_folder_that_cannot_be_searched_is_a_read_of_the_image(store: ReadStore,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether the file exists cannot be asked (a folder left mode 0700 by another user): as if nothing were kept."""
    assert store.save(IMAGE, "k", StoredRead({"f": b"1"}))

    def refused(path: Path) -> bool:
        raise PermissionError(13, "Permission denied", str(path))
    monkeypatch.setattr(Path, "is_file", refused)
    assert store.load(IMAGE, "k") is None
    store.forget([IMAGE])
    store.prune([], listed_at=time.time())


def test_the_state_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MCP_SANDBOX_STATE_DIR", str(tmp_path / "s"))
    assert ReadStore().path == tmp_path / "s" / FILE_NAME
    monkeypatch.delenv("MCP_SANDBOX_STATE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert ReadStore().path == tmp_path / "x" / "mcp-sandbox" / FILE_NAME


def test_no_home_folder_means_nothing_is_kept_never_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """No state variable, `HOME` unset and the user not in the password database: the sidecars are unusable, as an
    unwritable file is (the near miss: with a home folder they live under it)."""
    from sandbox.core import image_use, state_dir

    for name in ("MCP_SANDBOX_STATE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.setattr(Path, "home", no_home)
    with pytest.raises(OSError, match="MCP_SANDBOX_STATE_DIR"):
        state_dir.state_file(FILE_NAME)
    store = ReadStore()
    assert store.path is None and store.load(IMAGE, "k") is None and not store.save(IMAGE, "k", StoredRead({}))
    store.forget([IMAGE])
    store.prune([], listed_at=time.time())
    assert image_use.record_use(IMAGE) is False and image_use.last_uses() == {}
    image_use.forget([IMAGE])
    monkeypatch.setattr(Path, "home", lambda: Path("/home/someone"))
    assert ReadStore().path == Path("/home/someone/.cache/mcp-sandbox") / FILE_NAME


def test_the_code_that_reads_is_named_by_what_was_imported_not_what_is_on_disk(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-lived worker whose install changes on disk keys its reads by the code it runs: the digest is taken as
    the modules are imported, and the key does not read the source files again."""
    limits = ReadLimits(max_file_bytes=1024)
    before = read_key("pypi", False, limits)

    def changed(_path: Path) -> bytes:
        return b"another version of the code"
    monkeypatch.setattr(Path, "read_bytes", changed)
    assert read_key("pypi", False, limits) == before


def test_the_source_reads_key_names_how_it_reads() -> None:
    limits = ReadLimits(max_file_bytes=1024)
    key = read_key("pypi", False, limits)
    assert key == read_key("pypi", False, ReadLimits(max_file_bytes=1024))
    assert len({key, read_key("npm", False, limits), read_key("pypi", True, limits),
                read_key("pypi", False, ReadLimits(max_file_bytes=2048)),
                read_key("pypi", False, ReadLimits(max_file_bytes=1024, max_files=9))}) == 5


class _Installed:
    image_id = IMAGE
    manifest = None


class _Session:
    client = None


def _files(store: ReadStore, installed: Any = None, ecosystem: str = "pypi") -> InstalledFiles:
    return InstalledFiles(_Session(), installed or _Installed(), ecosystem, users=1,  # type: ignore[arg-type]
                          store=store)


def test_a_source_read_is_kept_with_what_else_it_said_and_taken_back_without_reading(store: ReadStore) -> None:
    odd = b"pkg/\xff.py".decode("utf-8", "surrogateescape")  # a member name that is no UTF-8, as read_tar gives it
    read = ImageFiles(files={"pkg/a.py": b"x = 1\n", "pkg/b.py": b"", odd: b"y = 2\n"}, too_big=["pkg/huge.py", odd],
                      cut="more than 5000 files", missing=["/opt/nowhere"], kept_bytes=12)
    calls: list[int] = []

    def first() -> SourceRead:
        calls.append(1)
        return read, {"METADATA": b"Name: pkg\n"}
    assert _files(store).kept("k", first) == (read, {"METADATA": b"Name: pkg\n"})

    def never() -> SourceRead:
        raise AssertionError("read again")
    files, found = _files(store).kept("k", never)
    assert (files, found) == (read, {"METADATA": b"Name: pkg\n"}) and calls == [1]


def test_a_read_that_found_nothing_is_not_kept(store: ReadStore) -> None:
    """The near miss: a read that says why no file was read is made again by the next scan."""
    reads: list[Any] = []

    def nothing() -> SourceRead:
        reads.append(1)
        return "no dist-info RECORD for pkg 1.0 in site-packages", {}
    assert _files(store).kept("k", nothing)[0] == "no dist-info RECORD for pkg 1.0 in site-packages"
    _files(store).kept("k", nothing)
    assert reads == [1, 1]


def test_an_install_manifest_is_kept_for_the_next_scan_of_the_image(store: ReadStore,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The manifest the install read is kept: a later scan of the image (a cached install, no manifest) reads none.
    The near miss: with nothing kept, the image is read."""
    manifest = {"python": "3.13.5", "requirements": "mcp==2.3.0 --hash=sha256:00\n"}
    fresh = type("Fresh", (_Installed,), {"manifest": manifest})()
    assert _files(store, fresh).manifest() == manifest
    read: list[str] = []

    def from_image(_client: Any, container_id: str, _ecosystem: str) -> dict[str, Any]:
        read.append(container_id)
        return {"python": "3.12.0"}
    monkeypatch.setattr(installed_files, "read_manifest", from_image)
    monkeypatch.setattr(InstalledFiles, "_opened", lambda self: type("Reader", (), {"container_id": "c"})())
    assert _files(store).manifest() == manifest and read == []
    empty = ReadStore(store.path.parent / "empty" / FILE_NAME)
    assert _files(empty).manifest() == {"python": "3.12.0"} and read == ["c"]


def _writer(path: str, seed: int, results: Any) -> None:
    store, images = ReadStore(Path(path)), [f"sha256:{n:064d}" for n in range(3)]
    saved = hits = torn = 0
    for step in range(40):
        image, key = images[(seed + step // 2) % 3], f"k{step // 2 % 2}"
        blobs = {f"file:{n}.py": f"{image}{key}".encode() * (n + 1) for n in range(1 + (seed + step) % 7)}
        if step % 2:
            saved += store.save(image, key, StoredRead(blobs, {"files": len(blobs)}))
        elif (read := store.load(image, key)) is not None:
            hits += 1
            torn += read.meta["files"] != len(read.blobs) or any(
                data != f"{image}{key}".encode() * (int(name[5:-3]) + 1) for name, data in read.blobs.items())
    results.put((saved, hits > 0, torn))


def test_a_batchs_scans_keep_and_take_reads_side_by_side(tmp_path: Path) -> None:
    """Eight processes making the file and saving and loading the same entries at once: every save is kept (none
    refused as locked, the new file's switch to WAL included), loads find what the others saved, and each is one
    save's whole."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    results = context.Queue()
    workers = [context.Process(target=_writer, args=(str(tmp_path / FILE_NAME), seed, results)) for seed in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert [results.get(timeout=5) for _ in workers] == [(20, True, 0)] * 8


def test_a_manifest_of_any_shape_comes_back_as_it_was_read(store: ReadStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """An install can leave a lockfile that is no JSON object (a list of pairs, say): the kept manifest is that list
    again, never turned into the object the pairs would make."""
    shaped = [["python", "3.13.5"], ["requirements", ""]]
    monkeypatch.setattr(installed_files, "read_manifest", lambda *_: shaped)
    monkeypatch.setattr(InstalledFiles, "_opened", lambda self: type("Reader", (), {"container_id": "c"})())
    assert _files(store, ecosystem="npm").manifest() == shaped
    monkeypatch.setattr(installed_files, "read_manifest", lambda *_: pytest.fail("the image was read"))
    assert _files(store, ecosystem="npm").manifest() == shaped
