"""What the scanner asks the install phase for, and what it gets back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from sandbox.install.disk import DEFAULT_MAX_BYTES, DEFAULT_MAX_FILES
from sandbox.install.proxy.log import EgressAttempt
from sandbox.install.pypi import BuiltFromSource
from sandbox.install.writes import StepWrites
from sandbox.install.proxy.upstream import UpstreamProxy

Ecosystem = Literal["npm", "pypi"]  # what the install phase can install (the scanner's ecosystems map onto these)
LOCAL_SOURCE_DIR = "/opt/src"  # where a local target is copied in the install container
# Where a fresh install's wall time goes, in order (the report's timings name them install_proxy, …):
# - proxy: the install proxy's network and container, then the wait for squid and dnsmasq to answer (they boot
#   while the install container is made);
# - container: the install container created and started, its idle processes and writable places listed;
# - steps: the installer's steps, with what the host does between them (ending leftovers, listing writes);
# - finish: the last look that nothing of the install runs, the proxy's log once settled, the manifest;
# - commit: `docker commit` of the installed tree as the image every run starts from.
InstallPhase = Literal["proxy", "container", "steps", "finish", "commit"]
INSTALL_PHASES: tuple[InstallPhase, ...] = get_args(InstallPhase)


def local_source_name(path: Path) -> str:
    """The name a local target has in LOCAL_SOURCE_DIR: `pkg` for a folder, the archive's own file name."""
    return "pkg" if path.is_dir() else path.name


def local_source(path: Path) -> str:
    """What the installer is given for a local target: its path in the install container."""
    return f"{LOCAL_SOURCE_DIR}/{local_source_name(path)}"


@dataclass(frozen=True)
class InstallRequest:
    ecosystem: Ecosystem
    spec: str = field(metadata={"doc": "What the installer is given: name@version, name==version or /opt/src/..."})
    name: str
    identity: str = field(metadata={"doc": "What makes two installs the same: registry name+version or content hash"})
    local_path: Path | None = None
    ignore_scripts: bool = False
    ca_bundle: Path | None = None
    timeout_seconds: int = 600
    # What the install may take of the engine's disk, in bytes and in files (sandbox/install/disk.py; no flag yet).
    disk_limit_bytes: int = DEFAULT_MAX_BYTES
    disk_limit_files: int = DEFAULT_MAX_FILES
    registries: Path | None = None  # the registry allowlist file (default: sandbox/install/proxy/registries.json)
    # A registry mirror to install from instead of the public registry (npm's registry, uv's default index): the
    # installer is pointed at it and the install proxy allows its host and port. None: the public registry.
    index_url: str | None = None
    # The user's proxy the install proxy chains to (--upstream-proxy / the host's HTTPS_PROXY); its repr is masked.
    upstream_proxy: UpstreamProxy | None = None
    # The version the scan resolved (a registry target; None for a local one, whose version is its own to say): the
    # install must report this one, whatever a package's code rewrote in what describes the install.
    version: str | None = None


@dataclass(frozen=True)
class InstalledServer:
    image: str
    image_id: str
    runtime_image: str
    cached: bool
    name: str
    version: str
    entry_points: dict[str, str]
    installer_output: str
    seconds: float
    # None for a cached install until read (sandbox.install.manifest.read_manifest): its lookup does not.
    manifest: dict[str, Any] | None
    egress: list[EgressAttempt] = field(default_factory=list)
    # Why the egress attempts (some or all) name no install step, when they do not (the engine gave no usable clock).
    attribution_note: str | None = None
    # Per install step that wrote outside the install tree (a marker in /tmp, a file in HOME), named like its window.
    writes: list[StepWrites] = field(default_factory=list)
    # Packages built from source at install time (their build backend ran; setup.py when the source had one).
    built: list[BuiltFromSource] = field(default_factory=list)
    # The install could not read which packages it would build from source (`built` may then miss some).
    built_unknown: bool = False
    # Where a fresh install's wall time went, seconds by phase (INSTALL_PHASES); empty for a cached one.
    phases: dict[InstallPhase, float] = field(default_factory=dict)
