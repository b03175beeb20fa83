"""`--upstream-proxy`: one definition for every command that installs a target (scan, lock TARGET, init-fixtures)."""

from __future__ import annotations

import os
from typing import Any

import typer

from sandbox.upstream_proxy import UpstreamProxy, resolve_upstream_proxy

HELP = ("Proxy the install phase chains to, for registries reachable only through a corporate proxy: "
        "http://[USER:PASSWORD@]HOST:PORT (a loopback HOST means the Docker host). Default: the host's HTTPS_PROXY, "
        "else HTTP_PROXY; allowlisted hosts in NO_PROXY go direct. `none`: go direct. Credentials are safer in the "
        "environment than on a command line.")


def upstream_proxy_option() -> Any:
    """A fresh typer option (each command gets its own)."""
    return typer.Option(None, "--upstream-proxy", metavar="URL|none", help=HELP)


def upstream_from_cli(flag: str | None) -> UpstreamProxy | None:
    """The flag, else the host's proxy variables; a bad value is exit 2 with one line (never the credentials).
    Called only when a live install will happen, so an unusable HTTPS_PROXY never breaks an offline command."""
    return resolve_upstream_proxy(flag, os.environ)
