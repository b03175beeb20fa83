"""The head start's first work for a package scan: the target resolved as `run_scan` resolves it (a registry
target's exact version asked of its registry), apart from scanner/pipeline/early_server.py so that the CLI imports
only this before it submits the resolution, and the registry's answer is awaited while it imports what starts the
server (scanner/pipeline/head_start.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx

from sandbox.install.installers import install_allowlist
from scanner.pipeline.install_request import install_request
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.scan_options import ScanOptions
from scanner.pipeline.targets import parse_target
from scanner.registry import endpoints as _endpoints  # noqa: F401 - ScanOptions.registry_endpoints imports it

if TYPE_CHECKING:
    from sandbox.install.request import InstallRequest


def _quiet(_: str) -> None:
    """No spinner runs yet: the head start reports no progress."""


def resolve(options: ScanOptions, http: httpx.Client, clock: PhaseClock) -> InstallRequest:
    """What the sandbox installs, as `run_scan` resolves it (its errors raised where the scan asks for it)."""
    target = parse_target(options.target)
    with clock.phase("resolve"):
        request = install_request(target, options, options.registry_endpoints(), http, _quiet)
    install_allowlist(request)  # a mirror the install could not reach: refused before anything starts
    return request
