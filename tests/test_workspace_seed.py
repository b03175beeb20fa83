"""The workspace seed archive: contents, ownership, the large file, a real git repo, and a truthful manifest."""

from __future__ import annotations

import datetime
import io
import json
import random
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from sandbox.run.workspace_seed import (LARGE_FILE_LINES, WorkspaceSeed, build_workspace_seed, large_log_text,
                                        seed_file_names, seed_files, seed_manifest)

UID, GID = 4242, 4343
DAY = 86_400


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
def test_commit_ids_differ_from_scan_to_scan(seed: WorkspaceSeed) -> None:
    """The seed repository's commit ids were the same in every scan: a fingerprint `git rev-parse HEAD` read."""
    again = build_workspace_seed(UID, GID)
    name = "projects/demo-repo/.git/refs/heads/main"
    with tarfile.open(fileobj=io.BytesIO(seed.archive)) as first, \
            tarfile.open(fileobj=io.BytesIO(again.archive)) as second:
        assert first.extractfile(name).read() != second.extractfile(name).read()


def test_the_dates_are_drawn_per_scan_in_the_weeks_before_it() -> None:
    """Every entry was dated 2024-01-01T00:00:00Z, in every scan: now the mtimes are a scan's own, all in the past
    (a read still moves atime forward), spread out rather than one second, and differ between two scans."""
    now = int(time.time())  # the scan's own clock: a `now` ahead of it left the seed repository's files (dated by
    # the host, when git wrote them) older than their folder whenever the drawn commit fell after the real time
    first = members(build_workspace_seed(UID, GID, now=now))
    second = members(build_workspace_seed(UID, GID, now=now))
    plain = [name for name, entry in first.items() if entry.isfile() and "/.git/" not in name]
    assert all(now - 400 * DAY < entry.mtime < now for entry in first.values())
    assert len({first[name].mtime for name in plain}) > len(plain) // 2
    assert [first[name].mtime for name in plain] != [second[name].mtime for name in plain]
    for name, entry in first.items():  # a folder is as new as the newest entry in it
        inside = [other.mtime for key, other in first.items() if key.startswith(name + "/")]
        if entry.isdir() and inside:
            assert entry.mtime == max(inside), name


def test_the_same_draws_date_the_seed_alike() -> None:
    """Given the draws (a test's), the dates and commit ids repeat (git's index holds the host's stat data)."""
    def built() -> tuple[dict[str, int], bytes]:
        archive = build_workspace_seed(UID, GID, now=1_800_000_000, rng=random.Random(7)).archive
        with tarfile.open(fileobj=io.BytesIO(archive)) as opened:
            head = opened.extractfile("projects/demo-repo/.git/refs/heads/main").read()
            return {member.name: member.mtime for member in opened.getmembers()}, head
    assert built() == built()


def test_the_large_log_ends_when_it_was_last_written(seed: WorkspaceSeed, tmp_path: Path) -> None:
    entry = members(seed)["logs/app.log"]
    extract(seed, tmp_path)
    last = (tmp_path / "logs/app.log").read_text().splitlines()[-1]
    stamp = datetime.datetime.strptime(last.split()[0], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    assert stamp.timestamp() == entry.mtime


def test_the_names_are_the_files_without_building_them() -> None:
    assert seed_file_names() == list(seed_files())


def test_the_large_log_keeps_its_lines() -> None:
    lines = large_log_text(90_000).splitlines()
    assert lines[0] == "2024-01-01T00:00:01Z DEBUG worker-1 processed job 1 in 1 ms"
    assert lines[3_660] == "2024-01-01T01:01:01Z DEBUG worker-0 processed job 3661 in 72 ms"
    assert lines[86_400] == "2024-01-02T00:00:01Z DEBUG worker-0 processed job 86401 in 71 ms"  # the next day
