"""The near miss of pypi-setup-marker: a legacy setup.py that runs code at install time (so I5 says so) but writes
only inside its own source folder, never to /tmp or HOME (so no I11)."""

import pathlib

from setuptools import setup

pathlib.Path(__file__).with_name("setup-ran").write_text("inside my own folder\n", encoding="utf-8")

setup(
    name="mcp-zoo-setup-quiet",
    version="0.1.0",
    description="Test package for mcp-sandbox: its setup.py writes only inside its own folder.",
    packages=["mcp_zoo_setup_quiet"],
    entry_points={"console_scripts": ["zoo-setup-quiet = mcp_zoo_setup_quiet:main"]},
)
