"""What a changed path is to the user: their data, a tool's own cache, or a version-control system's bookkeeping.

B1 asks whether a `readOnlyHint: true` tool changed anything. Programs that only read still write: git refreshes
`.git/index` on every `status`, Python writes `__pycache__`, npm and uv fill `~/.cache` and `~/.npm/_cacache`. Those
are not the user's data; changing them is not what a read-only promise is about. Everything not named below is user
data, and so is every path B4 treats as persistence (hooks, shell start-up files, client configs) wherever it is.

The judgement is by path class, and by content where the snapshot gives enough: a snapshot records path, type,
size, mtime and mode, not content. A git index whose size did not change while no new object was written is a stat
refresh (git status rewrites the index with the same entries and new stat data); an index that changed size, or
changed while objects were written, holds other staged content and is user data. An index rewritten to the same
size with other blob ids (`git reset -- FILE` without new objects) cannot be told from a refresh: that gap is
documented in README's Limitations.

A tool's own state is not the user's data either (`tool state`, see docs/probes.md "Tool state"): a path that holds
nothing the sandbox's seed planted (the seed is all the "user" had: HOME and the workspace start empty otherwise),
at a path the launch configuration named for it (an environment value such as `MEMORY_FILE_PATH=/home/mcp/
memory.json`), or inside a dot-directory of HOME that no other program owns (desktop-commander's
`~/.claude-server-commander/`). Rewriting or adding to that state is the server's bookkeeping; deleting it is not
(what a tool kept for the user is gone), and stays user data, except the lock and temporary files of its own
atomic writes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sandbox.run.policy import HOME
from scanner.report.model import FileChanges

FileKind = Literal["user data", "tool cache", "VCS bookkeeping", "tool state"]
Change = Literal["created", "modified", "deleted"]
USER_DATA: FileKind = "user data"
TOOL_CACHE: FileKind = "tool cache"
VCS_BOOKKEEPING: FileKind = "VCS bookkeeping"
TOOL_STATE: FileKind = "tool state"
# Dot-directories of HOME that belong to other programs (credentials, clients, toolchains): never a server's own.
OTHER_PROGRAMS_DIRS = frozenset({
    ".ssh", ".aws", ".azure", ".gnupg", ".password-store", ".pki", ".docker", ".kube", ".config", ".local", ".cache",
    ".npm", ".yarn", ".pnpm-store", ".node-gyp", ".nvm", ".bun", ".deno", ".cargo", ".rustup", ".m2", ".gradle",
    ".pyenv", ".conda", ".ipython", ".jupyter", ".git", ".claude", ".cursor", ".codeium", ".continue", ".gemini",
    ".vscode", ".vscode-server", ".mozilla", ".thunderbird", ".terraform.d", ".mcp-sandbox",
})


@dataclass(frozen=True)
class StateScope:
    """Where a server may keep its own state in this sandbox: the paths its launch configuration named (absolute),
    and every path the seed planted (absolute: canary files, workspace files and directories), which are the user's."""

    configured: tuple[str, ...] = ()
    seeded: frozenset[str] = frozenset()

    def holds_seed(self, path: str) -> bool:
        """The seed planted this path or something under it."""
        return any(item == path or item.startswith(path + "/") for item in self.seeded)


def configured_paths(env: dict[str, str], home: str = HOME) -> tuple[str, ...]:
    """The environment values that name an absolute path (`~/` expanded): where the user told the server to keep
    something. Values with a `:` list or a space are not one path."""
    found = []
    for value in env.values():
        path = home + value[1:] if value.startswith("~/") else value
        if path.startswith("/") and len(path) > 1 and ":" not in path and " " not in path:
            found.append(path.rstrip("/"))
    return tuple(dict.fromkeys(found))

