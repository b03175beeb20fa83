"""The one tool-name tokenizer and the verb vocabulary, shared by the rules (S4, S5, S7, S8, S10, S11, S13, P3-P5) and
probe argument generation (scanner/probes/arguments.py).

Two verb vocabularies live here on purpose, because they answer different questions:
- VERB_GROUPS: do two tools do different things? (S4 never pairs get_x with delete_x; S10 and S13 read the group).
- READ_VERBS / WRITE_VERBS / CREATING_VERBS: may the probes call this tool with generated arguments, and should its
  paths be new? These are wider (count, status, diff … / install, deploy, merge …) and deliberately conservative: a
  name with any write verb is never treated as read-only. Merging them would change which tools are probed.
"""

from __future__ import annotations

import re

_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CAMEL_AND_ACRONYMS = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def name_words(name: str, *, split_acronyms: bool = False) -> list[str]:
    """Split an identifier (snake, kebab, dotted or camelCase) into lower-case words: `get_userName` -> get, user,
    name. With split_acronyms, a run of capitals before a word is split off too: `HTTPServer` -> http, server (and
    `listPRs` -> list, p, rs); without, it stays one word (httpserver, prs), which the probes' word lists expect."""
    boundary = _CAMEL_AND_ACRONYMS if split_acronyms else _CAMEL
    return [part.lower() for chunk in _SEPARATORS.split(name) if chunk for part in boundary.split(chunk) if part]


def name_tokens(name: str) -> list[str]:
    """The rules' split of a tool or parameter name: name_words with acronyms split."""
    return name_words(name, split_acronyms=True)


# ---- verb groups: what a tool does, for the static rules -------------------------------------------------------

VERB_GROUPS: dict[str, frozenset[str]] = {
    "read": frozenset({"get", "fetch", "read", "retrieve", "load", "show", "view", "describe", "download", "open",
                       "inspect", "lookup", "stat", "info"}),
    "list": frozenset({"list", "search", "find", "query", "browse", "scan", "filter", "ls", "enumerate"}),
    "create": frozenset({"create", "add", "new", "insert", "make", "mkdir", "register", "generate", "init"}),
    "update": frozenset({"update", "edit", "modify", "set", "patch", "change", "rename", "replace", "toggle",
                         "configure", "enable", "disable"}),
    "delete": frozenset({"delete", "remove", "rm", "del", "drop", "destroy", "purge", "erase", "unlink", "rmdir",
                         "clear", "wipe", "truncate", "reset"}),
    "write": frozenset({"write", "save", "put", "store", "upload", "append", "commit", "push", "move", "mv",
                        "copy", "cp"}),
    "run": frozenset({"run", "exec", "execute", "invoke", "call", "start", "launch", "trigger", "eval",
                      "spawn"}),
    "send": frozenset({"send", "post", "publish", "notify", "email", "reply", "share"}),
    "stop": frozenset({"stop", "kill", "cancel", "abort", "terminate", "close"}),
}
ALL_GROUPED_VERBS: frozenset[str] = frozenset().union(*VERB_GROUPS.values())
_VERB_TO_GROUP: dict[str, str] = {verb: group for group, verbs in VERB_GROUPS.items() for verb in verbs}
READ_GROUPS = frozenset({"read", "list"})
MUTATING_GROUPS = frozenset({"create", "update", "delete", "write"})


def verb_group(tokens: list[str]) -> str | None:
    """The action-verb group of a tool name: the first token that is a known verb (within the first two tokens)."""
    for token in tokens[:2]:
        group = _VERB_TO_GROUP.get(token)
        if group is not None:
            return group
    return None


# ---- read/write verbs: which tools the probes may call, for argument generation ---------------------------------

READ_VERBS = frozenset({
    "get", "list", "read", "search", "find", "query", "fetch", "show", "describe", "view", "lookup", "count",
    "check", "inspect", "stat", "info", "status", "browse", "retrieve", "head", "tail", "diff", "log", "explain",
    "validate", "preview", "peek", "cat", "ls", "tree", "grep", "glob", "summarize", "summary", "ping", "echo",
})
WRITE_VERBS = frozenset({
    "create", "write", "delete", "remove", "rm", "update", "set", "put", "post", "patch", "move", "mv", "rename",
    "edit", "append", "insert", "drop", "kill", "exec", "execute", "run", "send", "upload", "install", "push",
    "commit", "save", "modify", "replace", "add", "make", "mkdir", "touch", "copy", "cp", "apply", "reset",
    "truncate", "clear", "purge", "destroy", "start", "stop", "restart", "deploy", "publish", "merge", "import",
})
CREATING_VERBS = frozenset({"create", "write", "save", "make", "mkdir", "touch", "new", "upload", "export", "init"})
