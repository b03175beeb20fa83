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


def test_a_huge_npm_version_or_range_is_no_version() -> None:
    """npm's grammar too: a config's `npx -y pkg@<5,000 digits>.0.0` stopped check-config with an internal error."""
    from scanner.provenance.launch import analyse_launch
    from scanner.provenance.versions import npm_could_resolve, npm_normalise

    assert npm_normalise(HUGE + ".0.0") is None and npm_normalise("1.0.0") == "1.0.0"
    assert npm_normalise("1.0.0-" + HUGE) is None
    assert ecosystem_named("npm").version_key(HUGE + ".0.0") is None
    assert npm_could_resolve("^" + HUGE + ".0.0", "1.0.16") is True  # unreadable: it could be anything
    assert npm_could_resolve("1.0.0", HUGE + ".0.0") is True
    assert npm_could_resolve("^2.0.0", "1.0.16") is False  # near miss
    rules = {f.rule_id for f in analyse_launch("npx", ["-y", f"postmark-mcp@{HUGE}.0.0"]).findings}
    assert rules == {"I1", "I8"}


def test_a_huge_npm_prerelease_in_a_range_is_no_range() -> None:
    from scanner.provenance.versions import npm_could_resolve

    for spec in ("^1.0.0-", ">1.0.0-", "<1.0.0-", "~1.0.0-", "1.0.0-"):
        assert npm_could_resolve(spec + HUGE, "1.0.16") is True, spec
    assert npm_could_resolve("1.0.0-" + HUGE + " - 2.0.0", "1.0.16") is True
