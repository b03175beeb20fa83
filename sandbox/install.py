"""Install phase: install the package in a container that reaches only the package registry, then commit the
installed tree as an image (labelled, tagged by the resolved identity) that every run starts from."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import docker
from docker.errors import APIError, ImageNotFound, NotFound
from requests.exceptions import ConnectionError as RequestsConnectionError
from requests.exceptions import ReadTimeout

from sandbox import labels
from sandbox.archive import pack_path, read_member
from sandbox.errors import SandboxError
from sandbox.install_egress import (EgressAttempt, denied, install_network_settings, registry_hosts,
                                     start_install_proxy)
from sandbox.policy import hardened_host_config
from sandbox.session import SandboxSession

Ecosystem = Literal["npm", "pypi"]
INSTALL_UID = 10001
INSTALLED_REPO = "mcp-sandbox-installed"
CONTAINER_CA_PATH = "/etc/ssl/certs/ca-certificates.crt"
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
OUTPUT_TAIL_CHARS = 8_000
MANIFEST_LABEL = f"{labels.PREFIX}.install"
PYTHON_LOCKFILE = "/opt/server/requirements.txt"


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
    registries: Path | None = None  # the registry allowlist file (default: sandbox/assets/registries.json)


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
    manifest: dict[str, Any]
    egress: list[EgressAttempt] = field(default_factory=list)


def installed_tag(runtime_image_id: str, request: InstallRequest) -> str:
    material = json.dumps([runtime_image_id, request.ecosystem, request.identity, request.ignore_scripts])
    return f"{INSTALLED_REPO}:{hashlib.sha256(material.encode()).hexdigest()[:20]}"


def install(
    session: SandboxSession, request: InstallRequest, runtime_image: str, runtime_image_id: str, *, use_cache: bool = True
) -> InstalledServer:
    """Install the package (or reuse an earlier install of the same identity) and return the installed image."""
    client = session.client
    tag = installed_tag(runtime_image_id, request)
    if use_cache:
        cached = _cached(session, tag, runtime_image, request.ecosystem)
        if cached is not None:
            return cached
    started = time.monotonic()
    # The install reaches only the registry: an internal network whose one way out is an allowlisting proxy.
    proxy = start_install_proxy(session, registry_hosts(request.ecosystem, config=request.registries))
    network = install_network_settings(proxy)
    attempts: list[EgressAttempt] = []
    container_id = _create_install_container(session, request, runtime_image, network)
    try:
        try:
            output = _run_to_completion(client, container_id, request.timeout_seconds, request)
        except SandboxError as exc:
            session.remove_container(container_id)
            attempts = proxy.attempts()
            refused = ", ".join(sorted({a.host for a in denied(attempts)}))
            raise SandboxError(f"{exc}" + (f"; during the install it tried to reach {refused} (refused)"
                                            if refused else "")) from None
        manifest = _read_manifest(client, container_id, request.ecosystem)
        version, entry_points = _describe(manifest, request)
        # The installer has exited, so its connections are closed and logged; kept in the image so a cached
        # re-scan still reports what the install tried.
        attempts = proxy.attempts()
        summary = {"name": request.name, "version": version, "entry_points": entry_points,
                   "output": output[-2000:], "ecosystem": request.ecosystem,
                   "egress": [dataclasses.asdict(a) for a in attempts]}
        image_id = _commit(client, container_id, tag, request, summary)
    finally:
        session.remove_container(container_id)
        attempts = proxy.attempts() or attempts  # after the container is gone: every tunnel closed and logged
        proxy.close()
    return InstalledServer(
        image=tag, image_id=image_id, runtime_image=runtime_image, cached=False, name=request.name, version=version,
        entry_points=entry_points, installer_output=output, seconds=round(time.monotonic() - started, 3),
        manifest=manifest, egress=attempts,
    )


def _cached(session: SandboxSession, tag: str, runtime_image: str, ecosystem: Ecosystem) -> InstalledServer | None:
    try:
        image = session.client.images.get(tag)
    except ImageNotFound:
        return None
    summary = json.loads(image.labels.get(MANIFEST_LABEL, "{}"))
    if not summary.get("version"):
        return None
    return InstalledServer(
        image=tag, image_id=image.id, runtime_image=runtime_image, cached=True, name=summary["name"],
        version=summary["version"], entry_points=summary.get("entry_points") or {},
        installer_output=summary.get("output", ""), seconds=0.0, manifest=_manifest_from_image(session, tag, ecosystem),
        egress=[_attempt(record) for record in summary.get("egress") or []],
    )


def _attempt(record: dict[str, Any]) -> EgressAttempt:
    return EgressAttempt(host=str(record["host"]), port=record.get("port"), allowed=bool(record["allowed"]),
                         count=int(record.get("count", 1)), via=str(record.get("via", "proxy")),
                         methods=tuple(record.get("methods") or ()), statuses=tuple(record.get("statuses") or ()))


def _manifest_from_image(session: SandboxSession, image: str, ecosystem: Ecosystem) -> dict[str, Any]:
    """The install manifest (npm lockfile / Python install description) kept in an installed image."""
    container_id = session.create_container("read-manifest", image=image, command=["/bin/false"], entrypoint=[],
                                            network_disabled=True)
    try:
        return _read_manifest(session.client, container_id, ecosystem)
    finally:
        session.remove_container(container_id)


def _install_command(request: InstallRequest) -> list[str]:
    if request.ecosystem == "npm":
        command = ["npm", "install", "--prefix", "/opt/server", "--omit=dev", "--no-audit", "--no-fund",
                   "--loglevel=warn"]
        if request.ignore_scripts:
            command.append("--ignore-scripts")
        if request.local_path is not None and request.local_path.is_dir():
            command.append("--install-links")
        return [*command, request.spec]
    venv = "set -e; uv venv --quiet --python /usr/bin/python3 /opt/server/venv; "
    describe = "/opt/server/venv/bin/python /usr/local/lib/mcp-sandbox/describe_install.py > /opt/server/install.json"
    if request.local_path is not None:
        install = 'uv pip install --python /opt/server/venv/bin/python --compile-bytecode "$1"; '
    else:
        # A registry package: resolve the whole tree with hashes first, then install with hashes required, so
        # every file is checked against the index's sha256 and the pinned tree is kept as the install's lockfile.
        install = (
            f'printf "%s\\n" "$1" > /tmp/requested.txt; '
            "uv pip compile --quiet --no-header --generate-hashes --python /opt/server/venv/bin/python "
            f"/tmp/requested.txt -o {PYTHON_LOCKFILE}; "
            "uv pip install --python /opt/server/venv/bin/python --compile-bytecode --require-hashes "
            f"-r {PYTHON_LOCKFILE}; "
        )
    # The package spec is passed as an argument ($1), never interpolated into the script.
    return ["sh", "-c", venv + install + describe, "mcp-sandbox-install", request.spec]


def _install_environment(request: InstallRequest, proxy_environment: dict[str, str]) -> dict[str, str]:
    env = {
        "HOME": "/home/mcp-install",
        "NPM_CONFIG_CAFILE": CONTAINER_CA_PATH,
        "NODE_EXTRA_CA_CERTS": CONTAINER_CA_PATH,
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "NPM_CONFIG_FUND": "false",
        "NPM_CONFIG_AUDIT": "false",
        "SSL_CERT_FILE": CONTAINER_CA_PATH,
        "UV_SYSTEM_CERTS": "1",
        "UV_NO_PROGRESS": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_CACHE_DIR": "/home/mcp-install/.cache/uv",
        "LANG": "C.UTF-8",
    }
    # Proxy settings reach the install phase only; the run phase never sees them. The egress proxy's win: the
    # internal network has no other way out.
    env.update({name: os.environ[name] for name in PROXY_VARIABLES if os.environ.get(name)})
    env.update(proxy_environment)
    return env


def _create_install_container(session: SandboxSession, request: InstallRequest, runtime_image: str,
                              network: dict[str, Any]) -> str:
    api = session.client.api
    binds = {}
    ca_bundle = request.ca_bundle
    if ca_bundle is not None:
        if not ca_bundle.is_file():
            raise SandboxError(f"CA bundle {ca_bundle} is not a readable file; pass --ca-bundle PATH")
        binds[str(ca_bundle.resolve())] = {"bind": CONTAINER_CA_PATH, "mode": "ro"}
    host_config = hardened_host_config(
        api, memory_bytes=2 * 1024**3, nano_cpus=2_000_000_000, pids_limit=512,
        binds=binds,
        tmpfs={"/home/mcp-install": f"rw,nosuid,nodev,size=1g,uid={INSTALL_UID},gid={INSTALL_UID},mode=0700",
               "/tmp": "rw,nosuid,nodev,size=1g,mode=1777"},
        network_mode=network["network_mode"],
        dns=network["dns"],
    )
    container_id = session.create_container(
        "install",
        image=runtime_image,
        # The environment goes in through `env` on the command line, not the container config: `docker commit`
        # would carry config variables (proxies, CA paths) into the installed image and so into the run phase.
        command=["env", *(f"{k}={v}" for k, v in _install_environment(request, network["environment"]).items()), *_install_command(request)],
        user=f"{INSTALL_UID}:{INSTALL_UID}",
        working_dir="/opt/server",
        host_config=host_config,
    )
    if request.local_path is not None:
        arcname = "pkg" if request.local_path.is_dir() else request.local_path.name
        data = pack_path(request.local_path, arcname, INSTALL_UID, INSTALL_UID)
        api.put_archive(container_id, "/opt/src", data)
    return container_id


def _run_to_completion(client: docker.DockerClient, container_id: str, timeout: int, request: InstallRequest) -> str:
    api = client.api
    api.start(container_id)
    try:
        status = api.wait(container_id, timeout=timeout)
    except (ReadTimeout, RequestsConnectionError):
        raise SandboxError(f"installing {request.spec} took longer than {timeout} s; raise --install-timeout") from None
    output = api.logs(container_id, stdout=True, stderr=True).decode("utf-8", errors="replace")[-OUTPUT_TAIL_CHARS:]
    code = int(status.get("StatusCode", -1))
    if code != 0:
        tail = " | ".join(line.strip() for line in output.strip().splitlines()[-6:])
        raise SandboxError(f"installing {request.spec} failed (exit {code}): {tail}")
    return output


def _read_manifest(client: docker.DockerClient, container_id: str, ecosystem: Ecosystem) -> dict[str, Any]:
    path = "/opt/server/package-lock.json" if ecosystem == "npm" else "/opt/server/install.json"
    try:
        stream, _ = client.api.get_archive(container_id, path)
        manifest = json.loads(read_member(stream))
    except (NotFound, FileNotFoundError, json.JSONDecodeError) as exc:
        raise SandboxError(f"the installer finished but left no readable {path}: {exc}") from exc
    if ecosystem == "pypi" and isinstance(manifest, dict):
        try:
            stream, _ = client.api.get_archive(container_id, PYTHON_LOCKFILE)
            manifest["requirements"] = read_member(stream).decode("utf-8", errors="replace")
        except (NotFound, FileNotFoundError):
            manifest["requirements"] = None  # a local target: installed without a hash-pinned tree
    return manifest


def _describe(manifest: dict[str, Any], request: InstallRequest) -> tuple[str, dict[str, str]]:
    """The installed version and launch entry points of the requested package."""
    if request.ecosystem == "npm":
        package = (manifest.get("packages") or {}).get(f"node_modules/{request.name}")
        if not package:
            raise SandboxError(f"npm installed no package named {request.name!r} (see the installer output)")
        bins = package.get("bin") or {}
        if isinstance(bins, str):
            bins = {request.name.split("/")[-1]: bins}
        return str(package.get("version", "")), {str(k): f"/opt/server/node_modules/.bin/{k}" for k in bins}
    wanted = _normalize_python_name(request.name)
    for dist in manifest.get("distributions") or []:
        if _normalize_python_name(str(dist.get("name", ""))) == wanted:
            scripts = dist.get("console_scripts") or {}
            return str(dist.get("version", "")), {str(k): f"/opt/server/venv/bin/{k}" for k in scripts}
    raise SandboxError(f"uv installed no distribution named {request.name!r} (see the installer output)")


def _normalize_python_name(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _commit(client: docker.DockerClient, container_id: str, tag: str, request: InstallRequest,
            summary: dict[str, Any]) -> str:
    repository, _, image_tag = tag.partition(":")
    image_labels = {
        labels.KIND: labels.KIND_INSTALLED,
        labels.CREATED: str(int(time.time())),
        f"{labels.PREFIX}.ecosystem": request.ecosystem,
        f"{labels.PREFIX}.package": request.name,
        f"{labels.PREFIX}.version": summary["version"],
        MANIFEST_LABEL: json.dumps(summary),
    }
    conf = {"Labels": image_labels, "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "Cmd": ["/bin/false"], "User": "10002:10002", "WorkingDir": "/workspace"}
    try:
        committed = client.api.commit(container_id, repository=repository, tag=image_tag, conf=conf)
    except APIError as exc:
        raise SandboxError(f"could not save the installed server as an image: {exc}") from exc
    return str(committed["Id"])
