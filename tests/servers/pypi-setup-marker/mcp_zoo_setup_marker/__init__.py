"""Installed by mcp-sandbox's install tests; its setup.py is what they watch."""


def main() -> None:
    print("mcp-zoo-setup-marker is installed")
