"""Build a lock from a report: fingerprints of every definition, plus the server, provenance and sandbox pins."""

from __future__ import annotations

from typing import Any

from scanner.lock.canonical import canonical_json, fingerprint, normalised_copy, sha256_hex
from scanner.lock.model import (LockedEntry, LockedInstall, LockedServer, LockedTarget, LockedTool, LockFile,
                                 ProvenancePins)
from scanner.provenance.model import PackageProvenance
from scanner.report.model import InstallInfo, Report, ScannerInfo, ServerInfo, TargetInfo

REGISTRY_KINDS = ("npm", "pypi")
# Provenance check name -> the pin it confirms.
PIN_OF_CHECK = {"integrity": "integrity", "file-hashes": "sha256", "registry-signature": "signature_keyid",
                "attestation": "attestation_digest"}


# What each kind of locked item is keyed by: the first of these fields that holds a string.
KEY_FIELDS: dict[str, tuple[str, ...]] = {"tool": ("name",), "prompt": ("name",), "resource": ("uri", "name"),
                                          "template": ("uriTemplate", "name")}


def item_key(definition: dict[str, Any], *fields: str) -> str:
    """The first string among fields (name, uri, ...); otherwise the canonical JSON of the value, so it still sorts."""
    for field in fields:
        value = definition.get(field)
        if isinstance(value, str):
            return value
    return canonical_json({f: definition.get(f) for f in fields}).decode("utf-8")


def lock_tool(definition: dict[str, Any]) -> LockedTool:
    definition = normalised_copy(definition)
    return LockedTool(name=item_key(definition, *KEY_FIELDS["tool"]), fingerprint=fingerprint(definition), definition=definition)


def lock_entry(definition: dict[str, Any], *fields: str) -> LockedEntry:
    definition = normalised_copy(definition)
    return LockedEntry(key=item_key(definition, *fields), fingerprint=fingerprint(definition), definition=definition)


def lock_server(server: ServerInfo, instructions_known: bool) -> LockedServer:
    return LockedServer(
        name=server.name,
        version=server.version,
        protocol_version=server.protocol_version,
        capabilities=server.capabilities,
        instructions=server.instructions if instructions_known else None,
        instructions_known=instructions_known,
    )


def lock_target(target: TargetInfo) -> LockedTarget:
    from_registry = target.kind in REGISTRY_KINDS
    return LockedTarget(
        kind=target.kind,
        ecosystem=target.ecosystem,
        name=target.name if from_registry else None,
        version=target.version,
        requested_sha256=sha256_hex(target.requested.encode("utf-8")),
        endpoint_sha256=target.remote.endpoint_sha256 if target.remote is not None else None,
        image_digest=target.image.digest if target.image is not None else None,
    )


def lock_install(install: InstallInfo) -> LockedInstall:
    return LockedInstall(
        image_id=install.image_id,
        runtime_image=install.runtime_image,
        command_sha256=sha256_hex(canonical_json(install.command)),
    )


def pins_from_report(report: Report) -> ProvenancePins | None:
    """The pins of the target package from the report's provenance section (None when there is none)."""
    if report.provenance is None or not report.provenance.packages:
        return None
    packages = report.provenance.packages
    package = next((p for p in packages if p.name == report.target.name), packages[0])
    return _pins(package)


def _pins(package: PackageProvenance) -> ProvenancePins:
    pins = package.pins
    unchecked = sorted({PIN_OF_CHECK[c.name] for c in package.checks
                        if c.outcome == "unavailable" and c.name in PIN_OF_CHECK})
    return ProvenancePins(ecosystem=package.ecosystem, package=package.name, version=pins.version or package.version,
                          integrity=pins.integrity, sha256=dict(pins.sha256), signature_keyid=pins.signature_keyid,
                          attestation_digest=pins.attestation_digest, publisher=pins.publisher,
                          source_repository=pins.source_repository, workflow=pins.workflow, unchecked=unchecked)


def build_lock(report: Report, *, instructions_known: bool = True,
               provenance: ProvenancePins | None = None) -> LockFile:
    """The lock for what a report saw. Entries are sorted, and nothing time-dependent is stored, so an unchanged
    server gives a byte-identical lock. Provenance pins come from the report unless given."""
    tools = sorted((lock_tool(d) for d in report.tools), key=lambda t: (t.name, t.fingerprint))
    return LockFile(
        scanner=ScannerInfo(),
        target=lock_target(report.target),
        server=lock_server(report.server, instructions_known),
        tools=tools,
        prompts=_sorted_entries(report.prompts, *KEY_FIELDS["prompt"]),
        resources=_sorted_entries(report.resources, *KEY_FIELDS["resource"]),
        resource_templates=_sorted_entries(report.resource_templates, *KEY_FIELDS["template"]),
        provenance=provenance if provenance is not None else pins_from_report(report),
        install=lock_install(report.install) if report.install else None,
        sandbox_policy=report.sandbox.applied if report.sandbox else None,
    )


def _sorted_entries(definitions: list[dict[str, Any]], *fields: str) -> list[LockedEntry]:
    return sorted((lock_entry(d, *fields) for d in definitions), key=lambda e: (e.key, e.fingerprint))
