"""Agent Plugins 1.0.0 packages (a folder with plugin.json, optional mcp.json and skills/): the offline envelope
check (envelope.py, with mcp-vet 0.15's rule ids and tiers) and the plan of which declared servers the sandbox can
run (servers.py). Nothing here starts a container."""
