"""The provenance section of the report: each check has one of four outcomes, with evidence.

`verified`    the check ran and the package passed it
`absent`      the registry has none of this (e.g. no attestation was ever published)
`unavailable` the check could not run (network, 404, a proxy stripped the data): never a pass, shown as "not checked"
`failed`      the data is present but wrong (digest mismatch, bad signature, yanked, known-bad…)
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sandbox.core.untrusted import cap_text

Outcome = Literal["verified", "absent", "unavailable", "failed"]
EcosystemName = Literal["npm", "pypi"]  # the one scanner-side list; scanner.ecosystems implements each
SourceKind = Literal["registry", "git", "url", "file", "link", "unknown"]

OUTCOME_LABELS: dict[str, str] = {
    "verified": "verified",
    "absent": "absent",
    "unavailable": "not checked",
    "failed": "FAILED",
}
MAX_EVIDENCE_CHARS = 2_000


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)  # built on first use (scanner/report/base.py)


class Check(_Model):
    """One provenance check of one package."""

    name: str = Field(description="What was checked, e.g. integrity, registry-signature, attestation, yanked.")
    outcome: Outcome
    evidence: str = Field(description="What was compared or why the check could not run; never a secret.")
    rule_id: str | None = Field(default=None, description="The I-rule a failure of this check raises.")

    @field_validator("evidence")
    @classmethod
    def _bounded(cls, evidence: str) -> str:
        """Evidence quotes the registry's own text (file names, digests, URLs, reasons): bounded, however long the
        registry or a mirror made it (a finding quotes it again)."""
        return cap_text(evidence, MAX_EVIDENCE_CHARS)


class Pins(_Model):
    """What the lockfile records for the package, so a later install can be held to it."""

    version: str | None = None
    integrity: str | None = Field(default=None, description="npm SRI string (sha512-…) as verified.")
    shasum: str | None = Field(default=None, description="npm legacy sha1 of the tarball.")
    sha256: dict[str, str] = Field(default_factory=dict, description="PyPI file name → sha256.")
    signature_keyid: str | None = None
    attestation_digest: str | None = None
    publisher: str | None = Field(default=None, description="Publisher identity (npm user / trusted publisher).")
    source_repository: str | None = Field(default=None, description="Where it was built from: the repository a "
                                          "verified build attestation names, else the package's own claim.")
    workflow: str | None = Field(default=None, description="The CI workflow (file@ref) a verified build "
                                 "attestation names.")


class PackageProvenance(_Model):
    ecosystem: EcosystemName
    name: str
    version: str | None = None
    checks: list[Check] = Field(default_factory=list)
    pins: Pins = Field(default_factory=Pins)

    def check(self, name: str) -> Check | None:
        """The check with this name, if it ran."""
        return next((c for c in self.checks if c.name == name), None)


class Dependency(_Model):
    """One resolved package of the installed tree."""

    name: str
    version: str | None = None
    integrity: str | None = None
    source: SourceKind = "registry"
    resolved: str | None = Field(default=None, description="Where it came from (URL without userinfo/query).")
    install_scripts: list[str] = Field(default_factory=list, description="preinstall/install/postinstall present.")
    dev: bool = False


class DependencyTree(_Model):
    lockfile: str = Field(description="Which lockfile the tree was read from.")
    total: int
    dependencies: list[Dependency] = Field(default_factory=list)

    @property
    def with_install_scripts(self) -> list[Dependency]:
        return [d for d in self.dependencies if d.install_scripts]

    @property
    def non_registry(self) -> list[Dependency]:
        return [d for d in self.dependencies if d.source in ("git", "url")]


class EgressAttempt(_Model):
    """A host the install tried to reach (filled by the install phase)."""

    host: str
    allowed: bool
    package: str | None = None
    script: str | None = None


class ProvenanceReport(_Model):
    packages: list[PackageProvenance] = Field(default_factory=list)
    dependency_tree: DependencyTree | None = None
    install_scripts: list[str] = Field(default_factory=list, description="name@version: script, for the whole tree.")
    egress: list[EgressAttempt] = Field(default_factory=list)

    def unchecked(self) -> list[tuple[str, Check]]:
        """Every check that could not run, as (package, check): these are "not checked", never a pass."""
        return [(p.name, c) for p in self.packages for c in p.checks if c.outcome == "unavailable"]
