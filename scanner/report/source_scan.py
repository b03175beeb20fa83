"""The report's source-stage records: where a V1 finding is in the installed package, and what the stage read
(scanner/pipeline/source_scan.py fills them)."""

from __future__ import annotations

from pydantic import Field

from scanner.report.base import ReportModel as _Model


class SourceLocation(_Model):
    """Where a source-scan finding (V1) is: a file of the installed package, by its path relative to the install root
    (`@scope/pkg/dist/index.js`, `mcp_zoo/server.py`), and its 1-based line and columns."""

    path: str = Field(description="Relative to the install root (node_modules/ or site-packages/): the package's "
                      "own name first. Untrusted text, escaped.")
    line: int
    column: int
    end_column: int | None = None


class SourceScanInfo(_Model):
    """The source stage: `vet` over the installed package's own files (built output included), read out of the
    installed image. Its findings are V1 (category conformance: never the verdict)."""

    files_read: int = Field(description="Source files read out of the image.")
    files_scanned: int = Field(description="Files parsed and vetted (minified bundles and unparsable files are not).")
    dependencies: bool = Field(default=False, description="The dependencies' files were read too (--vet-dependencies).")
    suppressed: list[str] = Field(default_factory=list, description="Findings an inline mcp-vet directive "
                                  "silenced: `path:line RULE (directive)`.")
    notes: list[str] = Field(default_factory=list, description="What was skipped, cut or not vetted, and why.")
    partial: bool = Field(default=False, description="A read bound cut the read short: the files are a partial set.")
