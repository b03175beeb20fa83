"""mcp-sandbox, container side as seen from the host: `core` (engine, sessions, images, teardown), `install` (the
install phase and its proxy), `run` (the run phase: policy, server, attach, sink, canaries, observation)."""

from typing import Any


def __getattr__(name: str) -> Any:
    """`__version__`, read on first use: the one version is the package metadata (pyproject.toml), which the scanner
    and the image tags both read here. Reading it costs a file lookup, so commands that never show it (`--help`)
    don't pay for it."""
    if name == "__version__":
        from sandbox.version import installed_version

        version = globals()["__version__"] = installed_version("mcp-sandbox")
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
