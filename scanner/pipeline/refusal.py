"""Stage 1, after parsing the target: refuse a known-bad package before anything is resolved or installed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scanner.provenance.known_bad import known_bad_finding

if TYPE_CHECKING:  # the CLI asks before its head start begins: a target not on the list imports no report model
    from scanner.config import Config
    from scanner.pipeline.targets import Target
    from scanner.report.model import Finding


def known_bad_refusal(target: Target, config: Config) -> Finding | None:
    """The finding that refuses a registry target on the known-bad list (unless the config disables or ignores it);
    None for a local target or one not on the list."""
    if target.path is not None:
        return None
    refused = known_bad_finding(target.ecosystem, target.name, target.version_spec or "")
    return refused if refused is not None and config.keeps(refused) else None
