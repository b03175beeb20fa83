"""The ecosystem contract (scanner.ecosystems): npm and PyPI each answer for their installer syntax, runtime, names and
versions, and the scan's dispatch reaches whatever is registered, so a third ecosystem is one module plus one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from sandbox.install.request import local_source
from scanner.ecosystems import registry as ecosystems
from scanner.ecosystems.base import Ecosystem
from scanner.errors import UsageError
from scanner.pipeline.targets import Target
from scanner.provenance.installed import check_installed
from scanner.provenance.model import Check, DependencyTree, PackageProvenance
from scanner.provenance.typosquat import typosquat_finding
from scanner.registry.endpoints import RegistryEndpoints
from scanner.registry.resolve import Resolved


def test_npm_and_pypi_are_registered_with_their_installer_syntax_and_runtime() -> None:
    npm, pypi = ecosystems.ecosystem("npm"), ecosystems.ecosystem("pypi")
    assert (npm.runtime, pypi.runtime) == ("node", "python")
    assert (npm.osv_name, pypi.osv_name) == ("npm", "PyPI")
    assert npm.install_spec("@scope/server", "1.2.3") == "@scope/server@1.2.3"
    assert pypi.install_spec("mcp-server-time", "0.6.2") == "mcp-server-time==0.6.2"
    with pytest.raises(UsageError, match="unknown ecosystem 'cargo'; known: npm, pypi"):
        ecosystems.ecosystem("cargo")


def test_names_and_versions_compare_as_each_registry_does() -> None:
    npm, pypi = ecosystems.ecosystem("npm"), ecosystems.ecosystem("pypi")
    assert pypi.normalize("Zope.Interface__x") == pypi.normalize("zope-interface-x") == "zope-interface-x"
    assert npm.normalize("Left-Pad") == "left-pad" and npm.normalize("left_pad") != npm.normalize("left-pad")
    assert pypi.purl_name("Foo_Bar.baz") == "foo-bar.baz"  # the purl spec keeps dots
    assert pypi.version_key("1.0") == pypi.version_key("1.0.0") and pypi.version_key("not a version") is None
    assert npm.version_key("1.2.3") is not None and npm.version_key("1.2") is None


def test_the_sandbox_names_the_path_of_a_local_target(tmp_path: Path) -> None:
    wheel = tmp_path / "demo-1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")
    assert local_source(tmp_path) == "/opt/src/pkg"
    assert local_source(wheel) == "/opt/src/demo-1.0-py3-none-any.whl"


class Oci:
    """A third ecosystem, as a container-image module would implement the contract; it records what reached it."""

    name = "oci"
    runtime = "oci-runtime"
    osv_name = "OCI"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def normalize(self, name: str) -> str:
        self.calls.append(f"normalize {name}")
        return name.lower()

    def purl_name(self, name: str) -> str:
        return name

    def resolve(self, name: str, spec: str | None, client: httpx.Client, endpoints: RegistryEndpoints) -> Resolved:
        self.calls.append(f"resolve {name} {spec}")
        return Resolved(name, "sha256:" + "0" * 64)

    def install_spec(self, name: str, version: str) -> str:
        return f"{name}@{version}"

    def version_key(self, version: str) -> Any | None:
        return version

    def normalise_version(self, version: str) -> str | None:
        return version

    def exact_version(self, spec: str) -> str | None:
        return spec if spec.startswith("sha256:") else None

    def could_resolve_to(self, spec: str, version: str) -> bool:
        self.calls.append(f"could {spec} be {version}")
        return spec == version

    def check_package(self, client: httpx.Client, endpoints: RegistryEndpoints, name: str, version: str,
                      manifest: dict[str, Any] | None) -> PackageProvenance:
        self.calls.append(f"check {name} {version}")
        check = Check(name="image-signature", outcome="verified", evidence="cosign signature verified")
        return PackageProvenance.model_construct(ecosystem="oci", name=name, version=version, checks=[check])

    def install_index(self, endpoints: RegistryEndpoints) -> str | None:
        return None

    def dependency_tree(self, manifest: dict[str, Any] | None, endpoints: RegistryEndpoints) -> DependencyTree | None:
        self.calls.append("tree")
        return DependencyTree(lockfile="image layers", total=0)


def test_a_registered_third_ecosystem_is_reached_by_resolution_provenance_and_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    oci: Ecosystem = Oci()
    own: dict[str, Ecosystem] = dict(ecosystems.ECOSYSTEMS)
    ecosystems.register(oci, own)
    assert ecosystems.ecosystem("oci", own) is oci and "oci" not in ecosystems.ECOSYSTEMS
    target = Target("npm", "oci", "ghcr.io/acme/server", "oci:ghcr.io/acme/server:1", "1")  # type: ignore[arg-type]
    with httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(500))) as client:
        resolved = ecosystems.resolve(target, client, registry=own)
        monkeypatch.setitem(ecosystems.ECOSYSTEMS, "oci", oci)  # the one registration line, for the scan's calls
        report, findings = check_installed("oci", resolved.name, resolved.version, local=False,  # type: ignore
                                           manifest={}, client=client)
        assert typosquat_finding("oci", "Server", {"oci": ["server"]}) is None  # type: ignore[arg-type]
    assert resolved.version.startswith("sha256:")
    assert report.packages[0].checks[0].name == "image-signature" and report.dependency_tree is not None
    assert findings == []
    assert oci.calls == ["resolve ghcr.io/acme/server 1", "normalize ghcr.io/acme/server",  # typosquat, I9
                         "check ghcr.io/acme/server sha256:" + "0" * 64, "tree", "normalize Server", "normalize server"]
