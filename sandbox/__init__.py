"""mcp-sandbox, container side as seen from the host: `core` (engine, sessions, images, teardown), `install` (the
install phase and its proxy), `run` (the run phase: policy, server, attach, sink, canaries, observation)."""

from importlib import metadata

# The one version: the package metadata (pyproject.toml). The scanner and the image tags both read it here.
__version__ = metadata.version("mcp-sandbox")
