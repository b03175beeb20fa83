"""A folder tree a thousand levels deep (a package, a plugin, a repository to vet) is read without recursion: on
Python 3.11 os.walk, Path.rglob and tarfile.add recurse once a level, and such a tree ended `scan ./folder` and `vet`
with an internal RecursionError. The iterative walks give what the library ones gave on an ordinary tree."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.core.archive import SKIP_DIRS, pack_path
from sandbox.core.tree import entries_below, walk
from scanner.pipeline.targets import _packed_entry, content_hash
from scanner.vet import vet_tree

LEVELS = 1_200


@pytest.fixture
def deep(tmp_path: Path) -> Iterator[Path]:
    """`tmp_path/pkg`: a source file at the top and one 1,200 folders down, made and removed a level at a time
    (pathlib's mkdir(parents=True) and shutil.rmtree recurse too)."""
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "top.py").write_text("import os\n", encoding="utf-8")
    fd = os.open(root, os.O_RDONLY)
    for _ in range(LEVELS):
        os.mkdir("a", dir_fd=fd)
        fd, above = os.open("a", os.O_RDONLY, dir_fd=fd), fd
        os.close(above)
    with os.fdopen(os.open("bottom.py", os.O_CREAT | os.O_WRONLY, dir_fd=fd), "w") as handle:
        handle.write("x = 1\n")
    os.close(fd)
    yield root
    bottom = root.joinpath(*["a"] * LEVELS)
    (bottom / "bottom.py").unlink()
    for folder in [bottom, *bottom.parents][:LEVELS]:
        folder.rmdir()


def test_a_tree_a_thousand_deep_is_walked_hashed_packed_and_vetted(deep: Path) -> None:
    with pytest.raises(RecursionError):  # what the library walk does on this Python (3.11): the reason for ours
        sum(1 for _ in os.walk(deep))
    assert sum(1 for _ in walk(deep)) == LEVELS + 1
    assert len(entries_below(deep)) == LEVELS + 2
    assert len(content_hash(deep)) == 64
    with tarfile.open(fileobj=io.BytesIO(pack_path(deep, "pkg", 1000, 1000))) as tar:
        assert sum(1 for member in tar if member.name.endswith("/bottom.py")) == 1
    assert vet_tree(deep).files_scanned == 2


def _ordinary(root: Path) -> Path:
    """A tree with what the walks must treat as the library did: nested folders, a skipped folder, a symlinked folder
    (listed, not entered), a file link, an executable, an empty folder."""
    (root / "src" / "inner").mkdir(parents=True)
    (root / "src" / "inner" / "b.py").write_text("b\n", encoding="utf-8")
    (root / "src" / "a.ts").write_text("a\n", encoding="utf-8")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "x.js").write_text("x\n", encoding="utf-8")
    (root / "empty").mkdir()
    (root / "run.sh").write_text("#!/bin/sh\n", encoding="utf-8")
    (root / "run.sh").chmod(0o755)
    (root / "linked").symlink_to(root / "src", target_is_directory=True)
    (root / "alias.py").symlink_to("src/a.ts")
    return root


def test_the_iterative_walks_give_what_the_library_walks_gave(tmp_path: Path) -> None:
    root = _ordinary(tmp_path / "pkg")
    assert [(top, sorted(d), sorted(o)) for top, d, o in walk(root)] == \
        [(top, sorted(d), sorted(o)) for top, d, o in os.walk(root)]
    assert entries_below(root) == sorted(root.rglob("*"))
    old = hashlib.sha256()
    for entry in sorted(root.rglob("*")):
        relative = entry.relative_to(root)
        if not any(part in SKIP_DIRS for part in relative.parts):
            for field in _packed_entry(entry, relative):
                old.update(len(field).to_bytes(8, "big") + field)
    assert content_hash(root) == old.hexdigest()  # an installed image is keyed by it: the key must not move
    assert pack_path(root, "pkg", 1000, 1000) == _library_pack(root)


def _library_pack(source: Path) -> bytes:
    """pack_path as it was: tarfile.add(recursive=True) with the same filter."""
    buffer = io.BytesIO()

    def owned(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if any(part in SKIP_DIRS for part in Path(info.name).parts[1:]):
            return None
        info.uid, info.gid, info.uname, info.gname = 1000, 1000, "", ""
        info.mode = info.mode & 0o755 if not info.issym() else info.mode
        return info

    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(str(source), arcname="pkg", recursive=True, filter=owned)
    return buffer.getvalue()
