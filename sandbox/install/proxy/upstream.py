"""The user's upstream (corporate) proxy, which the install proxy chains to: parsed, validated and kept secret.

Behind a corporate proxy the registries are reachable only through it, so the install proxy (sandbox/install_egress.py)
forwards the requests it allows to this upstream (squid `cache_peer … parent`), except for allowlisted hosts that the
host's NO_PROXY says to reach directly. Nothing here widens the allowlist: the upstream only ever sees requests the
install proxy already allowed.

Where the setting comes from (`resolve_upstream_proxy`): `--upstream-proxy URL`, else the host's HTTPS_PROXY /
https_proxy, else HTTP_PROXY / http_proxy; `--upstream-proxy none` turns chaining off. Accepted: `http://HOST:PORT`
(or `HOST:PORT`, read as http, as curl does) with optional `USER:PASSWORD@` (percent-encoded like any URL userinfo).
squid speaks plain HTTP (and CONNECT) to a parent, so other schemes are refused, as are paths and IPv6 literals.

Credentials are a `Credentials` object whose repr and str are masked and which is not a dataclass, so neither a repr
of the request nor `dataclasses.asdict` nor `json.dumps` can carry them anywhere; error messages never include the
input's userinfo (`redact_url`). They reach the proxy container only on its stdin (see install_egress), never in
its environment, command or labels.
"""

from __future__ import annotations

import base64
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, unquote

from sandbox.core.errors import UserInputError

ENV_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")
ENV_NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")
DISABLED = "none"
FLAG = "--upstream-proxy"
# What a container calls the host: Docker (20.10+) maps it to the default bridge's gateway with `host-gateway`.
HOST_GATEWAY_NAME = "host.docker.internal"
HOST_GATEWAY = "host-gateway"
USAGE = f"use {FLAG} http://[USER:PASSWORD@]HOST:PORT, or {FLAG} {DISABLED} to reach the registry directly"
# A login squid would read as a mode rather than as user:password (`login=*:…`, `login=NEGOTIATE…`).
_SQUID_LOGIN_MODES = ("*", "NEGOTIATE")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                       r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]{0,15}$")
_MIN_SCRUB_CHARS = 4  # shorter values are not searched for in free text (they would mangle it, not protect it)


class UpstreamProxyError(UserInputError):
    """The upstream proxy setting cannot be used (exit 2). The message names its source, never its credentials;
    `source`, `shown` (the value with its credentials masked, or "") and `problem` are its parts."""

    def __init__(self, message: str, *, source: str = FLAG, shown: str = "", problem: str = "") -> None:
        super().__init__(message)
        self.source = source
        self.shown = shown
        self.problem = problem or message

    @property
    def from_environment(self) -> bool:
        return self.source != FLAG


class Credentials:
    """A user name and password for the upstream proxy. Deliberately not a dataclass and masked in repr/str: the
    values leave this object only through `squid_login()` and `secrets()`."""

    __slots__ = ("_password", "_user")

    def __init__(self, user: str, password: str) -> None:
        self._user = user
        self._password = password

    def squid_login(self) -> str:
        """`user:password` percent-encoded, as squid's `cache_peer … login=` unescapes it: only unreserved
        characters, `%` and the one `:` remain, so it is safe to place in a config line."""
        return f"{quote(self._user, safe='')}:{quote(self._password, safe='')}"

    def secrets(self) -> tuple[str, ...]:
        """Every form in which the credentials could show up in text (raw, percent-encoded, Basic auth)."""
        pair = f"{self._user}:{self._password}"
        forms = [pair, self.squid_login(), base64.b64encode(pair.encode()).decode("ascii")]
        forms += [v for v in (self._user, self._password, quote(self._user, safe=""), quote(self._password, safe=""))
                  if len(v) >= _MIN_SCRUB_CHARS]
        return tuple(sorted(set(forms), key=len, reverse=True))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Credentials) and (self._user, self._password) == (other._user, other._password)

    def __hash__(self) -> int:
        return hash((self._user, self._password))

    def __repr__(self) -> str:
        return "Credentials(***)"

    __str__ = __repr__


