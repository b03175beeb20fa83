"""The workspace seed archive: contents, ownership, the large file, a real git repo, and a truthful manifest."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from sandbox.run.workspace_seed import (LARGE_FILE_LINES, WorkspaceSeed, build_workspace_seed, large_log_text,
                                        seed_file_names, seed_files, seed_manifest)

UID, GID = 4242, 4343


@pytest.fixture(scope="module")
def seed() -> WorkspaceSeed:
    return build_workspace_seed(UID, GID)


def members(seed: WorkspaceSeed) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(seed.archive)) as archive:
        return {member.name: member for member in archive.getmembers()}


def extract(seed: WorkspaceSeed, target: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(seed.archive)) as archive:
        archive.extractall(target, filter="data")


def test_every_entry_is_owned_by_the_given_ids_and_is_a_file_or_dir(seed: WorkspaceSeed) -> None:
    entries = members(seed).values()
    assert entries
    assert {(entry.uid, entry.gid) for entry in entries} == {(UID, GID)}
    assert all(entry.isfile() or entry.isdir() for entry in entries)
    assert all(not entry.name.startswith(("/", "..")) and ".." not in entry.name.split("/") for entry in entries)


def test_every_parent_directory_has_its_own_entry(seed: WorkspaceSeed) -> None:
    entries = members(seed)
    for name in entries:
        parent = name.rsplit("/", 1)[0] if "/" in name else None
        if parent:
            assert parent in entries and entries[parent].isdir(), name


def test_manifest_matches_the_archive(seed: WorkspaceSeed) -> None:
    entries = members(seed)
    root = seed.manifest.root
    for path in seed.manifest.files:
        assert entries[path.removeprefix(root + "/")].isfile(), path
    for path in seed.manifest.dirs:
        assert entries[path.removeprefix(root + "/")].isdir(), path
    assert seed.manifest == seed_manifest()
    assert seed.manifest.missing_path().removeprefix(root + "/") not in entries
    assert seed.manifest.new_path("x.txt").removeprefix(root + "/") not in entries


def test_large_file_has_20000_lines_and_json_parses(seed: WorkspaceSeed, tmp_path: Path) -> None:
    extract(seed, tmp_path)
    root = seed.manifest.root
    large = tmp_path / seed.manifest.large_file.removeprefix(root + "/")
    assert len(large.read_text().splitlines()) == LARGE_FILE_LINES
    for path in seed.manifest.json_files:
        json.loads((tmp_path / path.removeprefix(root + "/")).read_text())
    assert len(seed.manifest.json_files) >= 2


def test_tree_is_nested(seed: WorkspaceSeed) -> None:
    depth = max(path.count("/") for path in seed.manifest.files) - seed.manifest.root.count("/")
    assert depth >= 3


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_repo_is_real_with_two_commits_and_clean(seed: WorkspaceSeed, tmp_path: Path) -> None:
    extract(seed, tmp_path)
    repo = tmp_path / seed.manifest.git_repo.removeprefix(seed.manifest.root + "/")

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", f"safe.directory={repo}", "-C", str(repo), *args], check=True,
                              capture_output=True, text=True).stdout

    assert git("log", "--format=%s|%ae").splitlines() == ["Add sub()|dara@example.invalid",
                                                          "Initial commit|dara@example.invalid"]
    assert git("status", "--porcelain") == ""
    assert "def sub" in (repo / "src/lib.py").read_text()
    assert not (repo / ".git/hooks").exists()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_commit_ids_are_stable_across_builds(seed: WorkspaceSeed) -> None:
    again = build_workspace_seed(UID, GID)
    name = "projects/demo-repo/.git/refs/heads/main"
    with tarfile.open(fileobj=io.BytesIO(seed.archive)) as first, \
            tarfile.open(fileobj=io.BytesIO(again.archive)) as second:
        assert first.extractfile(name).read() == second.extractfile(name).read()


def test_the_names_are_the_files_without_building_them() -> None:
    assert seed_file_names() == list(seed_files())


def test_the_large_log_keeps_its_lines() -> None:
    lines = large_log_text(90_000).splitlines()
    assert lines[0] == "2024-01-01T00:00:01Z DEBUG worker-1 processed job 1 in 1 ms"
    assert lines[3_660] == "2024-01-01T01:01:01Z DEBUG worker-0 processed job 3661 in 72 ms"
    assert lines[86_400] == "2024-01-01T00:00:01Z DEBUG worker-0 processed job 86401 in 71 ms"
