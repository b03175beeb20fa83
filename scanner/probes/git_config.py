"""B4 for a repository's own git config: keys that make git run a command (`core.fsmonitor`, `core.hooksPath`, an
alias starting with `!`, a filter or diff driver...) are as much a hook as a file in `.git/hooks`, and git runs
`core.fsmonitor` on every `git status`, an editor's included. The path alone cannot tell: `git init` rewrites an
existing repository's config with the same keys (mcp-server-git's git_init on the seed's repository), and a remote
or a branch's upstream is written there too. The snapshot has no content, so when a call created or modified a git
config file, its first 64 KiB are read (one exec as the run uid), and the keys that run commands that no earlier
record of the sandbox has are the record's `files.runs_commands` (`path: key`): a later call that rewrites the file
(`git init`) is not charged with a key an earlier call added. A file that could not be read is said in the scan's
errors (B4 could not check it).

The content is untrusted: it is only parsed here (line by line, bounded), and only key names reach the report.
"""

from __future__ import annotations

import re
from typing import Any

import anyio

from sandbox.run import observe
from sandbox.run.observe import ObserveError
from scanner.probes.runner_io import ProbeOutcome
from scanner.report.model import CallBehavior, FileChanges

MAX_CONFIG_BYTES = 65_536
MAX_CONFIGS = 5  # read per call; past that the scan's errors say the rest went unchecked
# A repository's config (also a submodule's or a linked worktree's, and `config.worktree`): the user's global ones
# (~/.gitconfig, ~/.config/git/config) are B4 by their path.
GIT_CONFIG = re.compile(r"/\.git/(?:(?:modules|worktrees)/.+/)?config(?:\.worktree)?$")
_SECTION = re.compile(r'\[\s*([A-Za-z0-9.-]+)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\]')
_KEY = re.compile(r"([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")
_BOOLEAN = frozenset({"", "true", "false", "yes", "no", "on", "off", "1", "0"})
# (section, key): a command (or a file of config, for include paths) git runs or reads; "*" any key of the section.
# Sections with a subsection (`[filter "lfs"]`) are matched by their first name.
_RUNS = frozenset({
    ("core", "hookspath"), ("core", "sshcommand"), ("core", "pager"), ("core", "editor"), ("core", "askpass"),
    ("core", "gitproxy"), ("core", "alternaterefscommand"), ("sequence", "editor"), ("filter", "clean"),
    ("filter", "smudge"), ("filter", "process"), ("diff", "textconv"), ("diff", "command"), ("diff", "external"),
    ("merge", "driver"), ("credential", "helper"), ("gpg", "program"), ("include", "path"), ("includeif", "path"),
    ("remote", "uploadpack"), ("remote", "receivepack"), ("remote", "vcs"), ("pager", "*"), ("difftool", "cmd"),
    ("mergetool", "cmd"), ("browser", "cmd"), ("browser", "path"),
})


def command_keys(text: str) -> list[str]:
    """The keys of a git config's text that make git run a command, as `section.key` (`core.fsmonitor` unless it is
    a boolean: git's own daemon; an alias only when it starts with `!`, a shell command), each once."""
    section, found = "", []
    for raw in text.splitlines():
        line = raw.strip()
        header = _SECTION.match(line)
        if header is not None:  # a key may follow the header on its line
            section, line = header.group(1).lower().split(".")[0], line[header.end():].strip()
        key = _KEY.match(line) if line and line[0] not in "#;" else None
        if key is None or not section:
            continue
        name, value = key.group(1).lower(), _value(key.group(2) or "")
        if _runs(section, name, value):
            found.append(f"{section}.{name}")
    return list(dict.fromkeys(found))


def _value(raw: str) -> str:
    """A value as git reads it, near enough: up to a `#` or `;` outside double quotes, the quotes dropped."""
    kept, quoted = [], False
    for char in raw:
        if char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            break
        else:
            kept.append(char)
    return "".join(kept).strip()


def _runs(section: str, name: str, value: str) -> bool:
    if section == "core" and name == "fsmonitor":
        return value.lower() not in _BOOLEAN
    if section == "alias":
        return value.startswith("!")
    return (section, name) in _RUNS or (section, "*") in _RUNS


def changed_configs(files: FileChanges) -> list[str]:
    """The repository git configs among the paths a call created or modified."""
    return [path for path in dict.fromkeys([*files.created, *files.modified]) if GIT_CONFIG.search(path)]


async def check_git_configs(docker: Any, container_id: str, record: CallBehavior, outcome: ProbeOutcome) -> None:
    """Read the git configs `record`'s call wrote (up to MAX_CONFIGS) and add the keys that run commands, and that no
    earlier record of its sandbox in `outcome` holds, to `record.files.runs_commands`; a config that could not be
    read, or one past the limit, goes to `outcome.errors`."""
    paths = changed_configs(record.files)
    known = {entry for earlier in outcome.behavior if earlier.sandbox == record.sandbox
             for entry in earlier.files.runs_commands}
    where = f"probe '{record.label}' of '{record.tool}'" if record.tool else record.label
    for path in paths[:MAX_CONFIGS]:
        try:
            head = await anyio.to_thread.run_sync(observe.read_head, docker, container_id, path, MAX_CONFIG_BYTES)
        except ObserveError as exc:
            outcome.errors.append(f"the git config {path} written during {where} could not be read, so B4 did not "
                                  f"check it for commands: {exc}"[:600])
            continue
        entries = [f"{path}: {key}" for key in command_keys(head.decode("utf-8", errors="replace"))]
        record.files.runs_commands.extend(entry for entry in entries if entry not in known)
    if len(paths) > MAX_CONFIGS:
        outcome.errors.append(f"{len(paths) - MAX_CONFIGS} more git config(s) written during {where} were not read, "
                              f"so B4 did not check them for commands (first: {paths[MAX_CONFIGS]})"[:600])
