"""What differs between the ecosystems the install phase installs: the steps (sandbox/install/phases.py), the
manifest the install leaves, the files removed after every step, how the installed package names its launch commands,
and the setting that points the installer at a registry mirror. container.py looks them up here by ecosystem."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from packaging.utils import canonicalize_name, canonicalize_version

from sandbox.core.errors import SandboxError, UserInputError
from sandbox.install.phases import NPM_PREFIX, PYLOCK, PYTHON_LOCKFILE, InstallSteps, install_npm, install_pypi
from sandbox.install.pypi import SETUP_PY_IN_UV_CACHE
from sandbox.install.writes import WatchPlan
from sandbox.install.proxy.allowlist import RegistryAllowlist, registry_hosts, validate_hosts, validate_ports
from sandbox.install.request import InstallRequest

Describe = Callable[[dict[str, Any], InstallRequest], tuple[str, dict[str, str]]]


def describe_npm(manifest: dict[str, Any], request: InstallRequest) -> tuple[str, dict[str, str]]:
    """The installed version and bin commands of the requested package, from npm's lockfile."""
    package = (manifest.get("packages") or {}).get(f"node_modules/{request.name}")
    if not package:
        raise SandboxError(f"npm installed no package named {request.name!r} (see the installer output)")
    bins = package.get("bin") or {}
    if isinstance(bins, str):
        bins = {request.name.split("/")[-1]: bins}
    version = _resolved(str(package.get("version", "")), request, str)
    return version, {str(k): f"{NPM_PREFIX}/node_modules/.bin/{k}" for k in bins}


def describe_pypi(manifest: dict[str, Any], request: InstallRequest) -> tuple[str, dict[str, str]]:
    """The installed version and console scripts of the requested distribution (names compared as PEP 503 does)."""
    wanted = canonicalize_name(request.name)
    for dist in manifest.get("distributions") or []:
        if canonicalize_name(str(dist.get("name", ""))) == wanted:
            scripts = dist.get("console_scripts") or {}
            version = _resolved(str(dist.get("version", "")), request, canonicalize_version)
            return version, {str(k): f"/opt/server/venv/bin/{k}" for k in scripts}
    raise SandboxError(f"uv installed no distribution named {request.name!r} (see the installer output)")


def _resolved(version: str, request: InstallRequest, canonical: Callable[[str], str]) -> str:
    """The installed version, when it is the one the scan resolved (compared as the ecosystem writes versions): the
    install's description is written where the package's code could rewrite it, and another version there would
    send the provenance checks (signatures, advisories) and the report to a release that was never installed."""
    if request.version is not None and not _same_version(version, request.version, canonical):
        raise SandboxError(f"the install describes {request.name} as version {version[:100]!r}, not the "
                           f"{request.version} the scan resolved and installed: a package's code may have rewritten "
                           "the install's description (or the release names another version in its metadata)")
    return version


def _same_version(installed: str, resolved: str, canonical: Callable[[str], str]) -> bool:
    """Whether the two name one version; a version PEP 440 cannot hold in an int (over 4,300 digits: ValueError, not
    InvalidVersion, so `canonicalize_version` raises it) is not the resolved one."""
    try:
        return canonical(installed) == canonical(resolved)
    except ValueError:
        return False


@dataclass(frozen=True)
class Installer:
    run: Callable[[InstallSteps, InstallRequest], None]
    manifest_path: str  # what the install leaves that describes it (npm's lockfile, the Python install description)
    lockfile: str | None  # the hash-pinned tree kept beside it (Python), read into manifest["requirements"]
    # Paths an install step can leave that make a later step run its code, with no setting to switch them off:
    # removed after every step (sandbox/install/steps.py). npm reads the project's .npmrc (node-options,
    # script-shell, …) from --prefix whatever NPM_CONFIG_USERCONFIG says; uv's and pip's are off by environment.
    cleanup_paths: tuple[str, ...]
    describe: Describe
    index_variable: str  # the installer's setting for the registry it installs from (a mirror)
    # What the installer itself writes outside the install tree (sandbox/install/writes.py): not charged to a step.
    watch: WatchPlan = WatchPlan()


