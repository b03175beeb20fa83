"""The contract every package ecosystem implements, as pip-audit has one per dependency source: how to resolve a
version, what to ask the installer for, which runtime image runs it, how to check its provenance and read its
dependency tree, and how its names compare. The scanner calls these instead of branching on the ecosystem's name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import httpx

from scanner.registry.endpoints import RegistryEndpoints
from scanner.registry.resolve import Resolved

if TYPE_CHECKING:  # the provenance models: only a check builds them (see scanner/ecosystems/registry.py)
    from scanner.provenance.model import DependencyTree, PackageProvenance


class Ecosystem(Protocol):
    name: str  # as in targets, reports and locks: "npm", "pypi"
    runtime: str  # the runtime image the installer and the server run in: "node", "python"
    osv_name: str  # the ecosystem as OSV advisories name it

    def normalize(self, name: str) -> str:
        """The form two names of one package share (PyPI: PEP 503; npm: names are case-insensitive)."""
        ...

    def purl_name(self, name: str) -> str:
        """The name as a package URL (purl) spells it."""
        ...

    def resolve(self, name: str, spec: str | None, client: httpx.Client,
                endpoints: RegistryEndpoints) -> Resolved:
        """The exact version `spec` (a version, a tag, or None for the latest) names on the registry."""
        ...

    def install_spec(self, name: str, version: str) -> str:
        """What the installer is given for a registry package (`name@version`, `name==version`)."""
        ...

    def install_index(self, endpoints: RegistryEndpoints) -> str | None:
        """The mirror the installer must install from, None for the public registry (the installer's default)."""
        ...

    def version_key(self, version: str) -> Any | None:
        """A sortable form of a version (for advisory ranges), None when it cannot be parsed."""
        ...

    def normalise_version(self, version: str) -> str | None:
        """The canonical form of an exact version, None when it is not one."""
        ...

    def exact_version(self, spec: str) -> str | None:
        """The version a spec pins exactly, None when it pins none (a range, a tag)."""
        ...

    def could_resolve_to(self, spec: str, version: str) -> bool:
        """Whether installing name at `spec` could give `version` (a tag or an unreadable spec: it could)."""
        ...

    def check_package(self, client: httpx.Client, endpoints: RegistryEndpoints, name: str, version: str,
                      manifest: dict[str, Any] | None) -> PackageProvenance:
        """The registry's provenance checks of name@version; `manifest`: what the install recorded, if anything."""
        ...

    def dependency_tree(self, manifest: dict[str, Any] | None, endpoints: RegistryEndpoints) -> DependencyTree | None:
        """The installed tree from the install's lockfile (packages from `endpoints`' registry count as registry
        packages), None when the install recorded none."""
        ...
