"""Changes to what was installed: the package, its integrity, publisher, signature and attestation."""

from __future__ import annotations

from scanner.lock.changes import Change, change
from scanner.lock.model import LockedInstall, LockedTarget, LockFile, ProvenancePins
from scanner.lock.text import quoted


def provenance_changes(old: LockFile, new: LockFile) -> list[Change]:
    return [*_target_changes(old.target, new.target), *_pin_changes(old.provenance, new.provenance),
            *_install_changes(old.install, new.install)]


def _target_changes(old: LockedTarget | None, new: LockedTarget | None) -> list[Change]:
    if old is not None and new is not None and old.image_digest is not None and old.image_digest != new.image_digest:
        return [change("provenance_changed", f"the lock pins image digest {quoted(old.image_digest)} but the input "
                       f"is {quoted(new.image_digest)}: not the image that was vetted")]
    if old is None or new is None:
        return []
    pinned, now = old.endpoint_sha256, new.endpoint_sha256
    if pinned is not None and now is not None and pinned != now:
        return [change("provenance_changed", f"the lock is for the remote endpoint with sha256 {quoted(pinned[:16])}"
                       f"... but the input's is {quoted(now[:16])}...: another server (scheme, host, port or path "
                       "differ)")]
    if old.name is None or new.name is None:
        return []
    if (old.ecosystem, old.name) == (new.ecosystem, new.name):
        return []
    return [change("provenance_changed", f"the lock is for {old.ecosystem} package {quoted(old.name)} but the "
                   f"input is {new.ecosystem} package {quoted(new.name)}")]


def _pin_changes(old: ProvenancePins | None, new: ProvenancePins | None) -> list[Change]:
    if old is None and new is None:
        return []
    if old is None:
        return [change("provenance_changed", "the lock has no provenance pins; refresh it to pin what was "
                       "installed", severity="info")]
    if new is None:
        return [change("provenance_unchecked", "the input carries no install provenance (an offline input), so "
                       "the lock's provenance pins were not compared")]
    same_version = old.version == new.version
    checks = (_package, _version, _integrity, _file_hashes, _publisher, _source_repository, _workflow, _signature,
              _attestation)
    return [c for check in checks if (c := check(old, new, same_version)) is not None]


def _lost(field: str, what: str, old_value: str, new: ProvenancePins) -> Change:
    """A pin the lock has and this install lacks: 'not checked' when its check could not run, else an error."""
    if field in new.unchecked:
        return change("provenance_unchecked", f"{what} could not be checked in this install (unavailable); the "
                      f"lock has {quoted(old_value)}", severity="warning")
    return change("provenance_changed", f"{what} is gone (the lock has {quoted(old_value)})")


def _package(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if old.package == new.package or new.package is None:
        return None
    return change("provenance_changed", f"package {quoted(old.package)} -> {quoted(new.package)}")


def _version(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if same_version:
        return None
    return change("provenance_changed", f"version {quoted(old.version)} -> {quoted(new.version)}: the lock pins "
                  "another release", severity="warning")


def _integrity(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if old.integrity is None or old.integrity == new.integrity:
        return None
    if new.integrity is None:
        return _lost("integrity", "the integrity", old.integrity, new)
    if not same_version:
        return None  # another release has another integrity; the version change says so
    return change("provenance_changed", f"integrity differs for the same version {quoted(old.version)}: "
                  f"{quoted(old.integrity)} -> {quoted(new.integrity)}")


def _file_hashes(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if not old.sha256 or old.sha256 == new.sha256 or not same_version:
        return None
    if not new.sha256:
        return _lost("sha256", "the file hashes", ", ".join(sorted(old.sha256)), new)
    differing = sorted(f for f in old.sha256.keys() & new.sha256.keys() if old.sha256[f] != new.sha256[f])
    if differing:
        return change("provenance_changed", f"sha256 differs for the same version {quoted(old.version)}: "
                      f"{', '.join(quoted(f) for f in differing)}")
    return change("provenance_changed", f"other files installed: {', '.join(quoted(f) for f in sorted(old.sha256))}"
                  f" -> {', '.join(quoted(f) for f in sorted(new.sha256))}", severity="warning")


def _publisher(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if old.publisher is None or old.publisher == new.publisher:
        return None
    if new.publisher is None:
        return _lost("attestation_digest", "the publisher", old.publisher, new)
    return change("provenance_changed", f"publisher {quoted(old.publisher)} -> {quoted(new.publisher)}")


def _source_repository(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if old.source_repository is None or old.source_repository == new.source_repository:
        return None
    if new.source_repository is None:
        return _lost("attestation_digest", "the source repository", old.source_repository, new)
    return change("provenance_changed", f"source repository {quoted(old.source_repository)} -> "
                  f"{quoted(new.source_repository)}")


def _workflow(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if old.workflow is None or old.workflow == new.workflow:
        return None
    if new.workflow is None:
        return _lost("attestation_digest", "the build workflow", old.workflow, new)
    # Another release is built from another tag: only the workflow file (before @ref) must stay the same.
    if not same_version and old.workflow.split("@")[0] == new.workflow.split("@")[0]:
        return None
    return change("provenance_changed", f"built by another workflow: {quoted(old.workflow)} -> "
                  f"{quoted(new.workflow)}")


def _signature(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if old.signature_keyid is None or old.signature_keyid == new.signature_keyid:
        return None
    if new.signature_keyid is None:
        return _lost("signature_keyid", "the registry signature", old.signature_keyid, new)
    return change("provenance_changed", f"signed by another registry key: {quoted(old.signature_keyid)} -> "
                  f"{quoted(new.signature_keyid)}", severity="warning")


def _attestation(old: ProvenancePins, new: ProvenancePins, same_version: bool) -> Change | None:
    if old.attestation_digest is None or old.attestation_digest == new.attestation_digest:
        return None
    if new.attestation_digest is None:
        return _lost("attestation_digest", "the provenance attestation", old.attestation_digest, new)
    return change("provenance_changed", f"attestation {quoted(old.attestation_digest)} -> "
                  f"{quoted(new.attestation_digest)}", severity="warning" if same_version else "info")


def _install_changes(old: LockedInstall | None, new: LockedInstall | None) -> list[Change]:
    if old is None or new is None:
        return []
    out = []
    if old.command_sha256 != new.command_sha256:
        out.append(change("provenance_changed", "the launch command changed (commands are stored as hashes)",
                          severity="warning"))
    if old.runtime_image != new.runtime_image:
        out.append(change("provenance_changed", f"runtime image {quoted(old.runtime_image)} -> "
                          f"{quoted(new.runtime_image)}", severity="info"))
    return out
