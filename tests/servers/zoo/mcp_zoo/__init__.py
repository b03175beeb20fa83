"""Test MCP servers for mcp-sandbox (standard library only, so they install in seconds)."""
