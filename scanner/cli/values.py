"""Flag values shared by `scan` and `batch`: sizes (`--memory 512m`) and environment pairs (`--env NAME=VALUE`)."""

from __future__ import annotations

import re

from scanner.errors import UsageError

SIZE = re.compile(r"^(\d+(?:\.\d+)?)([kmg]?)b?$", re.IGNORECASE)
ENGINE_MAX_BYTES = 2**63 - 1  # Docker reads a memory limit as a signed 64-bit byte count
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_size(text: str, flag: str) -> int:
    match = SIZE.match(text.strip())
    if not match:
        raise UsageError(f"{flag} {text!r} is not a size; use e.g. 512m or 1g")
    number, unit = float(match.group(1)), match.group(2).lower()
    value = int(number * {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[unit])
    if value > ENGINE_MAX_BYTES:  # refused here, not by the engine after the install (exit 3, an internal error)
        raise UsageError(f"{flag} {text!r} is over the engine's limit of 8 EiB; use e.g. 512m or 1g")
    if value < 32 * 1024**2:
        raise UsageError(f"{flag} {text!r} is under 32m; no server starts in that")
    return value


def parse_env(pairs: list[str]) -> dict[str, str]:
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not ENV_NAME.match(name):
            raise UsageError(f"--env {pair!r} must look like NAME=VALUE")
        if name in ("PATH", "HOME"):
            raise UsageError(f"--env {name} cannot be changed; the sandbox sets it")
        env[name] = value
    return env
