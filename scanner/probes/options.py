"""What the probe phase is asked to do (`scan`'s probe flags), apart from the runner (which imports mcp) so that
what starts a server needs no MCP client."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the fixtures' models are imported where they are read (`scan --fixtures`)
    from scanner.probes.fixtures import FixtureFile

MAX_CALLS = 500


@dataclass(frozen=True)
class ProbeOptions:
    enabled: bool = True
    no_destructive: bool = False
    error_probes: bool = True
    fixtures: FixtureFile | None = None
    include_responses: bool = False
    timeout: float = 30.0
    max_calls: int = MAX_CALLS
    observer: bool = True  # look after each call through the in-sandbox observer (docs/observer.md); False: by exec
