"""The source stage in a real sandbox: the zoo (a folder target, installed into the venv's site-packages) has a
-32002 literal in an error-code position and initialize handlers in tests/servers/zoo/mcp_zoo/revisions.py, read out
of the installed image through the archive API; the report's V1 findings name them by package-relative path, and the
SARIF has physical locations for them. The near miss: a package whose only source mentions -32002 and `ping` in a
comment, a string and an unrelated route, which must stay clean. What a scan read out of the image is kept by the
image's id (sandbox/core/image_reads.py), in a store of this module's own: the next scan of the image reads none of
it again, and finds the same."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from sandbox.core.image_reads import FILE_NAME, ReadStore
from sandbox.core.session import SandboxSession
from scanner.pipeline import source_scan

from scanner.pipeline.inventory import Timeouts
from scanner.pipeline.scan import ScanOptions, run_scan
from scanner.probes.runner import ProbeOptions
from scanner.report.model import Report
from scanner.report.sarif import PACKAGE_ROOT, to_sarif
from tests.sandbox_helpers import ZOO

pytestmark = pytest.mark.docker

CLEAN_MODULE = '''"""A quiet server: reads stdin and answers nothing."""
import sys

# -32002 was the old resource-not-found code; ping is a method name.
ROUTES = {"/ping": "health"}
NOTE = "answer -32602 where -32002 was used"


def main() -> None:
    for _line in sys.stdin:
        pass
'''
QUIET_STARTUP = 2  # the quiet server's scan waits the client's fixed 10 s discover, then this: the source stage reads
# the image beside the run, whatever the run does (a server that answered would be an initialize handler of its own)
CLEAN_PROJECT = '''[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "quiet-source"
version = "0.1.0"

[project.scripts]
quiet-source = "quiet_source:main"

[tool.setuptools]
py-modules = ["quiet_source"]
'''


def _scan(target: Path, command: str, startup: float = 20) -> Report:
    return run_scan(ScanOptions(target=str(target), command=command, timeouts=Timeouts(startup=startup, request=10),
                                probes=ProbeOptions(enabled=False)))


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This module's own state folder (the reads kept from its scans), for every test of the module."""
    folder = tmp_path_factory.mktemp("state")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_SANDBOX_STATE_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def zoo(state: Path) -> Report:
    return _scan(ZOO, "zoo-revision-legacy")


class Counted:
    """The engine's own container creations and archive reads, only counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.roles: list[str] = []
        self.reads: list[str] = []
        create, archive = SandboxSession.create_container, docker.APIClient.get_archive

        def counted_create(session: SandboxSession, role: str, **kwargs: Any) -> str:
            self.roles.append(role)
            return create(session, role, **kwargs)

        def counted_archive(api: docker.APIClient, container: str, path: str, *args: Any, **kwargs: Any) -> Any:
            self.reads.append(path)
            return archive(api, container, path, *args, **kwargs)

        monkeypatch.setattr(SandboxSession, "create_container", counted_create)
        monkeypatch.setattr(docker.APIClient, "get_archive", counted_archive)


def test_the_installed_files_are_vetted_with_package_relative_paths(zoo: Report) -> None:
    assert zoo.source is not None and zoo.source.files_scanned >= 10 and not zoo.source.partial
    assert not [s for s in zoo.skipped if s.stage == "source"]
    found = {(f.location.path, f.location.line, f.location.column): f for f in zoo.findings
             if f.rule_id == "V1" and f.location is not None}
    error_code = found[("mcp_zoo/revisions.py", 125, 53)]
    assert error_code.message.startswith("ERROR_CODE_32002 (BREAKING, high confidence) at mcp_zoo/revisions.py:125:53")
    assert error_code.severity == "warning" and error_code.category == "conformance"
    assert "-32002" in (error_code.evidence or "")
    assert any(m.message.startswith("LOGGING_CAP (DEPRECATED") and m.severity == "info" for m in found.values())
    assert all(path.startswith("mcp_zoo/") for path, _, _ in found)  # the package's own files, no dependency's


def test_a_cached_install_is_vetted_as_the_first(zoo: Report) -> None:
    """A cached install's lookup reads no manifest: the stage takes the Python install description (kept from the
    module's first scan, which read it out of the image) and finds what that scan found."""
    again = _scan(ZOO, "zoo-revision-legacy")
    assert again.install is not None and again.install.cached
    assert again.source is not None and zoo.source is not None
    assert again.source.files_read == zoo.source.files_read and again.source.files_scanned >= 10
    assert [f.message for f in again.findings if f.rule_id == "V1"] == [f.message for f in zoo.findings
                                                                        if f.rule_id == "V1"]


