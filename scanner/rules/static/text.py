"""Small text helpers shared by the rules: splitting names into words, action verbs, word counts."""

from __future__ import annotations

import re
import unicodedata

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)

# Action verbs, grouped by meaning: two names whose verbs fall in different groups do different things.
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
_VERB_TO_GROUP: dict[str, str] = {verb: group for group, verbs in VERB_GROUPS.items() for verb in verbs}
READ_GROUPS = frozenset({"read", "list"})
MUTATING_GROUPS = frozenset({"create", "update", "delete", "write"})


def name_tokens(name: str) -> list[str]:
    """`gitHub_listPRs-v2` -> ['git', 'hub', 'list', 'p', 'rs', 'v2'] style split into lower-case words."""
    parts: list[str] = []
    for chunk in _SEPARATORS.split(name):
        if chunk:
            parts.extend(p.lower() for p in _CAMEL.split(chunk) if p)
    return parts


def verb_group(tokens: list[str]) -> str | None:
    """The action-verb group of a tool name: the first token that is a known verb (within the first two tokens)."""
    for token in tokens[:2]:
        group = _VERB_TO_GROUP.get(token)
        if group is not None:
            return group
    return None


def words(text: str) -> list[str]:
    """Words of a description (letters/digits runs), for counting and matching."""
    return _WORD.findall(text)


def normalise(text: str) -> str:
    """NFKC-normalise, drop invisible format characters, casefold: what a pattern should match against."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in folded if unicodedata.category(ch) != "Cf").casefold()
