"""The images the sandbox builds from images/<name>/: the runtimes (node, python), the egress sink and the install
proxy. Each is tagged by project version and build-context hash, so a changed Dockerfile rebuilds and an unchanged
one is reused. Files several images share (images/common/, e.g. users.sh) are in every build context under `common/`
and in its hash, because a Docker build context cannot reach outside its own directory."""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import docker
from docker.errors import APIError, BuildError, ImageNotFound

from sandbox import __version__
from sandbox.core import labels
from sandbox.core.errors import ImageMissing, SandboxError

RUNTIMES = ("node", "python")
REPOSITORIES = {"node": "mcp-sandbox-runtime-node", "python": "mcp-sandbox-runtime-python",
                "sink": "mcp-sandbox-sink", "proxy": "mcp-sandbox-proxy"}
DEFAULT_BASE_IMAGE = "debian:trixie-slim"
# The build contexts: images/ of the repository, shipped in the wheel as the package data of sandbox.image_contexts.
IMAGES_DIR = Path(str(resources.files("sandbox.image_contexts")))
COMMON_DIR = IMAGES_DIR / "common"
COMMON_PREFIX = "common"
DEFAULT_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")

ProgressFn = Callable[[str], None]


@dataclass(frozen=True)
class RuntimeImage:
    runtime: str
    tag: str
    image_id: str
    built: bool


def context_dir(runtime: str) -> Path:
    if runtime not in REPOSITORIES:
        raise ValueError(f"unknown image {runtime!r}")
    path = IMAGES_DIR / runtime
    if not (path / "Dockerfile").is_file():
        raise SandboxError(f"image definition {path}/Dockerfile not found; reinstall mcp-sandbox (the wheel ships images/)")
    return path


def _files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


def _context_files(runtime: str) -> list[tuple[str, Path]]:
    """(name in the build context, file): images/<runtime>/ at the root and images/common/ under `common/`. The build
    and the context hash both read this one list, so a change to a shared file rebuilds every image."""
    root = context_dir(runtime)
    if (root / COMMON_PREFIX).exists():
        raise SandboxError(f"{root}/{COMMON_PREFIX} would shadow the shared files of {COMMON_DIR}; rename it")
    own = [(str(path.relative_to(root)), path) for path in _files_under(root)]
    shared = [(f"{COMMON_PREFIX}/{path.relative_to(COMMON_DIR)}", path) for path in _files_under(COMMON_DIR)]
    return sorted(own + shared)


def context_hash(runtime: str, base_image: str = DEFAULT_BASE_IMAGE) -> str:
    """SHA-256 over the base image name and every file of the build context (names and bytes), first 12 hex."""
    digest = hashlib.sha256(base_image.encode())
    for name, path in _context_files(runtime):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]


def image_tag(runtime: str, base_image: str = DEFAULT_BASE_IMAGE) -> str:
    return f"{REPOSITORIES[runtime]}:{__version__}-{context_hash(runtime, base_image)}"


def ensure_runtime_image(
    client: docker.DockerClient,
    runtime: str,
    *,
    base_image: str = DEFAULT_BASE_IMAGE,
    ca_bundle: Path | None = None,
    rebuild: bool = False,
    progress: ProgressFn | None = None,
    build: bool = True,
) -> RuntimeImage:
    """Return the image `runtime` (node, python, sink, proxy), building it when missing (or when rebuild is asked);
    `build` False: ImageMissing instead of a build."""
    tag = image_tag(runtime, base_image)
    if not rebuild:
        try:
            return RuntimeImage(runtime, tag, client.images.get(tag).id, built=False)
        except ImageNotFound:
            if not build:
                raise ImageMissing(f"the {runtime} image {tag} is not built") from None
    try:
        client.images.get(base_image)
    except ImageNotFound:
        raise SandboxError(
            f"base image {base_image} is missing; run `make images` (it pulls it, or builds it with debootstrap)"
        ) from None
    image_id = _build(client, runtime, tag, base_image, ca_bundle or DEFAULT_CA_BUNDLE, progress)
    return RuntimeImage(runtime, tag, image_id, built=True)


def _build_context(runtime: str, ca_bundle: Path) -> bytes:
    """The build context as a tar: images/<runtime>/, images/common/ as common/, plus the CA bundle (used only by
    build stages)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, path in _context_files(runtime):
            tar.add(path, arcname=name)
        ca_bytes = ca_bundle.read_bytes() if ca_bundle.is_file() else b""
        info = tarfile.TarInfo("ca-bundle.crt")
        info.size = len(ca_bytes)
        tar.addfile(info, io.BytesIO(ca_bytes))
    return buffer.getvalue()


def _build(
    client: docker.DockerClient, runtime: str, tag: str, base_image: str, ca_bundle: Path, progress: ProgressFn | None
) -> str:
    context = _build_context(runtime, ca_bundle)
    image_labels = {labels.KIND: labels.KIND_RUNTIME, f"{labels.PREFIX}.runtime": runtime}
    stream = client.api.build(
        fileobj=io.BytesIO(context),
        custom_context=True,
        tag=tag,
        rm=True,
        forcerm=True,
        pull=False,
        decode=True,
        labels=image_labels,
        buildargs={"BASE": base_image},
    )
    tail: list[str] = []
    image_id = None
    try:
        for chunk in stream:
            if "error" in chunk:
                raise SandboxError(f"building {tag} failed: {chunk['error'].strip()} (last output: {' | '.join(tail[-5:])})")
            line = str(chunk.get("stream", "")).strip()
            if line:
                tail.append(line)
                if progress and line.startswith("Step "):
                    progress(line)
            if "aux" in chunk and "ID" in chunk["aux"]:
                image_id = chunk["aux"]["ID"]
    except (APIError, BuildError) as exc:
        raise SandboxError(f"building {tag} failed: {exc}") from exc
    return image_id or client.images.get(tag).id
