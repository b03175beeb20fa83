"""The lockfile model: what a server was when it was vetted, in a form a later run can compare against."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scanner.report.model import AppliedPolicy, ScannerInfo, TargetKind

LOCK_VERSION: Literal["1"] = "1"
DEFAULT_LOCK_NAME = "mcp-sandbox.lock"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LockedTool(_Model):
    name: str
    fingerprint: str = Field(description="sha256 over the RFC 8785 canonical JSON of the whole definition.")
    definition: dict[str, Any]


class LockedEntry(_Model):
    """A prompt, resource or resource template, keyed by its name, uri or uriTemplate."""

    key: str
    fingerprint: str
    definition: dict[str, Any]


class LockedServer(_Model):
    name: str | None = None
    version: str | None = None
    protocol_version: str | None = None
    capabilities: dict[str, Any] = Field(default_factory=dict)
    instructions: str | None = None
    instructions_known: bool = Field(
        description="False when the input did not carry the server's instructions (a bare tools/list), so a "
        "null `instructions` means 'not captured', not 'none'."
    )


class LockedTarget(_Model):
    kind: TargetKind
    ecosystem: Literal["npm", "pypi"] | None = None
    name: str | None = Field(default=None, description="The registry package name; null for local paths.")
    version: str | None = None
    requested_sha256: str = Field(description="Hash of the target as given (it may be a path or URL).")
    endpoint_sha256: str | None = Field(default=None, description="A remote server's endpoint: sha256 of scheme, "
                                        "host, port and path (never the URL); null for sandboxed targets.")
    image_digest: str | None = Field(default=None, description="A container image's content digest (sha256:…, "
                                     "its registry digest or image ID); null for packages and remote servers.")


class ProvenancePins(_Model):
    """What the install was verified to be: the pins a later run must see again."""

    ecosystem: Literal["npm", "pypi"] | None = None
    package: str | None = None
    version: str | None = None
    integrity: str | None = Field(default=None, description="npm SRI integrity, e.g. sha512-...")
    sha256: dict[str, str] = Field(default_factory=dict, description="PyPI file name -> hex SHA-256.")
    signature_keyid: str | None = None
    attestation_digest: str | None = None
    publisher: str | None = None
    source_repository: str | None = None
    workflow: str | None = Field(default=None, description="The CI workflow a verified build attestation names.")
    unchecked: list[str] = Field(default_factory=list, description="Pins whose check could not run in this install "
                                 "(unavailable): a missing value there means 'not checked', not 'gone'.")


class LockedInstall(_Model):
    image_id: str
    runtime_image: str
    command_sha256: str = Field(description="Hash of the launch command (commands are stored only as hashes).")


class LockFile(_Model):
    lock_version: Literal["1"] = LOCK_VERSION
    scanner: ScannerInfo = Field(default_factory=ScannerInfo)
    target: LockedTarget | None = None
    server: LockedServer
    tools: list[LockedTool] = Field(default_factory=list)
    prompts: list[LockedEntry] = Field(default_factory=list)
    resources: list[LockedEntry] = Field(default_factory=list)
    resource_templates: list[LockedEntry] = Field(default_factory=list)
    provenance: ProvenancePins | None = None
    install: LockedInstall | None = None
    sandbox_policy: AppliedPolicy | None = None
