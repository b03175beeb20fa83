"""The source stage without Docker: the in-memory tar reader (untrusted names, links, bounds), which files are the
package's own (npm folder, PyPI RECORD), vet over files in memory, and the V1 mapping with its SARIF location."""

from __future__ import annotations

import io
import tarfile

from sandbox.core.image_files import ImageFiles, ReadLimits, read_tar, safe_member_path
from scanner.pipeline.source_scan import dist_info_names, own_npm_file, record_paths, site_packages
from scanner.report.model import Report, TargetInfo
from scanner.report.sarif import PACKAGE_ROOT, to_sarif
from scanner.rules.source_spec import source_findings
from scanner.vet.sources import vet_sources


def _tar(members: list[tuple[str, bytes | None]]) -> list[bytes]:
    """A get_archive-like stream: (name, bytes) files, (name, None) a symlink to /etc/passwd."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            if data is None:
                info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    raw = buffer.getvalue()
    return [raw[i:i + 4096] for i in range(0, len(raw), 4096)]


def _read(members: list[tuple[str, bytes | None]], limits: ReadLimits = ReadLimits(max_file_bytes=1000),
          prefix: str = "@scope/pkg") -> ImageFiles:
    out = ImageFiles()
    read_tar(_tar(members), lambda path: True, limits, out, prefix)
    return out


def test_member_names_that_climb_out_or_are_absolute_are_never_kept() -> None:
    assert safe_member_path("pkg/dist/index.js") == "dist/index.js"
    assert safe_member_path("pkg") == ""
    assert safe_member_path("pkg/../../etc/passwd") is None and safe_member_path("/etc/passwd") is None
    out = _read([("pkg/dist/index.js", b"x"), ("pkg/../evil.js", b"y"), ("pkg/link.js", None)])
    assert out.files == {"@scope/pkg/dist/index.js": b"x"}


def test_the_read_is_bounded_per_file_and_in_total() -> None:
    out = _read([("pkg/big.js", b"a" * 2000), ("pkg/small.js", b"b")])
    assert out.too_big == ["@scope/pkg/big.js"] and list(out.files) == ["@scope/pkg/small.js"] and out.cut is None
    out = _read([(f"pkg/{n}.js", b"c") for n in range(5)], ReadLimits(max_file_bytes=0, max_files=3))
    assert len(out.files) == 3 and out.cut is not None
    out = _read([("pkg/a.js", b"d" * 50_000)], ReadLimits(max_file_bytes=0, max_stream_bytes=10_000))
    assert out.files == {} and out.cut is not None and "over 10000 bytes" in out.cut


def test_a_single_file_read_is_named_by_its_prefix() -> None:
    assert _read([("server.py", b"x")], prefix="server.py").files == {"server.py": b"x"}


def test_the_package_files_are_its_own_not_its_nested_dependencies() -> None:
    assert own_npm_file("@scope/pkg/dist/index.js") and own_npm_file("pkg/src/a.ts")
    assert not own_npm_file("pkg/node_modules/dep/index.js") and not own_npm_file("pkg/README.md")


def test_a_record_lists_the_package_files_and_nothing_outside_site_packages() -> None:
    record = (b"mcp_zoo/__init__.py,sha256=x,10\nmcp_zoo/revisions.py,sha256=y,20\n"
              b"mcp_zoo-0.1.0.dist-info/RECORD,,\n../../../bin/zoo-plain,sha256=z,3\n/etc/x.py,,\n"
              b"mcp_zoo/__pycache__/revisions.cpython-313.pyc,,\n")
    assert record_paths(record) == ["mcp_zoo/__init__.py", "mcp_zoo/revisions.py"]
    assert dist_info_names("Mcp-Zoo", "0.1.0")[0] == "mcp_zoo-0.1.0.dist-info"
    assert site_packages({"python": "3.13.1"}) == "/opt/server/venv/lib/python3.13/site-packages"
    assert site_packages({}) is None


DIRTY_JS = b'server.setRequestHandler("ping", () => ({}));\nthrow new McpError(-32002, "Resource not found");\n'
CLEAN_JS = b'// -32002 ping\napp.get("/ping", (req, res) => res.send("ok"));\nconst code = -32602;\n'


def test_files_in_memory_are_vetted_and_mapped_to_v1_with_a_physical_location() -> None:
    result = vet_sources({"@scope/pkg/dist/index.js": DIRTY_JS, "@scope/pkg/dist/clean.js": CLEAN_JS})
    assert result.files_scanned == 2
    assert {(f.file, f.rule_id) for f in result.findings} >= {("@scope/pkg/dist/index.js", "ERROR_CODE_32002")}
    assert all(f.file == "@scope/pkg/dist/index.js" for f in result.findings)
    findings = source_findings(result.findings)
    code = next(f for f in findings if f.message.startswith("ERROR_CODE_32002"))
    assert code.rule_id == "V1" and code.category == "conformance" and code.severity == "warning"
    assert code.location is not None and (code.location.path, code.location.line) == ("@scope/pkg/dist/index.js", 2)
    report = Report(target=TargetInfo(kind="npm", name="@scope/pkg", requested="npm:@scope/pkg"), findings=findings)
    result_sarif = next(r for r in to_sarif(report)["runs"][0]["results"]
                        if r["message"]["text"].startswith("ERROR_CODE_32002"))
    physical = result_sarif["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "@scope/pkg/dist/index.js", "uriBaseId": PACKAGE_ROOT}
    assert physical["region"]["startLine"] == 2 and physical["region"]["startColumn"] == code.location.column


def test_a_minified_bundle_is_noted_not_vetted() -> None:
    bundle = b"var a=" + b"1+" * 4000 + b"1;throw new McpError(-32002,'x');\n"
    result = vet_sources({"pkg/dist/bundle.min.js": bundle})
    assert result.files_scanned == 0 and result.findings == [] and "minified" in result.notes[0]
