"""mcp-sandbox, host side: CLI, rules, probes, provenance, lock, signing, score and reports."""

__version__ = "0.1.0"
