"""mcp-sandbox, host side: CLI, scan pipeline, rules, probes, provenance, registry, lock, signing and reports."""

from typing import Any

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    """`__version__` is sandbox's (the package metadata), read when first used."""
    if name == "__version__":
        import sandbox

        return sandbox.__version__
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
