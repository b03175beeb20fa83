"""The ecosystems the scanner knows, by name. A new one (a container image, say) is one module implementing
`base.Ecosystem` plus one line here.

An ecosystem module imports what resolving a name needs (the registry client, the version grammar) and imports its
provenance checks (their pydantic models, the rules they report by) inside the methods that run them: the scan's head
start resolves the target and starts a cached install's server in a thread while the CLI still imports the rest, so
what it imports first delays the server. The scan imports those check modules with itself, in the main thread
(scanner/provenance/installed.py), before the provenance check runs in its thread."""

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
