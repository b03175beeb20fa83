"""The `mcp-sandbox` command line: `app` (the typer app and `main`), one module per command group, shared options."""
