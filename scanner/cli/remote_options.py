"""The `--url` door's options (`scan`, `lock`), declared once: a command takes `remote: RemoteFlags` and typer sees
--url, --header, --header-env and --allow-writes in its place."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_type_hints

import typer

HELP = {
    "url": "Scan a remote Streamable HTTP server at this URL instead of a TARGET. It is NOT sandboxed: only tools "
           "annotated read-only are called (see --allow-writes). The URL is never printed or stored: the scheme and "
           "host are, with a hash of scheme, host, port and path.",
    "header": "With --url: send this non-secret header, 'NAME: VALUE' (repeat).",
    "header-env": "With --url: send header NAME with the secret value of the environment variable VAR (repeat); "
                  "refused over plain http:// unless the host is loopback. Echoed values read \\[redacted].",
    "allow-writes": "With --url: also call tools not annotated read-only (someone's live service: their writes "
                    "are real). Error probes still go only to read-only tools.",
}


@dataclass(frozen=True)
class RemoteFlags:
    url: str | None = None
    headers: list[str] = field(default_factory=list)
    header_envs: list[str] = field(default_factory=list)
    allow_writes: bool = False

    def given_without_url(self) -> str | None:
        """The first --url-only flag given without --url, if any."""
        if self.url is not None:
            return None
        return next((flag for flag, value in (("--header", self.headers), ("--header-env", self.header_envs),
                                              ("--allow-writes", self.allow_writes)) if value), None)


def _parameters(writes: bool) -> dict[str, inspect.Parameter]:
    keyword = inspect.Parameter.KEYWORD_ONLY
    found = {
        "url": inspect.Parameter("url", keyword, annotation=str | None,
                                 default=typer.Option(None, "--url", metavar="URL", help=HELP["url"])),
        "headers": inspect.Parameter("remote_headers", keyword, annotation=list[str], default=typer.Option(
            [], "--header", metavar="'NAME: VALUE'", help=HELP["header"])),
        "header_envs": inspect.Parameter("remote_header_envs", keyword, annotation=list[str], default=typer.Option(
            [], "--header-env", metavar="NAME=VAR", help=HELP["header-env"])),
    }
    if writes:
        found["allow_writes"] = inspect.Parameter("allow_writes", keyword, annotation=bool, default=typer.Option(
            False, "--allow-writes", help=HELP["allow-writes"]))
    return found


def with_remote_options(writes: bool = True) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Put the remote options where the command's `remote` parameter is (`writes`: with --allow-writes)."""
    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        shared = _parameters(writes)

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> None:
            command(remote=RemoteFlags(**{name: kwargs.pop(p.name) for name, p in shared.items()}), **kwargs)

        parameters: list[inspect.Parameter] = []
        for parameter in signature.parameters.values():
            parameters += (list(shared.values()) if parameter.name == "remote"
                           else [parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)])
        wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        hints = {k: v for k, v in get_type_hints(command).items() if k != "remote"}
        wrapper.__annotations__ = {**hints, **{p.name: p.annotation for p in shared.values()}}
        return wrapper

    return decorate