# Paths (HOME shown as ~) whose change makes code run later or reconfigures other clients.
PERSISTENCE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((label, re.compile(pattern)) for label, pattern in (
    ("shell start-up file", (r"^~/\.(?:bashrc|bash_profile|bash_login|bash_logout|bash_aliases|profile|zshrc|zshenv|"
                             r"zprofile|zlogin|zlogout|kshrc|mkshrc|inputrc|envrc)$|"
                             r"^~/\.config/fish/(?:config\.fish|conf\.d/.+)$")),
    # a program in a folder of the user's PATH (~/.local/bin is on it in Debian's and Ubuntu's ~/.profile, and where
    # pipx and uv install): named like a command, it runs in its place
    ("command on PATH", r"^~/\.local/bin/.+|^~/bin/.+"),
    # VS Code runs a task with `"runOn": "folderOpen"` when the folder is opened
    ("autostart entry", (r"^~/\.config/autostart/.+|^~/Library/LaunchAgents/.+|^~/\.xprofile$|^~/\.xinitrc$|"
                         r"/\.vscode/tasks\.json$")),
    ("scheduled job", (r"^~/\.config/systemd/user/.+|^~/\.local/share/systemd/user/.+|^/var/spool/cron/.+|"
                       r"^~/\.crontab$|^/etc/cron")),
    ("git hook", (r"/\.git/hooks/(?!.*\.sample$).+|^~/\.gitconfig$|^~/\.config/git/config$|/\.githooks/.+|"
                  r"/\.husky/.+")),
    ("MCP client config", (r"(?:^|/)\.?mcp\.json$|/mcp_config\.json$|/claude_desktop_config\.json$|"
                           r"^~/\.claude\.json$|^~/\.claude/settings(?:\.local)?\.json$|^~/\.cursor/.+\.json$|"
                           r"^~/\.codeium/.+|^~/\.continue/config\.|^~/\.gemini/settings\.json$|"
                           r"/\.vscode/(?:mcp|settings)\.json$")),
    ("ssh access", r"^~/\.ssh/(?:authorized_keys2?|config|rc)$"),
    ("Python start-up hook", r"\.pth$|/(?:sitecustomize|usercustomize)\.py$|^~/\.pythonrc"),
))

# Caches a tool keeps for itself and rebuilds when they are gone (HOME shown as ~); any change to them is the tool's.
CACHE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((label, re.compile(pattern)) for label, pattern in (
    ("XDG cache directory", r"^~/\.cache(?:/|$)"),
    ("XDG state directory", r"^~/\.local/state(?:/|$)"),
    ("npm cache", r"^~/\.npm/(?:_cacache|_logs|_npx|_prebuilds)(?:/|$)|^~/\.npm/_update-notifier-last-checked$"),
    ("Python byte-code cache", r"(?:^|/)__pycache__(?:/[^/]+\.pyc)?$"),
    ("node_modules/.cache", r"(?:^|/)node_modules/\.cache(?:/|$)"),
    ("test and lint cache", r"(?:^|/)\.(?:pytest_cache|mypy_cache|ruff_cache)(?:/|$)"),
))

# A git directory: `.git`, and the git directories of submodules and linked worktrees inside it.
_GIT_DIR = re.compile(r"^(?P<gitdir>(?:.*?/)?\.git(?:/(?:modules|worktrees)/[^/]+)*)/(?P<inner>.+)$")
PLAIN_USER_FILE = "a file of the user's"
_GIT_ADMIN_FILES = frozenset({"FETCH_HEAD", "ORIG_HEAD", "COMMIT_EDITMSG", "gc.pid", "gc.log",
                              "fsmonitor--daemon.ipc"})


@dataclass(frozen=True)
class ChangedPath:
    path: str  # HOME shown as ~
    change: Change
    kind: FileKind
    reason: str  # why the path has that kind, for the finding's message


def home_relative(path: str, home: str = HOME) -> str:
    return "~" + path[len(home):] if path == home or path.startswith(home + "/") else path


def persistence_kind(path: str, home: str = HOME) -> str | None:
    shown = home_relative(path, home)
    for label, pattern in PERSISTENCE_PATTERNS:
        if pattern.search(shown):
            return label
    return None


# The lock and temporary files of an atomic write (write-file-atomic's `config.json.6.179….tmp`, proper-lockfile's
# `config.json.lock`): inside a tool's state, removing one deletes nothing the tool kept.
_WRITE_MACHINERY = re.compile(r"(?:\.lock|\.tmp|\.temp|\.swp|~)$|\.tmp[.-]|/\.#")


def state_reason(path: str, scope: StateScope, home: str = HOME) -> str | None:
    """Why `path` is the server's own state (see the module doc), or None."""
    if scope.holds_seed(path):
        return None
    for configured in scope.configured:
        if (path == configured or path.startswith(configured + "/")) and not scope.holds_seed(configured):
            return "the store its launch configuration names"
    if path.startswith(home + "/."):
        top = home + "/" + path[len(home) + 1:].split("/")[0]
        if top[len(home) + 1:] not in OTHER_PROGRAMS_DIRS and not scope.holds_seed(top) and path != top:
            return f"its own directory {home_relative(top, home)}"
    return None


