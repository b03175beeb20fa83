"""What the conformance stage is asked to check (`--spec-version` / `--spec`), apart from the report's models so that
the CLI reads the flags (before its head start begins) without building them."""

from __future__ import annotations

from dataclasses import dataclass

CURRENT_REVISION = "2025-11-25"  # the default: only json-schema-dialect runs, at info
NEXT_REVISION = "2026-07-28"
REVISIONS = (CURRENT_REVISION, NEXT_REVISION)


@dataclass(frozen=True)
class ConformanceOptions:
    """`--spec-version REVISION` (the revision's core checks) or `--spec REVISION` (`full`: every check)."""

    spec_version: str = CURRENT_REVISION
    full: bool = False

    @property
    def probes_wire(self) -> bool:
        """Whether a fresh server is started and probed over raw JSON-RPC (any revision after the default)."""
        return self.spec_version != CURRENT_REVISION
