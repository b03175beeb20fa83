"""The report's `changes_since` section: what changed against the last vetted release of the same package
(scanner/batch/release_diff.py computes it; rules I12 and I13 turn it into findings)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scanner.report.base import ReportModel as _Model

from scanner.report.severity import Severity


class HostSeen(_Model):
    phase: Literal["install", "run"] = Field(description="install: an attempt the install container made; run: one "
                                             "the running server made (start-up or a call).")
    host: str


class SurfaceChange(_Model):
    """One change of the served surface or the provenance, as the lock names it (scanner/lock/changes.py kinds)."""

    kind: str
    severity: Severity
    tool: str | None = None
    message: str


class ChangesSince(_Model):
    previous_version: str | None = Field(description="The release compared against.")
    previous_report: str = Field(description="Where its report is (a batch report path, or the file given).")
    hosts_added: list[HostSeen] = Field(default_factory=list, description="Hosts this release contacted (install "
                                        "or run) that the previous one did not.")
    install_scripts_added: list[str] = Field(default_factory=list, description="Install scripts (package: script, "
                                             "versions dropped) the previous release did not run.")
    install_writes_added: list[str] = Field(default_factory=list, description="Paths written outside the install "
                                            "tree (I11 records) the previous release did not write.")
    canaries_added: list[str] = Field(default_factory=list, description="Canaries touched (where, how) that the "
                                      "previous release did not touch.")
    capabilities_added: list[str] = Field(default_factory=list, description="Server capabilities newly declared.")
    surface: list[SurfaceChange] = Field(default_factory=list, description="Tool, prompt, resource, instruction and "
                                         "server changes (the lock's change kinds).")
    provenance: list[SurfaceChange] = Field(default_factory=list, description="Provenance downgrades: a lost "
                                            "attestation or signature, a new publisher, source or workflow.")
    not_compared: list[str] = Field(default_factory=list, description="What could not be compared (a side that "
                                    "did not record it), so no change there is no evidence of none.")

    def behaviour_changed(self) -> bool:
        return bool(self.hosts_added or self.install_scripts_added or self.install_writes_added
                    or self.canaries_added or any(c.severity == "error" for c in self.provenance))
