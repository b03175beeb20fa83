"""A remote Streamable HTTP server as a target (`scan --url`): the endpoint, the headers to send, and what may be
shown or stored of them.

The URL itself is never printed or stored: reports and locks show the scheme and host, and a hash of scheme, host,
port and path (`endpoint_sha256`; the query is left out, it often carries keys). Headers follow mcp-linter:
`--header 'NAME: VALUE'` for non-secret ones (names and values may be shown), `--header-env NAME=VAR` for secrets
(read from the environment; only the header name is ever shown), refused over plain http:// unless the host is
loopback (exactly localhost, 127.0.0.0/8 or [::1]). Whatever a server echoes of a secret is replaced with
`[redacted]` (`redact`)."""

from __future__ import annotations

import hashlib
import json
import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import SplitResult, urlsplit

from scanner.errors import UsageError

REDACTED = "[redacted]"
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an RFC 9110 token
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")  # what the HTTP client sends: printable ASCII, spaces and tabs
# Headers the transport sets itself: a user's value would break the session or lie about it.
RESERVED = frozenset({"host", "content-length", "content-type", "accept", "mcp-session-id", "mcp-protocol-version",
                      "transfer-encoding", "connection"})
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class RemoteTarget:
    url: str = field(repr=False)  # never printed or stored
    scheme: str
    host: str
    port: int
    path: str
    headers: dict[str, str] = field(default_factory=dict)  # non-secret: may be shown
    secrets: dict[str, str] = field(default_factory=dict, repr=False)  # header name -> value (from the environment)

    def origin(self) -> str:
        """What may be shown of the endpoint: scheme and host (and a port that is not the default)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    def endpoint_sha256(self) -> str:
        """sha256 of scheme, host, port and path: the endpoint's identity in reports and locks, not its URL."""
        return hashlib.sha256(f"{self.scheme}\n{self.host}\n{self.port}\n{self.path}".encode()).hexdigest()

    def all_headers(self) -> dict[str, str]:
        return {**self.headers, **self.secrets}

    def secret_values(self) -> list[str]:
        """The values to redact, raw and JSON-escaped, longest first."""
        values = {value for value in self.secrets.values() if value}
        values |= {json.dumps(value)[1:-1] for value in values}  # as it appears inside JSON text
        return sorted(values, key=len, reverse=True)


