"""Installed by mcp-sandbox's install tests; its setup.py writes only inside its own folder."""


def main() -> None:
    print("mcp-zoo-setup-quiet is installed")
