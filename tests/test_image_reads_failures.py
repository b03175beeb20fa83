"""A read of an installed image that failed part-way is never taken for what the image holds, nor kept for the next
scan (sandbox/core/archive.py archive_of, sandbox/core/image_files.py read_tar, sandbox/install/manifest.py,
scanner/pipeline/source_scan.py): the engine's 404 for a container that is gone is no missing folder, and an archive
stream that ends before the archive does is no complete folder. Pure logic: a scripted engine, real tar streams and a
real SQLite store."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from docker.errors import NotFound

from sandbox.core.errors import SandboxError
from sandbox.core.image_files import ArchiveBroken, ImageFiles, ReadLimits, read_tar
from sandbox.core.image_reads import FILE_NAME, ReadStore
from sandbox.install.manifest import read_manifest
from sandbox.install.request import InstalledServer
from scanner.pipeline.installed_files import InstalledFiles
from scanner.pipeline.source_scan import SourceScan, scan_source

IMAGE = "sha256:" + "c" * 64
SITE = "/opt/server/venv/lib/python3.12/site-packages"
SOURCE = b"import subprocess\nsubprocess.run(['sh', '-c', 'echo hi'])\n"
RECORD = b"pkg/__init__.py,,\npkg/server.py,,\npkg-1.0.dist-info/RECORD,,\n"


def _tar(top: str, members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _chunks(data: bytes, size: int = 700) -> list[bytes]:
    return [data[start:start + size] for start in range(0, len(data), size)]


class _Api:
    """The engine's archive API over one image: `gone` once the reader container has been removed under the read
    (after the dist-info's read); `broken` cuts the package folder's stream after its first member."""

    def __init__(self, *, gone: bool = False, broken: bool = False) -> None:
        self.gone, self.broken = gone, broken
        self.reads: list[str] = []
        self.removed = False

    def get_archive(self, container: str, path: str) -> tuple[list[bytes], dict[str, Any]]:
        self.reads.append(path)
        if self.removed:
            raise NotFound(f"No such container: {container}")
        if path.endswith("/pkg-1.0.dist-info"):
            self.removed = self.gone
            return _chunks(_tar("pkg-1.0.dist-info", {"RECORD": RECORD, "METADATA": b"Name: pkg\n"})), {}
        if path.endswith("/pkg"):
            data = _tar("pkg", {"__init__.py": b"", "server.py": SOURCE})
            return _chunks(data[:1024] if self.broken else data), {}
        raise NotFound(f"Could not find the file {path} in container {container}")

    def inspect_container(self, container: str) -> dict[str, Any]:
        if self.removed:
            raise NotFound(f"No such container: {container}")
        return {"Id": container}


class _Session:
    def __init__(self, api: _Api) -> None:
        self.client = type("Client", (), {"api": api})()

    def create_container(self, _role: str, **_settings: Any) -> str:
        return "reader"

    def remove_container(self, _container: str) -> None:
        pass


def _installed() -> InstalledServer:
    return InstalledServer(image="mcp-sandbox-installed:x", image_id=IMAGE, runtime_image="runtime", cached=True,
                           name="pkg", version="1.0", entry_points={}, installer_output="", seconds=0.0,
                           manifest={"python": "3.12.3"})


def _scan(api: _Api, store: ReadStore) -> SourceScan:
    files = InstalledFiles(_Session(api), _installed(), "pypi", users=1, store=store)  # type: ignore[arg-type]
    return scan_source(files, "pypi", dependencies=False, progress=lambda *_: None)


@pytest.fixture
def store(tmp_path: Path) -> ReadStore:
    return ReadStore(tmp_path / FILE_NAME)


def test_a_read_that_lost_its_container_says_so_and_is_not_kept(store: ReadStore) -> None:
    """The reader container removed under the read (`docker container prune`, `gc --all`): the engine answers the
    package folder's read with 404, as for a folder the image lacks. The stage says it could not read, keeps nothing,
    and the next scan of the image reads it and finds the file."""
    lost = _scan(_Api(gone=True), store)
    assert lost.problem is not None and "could not be read" in lost.problem and "No such container" in lost.problem
    healthy = _Api()
    found = _scan(healthy, store)
    assert found.problem is None and found.info is not None and found.info.files_read == 2
    assert any(path.endswith("/pkg") for path in healthy.reads)  # read from the image, not from the store


def test_a_folder_the_image_lacks_is_a_missing_folder_not_an_error(store: ReadStore) -> None:
    """The near miss: the container is there and the path is not, so the read says the folder is missing."""
    out = ImageFiles()
    files = InstalledFiles(_Session(_Api()), _installed(), "pypi", users=1, store=store)  # type: ignore[arg-type]
    assert files.read(f"{SITE}/elsewhere", "elsewhere", lambda _: True, ReadLimits(0), out) is False
    assert out.missing == [f"{SITE}/elsewhere"]


def test_an_archive_stream_cut_short_says_so_and_is_not_kept(store: ReadStore) -> None:
    """The engine's stream of the package folder ends after its first member (moby sends 200 before the copy, so a
    copy that fails midway just ends the body): tarfile alone would take that for the archive's end."""
    cut = _scan(_Api(broken=True), store)
    assert cut.problem is not None and "the engine's archive" in cut.problem
    healthy = _Api()
    assert _scan(healthy, store).info.files_read == 2  # type: ignore[union-attr]
    assert any(path.endswith("/pkg") for path in healthy.reads)