@dataclass(frozen=True)
class UpstreamProxy:
    """Where the install proxy forwards allowed requests. `host` is as given (a loopback address included; see
    `container_host`); `no_proxy` holds the host's NO_PROXY entries, lower-cased."""

    host: str
    port: int
    credentials: Credentials | None = None
    source: str = FLAG
    no_proxy: tuple[str, ...] = field(default=())

    @property
    def loopback(self) -> bool:
        """A container's loopback is its own, so a proxy on the host's loopback is reached via the host gateway."""
        if self.host == "localhost" or self.host.endswith(".localhost"):
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def container_host(self) -> str:
        """The name the install proxy container uses for the upstream."""
        return HOST_GATEWAY_NAME if self.loopback else self.host

    @property
    def redacted(self) -> str:
        """The URL for messages and logs: credentials, if any, shown as `***`."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{'***@' if self.credentials else ''}{host}:{self.port}"

    def secrets(self) -> tuple[str, ...]:
        return self.credentials.secrets() if self.credentials else ()

    def __str__(self) -> str:
        return self.redacted


# ------------------------------------------------------------------------------------------------------------ parsing

def resolve_upstream_proxy(flag: str | None, environ: Mapping[str, str]) -> UpstreamProxy | None:
    """The upstream to chain to: the flag's URL, else the host's proxy variables; None for `none` or when unset.

    A value that cannot be used raises UpstreamProxyError (its `from_environment` says whether it came from a proxy
    variable): the CLI refuses a bad flag, and ignores a bad environment value with a warning
    (scanner/commands/upstream.py), so an unrelated HTTPS_PROXY never stops a scan."""
    no_proxy = no_proxy_entries(environ)
    if flag is not None:
        if flag.strip().lower() == DISABLED:
            return None
        return parse_upstream_proxy(flag, source=FLAG, no_proxy=no_proxy)
    for name in ENV_PROXY_VARIABLES:
        value = environ.get(name, "")
        if value.strip():
            return parse_upstream_proxy(value, source=f"{name} (from the environment)", no_proxy=no_proxy)
    return None


def parse_upstream_proxy(text: str, *, source: str = FLAG, no_proxy: Iterable[str] = ()) -> UpstreamProxy:
    """Parse `[http://][USER[:PASSWORD]@]HOST:PORT[/]`; raise UpstreamProxyError naming `source` and what to do.

    Parsed by hand rather than with urlsplit: a password may hold unencoded `/`, `?`, `#` or `@` characters, and
    the userinfo is everything before the *last* `@`, so it can never leak into the host part of a message."""
    text = text.strip()
    shown = redact_url(text)
    if not text:
        raise _error(source, "", "is empty")
    if any(ch.isspace() or not ch.isprintable() for ch in text):
        raise _error(source, "", "contains spaces or control characters (percent-encode them in a password: %20)")
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "http", text
    if not _SCHEME.match(scheme):
        raise _error(source, shown, "is not a proxy URL")
    if scheme.lower() != "http":
        raise _error(source, shown, f"{scheme.lower()}:// is not supported (the install proxy chains to its "
                     "upstream over plain HTTP CONNECT)")
    userinfo, at, location = rest.rpartition("@")
    hostport, tail = _split_path(location)
    if tail not in ("", "/"):
        raise _error(source, shown, "has a path, query or fragment; give only the proxy's address")
    host, port = _host_port(hostport, source, shown)
    credentials = _credentials(userinfo, source) if at else None
    return UpstreamProxy(host=host, port=port, credentials=credentials, source=source,
                         no_proxy=tuple(no_proxy))


def _error(source: str, shown: str, problem: str) -> UpstreamProxyError:
    """One line: where the value came from, the value with its credentials masked (when showing it helps), what is
    wrong, and what to do."""
    where = f"{source} {shown!r}" if shown else source
    return UpstreamProxyError(f"{where}: {problem}; {USAGE}", source=source, shown=shown, problem=problem)


def _split_path(location: str) -> tuple[str, str]:
    cut = min((i for i in (location.find(c) for c in "/?#") if i >= 0), default=len(location))
    return location[:cut], location[cut:]


def _host_port(hostport: str, source: str, shown: str) -> tuple[str, int]:
    if hostport.startswith("["):
        host, bracket, after = hostport[1:].partition("]")
        if not bracket or host != "::1":
            raise _error(source, shown, "IPv6 addresses are not supported (the Docker bridge is IPv4); give a host "
                         "name or an IPv4 address")
        port_text = after.removeprefix(":") if after.startswith(":") or not after else "-"
    else:
        host, colon, port_text = hostport.rpartition(":")
        if not colon:
            host, port_text = hostport, ""
    if not port_text:
        raise _error(source, shown, "has no port (e.g. http://HOST:3128)")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _error(source, shown, "the port must be a number from 1 to 65535")
    host = host.lower().rstrip(".")
    if host != "::1" and not _valid_host(host):
        raise _error(source, shown, f"{host!r} is not a host name or an IPv4 address")
    return host, int(port_text)


def _valid_host(host: str) -> bool:
    try:
        address = ipaddress.IPv4Address(host)
    except ValueError:
        return bool(_HOSTNAME.match(host)) and not re.fullmatch(r"[0-9.]+", host)
    return not (address.is_unspecified or address.is_multicast)


def _credentials(userinfo: str, source: str) -> Credentials:
    """Percent-decoded user and password. The messages describe the problem, never the values."""
    user_text, _, password_text = userinfo.partition(":")
    user, password = unquote(user_text), unquote(password_text)
    if not user:
        raise _error(source, "", "the user name before '@' is empty")
    if ":" in user:
        raise _error(source, "", "the user name contains ':' (an encoded %3A), which a proxy login cannot carry")
    if any(not ch.isprintable() for ch in user + password):
        raise _error(source, "", "the user name or password contains control characters")
    if user.startswith(_SQUID_LOGIN_MODES):
        raise _error(source, "", "a user name starting with '*' or 'NEGOTIATE' is a squid login mode, not a login")
    return Credentials(user, password)


def redact_url(text: str) -> str:
    """`text` with everything between the scheme and the last `@` replaced by `***`: safe to put in a message."""
    if "@" not in text:
        return text
    scheme, sep, _ = text.partition("://")
    prefix = f"{scheme}://" if sep and _SCHEME.match(scheme) else ""
    return f"{prefix}***@{text.rpartition('@')[2]}"


def scrub(text: str, secrets: Iterable[str]) -> str:
    """`text` with each secret (longest first) replaced by `***`: for output of the proxy container that might
    quote its configuration (squid echoes config lines when it rejects them)."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if secret:
            text = text.replace(secret, "***")
    return re.sub(r"login=\S+", "login=***", text)