DEFAULT_MIRROR_PORTS = {"https": 443, "http": 80}

# npm's cache and debug logs (and node-gyp's headers) in the step's HOME; uv's cache there, and the host's lock files.
NPM_WATCH = WatchPlan(own_paths=("~/.npm/_cacache/*", "~/.npm/_logs/*", "~/.npm/_update-notifier-last-checked",
                                 "~/.cache/node-gyp/*"),
                      unwatched=("~/.npm/_cacache",))
PYPI_WATCH = WatchPlan(own_paths=("~/.cache/uv/*", "/tmp/requested.txt", PYLOCK),
                       unwatched=tuple(f"~/.cache/uv/{part}-v*" for part in
                                       ("archive", "builds", "wheels", "simple", "interpreter")),
                       evidence=(SETUP_PY_IN_UV_CACHE,))

INSTALLERS: dict[str, Installer] = {
    "npm": Installer(install_npm, f"{NPM_PREFIX}/package-lock.json", None, (f"{NPM_PREFIX}/.npmrc",), describe_npm,
                     "NPM_CONFIG_REGISTRY", NPM_WATCH),
    "pypi": Installer(install_pypi, "/opt/server/install.json", PYTHON_LOCKFILE, (), describe_pypi,
                      "UV_DEFAULT_INDEX", PYPI_WATCH),
}


def installer(ecosystem: str) -> Installer:
    found = INSTALLERS.get(ecosystem)
    if found is None:
        raise SandboxError(f"the install phase cannot install {ecosystem!r} packages")
    return found


def install_allowlist(request: InstallRequest) -> RegistryAllowlist:
    """The hosts and ports the install proxy lets this install reach: the ecosystem's registries, and the mirror's
    host and port when the request names one (a mirror is reached by name: the containers' loopback is their own)."""
    if request.index_url is None:
        return registry_hosts(request.ecosystem, config=request.registries)
    parts = urlsplit(request.index_url)
    where = f"registry mirror {parts.scheme}://{parts.netloc.rpartition('@')[2]}"
    if parts.username or parts.password:
        raise UserInputError(f"{where}: its URL carries a user name or password, which the install would hand to "
                             "every install script (they would be in the install container's environment); give a "
                             "mirror the install can reach without credentials")
    if (parts.hostname or "").startswith("."):
        raise UserInputError(f"{where}: a host name cannot start with a dot")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        base = registry_hosts(request.ecosystem, config=request.registries,
                              extra_hosts=validate_hosts([parts.hostname or ""]))
    except ValueError as exc:
        raise UserInputError(f"registry mirror {parts.scheme}://{parts.netloc.rpartition('@')[2]}: {exc}; the "
                             "install reaches a mirror through its proxy by host name (not an IP address), so give "
                             "its name") from None
    if parts.hostname in ("localhost",) or (parts.hostname or "").endswith(".localhost"):
        raise UserInputError(f"registry mirror {parts.hostname}: a container's loopback is its own, so the install "
                             "cannot reach a mirror on this machine's loopback; give a name the containers reach")
    if port not in base.ports and port != DEFAULT_MIRROR_PORTS.get(parts.scheme):
        # The proxy's ports apply to every allowlisted host: another port would open it on the registries too.
        raise UserInputError(f"{where}: the install proxy reaches a mirror on port 443 (https) or 80 (http), not "
                             f"{port}; serve the mirror on one of those")
    return RegistryAllowlist(base.hosts, validate_ports([*base.ports, port]))


def allowlist_key(request: InstallRequest) -> list[object]:
    """What the registry allowlist adds to the install's cache key (container.installed_tag): its hosts and ports. An
    install under another allowlist (MCP_SANDBOX_REGISTRIES) is another install: its hosts were reached, not refused,
    and its cached egress carries that allowlist's verdicts, which a scan under another allowlist must never reuse as
    its own (a host that allowlist refuses would read as allowed: no I7)."""
    allow = registry_hosts(request.ecosystem, config=request.registries)
    return [list(allow.hosts), list(allow.ports)]
