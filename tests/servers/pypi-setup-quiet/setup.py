"""The near miss of pypi-setup-marker: a legacy setup.py that runs code at install time (so I5 says so) but writes
only inside its own source folder, never to /tmp or HOME (so no I11)."""

import pathlib

from setuptools import setup

pathlib.Path(__file__).with_name("setup-ran").write_text("inside my own folder\n", encoding="utf-8")

setup()  # the metadata is in pyproject.toml
