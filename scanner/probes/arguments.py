"""Which tools count as read-only or destructive (the order to probe them in is call_order's); and the words in tool and
parameter names that argument generation (value_generation, path_arguments, error_probes) goes by."""

from __future__ import annotations

from typing import Any

from scanner.probes.tooldef import annotation, tool_name
from scanner.vocabulary import name_words
from scanner.vocabulary import READ_VERBS, WRITE_VERBS

DIR_WORDS = frozenset({"dir", "dirs", "directory", "directories", "folder", "folders", "cwd", "workdir", "root"})
PATH_WORDS = frozenset({"path", "paths", "file", "files", "filename", "filepath", "filenames"}) | DIR_WORDS
LISTING_WORDS = frozenset({"list", "search", "find", "tree", "ls", "glob", "walk", "directory", "dir", "folder"})
SOURCE_WORDS = frozenset({"source", "src", "from", "old", "input", "original"})
DEST_WORDS = frozenset({"destination", "dest", "dst", "to", "target", "new", "output", "out"})
NOT_PATH_WORDS = frozenset({
    "query", "pattern", "content", "contents", "text", "body", "message", "regex", "glob", "url", "uri", "search",
    "term", "data", "encoding", "mode", "format", "exclude", "include", "excludes", "patterns", "name", "type",
})
URL_WORDS = frozenset({"url", "uri", "urls", "uris", "endpoint", "link", "href", "webhook", "homepage"})
HOST_WORDS = frozenset({"host", "hostname", "domain", "server", "hosts", "domains"})
GIT_WORDS = frozenset({"git", "repo", "repository", "repos"})
ID_WORDS = frozenset({"id", "ids", "uuid", "key", "slug", "ref", "sha", "handle", "identifier"})
PID_WORDS = frozenset({"pid", "pids", "ppid", "pgid", "tgid"})


def is_pid_name(words: set[str]) -> bool:
    """`pid`, `ppid`, `pgid`, `processId`, `process_id`: a parameter naming a process (value_generation gives it a
    pid no process has; id_reuse never fills it with a pid a listing returned, which may be the server's own)."""
    return bool(words & PID_WORDS) or {"process", "id"} <= words


def is_annotated_read_only(tool: dict[str, Any]) -> bool:
    return annotation(tool, "readOnlyHint") is True


def looks_read_only(tool: dict[str, Any]) -> bool:
    """Annotated read-only, or (not annotated otherwise) named with a read verb and no write verb."""
    hint = annotation(tool, "readOnlyHint")
    if hint is not None:
        return hint is True
    words = set(name_words(tool_name(tool)))
    return bool(words & READ_VERBS) and not words & WRITE_VERBS


def is_destructive(tool: dict[str, Any]) -> bool:
    """MCP semantics: a tool not annotated read-only may be destructive unless it says destructiveHint: false."""
    if is_annotated_read_only(tool):
        return False
    return annotation(tool, "destructiveHint") is not False


def may_probe(tool: dict[str, Any], *, no_destructive: bool, allow_destructive: bool = False) -> bool:
    """Whether a tool may be called: always, except under --no-destructive, which allows only tools annotated
    read-only (or a fixture probe that says allow_destructive)."""
    return not no_destructive or allow_destructive or is_annotated_read_only(tool)
