"""The install proxy's allowlist: which registry hosts and ports an install may reach. Data, not code: the shipped
`registries.json` beside this module (npm, pypi), a file named by MCP_SANDBOX_REGISTRIES, or hosts passed directly."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from sandbox.core.errors import UserInputError

REGISTRIES_FILE = Path(str(resources.files("sandbox.install.proxy").joinpath("registries.json")))

REGISTRIES_ENV = "MCP_SANDBOX_REGISTRIES"

DEFAULT_PORTS = (443,)

MAX_HOST_CHARS = 253

_HOST_RE = re.compile(r"^\.?(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")


@dataclass(frozen=True)
class RegistryAllowlist:
    hosts: tuple[str, ...]
    ports: tuple[int, ...] = DEFAULT_PORTS


def load_registries(config: Path | str | None = None) -> dict[str, RegistryAllowlist]:
    """The registry allowlists per ecosystem: from `config`, else the file named by MCP_SANDBOX_REGISTRIES, else the
    shipped defaults (sandbox/install/proxy/registries.json). A bad file is the user's error (exit 2)."""
    path = Path(config or os.environ.get(REGISTRIES_ENV) or REGISTRIES_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserInputError(f"cannot read the registry allowlist {path}: {exc}") from None
    if not isinstance(data, dict):
        raise UserInputError(f"registry allowlist {path}: expected a JSON object of ecosystems")
    result: dict[str, RegistryAllowlist] = {}
    for ecosystem, entry in data.items():
        if ecosystem.startswith("_"):
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("hosts"), list):
            raise UserInputError(f"registry allowlist {path}: {ecosystem!r} needs a list of hosts")
        ports = entry.get("ports", list(DEFAULT_PORTS))
        try:
            result[ecosystem] = RegistryAllowlist(validate_hosts(entry["hosts"]), validate_ports(ports))
        except ValueError as exc:
            raise UserInputError(f"registry allowlist {path}: {ecosystem}: {exc}") from None
    return result


def registry_hosts(ecosystem: str, *, config: Path | str | None = None,
                   extra_hosts: Iterable[str] = ()) -> RegistryAllowlist:
    """The allowlist of one ecosystem (`npm`, `pypi`) from configuration, plus `extra_hosts` (e.g. a private mirror)."""
    registries = load_registries(config)
    if ecosystem not in registries:
        raise UserInputError(f"no registry allowlist for {ecosystem!r} (have: {', '.join(sorted(registries))})")
    entry = registries[ecosystem]
    return RegistryAllowlist(validate_hosts([*entry.hosts, *extra_hosts]), entry.ports)


def validate_hosts(hosts: Iterable[str]) -> tuple[str, ...]:
    """Lower-cased, de-duplicated host names; a name covered by a `.domain` entry is dropped (squid refuses both)."""
    cleaned: list[str] = []
    for host in hosts:
        if not isinstance(host, str) or not _HOST_RE.match(host) or _is_ip_literal(host.lstrip(".")):
            raise ValueError(f"not a host name: {host!r}")
        host = host.lower()
        if host not in cleaned:
            cleaned.append(host)
    wildcards = [h for h in cleaned if h.startswith(".")]
    kept = [h for h in cleaned
            if not any(h != w and (h == w[1:] or h.endswith(w)) for w in wildcards)]
    if not kept:
        raise ValueError("the allowlist is empty")
    return tuple(kept)


def validate_ports(ports: Iterable[Any]) -> tuple[int, ...]:
    result: list[int] = []
    for port in ports:
        if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError(f"not a port: {port!r}")
        if port not in result:
            result.append(port)
    if not result:
        raise ValueError("no ports")
    return tuple(result)


def host_allowed(host: str, allow_hosts: Iterable[str]) -> bool:
    host = host.lower().rstrip(".")
    return any(host == h or (h.startswith(".") and (host == h[1:] or host.endswith(h))) for h in allow_hosts)


def _is_ip_literal(text: str) -> bool:
    return bool(re.fullmatch(r"[0-9.]+", text))
