"""The options more than one command takes, defined once: the report outputs and gates of `check`, `scan`,
`check-config` (and `lock --check` where they apply), and `--upstream-proxy` for every command that installs a
target (scan, lock TARGET, init-fixtures). Each function returns a fresh typer option (each command gets its own)."""

from __future__ import annotations

import functools
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, get_type_hints

import typer

from scanner.cli.output import ReportOutputs
from sandbox.core.untrusted import escape_for_terminal

if TYPE_CHECKING:
    from sandbox.install.proxy.upstream import UpstreamProxy

JSON_HELP = "Write the JSON report to PATH (- for stdout; the terminal view then goes to stderr)."
FAIL_ON_HELP = "Exit 1 on a finding at or above: info|warning|error|never."
MIN_SEVERITY_HELP = ("Show only findings at or above this (info|warning|error) in the terminal and the annotations; "
                     "the report files always hold every finding.")


def json_option(help: str = JSON_HELP) -> Any:
    return typer.Option(None, "--json", metavar="PATH|-", help=help)


def sarif_option() -> Any:
    return typer.Option(None, "--sarif", metavar="PATH|-", help="Write a SARIF 2.1.0 report (for GitHub code "
                        "scanning).")


def markdown_option() -> Any:
    return typer.Option(None, "--markdown", metavar="PATH|-", help="Write a Markdown report (a PR comment or job "
                        "summary).")


def fail_on_option(default: str = "error", help: str = FAIL_ON_HELP) -> Any:
    return typer.Option(default, "--fail-on", metavar="LEVEL", help=help)


def fail_under_option() -> Any:
    return typer.Option(None, "--fail-under", metavar="N", help="Exit 1 when the score is under N (0-100).")


def max_calls_option() -> Any:
    """`--max-calls N`: the probe budget of a scan (scan, and each target's scan of a batch)."""
    return typer.Option(500, "--max-calls", metavar="N", min=1, max=100_000,
                        help="The most probe calls a scan makes; a tool left uncalled makes the scan incomplete "
                             "(exit 3).")


def min_severity_option() -> Any:
    return typer.Option("info", "--min-severity", metavar="LEVEL", help=MIN_SEVERITY_HELP)


CONFIG_HELP = ("Config file (disable / ignore rules). Default: ./mcp-sandbox.toml, else \\[tool.mcp-sandbox] in "
               "./pyproject.toml; a config found there, which the repo under test may ship, cannot suppress "
               "error-level security findings: only one given here can.")


def config_option() -> Any:
    return typer.Option(None, "--config", metavar="PATH", help=CONFIG_HELP)


def quiet_option() -> Any:
    return typer.Option(False, "--quiet", "-q", help="No terminal report; only the outputs asked for.")


def annotations_option() -> Any:
    return typer.Option(False, "--github-annotations", help="Print a GitHub Actions annotation (workflow command) "
                        "per finding on stdout, on the file and line it is about when there is one.")


def _report_parameters() -> dict[str, inspect.Parameter]:
    """The shared report options as keyword parameters (fresh typer options each time), in --help order, by the
    ReportOutputs field each one fills."""
    keyword = inspect.Parameter.KEYWORD_ONLY
    options = {"json": ("json_path", json_option(), str | None),
               "sarif": ("sarif_path", sarif_option(), str | None),
               "markdown": ("markdown_path", markdown_option(), str | None),
               "fail_on": ("fail_on", fail_on_option(), str),
               "min_severity": ("min_severity", min_severity_option(), str),
               "quiet": ("quiet", quiet_option(), bool),
               "annotations": ("github_annotations", annotations_option(), bool)}
    return {field: inspect.Parameter(name, keyword, default=default, annotation=annotation)
            for field, (name, default, annotation) in options.items()}


def with_report_options(command: Callable[..., None]) -> Callable[..., None]:
    """Give a command the shared report options, declared once here: the command takes `outputs: ReportOutputs` and
    typer sees --json, --sarif, --markdown, --fail-on, --min-severity, -q and --github-annotations in its place."""
    signature = inspect.signature(command, eval_str=True)
    shared = _report_parameters()

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> None:
        outputs = ReportOutputs(**{field: kwargs.pop(p.name) for field, p in shared.items()})
        command(outputs=outputs, **kwargs)

    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        parameters += (list(shared.values()) if parameter.name == "outputs"
                       else [parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY)])
    wrapper.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    hints = {k: v for k, v in get_type_hints(command).items() if k != "outputs"}
    wrapper.__annotations__ = {**hints, **{p.name: p.annotation for p in shared.values()}}
    return wrapper


HELP = ("Proxy the install phase chains to, for registries reachable only through a corporate proxy: "
        "http://[USER:PASSWORD@]HOST:PORT (a loopback HOST means the Docker host). Default: the host's HTTPS_PROXY, "
        "else HTTP_PROXY (ignored, with a warning, when it is not such a URL); allowlisted hosts in NO_PROXY go "
        "direct. `none`: go direct. Credentials are safer in the environment than on a command line.")


def upstream_proxy_option() -> Any:
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
    from sandbox.install.proxy.upstream import FLAG, UpstreamProxyError, resolve_upstream_proxy

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
