"""mcp-sandbox, host side: CLI, scan pipeline, rules, probes, provenance, registry, lock, signing and reports."""

from sandbox import __version__

__all__ = ["__version__"]