def test_provenance_and_the_source_stage_read_a_cached_install_through_one_container(
        zoo: Report, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With no read kept: one reader container for both stages, the install manifest read out of it once, and the
    container removed before teardown (which then finds only the sink and the server)."""
    monkeypatch.setenv("MCP_SANDBOX_STATE_DIR", str(tmp_path))
    counted = Counted(monkeypatch)
    again = _scan(ZOO, "zoo-revision-legacy")
    assert again.install is not None and again.install.cached
    assert counted.roles.count("read-source") == 1 and "read-manifest" not in counted.roles, counted.roles
    assert counted.reads.count("/opt/server/install.json") == 1, counted.reads
    _same_as_the_first(again, zoo)
    teardown = again.sandbox.teardown
    assert teardown is not None and teardown.complete and len(teardown.removed) == 2  # the sink and the server
    assert (tmp_path / FILE_NAME).is_file()  # and kept for the next scan


def test_the_next_scan_of_the_image_reads_nothing_out_of_it_again(zoo: Report, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    """The reads the module's first scan kept: no reader container, no archive read, the same findings."""
    counted = Counted(monkeypatch)
    again = _scan(ZOO, "zoo-revision-legacy")
    assert counted.roles.count("read-source") == 0 and counted.reads == [], (counted.roles, counted.reads)
    _same_as_the_first(again, zoo)


def test_a_read_made_differently_reads_the_image_again(zoo: Report, monkeypatch: pytest.MonkeyPatch) -> None:
    """The near miss: a per-file bound of the source read other than the kept read's is another read, made through
    the image (the manifest, read the same way, is still taken from the store)."""
    monkeypatch.setattr(source_scan, "DEFAULT_MAX_KB", source_scan.DEFAULT_MAX_KB + 1)
    counted = Counted(monkeypatch)
    again = _scan(ZOO, "zoo-revision-legacy")
    assert counted.roles.count("read-source") == 1 and "/opt/server/install.json" not in counted.reads, counted.reads
    _same_as_the_first(again, zoo)


def _same_as_the_first(again: Report, zoo: Report) -> None:
    assert again.source is not None and zoo.source is not None and again.source.files_read == zoo.source.files_read
    assert [f.message for f in again.findings if f.rule_id == "V1"] == [f.message for f in zoo.findings
                                                                        if f.rule_id == "V1"]
    assert again.provenance is not None and zoo.provenance is not None  # the manifest reached provenance too
    assert again.provenance.dependency_tree == zoo.provenance.dependency_tree
    assert [p.name for p in again.provenance.packages] == [p.name for p in zoo.provenance.packages] == ["mcp-zoo"]


def test_a_kept_read_that_does_not_add_up_is_read_again(zoo: Report, monkeypatch: pytest.MonkeyPatch,
                                                        state: Path) -> None:
    """A kept read whose files were lost (its blob rows gone) is as if absent: the image is read again."""
    store = ReadStore(state / FILE_NAME)
    with sqlite3.connect(store.path) as connection:
        connection.execute("DELETE FROM blobs WHERE CAST(name AS TEXT) LIKE 'file:%'")
    counted = Counted(monkeypatch)
    again = _scan(ZOO, "zoo-revision-legacy")
    assert counted.roles.count("read-source") == 1, counted.roles
    _same_as_the_first(again, zoo)


def test_the_source_findings_never_change_the_verdict(zoo: Report) -> None:
    security = [f for f in zoo.findings if f.category == "security"]
    assert zoo.verdict == ("pass" if not security else zoo.verdict)
    assert all(f.category == "conformance" for f in zoo.findings if f.rule_id == "V1")


def test_the_sarif_places_each_source_finding_on_its_line(zoo: Report) -> None:
    run = to_sarif(zoo)["runs"][0]
    located = [r["locations"][0]["physicalLocation"] for r in run["results"] if r["ruleId"] == "V1"]
    assert {"artifactLocation": {"uri": "mcp_zoo/revisions.py", "uriBaseId": PACKAGE_ROOT},
            "region": {"startLine": 125, "startColumn": 53, "endColumn": 59}} in located
    assert PACKAGE_ROOT in run["originalUriBaseIds"]


def test_a_package_whose_source_only_mentions_the_codes_stays_clean(tmp_path: Path) -> None:
    (tmp_path / "quiet_source.py").write_text(CLEAN_MODULE)
    (tmp_path / "pyproject.toml").write_text(CLEAN_PROJECT)
    report = _scan(tmp_path, "quiet-source", startup=QUIET_STARTUP)
    assert report.source is not None and report.source.files_scanned == 1
    assert [f for f in report.findings if f.rule_id == "V1"] == []
    assert not [s for s in report.skipped if s.stage == "source"]
