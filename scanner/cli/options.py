"""`--upstream-proxy`: one definition for every command that installs a target (scan, lock TARGET, init-fixtures)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

import typer

from sandbox.install.proxy.upstream import FLAG, UpstreamProxy, UpstreamProxyError, resolve_upstream_proxy
from sandbox.core.untrusted import escape_for_terminal

HELP = ("Proxy the install phase chains to, for registries reachable only through a corporate proxy: "
        "http://[USER:PASSWORD@]HOST:PORT (a loopback HOST means the Docker host). Default: the host's HTTPS_PROXY, "
        "else HTTP_PROXY (ignored, with a warning, when it is not such a URL); allowlisted hosts in NO_PROXY go "
        "direct. `none`: go direct. Credentials are safer in the environment than on a command line.")


def upstream_proxy_option() -> Any:
    """A fresh typer option (each command gets its own)."""
    return typer.Option(None, "--upstream-proxy", metavar="URL|none", help=HELP)


def _warn(message: str) -> None:
    print(escape_for_terminal(" ".join(message.split()), limit=1_000), file=sys.stderr)


def upstream_from_cli(flag: str | None, environ: Mapping[str, str] | None = None,
                      warn: Callable[[str], None] = _warn) -> UpstreamProxy | None:
    """The flag, else the host's proxy variables.

    A bad `--upstream-proxy` is exit 2 with one line (never the credentials): the user asked for it. A proxy variable
    the install proxy cannot chain to (`https://…`, `socks5://…`, no port) is the host's general setting, which many
    scans never need (a cached install, a host that reaches the registry directly): it is ignored with one warning
    line saying why, and the install goes direct; `--upstream-proxy none` silences it."""
    environ = os.environ if environ is None else environ
    try:
        return resolve_upstream_proxy(flag, environ)
    except UpstreamProxyError as exc:
        if not exc.from_environment:
            raise
        where = f"{exc.source} {exc.shown!r}" if exc.shown else exc.source
        warn(f"warning: ignoring {where} for the install phase: {exc.problem}; the install proxy reaches the "
             f"registry directly (give {FLAG} http://HOST:PORT to chain to a proxy, or {FLAG} none to silence this)")
        return None
