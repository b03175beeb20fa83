"""Build contexts of the sandbox images: each image's own folder plus images/common/ as common/, and the context hash
(the image tag) covers the shared files too. No engine needed."""

from __future__ import annotations

import io
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from sandbox.core import images


def test_every_context_carries_the_shared_files() -> None:
    for runtime in images.REPOSITORIES:
        names = [name for name, _ in images._context_files(runtime)]
        assert "common/users.sh" in names and "Dockerfile" in names, runtime


def test_shared_files_exist_once_and_every_copied_one_is_in_the_context() -> None:
    assert not (images.IMAGES_DIR / "node" / "users.sh").exists()
    assert not (images.IMAGES_DIR / "python" / "users.sh").exists()
    for runtime in images.REPOSITORIES:
        names = {name for name, _ in images._context_files(runtime)} | {"ca-bundle.crt"}
        dockerfile = (images.context_dir(runtime) / "Dockerfile").read_text()
        for source in re.findall(r"^COPY (?!--from)(\S+) ", dockerfile, flags=re.MULTILINE):
            assert source in names or source.endswith("*"), f"{runtime}: COPY {source} is not in the context"


def test_the_build_context_tar_holds_exactly_the_hashed_files(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.crt"
    bundle.write_bytes(b"-----BEGIN CERTIFICATE-----\n")
    with tarfile.open(fileobj=io.BytesIO(images._build_context("python", bundle))) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    expected = {name: path.read_bytes() for name, path in images._context_files("python")}
    assert members == {**expected, "ca-bundle.crt": bundle.read_bytes()}


def test_a_changed_shared_file_changes_every_tag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = {runtime: images.context_hash(runtime) for runtime in images.REPOSITORIES}
    common = tmp_path / "common"
    shutil.copytree(images.COMMON_DIR, common)
    monkeypatch.setattr(images, "COMMON_DIR", common)
    assert {runtime: images.context_hash(runtime) for runtime in images.REPOSITORIES} == before
    (common / "users.sh").write_text((common / "users.sh").read_text() + "# changed\n")
    after = {runtime: images.context_hash(runtime) for runtime in images.REPOSITORIES}
    assert all(after[runtime] != before[runtime] for runtime in images.REPOSITORIES)
