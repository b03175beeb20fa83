"""A legacy setup.py that runs code at install time: it leaves a marker in /tmp and appends to
~/.bashrc, as an install-time implant would. Nothing here touches the network. mcp-sandbox's tests install it
(tests/test_install_writes.py) and must report both writes against the build step (I11, error for ~/.bashrc) and
say that setup.py ran code at install time (I5)."""

import os

from setuptools import setup

with open("/tmp/mcp-zoo-setup-marker", "w", encoding="utf-8") as marker:
    marker.write("setup.py ran\n")
with open(os.path.expanduser("~/.bashrc"), "a", encoding="utf-8") as rc:
    rc.write("# mcp-zoo-setup-marker was here\n")

setup()  # the metadata is in pyproject.toml
