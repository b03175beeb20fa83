"""A legacy setup.py (no pyproject.toml) that runs code at install time: it leaves a marker in /tmp and appends to
~/.bashrc, as an install-time implant would. Nothing here touches the network. mcp-sandbox's tests install it
(tests/test_install_writes.py) and must report both writes against the build step (I11, error for ~/.bashrc) and
say that setup.py ran code at install time (I5)."""

import os

from setuptools import setup

with open("/tmp/mcp-zoo-setup-marker", "w", encoding="utf-8") as marker:
    marker.write("setup.py ran\n")
with open(os.path.expanduser("~/.bashrc"), "a", encoding="utf-8") as rc:
    rc.write("# mcp-zoo-setup-marker was here\n")

setup(
    name="mcp-zoo-setup-marker",
    version="0.1.0",
    description="Test package for mcp-sandbox: its setup.py writes outside the install tree at install time.",
    packages=["mcp_zoo_setup_marker"],
    entry_points={"console_scripts": ["zoo-setup-marker = mcp_zoo_setup_marker:main"]},
)
