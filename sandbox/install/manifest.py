"""The install manifest read out of an installed image's container: the installer's description of what it installed
(`install.json`; npm's lockfile) and, for Python, the hash-pinned lockfile as `requirements`. Read by the install
itself (sandbox/install/container.py) and, for a cached install, beside the scan (scanner/pipeline/installed_files.py),
through a container of the image (the archive API needs one)."""

from __future__ import annotations

import json
from typing import Any

import docker
from docker.errors import NotFound

from sandbox.core.archive import archive_of, read_member
from sandbox.core.errors import SandboxError
from sandbox.install.installers import installer
from sandbox.install.request import Ecosystem


def read_manifest(client: docker.DockerClient, container_id: str, ecosystem: Ecosystem) -> dict[str, Any]:
    """The install manifest (the Python lockfile as `requirements`) out of an installed image's container. Raises
    SandboxError when it is not there or not JSON, and when the container read from is gone (the engine's 404 for a
    missing container is no statement about the image)."""
    packages = installer(ecosystem)
    path = packages.manifest_path
    try:
        stream = archive_of(client.api, container_id, path)
        if stream is None:
            raise FileNotFoundError("it is not in the image")
        manifest = json.loads(read_member(stream))
        if packages.lockfile is not None and isinstance(manifest, dict):
            manifest["requirements"] = _lockfile(client, container_id, packages.lockfile)
    except NotFound as exc:
        raise SandboxError(f"the container {path} was being read from is gone: {exc}") from exc
    except (FileNotFoundError, json.JSONDecodeError) as exc:
        raise SandboxError(f"the installer finished but left no readable {path}: {exc}") from exc
    return manifest


def _lockfile(client: docker.DockerClient, container_id: str, path: str) -> str | None:
    """The Python lockfile's text; None for a local target, installed without a hash-pinned tree (NotFound when the
    container is gone)."""
    stream = archive_of(client.api, container_id, path)
    try:
        return read_member(stream).decode("utf-8", errors="replace") if stream is not None else None
    except FileNotFoundError:
        return None