# ----------------------------------------------------------------------------------------------------------- NO_PROXY

def no_proxy_entries(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The host's NO_PROXY / no_proxy entries (both, de-duplicated), lower-cased, split on commas and spaces."""
    entries: list[str] = []
    for name in ENV_NO_PROXY_VARIABLES:
        for entry in re.split(r"[,\s]+", environ.get(name, "")):
            entry = entry.strip().lower()
            if entry and entry not in entries:
                entries.append(entry)
    return tuple(entries)


def _no_proxy_domain(entry: str) -> str | None:
    """A NO_PROXY entry as a bare domain meaning "it and its subdomains" (curl's and Python's reading; a leading
    `.` or `*.` changes nothing), `*` for everything, or None for what cannot name an allowlisted host (IP
    addresses, CIDR ranges, malformed names). A `:port` suffix is dropped: the allowlist is per host."""
    if entry == "*":
        return "*"
    entry = entry.removeprefix("*.").lstrip(".").rstrip(".")
    if re.fullmatch(r"[^:\[\]]+:\d+", entry):
        entry = entry.rpartition(":")[0]
    if not _HOSTNAME.match(entry) or re.fullmatch(r"[0-9.]+", entry):
        return None
    return entry


def direct_hosts(allow_hosts: Iterable[str], no_proxy: Iterable[str]) -> tuple[str, ...]:
    """The part of the allowlist that NO_PROXY sends direct, in the allowlist's notation (`.domain` = it and its
    subdomains). Always a subset of the allowlist: an allowlisted host inside a NO_PROXY domain goes direct whole;
    a NO_PROXY domain inside an allowlisted `.domain` goes direct as `.that-domain`; nothing else is added."""
    domains = [d for d in (_no_proxy_domain(e) for e in no_proxy) if d]
    result: list[str] = []
    for host in allow_hosts:
        base = host.lstrip(".")
        for domain in domains:
            if domain == "*" or base == domain or base.endswith(f".{domain}"):
                result.append(host)
            elif host.startswith(".") and domain.endswith(f".{base}"):
                result.append(f".{domain}")
    # squid refuses a dstdomain list holding both `.d` and a name under it: keep the widest entry.
    return tuple(h for h in dict.fromkeys(result)
                 if not any(w != h and w.startswith(".") and (h == w[1:] or h.endswith(w)) for w in result))


# ------------------------------------------------------------------------------------------- the proxy container

@dataclass(frozen=True)
class ChainSettings:
    """What the install proxy container needs to chain: `environment` (host, port, direct hosts; nothing secret),
    `extra_hosts` (the host gateway, for a loopback upstream) and `stdin` (the login line, when there is one)."""

    environment: dict[str, str] = field(default_factory=dict)
    extra_hosts: dict[str, str] = field(default_factory=dict)
    stdin: bytes | None = field(default=None, repr=False)


def chain_settings(upstream: UpstreamProxy | None, allow_hosts: Iterable[str]) -> ChainSettings:
    """The proxy container's side of chaining to `upstream` (images/proxy/entrypoint.sh reads these), or nothing.

    The login goes on stdin because the container's environment, command and labels are all shown by `docker
    inspect` (and so by anything that records containers); stdin is read once by the entry point and kept nowhere
    but the generated squid.conf on the container's tmpfs."""
    if upstream is None:
        return ChainSettings()
    environment = {"MCP_EGRESS_UPSTREAM_HOST": upstream.container_host,
                   "MCP_EGRESS_UPSTREAM_PORT": str(upstream.port)}
    direct = direct_hosts(allow_hosts, upstream.no_proxy)
    if direct:
        environment["MCP_EGRESS_DIRECT_DOMAINS"] = " ".join(direct)
    stdin = None
    if upstream.credentials is not None:
        environment["MCP_EGRESS_UPSTREAM_LOGIN"] = "stdin"
        stdin = f"{upstream.credentials.squid_login()}\n".encode("ascii")
    extra_hosts = {HOST_GATEWAY_NAME: HOST_GATEWAY} if upstream.loopback else {}
    return ChainSettings(environment=environment, extra_hosts=extra_hosts, stdin=stdin)
