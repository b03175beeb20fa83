"""The workspace seed: realistic material put into the sandbox workspace before probing, as an in-memory tar archive.

Small and large text files (one of 20,000 lines), JSON, a nested folder tree and a small real git repository, all
owned by the sandbox user. The manifest says which paths exist, so probes can name files that are really there.
The names and texts are the same in every scan; the dates are drawn per scan (sandbox/run/seed_dates.py): the files'
mtimes, the large log's timestamps and the repository's commits (so its commit ids), which were fixed and so a
fingerprint of this sandbox.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from sandbox.core.errors import SandboxError
from sandbox.run.seed_dates import (WORKSPACE_AGES, commit_times, dir_times, draw_rng, file_times, git_date,
                                    scan_time)

WORKSPACE_ROOT = "/workspace"
LARGE_FILE_LINES = 20_000
LOG_START = 1_704_067_200  # 2024-01-01T00:00:00Z: `large_log_text`'s default start (a scan's log ends at its mtime)
GIT_REPO_DIR = "projects/demo-repo"
# Names a user would pick: nothing in the workspace says probe, scan or sandbox (a server can list it).
PROBE_OUTPUT_DIR = "output"
_GIT_IDENTITY = ("Dara Lind", "dara@example.invalid")
_DIR_MODE = 0o755
_FILE_MODE = 0o644


@dataclass(frozen=True)
class SeedManifest:
    """What the seeded workspace holds, as absolute paths inside the sandbox."""

    root: str
    files: tuple[str, ...]
    dirs: tuple[str, ...]
    large_file: str
    json_files: tuple[str, ...]
    git_repo: str

    def small_text_file(self) -> str:
        """A small existing text file, the natural target of a read probe."""
        return f"{self.root}/README.md"

    def missing_path(self, name: str = "does-not-exist.txt") -> str:
        """A path under the workspace that the seed does not contain."""
        return f"{self.root}/drafts/{name}"

    def new_path(self, name: str) -> str:
        """A not-yet-existing path under the workspace for write probes to create."""
        return f"{self.root}/{PROBE_OUTPUT_DIR}/{name}"


@dataclass(frozen=True)
class WorkspaceSeed:
    archive: bytes  # an uncompressed tar; member names are relative to the workspace root
    manifest: SeedManifest


LARGE_FILE = "logs/app.log"
_LEVELS = ("INFO", "DEBUG", "WARN", "INFO", "ERROR")
_TWO_DIGITS = tuple(f"{number:02d}" for number in range(60))


def seed_files(log_start: int = LOG_START) -> dict[str, str]:
    """The seeded plain files (outside the git repository): relative path → text, the large log's lines one a second
    from `log_start`. Pure and deterministic."""
    return {**_small_files(), LARGE_FILE: large_log_text(start=log_start)}


def seed_file_names() -> list[str]:
    """The paths `seed_files` has, without building the large file (which the manifest does not need)."""
    return [*_small_files(), LARGE_FILE]


def _small_files() -> dict[str, str]:
    return {
        "README.md": "# Workspace\n\nScratch space for the demo project.\n\nSee docs/guide/intro.md to get started.\n",
        "notes/todo.txt": "- review the quarterly report\n- update dependencies\n- reply to the design thread\n",
        "notes/meeting-2024-01-15.md": "# Planning meeting\n\nAttendees: Ana, Bo, Chen\n\n1. Scope for Q1\n2. Hiring\n",
        "data/config.json": json.dumps(
            {"name": "demo", "version": "1.4.2", "debug": False, "retries": 3,
             "endpoints": {"api": "https://api.example.invalid/v1", "status": "https://status.example.invalid"}},
            indent=2) + "\n",
        "data/users.json": json.dumps(
            [{"id": index, "name": name, "email": f"{name.lower()}@example.invalid", "active": index % 3 != 0}
             for index, name in enumerate(["Ana", "Bo", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana"], start=1)],
            indent=2) + "\n",
        "data/report.csv": "month,revenue,costs\n2024-01,1200,800\n2024-02,1350,820\n2024-03,1500,910\n",
        "src/app/main.py": (
            "from app.utils.helpers import greet\n\n\ndef main() -> None:\n    print(greet(\"world\"))\n"),
        "src/app/utils/helpers.py": "def greet(name: str) -> str:\n    return f\"Hello, {name}!\"\n",
        "docs/guide/intro.md": "# Introduction\n\nThis guide walks through the demo project.\n",
        "docs/guide/advanced/tuning.md": "# Tuning\n\nRaise `retries` in data/config.json for flaky networks.\n",
        "archive/2023/q4/summary.txt": "Q4 closed with 12 releases and 3 incidents.\n",
    }


def large_log_text(lines: int = LARGE_FILE_LINES, start: int = LOG_START) -> str:
    """A log file of the given number of lines, one a second after start (epoch seconds; about 1.2 MB of 20,000:
    built once a scan, so the dates, minutes and seconds are looked up rather than formatted)."""
    two, levels = _TWO_DIGITS, _LEVELS
    days: dict[int, str] = {}
    out = []
    for number in range(1, lines + 1):
        day, second = divmod(start + number, 86_400)
        date = days.get(day) or days.setdefault(day, time.strftime("%Y-%m-%d", time.gmtime(day * 86_400)))
        out.append(f"{date}T{second // 3600:02d}:{two[second // 60 % 60]}:{two[second % 60]}Z "
                   f"{levels[number % 5]} worker-{number % 7} processed job {number} in {number % 97} ms")
    return "\n".join(out) + "\n"


def git_repo_commits() -> list[dict[str, str]]:
    """The commits of the seeded repository, oldest first: the files each one writes and its message."""
    return [
        {"README.md": "# demo-repo\n\nA tiny library.\n",
         "src/lib.py": "def add(a: int, b: int) -> int:\n    return a + b\n",
         ".gitignore": "__pycache__/\n", "__message__": "Initial commit"},
        {"src/lib.py": "def add(a: int, b: int) -> int:\n    return a + b\n\n\ndef sub(a: int, b: int) -> int:\n"
                       "    return a - b\n", "__message__": "Add sub()"},
    ]


def seed_manifest(root: str = WORKSPACE_ROOT) -> SeedManifest:
    """The manifest of the seed, without building the archive or the large file (pure and fast)."""
    relative_files = sorted(seed_file_names()) + sorted(_git_working_files())
    files = tuple(f"{root}/{path}" for path in relative_files)
    dirs = tuple(f"{root}/{path}" for path in sorted(_parent_dirs(relative_files)))
    return SeedManifest(
        root=root,
        files=files,
        dirs=dirs,
        large_file=f"{root}/{LARGE_FILE}",
        json_files=tuple(path for path in files if path.endswith(".json")),
        git_repo=f"{root}/{GIT_REPO_DIR}",
    )


def build_workspace_seed(uid: int, gid: int, root: str = WORKSPACE_ROOT, *, now: float | None = None,
                         rng: random.Random | None = None) -> WorkspaceSeed:
    """Build the seed archive (entries owned by uid:gid, dated by draws of rng in the weeks before now: fresh ones
    each call unless given) and its manifest. Needs the `git` command on the host."""
    draws = rng or draw_rng()
    when = scan_time(now)
    commits = commit_times(when, draws)
    times = file_times([*seed_file_names(), PROBE_OUTPUT_DIR], when, WORKSPACE_AGES, draws)
    plain = seed_files(log_start=times[LARGE_FILE] - LARGE_FILE_LINES)  # the log ends at its mtime
    dirs = dir_times({**times, GIT_REPO_DIR: commits[1]})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        # output/ exists (empty) so that write probes, which target new paths in it, can create files there
        # like a user's write would: tools that do not create parent folders would otherwise only report ENOENT.
        for directory in sorted(_parent_dirs([*plain, GIT_REPO_DIR]) | {PROBE_OUTPUT_DIR}):
            archive.addfile(_dir_info(directory, uid, gid, dirs.get(directory, times[PROBE_OUTPUT_DIR])))
        for path in sorted(plain):
            _add_file(archive, path, plain[path].encode(), uid, gid, times[path])
        with tempfile.TemporaryDirectory(prefix="mcp-sandbox-seed-") as scratch:
            repo = Path(scratch) / "repo"
            _make_git_repo(repo, commits)
            _add_tree(archive, repo, GIT_REPO_DIR, uid, gid, commits[1])
    return WorkspaceSeed(archive=buffer.getvalue(), manifest=seed_manifest(root))


def _git_working_files() -> set[str]:
    names: set[str] = set()
    for commit in git_repo_commits():
        names.update(f"{GIT_REPO_DIR}/{name}" for name in commit if name != "__message__")
    return names


def _parent_dirs(relative_files: list[str]) -> set[str]:
    dirs: set[str] = set()
    for path in relative_files:
        for parent in PurePosixPath(path).parents:
            if str(parent) != ".":
                dirs.add(str(parent))
    return dirs


def _dir_info(name: str, uid: int, gid: int, mtime: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return _owned(info, _DIR_MODE, uid, gid, mtime)


def _add_file(archive: tarfile.TarFile, name: str, data: bytes, uid: int, gid: int, mtime: int,
              mode: int = _FILE_MODE) -> None:
    info = _owned(tarfile.TarInfo(name), mode, uid, gid, mtime)
    info.size = len(data)
    archive.addfile(info, io.BytesIO(data))


def _owned(info: tarfile.TarInfo, mode: int, uid: int, gid: int, mtime: int) -> tarfile.TarInfo:
    info.mode = mode
    info.uid, info.gid = uid, gid
    info.uname = info.gname = ""
    info.mtime = mtime
    return info


def _add_tree(archive: tarfile.TarFile, source: Path, prefix: str, uid: int, gid: int, mtime: int) -> None:
    """Add a host directory under prefix, every entry dated mtime (the last commit's): directories and regular files
    only (git makes nothing else here)."""
    archive.addfile(_dir_info(prefix, uid, gid, mtime))
    for current, dirnames, filenames in os.walk(source):
        dirnames.sort()
        relative = Path(current).relative_to(source)
        for dirname in dirnames:
            archive.addfile(_dir_info(str(PurePosixPath(prefix) / relative.as_posix() / dirname), uid, gid, mtime))
        for filename in sorted(filenames):
            host_path = Path(current) / filename
            if host_path.is_symlink() or not host_path.is_file():
                raise SandboxError(f"unexpected non-regular file in the seed repository: {host_path.name}")
            mode = 0o755 if os.access(host_path, os.X_OK) else _FILE_MODE
            name = str(PurePosixPath(prefix) / relative.as_posix() / filename)
            dated = min(int(host_path.stat().st_mtime), mtime)  # a file of the first commit keeps its date
            _add_file(archive, name, host_path.read_bytes(), uid, gid, dated, mode)


def _make_git_repo(repo: Path, commits: tuple[int, int]) -> None:
    """Create the seeded repository with a fixed author and committer, its commits at the given times (epoch
    seconds, drawn per scan: the commit ids differ from scan to scan)."""
    git = shutil.which("git")
    if git is None:
        raise SandboxError("building the workspace seed needs the `git` command on this machine; install git")
    repo.mkdir()
    _git(git, repo, git_date(commits[0]), "init", "--quiet", "--template=", "--initial-branch=main")
    for commit, date_epoch in zip(git_repo_commits(), commits, strict=True):
        date = git_date(date_epoch)
        for name, text in commit.items():
            if name == "__message__":
                continue
            target = repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            os.utime(target, (date_epoch, date_epoch))  # what git's index records: the tar's date for the file
        _git(git, repo, date, "add", "--all")
        _git(git, repo, date, "commit", "--quiet", "--no-verify", "--message", commit["__message__"])


def _git(git: str, repo: Path, date: str, *args: str) -> None:
    name, email = _GIT_IDENTITY
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email, "GIT_COMMITTER_DATE": date,
    }
    command = [git, "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "-C", str(repo), *args]
    completed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    if completed.returncode != 0:
        raise SandboxError(f"building the workspace seed: git {args[0]} failed: {completed.stderr.strip()[:300]}")