def is_loopback(host: str) -> bool:
    """Exactly localhost, 127.0.0.0/8 or ::1 (no name that merely resolves there)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_remote(url: str, headers: list[str], header_envs: list[str], environ: Mapping[str, str]) -> RemoteTarget:
    """The target, or a UsageError (exit 2, one line) naming what to change. Never echoes the URL back."""
    endpoint = _endpoint(url, "--url", "--header-env NAME=VAR")
    plain = _plain_headers(headers)
    secrets = _secret_headers(header_envs, environ)
    if secrets and endpoint.scheme == "http" and not is_loopback(endpoint.host):
        raise UsageError("--header-env sends a secret: use an https:// URL (plain http:// only to a loopback host)")
    clash = sorted(set(map(str.lower, plain)) & set(map(str.lower, secrets)))
    if clash:
        raise UsageError(f"header {clash[0]} is given by both --header and --header-env; give it once")
    return RemoteTarget(url=endpoint.url, scheme=endpoint.scheme, host=endpoint.host, port=endpoint.port,
                        path=endpoint.path, headers=plain, secrets=secrets)


def config_remote(url: str, headers: Mapping[str, str]) -> RemoteTarget:
    """A client config's remote entry as a target: every header it passes is a secret (only its name is shown);
    a UsageError (one line, never the URL) when the URL or a header cannot be sent."""
    endpoint = _endpoint(url, "the entry's url", "the entry's headers")
    secrets = {}
    for name, value in headers.items():
        name = _checked_name(name.strip(), "header")
        secrets[name] = _checked_value(value, f"header {name}")
    if secrets and endpoint.scheme == "http" and not is_loopback(endpoint.host):
        raise UsageError("its headers would go over plain http:// to a host that is not loopback; use https://")
    return RemoteTarget(url=endpoint.url, scheme=endpoint.scheme, host=endpoint.host, port=endpoint.port,
                        path=endpoint.path, secrets=secrets)


@dataclass(frozen=True)
class _Endpoint:
    url: str = field(repr=False)
    scheme: str
    host: str
    port: int
    path: str


def _endpoint(url: str, what: str, credentials: str) -> _Endpoint:
    parts = _split(url.strip(), what)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise UsageError(f"{what} must be an http:// or https:// URL with a host (e.g. https://host/mcp)")
    if parts.username is not None or parts.password is not None:
        raise UsageError(f"{what} must not carry user:password@; send credentials with {credentials}")
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError:
        raise UsageError(f"{what} has a port that is not a number from 0 to 65535") from None
    return _Endpoint(url.strip(), parts.scheme, parts.hostname, port, parts.path or "/")


def _split(url: str, what: str) -> SplitResult:
    """The URL's parts, once both urllib and the HTTP client read it (an unclosed IPv6 bracket, a host that is not
    valid IDNA): else a UsageError, not an internal error at the first request."""
    import httpx2  # here, not at the top: client configs import this module on paths that never send a request

    try:
        httpx2.URL(url)
        return urlsplit(url)
    except (ValueError, httpx2.InvalidURL):
        raise UsageError(f"{what} is not a valid URL (check the host, its brackets and its characters)") from None


def _checked_name(name: str, flag: str) -> str:
    if not HEADER_NAME.match(name):
        raise UsageError(f"{flag}: {name[:60]!r} is not a header name (letters, digits and -)")
    if name.lower() in RESERVED:
        raise UsageError(f"{flag}: {name} is set by the transport itself; drop it")
    return name


def _checked_value(value: str, what: str) -> str:
    """A header value the HTTP client can send (never echoed: it may be a secret); else a UsageError."""
    if not HEADER_VALUE.match(value):
        raise UsageError(f"{what}: the value must be one line of printable ASCII (no control or non-ASCII "
                         "character); encode it as the server expects")
    return value


def _plain_headers(given: list[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in given:
        name, sep, value = item.partition(":")
        if not sep or not name.strip():
            raise UsageError("--header must look like 'NAME: VALUE' (for a secret, use --header-env NAME=VAR)")
        name = _checked_name(name.strip(), "--header")
        headers[name] = _checked_value(value.strip(), f"--header {name}")
    return headers


def _secret_headers(given: list[str], environ: Mapping[str, str]) -> dict[str, str]:
    secrets: dict[str, str] = {}
    for item in given:
        name, sep, variable = item.partition("=")
        if not sep or not ENV_NAME.match(variable):
            raise UsageError("--header-env must look like NAME=VAR (the header, and the variable holding its value)")
        name = _checked_name(name.strip(), "--header-env")
        value = environ.get(variable)
        if not value:
            raise UsageError(f"--header-env {name}={variable}: the variable {variable} is not set or empty")
        secrets[name] = _checked_value(value, f"--header-env {name}={variable}")
    return secrets


def redact(text: str, remote: RemoteTarget) -> tuple[str, int]:
    """`text` with every secret value, and the URL's path and query, replaced; and how many secrets were found.
    A secret a cap cut short (an error message cut at 300 characters, a progress line at 120) is replaced too: any
    PARTIAL_MIN or more of its first characters (`_cut_secrets`), not counted."""
    for private in (remote.url, remote.url.split("#")[0]):  # first: a secret in the URL must not hide it from this
        text = text.replace(private, remote.origin() + "/" + REDACTED)
    found = 0
    for value in remote.secret_values():
        found += text.count(value)
        text = text.replace(value, REDACTED)
    for value in remote.secret_values():
        text = _cut_secrets(text, value)
    return text, found


PARTIAL_MIN = 8  # a shorter start of a secret is left (often only its scheme: "Bearer x")


def _cut_secrets(text: str, value: str) -> str:
    """`text` with each run of PARTIAL_MIN or more characters that starts `value` replaced: what is left of a secret
    that was cut before it was redacted. Values with a quote or backslash are skipped, as is a run just after a
    backslash: replacing those could break the JSON the text is."""
    if len(value) <= PARTIAL_MIN or '"' in value or "\\" in value:
        return text
    head, parts, start = value[:PARTIAL_MIN], [], 0
    at = text.find(head)
    while at != -1:
        length = PARTIAL_MIN
        while length < len(value) and at + length < len(text) and text[at + length] == value[length]:
            length += 1
        if at == 0 or text[at - 1] != "\\":
            parts += [text[start:at], REDACTED]
            start = at + length
        at = text.find(head, at + length)
    return "".join([*parts, text[start:]])