@pytest.mark.parametrize("ending", ["after a member", "with an error message", "mid-file"])
def test_read_tar_refuses_an_archive_that_did_not_end(ending: str) -> None:
    data = _tar("pkg", {"a.py": b"a = 1\n" * 40, "b.py": b"b = 2\n" * 40})
    cut = {"after a member": data[:1024], "with an error message": data[:1024] + b'{"message":"copy failed"}' * 30,
           "mid-file": data[:700]}[ending]
    with pytest.raises(ArchiveBroken):
        read_tar(_chunks(cut), lambda _: True, ReadLimits(0), ImageFiles(), "pkg")


def test_read_tar_takes_a_whole_archive_and_a_bound_is_a_cut_not_an_error() -> None:
    data = _tar("pkg", {"a.py": b"a = 1\n", "b.py": b"b = 2\n"})
    whole = ImageFiles()
    read_tar(_chunks(data), lambda _: True, ReadLimits(0), whole, "pkg")
    assert sorted(whole.files) == ["pkg/a.py", "pkg/b.py"] and whole.cut is None
    bounded = ImageFiles()
    read_tar(_chunks(data), lambda _: True, ReadLimits(0, max_stream_bytes=600), bounded, "pkg")
    assert bounded.cut is not None and "over 600 bytes" in bounded.cut


class _ManifestApi:
    def __init__(self, *, lockfile: bool, gone_after_manifest: bool = False) -> None:
        self.lockfile, self.gone_after_manifest, self.gone = lockfile, gone_after_manifest, False

    def get_archive(self, container: str, path: str) -> tuple[list[bytes], dict[str, Any]]:
        if self.gone:
            raise NotFound(f"No such container: {container}")
        folder, name = path.rsplit("/", 1)
        if name == "install.json":
            self.gone = self.gone_after_manifest
            return [_tar(".", {name: json.dumps({"python": "3.12.3"}).encode()})], {}
        if self.lockfile:
            return [_tar(".", {name: b"mcp==2.3.0 --hash=sha256:00\n"})], {}
        raise NotFound(f"Could not find the file {path} in container {container}")

    def inspect_container(self, container: str) -> dict[str, Any]:
        if self.gone:
            raise NotFound(f"No such container: {container}")
        return {"Id": container}


def _client(api: _ManifestApi) -> Any:
    return type("Client", (), {"api": api})()


def test_a_manifest_whose_container_went_away_is_an_error_not_a_local_target() -> None:
    """The lockfile's 404 came from a container removed after the install description was read: that is no local
    target (no hash-pinned tree), so the read fails rather than naming no dependency tree. The near misses: the
    lockfile there, and the lockfile absent with the container there (a local target)."""
    with pytest.raises(SandboxError, match="gone"):
        read_manifest(_client(_ManifestApi(lockfile=True, gone_after_manifest=True)), "c", "pypi")
    assert read_manifest(_client(_ManifestApi(lockfile=True)), "c", "pypi")["requirements"].startswith("mcp==")
    assert read_manifest(_client(_ManifestApi(lockfile=False)), "c", "pypi")["requirements"] is None