def classify(files: FileChanges, home: str = HOME, scope: StateScope | None = None) -> list[ChangedPath]:
    """Every path the call created, modified or deleted, with its kind: created first, then modified, deleted.
    With a `scope`, the server's own state is told from the user's data."""
    created_objects = {match.group("gitdir") for match in map(_GIT_DIR.match, files.created)
                       if match and match.group("inner").startswith("objects/")}
    resized = set(files.resized)
    changed: list[ChangedPath] = []
    for change, paths in (("created", files.created), ("modified", files.modified), ("deleted", files.deleted)):
        for path in paths:
            kind, reason = _kind(path, change, home, resized=path in resized, objects_written=created_objects)
            state = state_reason(path, scope, home) if scope is not None and kind == USER_DATA \
                and reason == PLAIN_USER_FILE and (change != "deleted" or _WRITE_MACHINERY.search(path)) else None
            if state is not None:
                kind, reason = TOOL_STATE, state
            changed.append(ChangedPath(home_relative(path, home), change, kind, reason))
    return _directories_follow_contents(changed)


def _kind(path: str, change: Change, home: str, *, resized: bool, objects_written: set[str]) -> tuple[FileKind, str]:
    persistence = persistence_kind(path, home)
    if persistence is not None:
        return USER_DATA, f"{'an' if persistence[:1] in 'aeiou' else 'a'} {persistence}"
    git = _GIT_DIR.match(path)
    if git is not None:
        return _git_kind(git.group("inner"), change, resized=resized,
                         objects_written=git.group("gitdir") in objects_written)
    shown = home_relative(path, home)
    for label, pattern in CACHE_PATTERNS:
        if pattern.search(shown):
            return TOOL_CACHE, label
    return USER_DATA, PLAIN_USER_FILE


def _git_kind(inner: str, change: Change, *, resized: bool, objects_written: bool) -> tuple[FileKind, str]:
    """A path inside a git directory: bookkeeping git rewrites while reading, or the repository's state."""
    if inner == "index":
        if change != "modified":
            return USER_DATA, f"the git index {change}, the staging area"
        if resized or objects_written:
            return USER_DATA, ("the git staging area changed, index size changed" if resized
                               else "the git staging area changed, new objects written beside it")
        return VCS_BOOKKEEPING, "git index refreshed, same size and no new objects"
    if inner.endswith(".lock"):
        return VCS_BOOKKEEPING, "git lock file"
    if inner in _GIT_ADMIN_FILES or inner.startswith("fsmonitor--daemon/"):
        return VCS_BOOKKEEPING, "git's record of its last operation"
    if inner == "logs" or inner.startswith("logs/"):
        return ((USER_DATA, "a git reflog deleted, the history a user recovers from") if change == "deleted"
                else (VCS_BOOKKEEPING, "git reflog, follows a ref change judged on its own"))
    if inner == "objects" or inner.startswith("objects/"):
        return ((VCS_BOOKKEEPING, "new git objects, unnamed until a ref or the index names them")
                if change == "created" else (USER_DATA, f"git objects {change}"))
    if inner == "HEAD" or inner == "packed-refs" or inner.startswith("refs/"):
        return USER_DATA, "a git ref, what a branch or HEAD points at"
    return USER_DATA, "git repository state such as config, hooks, info or an operation in progress"


def _directories_follow_contents(changed: list[ChangedPath]) -> list[ChangedPath]:
    """A directory created or deleted with only caches or bookkeeping inside takes their kind (`~/.npm` made for
    `~/.npm/_cacache`). A path with other listed paths under it is a directory; an empty one stays user data."""
    below: dict[str, list[ChangedPath]] = {}
    for item in changed:
        parts = item.path.split("/")
        for depth in range(1, len(parts)):
            below.setdefault("/".join(parts[:depth]), []).append(item)
    result = []
    for item in changed:
        inside = [other for other in below.get(item.path, []) if other.change == item.change]
        if item.kind == USER_DATA and item.change != "modified" and item.reason == PLAIN_USER_FILE and inside \
                and all(other.kind != USER_DATA for other in inside):
            kinds = sorted({other.kind for other in inside})
            item = ChangedPath(item.path, item.change, kinds[0] if len(kinds) == 1 else TOOL_CACHE,
                               "a directory holding only " + " and ".join(kinds))
        result.append(item)
    return result


def of_kind(changed: Iterable[ChangedPath], *kinds: FileKind) -> list[ChangedPath]:
    return [item for item in changed if item.kind in kinds]
