"""`mcp-sandbox vet`: the offline source scan for the MCP 2026-07-28 revision (mcp-vet's rules, in Python). `vet_tree`
is the one entry point, for the CLI and (later) the scan's in-image stage: it walks a root, parses each file and
returns every finding, every suppression and a note for everything skipped or unreadable."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scanner.vet.model import VetResult
from scanner.vet.walk import DEFAULT_MAX_KB, WalkOptions


@dataclass(frozen=True)
class VetOptions:
    min_confidence: str = "low"
    max_file_kb: int = DEFAULT_MAX_KB
    include_built: bool = False
    ignore: tuple[str, ...] = ()


def vet_tree(root: Path, options: VetOptions = VetOptions()) -> VetResult:
    """Vet every source file under `root` (or `root` itself, a file). Paths in the result are relative to `root`
    (to its folder for a file root)."""
    from scanner.vet.tree import run

    return run(root, options)


__all__ = ["VetOptions", "VetResult", "vet_tree"]
