"""mcp-sandbox, container side as seen from the host: engine, images, install, run policy, attach, teardown."""
