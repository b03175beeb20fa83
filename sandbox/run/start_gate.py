"""The start gate: a seeded server's own code runs only once its workspace and canary secrets are in place.

Seeding is an exec into the running container (a tmpfs cannot be written before the container starts), and it takes
0.1-0.2 s. Without a gate the server boots meanwhile, so a package that reads `~/.aws/credentials` once, at import,
as stealers do, finds no such file: it reads nothing, sends nothing, and the scan passed it. On a real machine the
secrets are there before any process starts; the gate makes the sandbox the same.

The run container's command is a POSIX shell that makes a FIFO in /tmp, waits for one word on it, removes it and
`exec`s the server's command (same pid, same argv, the environment unchanged: the shell's own PWD and OLDPWD are
unset unless the environment sets them; what dash would not pass on as set, a variable whose name is no shell name,
`spring.profiles.active`, which it drops, or one it sets itself, IFS, is set again by `env` on the way). Its own
tools (mkfifo, rm, env) are the system's, never a package's bin of that name found first on the server's PATH.
The seeding exec writes `go` to the FIFO after `tar -x`, whatever tar's status, so a seeding failure still lets the
server start (the probes are skipped and the scan says so). A server that is not seeded (probing off) and an image
as shipped (which may have no shell) are not gated."""

from __future__ import annotations

import re
from collections.abc import Mapping

GATE = "/tmp/.mcp-sandbox-start"
GATE_ARGV0 = "mcp-sandbox-start"
SEED_ARGV0 = "mcp-sandbox-seed"
GATE_WAIT_TRIES = 300  # of 10 ms: how long the seeding exec waits for the gate to exist (it does within milliseconds)
_SHELL_VARIABLES = ("PWD", "OLDPWD")  # what dash exports of its own; a launch by an MCP client passes neither
# What dash does not pass on as it was given: a name that is no shell name (dropped), and the variables it or the
# gate's script sets (IFS, OPTIND, PPID, PWD, OLDPWD; g, word: a given value replaced)
_SHELL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHELL_SETS = ("IFS", "OPTIND", "PPID", *_SHELL_VARIABLES, "g", "word")
# The gate's own tools are looked up in the system folders only: the server's PATH puts the package's bin folders
# first, where a package may install an `mkfifo`, `rm` or `env` of its own, which would run before the seeding.
_SYSTEM_PATH = "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
_ENV = "/usr/bin/env"
_NOT_OPENED = "mcp-sandbox: the start gate was not opened"


def gated_command(command: list[str], environment: Mapping[str, str]) -> list[str]:
    """The run container's command: the gate, then `exec` of `command` (passed as arguments, never interpolated);
    through `/usr/bin/env --` with the variables the shell would not pass on as set (`_set_again`), when there are
    any."""
    unset = " ".join(name for name in _SHELL_VARIABLES if name not in environment)
    again = _set_again(environment)
    script = (f'g={GATE}; {_SYSTEM_PATH} mkfifo -m 600 "$g" || '
              f'{{ echo "mcp-sandbox: could not make the start gate" >&2; exit 125; }}; '
              f'read -r word < "$g"; {_SYSTEM_PATH} rm -f "$g"; '
              f'[ "$word" = go ] || {{ echo "{_NOT_OPENED}" >&2; exit 125; }}; '
              + (f"unset {unset}; " if unset else "") + (f'exec {_ENV} -- "$@"' if again else 'exec "$@"'))
    return ["/bin/sh", "-c", script, GATE_ARGV0, *again, *command]


def _set_again(environment: Mapping[str, str]) -> list[str]:
    """`NAME=VALUE` of each variable dash drops (its name is no shell name) or replaces (one it sets itself)."""
    return [f"{name}={value}" for name, value in environment.items()
            if name in _SHELL_SETS or not _SHELL_NAME.fullmatch(name)]


def then_open(command: list[str]) -> list[str]:
    """`command` (the seeding's `tar -x`, reading the exec's stdin), then the gate opened whatever its status and its
    FIFO removed (also by the gate, but this exec ends before the baseline snapshot, which then never lists it); the
    exit status is the command's, or 124 when the gate never appeared (said on stderr)."""
    script = (f'"$@"; status=$?; n=0; while [ ! -p {GATE} ] && [ "$n" -lt {GATE_WAIT_TRIES} ]; do n=$((n + 1)); '
              f'sleep 0.01; done; if [ -p {GATE} ]; then echo go > {GATE}; rm -f {GATE}; else '
              f'echo "mcp-sandbox: the server\'s start gate was not there to open" >&2; exit 124; fi; exit "$status"')
    return ["/bin/sh", "-c", script, SEED_ARGV0, *command]


def open_only() -> list[str]:
    """The gate opened with nothing before it: when seeding failed before its exec could open it."""
    return ["/bin/sh", "-c", f"if [ -p {GATE} ]; then echo go > {GATE}; rm -f {GATE}; fi", SEED_ARGV0]
