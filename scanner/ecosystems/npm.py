"""npm: the registry's package documents and dist-tags, `name@version` installs on the node runtime, the tarball,
signature and attestation checks (scanner.provenance.npm) and the tree from npm's lockfile."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from scanner.provenance.versions import npm_could_resolve, npm_normalise, parse_semver
from scanner.registry.client import NPM_REGISTRY
from scanner.registry.endpoints import RegistryEndpoints
from scanner.registry.resolve import Resolved, document_field, no_such_version, registry_document

if TYPE_CHECKING:
    from scanner.provenance.model import DependencyTree, PackageProvenance


class Npm:
    name = "npm"
    runtime = "node"
    # The version grammar (semver and npm ranges): scanner.provenance.versions.
    normalise_version = staticmethod(npm_normalise)
    exact_version = staticmethod(npm_normalise)
    could_resolve_to = staticmethod(npm_could_resolve)
    osv_name = "npm"

    def normalize(self, name: str) -> str:
        return name.lower()

    def purl_name(self, name: str) -> str:
        return name

    def resolve(self, name: str, spec: str | None, client: httpx.Client,
                endpoints: RegistryEndpoints) -> Resolved:
        packument = registry_document(client, endpoints.npm_packument(name), f"npm package {name}",
                                      f"npm package {name!r} was not found on the registry; check the name")
        # The registry's (or a mirror's) document: anything but the shapes npm writes reads as no such version.
        versions = document_field(packument, "versions")
        tags = document_field(packument, "dist-tags")
        wanted = spec or "latest"
        version = tags.get(wanted, wanted)
        if not isinstance(version, str) or version not in versions:
            latest = tags.get("latest")
            raise no_such_version(f"npm package {name}", f"version or tag {wanted!r}",
                                  latest if isinstance(latest, str) else "?", versions)
        return Resolved(name, version)

    def install_spec(self, name: str, version: str) -> str:
        return f"{name}@{version}"

    def install_index(self, endpoints: RegistryEndpoints) -> str | None:
        return endpoints.npm_registry if endpoints.npm_registry != NPM_REGISTRY else None

    def version_key(self, version: str) -> Any | None:
        return parse_semver(version)


    def check_package(self, client: httpx.Client, endpoints: RegistryEndpoints, name: str, version: str,
                      manifest: dict[str, Any] | None) -> PackageProvenance:
        # The signature and attestation checks (cryptography, sigstore: ~50 ms) are imported when an npm package is
        # checked, not by every scan that names the ecosystems.
        from scanner.provenance.npm import check_npm_package, installed_integrity

        package = check_npm_package(client, name, version, endpoints=endpoints)
        if manifest:
            package.checks.append(installed_integrity(package, manifest, name))
        return package

    def dependency_tree(self, manifest: dict[str, Any] | None, endpoints: RegistryEndpoints) -> DependencyTree | None:
        from scanner.provenance.npm_lockfile import REGISTRY_HOSTS, lockfile_tree  # see scanner/ecosystems/registry.py

        if not manifest:
            return None
        mirror = {host for host in [urlsplit(endpoints.npm_registry).hostname] if host}
        return lockfile_tree(manifest, "package-lock.json", registry_hosts=REGISTRY_HOSTS | mirror)
