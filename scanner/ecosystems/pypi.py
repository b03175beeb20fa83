"""PyPI: the JSON API's releases, `name==version` installs on the python runtime, the hash, yanked, wheel and PEP 740
checks (scanner.provenance.pypi) and the hash-pinned tree `uv pip compile` wrote."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpx
from packaging.utils import canonicalize_name
from packaging.version import Version

from scanner.provenance.versions import pypi_could_resolve, pypi_exact, pypi_normalise
from scanner.registry.endpoints import PYPI_SIMPLE, RegistryEndpoints
from scanner.registry.resolve import Resolved, document_field, no_such_version, registry_document

if TYPE_CHECKING:
    from scanner.provenance.model import DependencyTree, PackageProvenance


class Pypi:
    name = "pypi"
    runtime = "python"
    # The version grammar (PEP 440): scanner.provenance.versions.
    normalise_version = staticmethod(pypi_normalise)
    exact_version = staticmethod(pypi_exact)
    could_resolve_to = staticmethod(pypi_could_resolve)
    osv_name = "PyPI"

    def normalize(self, name: str) -> str:
        return canonicalize_name(name)

    def purl_name(self, name: str) -> str:
        """The purl spec's PyPI rule: lower case, `_` as `-` (dots are kept, unlike PEP 503)."""
        return name.lower().replace("_", "-")

    def resolve(self, name: str, spec: str | None, client: httpx.Client,
                endpoints: RegistryEndpoints) -> Resolved:
        project = registry_document(client, endpoints.pypi_project(name), f"PyPI project {name}",
                                    f"PyPI project {name!r} was not found; check the name")
        # The index's (or a mirror's) document: anything but the shapes PyPI writes reads as no such release, and a
        # project name that is not the one asked for (PEP 503) is not taken: the install would fetch that project.
        info = document_field(project, "info")
        releases = document_field(project, "releases")
        latest = info.get("version") if isinstance(info.get("version"), str) else None
        version = spec or latest or ""
        if version not in releases or not releases[version]:
            raise no_such_version(f"PyPI project {name}", f"release {version!r} with files", latest or "?", releases)
        shown = info.get("name")
        same = isinstance(shown, str) and canonicalize_name(shown) == canonicalize_name(name)
        return Resolved(shown if same else name, version)

    def install_spec(self, name: str, version: str) -> str:
        return f"{name}=={version}"

    def install_index(self, endpoints: RegistryEndpoints) -> str | None:
        return endpoints.pypi_simple if endpoints.pypi_simple != PYPI_SIMPLE else None

    def version_key(self, version: str) -> Any | None:
        try:
            return Version(version)
        except ValueError:  # InvalidVersion, or past int's 4,300 digits
            return None


    def check_package(self, client: httpx.Client, endpoints: RegistryEndpoints, name: str, version: str,
                      manifest: dict[str, Any] | None) -> PackageProvenance:
        from scanner.provenance.pypi import check_pypi_package  # see scanner/ecosystems/registry.py

        return check_pypi_package(client, name, version, endpoints=endpoints)

    def dependency_tree(self, manifest: dict[str, Any] | None, endpoints: RegistryEndpoints) -> DependencyTree | None:
        from scanner.provenance.pypi import python_tree

        requirements = manifest.get("requirements") if manifest else None
        return python_tree(requirements) if isinstance(requirements, str) else None
