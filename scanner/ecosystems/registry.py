"""The ecosystems the scanner knows, by name. A new one (a container image, say) is one module implementing
`base.Ecosystem` plus one line here."""

from __future__ import annotations

from typing import Any

import httpx

from scanner.ecosystems.base import Ecosystem
from scanner.ecosystems.npm import Npm
from scanner.ecosystems.pypi import Pypi
from scanner.errors import UsageError
from scanner.registry.endpoints import DEFAULT_ENDPOINTS, RegistryEndpoints
from scanner.registry.resolve import Resolved

ECOSYSTEMS: dict[str, Ecosystem] = {e.name: e for e in (Npm(), Pypi())}


def register(ecosystem: Ecosystem, registry: dict[str, Ecosystem] = ECOSYSTEMS) -> None:
    """Make `ecosystem` reachable by its name (tests pass their own `registry`)."""
    registry[ecosystem.name] = ecosystem


def ecosystem(name: str, registry: dict[str, Ecosystem] = ECOSYSTEMS) -> Ecosystem:
    found = registry.get(name)
    if found is None:
        raise UsageError(f"unknown ecosystem {name!r}; known: {', '.join(sorted(registry))}")
    return found


def resolve(target: Any, client: httpx.Client, endpoints: RegistryEndpoints = DEFAULT_ENDPOINTS,
            registry: dict[str, Ecosystem] = ECOSYSTEMS) -> Resolved:
    """The exact version a registry target (`ecosystem`, `name`, `version_spec`) names."""
    return ecosystem(target.ecosystem, registry).resolve(target.name, target.version_spec, client, endpoints)
