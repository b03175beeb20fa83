"""A version or bound of a package's own text past Python's 4,300-digit limit on int parsing (`Version("1" * 5000)`
raises a plain ValueError, not InvalidVersion): read as unparseable where a version is read, never raised through a
scan's stage (npm accepts such a version in a local tarball's package.json)."""

from __future__ import annotations

from pathlib import Path

from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.provenance.versions import pypi_could_resolve, pypi_normalise
from scanner.vet.manifests import _python_lock_version, majors_of_spec

HUGE = "1" * 5_000


def test_a_huge_version_is_no_version() -> None:
    assert pypi_normalise(HUGE) is None and pypi_normalise("1.0") == "1.0"  # near miss: a real one
    assert ecosystem_named("pypi").version_key(HUGE) is None
    assert pypi_could_resolve(">=1", HUGE) is True and pypi_could_resolve(">=" + HUGE, "1.0") is True
    assert pypi_could_resolve(">=2", "1.0") is False  # near miss: a spec that excludes it


def test_a_huge_sdk_bound_or_locked_version_admits_no_major(tmp_path: Path) -> None:
    assert majors_of_spec(">=" + HUGE) == set() and majors_of_spec(">=2,<3") == {"2"}
    lock = tmp_path / "uv.lock"
    lock.write_text(f'[[package]]\nname = "mcp"\nversion = "{HUGE}"\n', encoding="utf-8")
    assert _python_lock_version(lock) == set()
