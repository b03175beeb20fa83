"""Files an install step wrote outside the install tree: a marker in /tmp, a write to HOME, anything the install
user could write that is not the install prefix (/opt/server: node_modules, the venv) or the package's own copy
(/opt/src).

The install container's writable places are found once, before any package code runs (`find / -writable` as the
install user: /tmp, /var/tmp, /dev/shm, /run/lock, the install user's home, …; the install user has no capability,
so it can only ever write below these). After each step — once every process of it has ended, before its HOME is
removed — the host lists them again (inode and change time of every entry; a change time cannot be set back, so a
rewritten file shows even when its modification time was forged) and compares with the listing before the step.
What differs, minus the installer's own files (npm's cache and logs, uv's cache, the host's lock files) and the
step's own scratch TMPDIR, is the step's record: bounded (MAX_PATHS_PER_STEP paths, the rest counted), each path
escaped and capped (a path name is untrusted text). HOME is shown as `~` (the step's own HOME, or the install user's
home folder). Folders a step made unreadable, or a listing cut at MAX_LISTING_BYTES, make the record incomplete,
and it says so.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from sandbox.install.windows import untrusted_label

MAX_PATHS_PER_STEP = 20
MAX_PATH_CHARS = 300
MAX_LISTING_BYTES = 8 * 1024 * 1024
LISTING_FORMAT = "%i %C@ %y %p\\0"  # inode, change time, type, path; NUL-ended (a path may hold newlines)
SKIPPED_ROOTS = ("/proc", "/sys")
# Where the install user can write, as `find` lists it before any package code runs (directories and files only:
# /dev/stdin and the like are links to the exec's own streams).
ROOTS_COMMAND = ["find", "/", "(", "-path", "/proc", "-o", "-path", "/sys", ")", "-prune", "-o",
                 "(", "-type", "d", "-o", "-type", "f", ")", "-writable", "-print0"]
# The find run by a shell that says on stderr, alone, how it ended: `exit:N other:M`, find's exit status N (0, or 1
# when some folder could not be read: /root cannot) and M, the lines find wrote to stderr that were not such a
# refusal (a folder gone mid-walk, a read error). Only `exit:0|1 other:0` is a find that ran to its end.
ROOTS_SCRIPT = ('{ { "$@" 2>&1 >&3; echo "exit:$?"; } | awk \'/^exit:[0-9]+$/ { e = $0; next } '
                '!/: Permission denied$/ { n++ } END { printf "%s other:%d", e, n }\' >&2; } 3>&1')
WHOLE_FIND = (b"exit:0 other:0", b"exit:1 other:0")
ROOTS_ARGV0 = "mcp-sandbox-roots"
# find's listing on stdout (capped), the number of lines find wrote to stderr (folders it could not read) on stderr.
LISTING_SCRIPT = f'{{ find "$@" 2>&1 >&3 | wc -l >&2; }} 3>&1 | head -c {MAX_LISTING_BYTES}'

Run = Callable[[list[str]], tuple[bytes, bytes]]  # runs a command as the install user: (stdout, stderr)
Entry = tuple[str, str]  # (inode, change time) of a non-directory


@dataclass(frozen=True)
class WatchPlan:
    """What an ecosystem's install writes itself, so that only what its packages wrote is recorded. Patterns are
    fnmatch globs over the shown path (`~/…` for HOME, else absolute)."""

    install_tree: tuple[str, ...] = ("/opt/server", "/opt/src")
    own_paths: tuple[str, ...] = ()  # the installer's own files: not recorded
    unwatched: tuple[str, ...] = ()  # large folders of its own (caches): not even listed
    evidence: tuple[str, ...] = ()  # paths a step reports having seen (e.g. an unpacked sdist's setup.py)


@dataclass(frozen=True)
class StepWrites:
    """What one install step wrote outside the install tree; `package`/`script` name the step as its window does."""

    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    more: int = 0  # paths beyond MAX_PATHS_PER_STEP, not listed
    unreadable: int = 0  # folders the listing could not read (a step can hide files in them)
    truncated: bool = False  # the listing was cut at MAX_LISTING_BYTES
    evidence: tuple[str, ...] = field(default=(), compare=False)  # WatchPlan.evidence patterns that matched
    package: str | None = None
    script: str | None = None

    @property
    def wrote(self) -> bool:
        return bool(self.created or self.modified or self.more or self.unreadable or self.truncated)


def writable_roots(listing: bytes, install_tree: Sequence[str]) -> tuple[str, ...]:
    """The outermost writable folders and files of a ROOTS_COMMAND listing, outside the install tree and /proc, /sys."""
    paths = sorted({p for p in listing.decode("utf-8", "surrogateescape").split("\0") if p.startswith("/")})
    skipped = (*install_tree, *SKIPPED_ROOTS)
    roots: list[str] = []
    for path in paths:
        if path == "/" or _under_any(path, skipped) or _under_any(path, roots):
            continue
        roots.append(path)
    return tuple(roots)


def parse_listing(raw: bytes) -> dict[str, Entry]:
    """A LISTING_FORMAT listing as path -> (inode, change time), directories left out (their change time moves with
    every file made in them); a record cut short at the end is dropped."""
    entries: dict[str, Entry] = {}
    for record in raw.split(b"\0")[:-1]:
        parts = record.split(b" ", 3)
        if len(parts) != 4 or parts[2] == b"d":
            continue
        entries[parts[3].decode("utf-8", "surrogateescape")] = (parts[0].decode("ascii", "replace"),
                                                                 parts[1].decode("ascii", "replace"))
    return entries


def changed(before: Mapping[str, Entry], after: Mapping[str, Entry]) -> tuple[list[str], list[str]]:
    """(created, modified) paths, sorted: new in `after`, or another inode or change time than in `before`."""
    created = sorted(path for path in after if path not in before)
    modified = sorted(path for path, entry in after.items() if path in before and before[path] != entry)
    return created, modified


def shown_path(path: str, step_folder: str, home_root: str) -> str | None:
    """The path as a report shows it: the step's HOME (and the install user's home folder) as `~`; None for the
    host's own file in the step's folder (its output log)."""
    home = f"{step_folder}/home"
    if path == home or path.startswith(home + "/"):
        return "~" + path[len(home):]
    if path == step_folder or path.startswith(step_folder + "/"):
        return None
    if path.startswith(home_root + "/"):
        return "~" + path[len(home_root):]
    return path


def matches(path: str, patterns: Iterable[str]) -> bool:
    return any(fnmatch.fnmatchcase(path, pattern) for pattern in patterns)


def bounded(created: Sequence[str], modified: Sequence[str],
            limit: int = MAX_PATHS_PER_STEP) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """At most `limit` paths in all (created first), each escaped and capped; the count of those left out."""
    shown_created = [untrusted_label(p, MAX_PATH_CHARS) for p in created[:limit]]
    room = max(0, limit - len(shown_created))
    shown_modified = [untrusted_label(p, MAX_PATH_CHARS) for p in modified[:room]]
    more = len(created) + len(modified) - len(shown_created) - len(shown_modified)
    return tuple(shown_created), tuple(shown_modified), more


class WriteWatch:
    """The listing of the install container's writable places between steps, and each step's difference to it."""

    def __init__(self, run: Run, plan: WatchPlan, home_root: str) -> None:
        self.run = run
        self.plan = plan
        self.home_root = home_root
        self.roots: tuple[str, ...] = ()
        self.found_whole = False  # the places were found here, by a find that ran to its end and saw HOME
        self._before: dict[str, Entry] = {}

    def start(self, roots: tuple[str, ...] | None = None) -> tuple[str, ...]:
        """Find the writable places (or take `roots`, those found before in a container of the same image, user,
        configuration and engine: sandbox/install/kept_roots.py) and list them: before any step, so before any
        package code ran. Returns the places."""
        if roots is None:
            listing, status = self.run(["sh", "-c", ROOTS_SCRIPT, ROOTS_ARGV0, *ROOTS_COMMAND])
            roots = writable_roots(listing, self.plan.install_tree)
            self.found_whole = status in WHOLE_FIND and self.home_root in roots
        self.roots = roots
        self._before, _, _ = self._list(prune=())
        return roots

    def after_step(self, step_folder: str, tmpdir: str, then: str = "") -> StepWrites:
        """What the step wrote (call once its processes have ended, before its folders are removed); the listing
        without its folders becomes the next step's `before`. `then`: a shell script (one that prints nothing, e.g.
        the removal of the step's folders) run in the same exec once the listing has ended."""
        prune = (tmpdir, *(_in_home(p, f"{step_folder}/home") for p in self.plan.unwatched))
        after, unreadable, truncated = self._list(prune=prune, then=then)
        created, modified = changed(self._before, after)
        self._before = {p: e for p, e in after.items() if not p.startswith(step_folder + "/")}
        kept: dict[str, list[str]] = {"created": [], "modified": []}
        seen: list[str] = []
        for kind, paths in (("created", created), ("modified", modified)):
            for path in paths:
                shown = shown_path(path, step_folder, self.home_root)
                if shown is None:
                    continue
                seen.extend(pattern for pattern in self.plan.evidence if fnmatch.fnmatchcase(shown, pattern))
                if not matches(shown, self.plan.own_paths):
                    kept[kind].append(shown)
        shown_created, shown_modified, more = bounded(kept["created"], kept["modified"])
        return StepWrites(created=shown_created, modified=shown_modified, more=more, unreadable=unreadable,
                          truncated=truncated, evidence=tuple(sorted(set(seen))))

    def _list(self, prune: Sequence[str], then: str = "") -> tuple[dict[str, Entry], int, bool]:
        if not self.roots:
            if then:
                self.run(["sh", "-c", then])
            return {}, 0, False
        expression = ["-printf", LISTING_FORMAT]
        if prune:
            tests = [part for pattern in prune for part in ("-o", "-path", pattern)][1:]
            expression = ["(", *tests, ")", "-prune", "-o", *expression]
        script = f"{LISTING_SCRIPT}; {then}" if then else LISTING_SCRIPT
        stdout, stderr = self.run(["sh", "-c", script, "mcp-sandbox-writes", *self.roots, *expression])
        count = stderr.decode("ascii", "replace").strip()
        return parse_listing(stdout), int(count) if count.isdigit() else 0, len(stdout) >= MAX_LISTING_BYTES


def _under_any(path: str, folders: Iterable[str]) -> bool:
    return any(path == folder or path.startswith(folder.rstrip("/") + "/") for folder in folders)


def _in_home(pattern: str, home: str) -> str:
    return home + pattern[1:] if pattern.startswith("~/") else pattern
