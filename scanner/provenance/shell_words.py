"""Splitting a launch command into the argv of each program it would run: shell words, and the `env …`,
`sh -c "…"`, `cmd /c …` and `exec` wrappers peeled off (a shell string may hold several commands)."""

from __future__ import annotations

import re
import shlex

_SHELLS = {"sh", "bash", "zsh", "dash", "ash", "ksh"}
_SHELL_OPERATORS = {"&&", "||", ";", "|", "&", ";;", "(", ")"}
_MAX_UNWRAP = 8


class Unparseable(Exception):
    """The command (or a shell string inside it) cannot be split into words."""


def command_segments(command: str, args: list[str] | None = None) -> list[list[str]]:
    """The argv of every program the command runs (command plus args as a client config holds them, or one shell
    string); raises Unparseable."""
    return unwrap([command, *args] if args else split_words(command), 0)


def split_words(text: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise Unparseable(str(exc)) from exc
    if not words:
        raise Unparseable("empty command")
    return words


def program_name(word: str) -> str:
    name = re.split(r"[\\/]", word)[-1].lower()
    for suffix in (".exe", ".cmd", ".bat", ".ps1"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def unwrap(argv: list[str], depth: int) -> list[list[str]]:
    """Peel `env …`, `sh -c "…"`, `cmd /c …` and `exec` off argv; a shell string may hold several commands."""
    if depth > _MAX_UNWRAP:
        raise Unparseable(f"wrappers (env, sh -c, exec) nested more than {_MAX_UNWRAP} deep")
    if not argv:
        return []
    while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):  # `NAME=value cmd …`: shell assignments
        argv = argv[1:]
    if not argv:
        return []
    prog = program_name(argv[0])
    if prog == "env":
        return unwrap(_after_env(argv[1:]), depth + 1)
    if prog == "exec":
        return unwrap(argv[1:], depth + 1)
    if prog == "cmd" and len(argv) > 2 and argv[1].lower() in ("/c", "/k"):
        return unwrap(argv[2:], depth + 1)
    if prog in _SHELLS:
        script = _shell_script(argv[1:])
        if script is None:
            return [argv]
        return [seg for part in _shell_segments(script) for seg in unwrap(part, depth + 1)]
    return [argv]


def _after_env(rest: list[str]) -> list[str]:
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif word in ("-S", "--split-string") and i + 1 < len(rest):
            return split_words(rest[i + 1]) + rest[i + 2:]
        elif word.startswith("-") or ("=" in word and not word.startswith("=")):
            i += 1
        else:
            return rest[i:]
    return []


def _shell_script(rest: list[str]) -> str | None:
    for i, word in enumerate(rest):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return rest[i + 1] if i + 1 < len(rest) else ""
        if not word.startswith("-"):
            return None  # `sh script.sh`: a local script
    return None


def _shell_segments(script: str) -> list[list[str]]:
    lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError as exc:
        raise Unparseable(str(exc)) from exc
    segments: list[list[str]] = [[]]
    for word in words:
        if word in _SHELL_OPERATORS:
            segments.append([])
        else:
            segments[-1].append(word)
    return [s for s in segments if s]
