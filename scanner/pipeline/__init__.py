"""The stages of one scan: target, resolve, install, run, talk MCP, probe, lint, report, tear down."""
