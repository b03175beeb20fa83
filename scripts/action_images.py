#!/usr/bin/env python3
"""The sandbox's own images, kept in the Actions cache between runs of the GitHub Action (action.yml).

A fresh runner has none of the images mcp-sandbox builds from images/, and building them is most of a first scan's
time (the three a scan needs took 40-52 s to build here, 6-9 s to load: benchmarks/bench_images_cache.py). The
action keeps the ones a scan of the target needs: its runtime (node for npm, python for PyPI), the sink
and the install proxy; never anything of a scanned server (every run installs it afresh, so its install is observed
anew). Three steps run this script:

    key        before the scan: the cache key and the images it covers (GITHUB_OUTPUT `enabled`, `key`, `images`)
    load FILE  when the cache was restored: `docker load` the file, then remove it
    save FILE  after a run that missed the cache: build whichever of the images is missing, `docker save` them

The key holds the project version, the images' tags (each the hash of its build context) and the id of the base
image they are built from (the install step's ensure-base-image.sh gets it each run), so a changed definition or a
new base builds afresh. A cache that fails to load only costs the build it would have saved: the scan builds what is
missing. A bad `cache-images` input is one line and exit 2, like every input of the action.

Inputs (environment): INPUT_CACHE_IMAGES (true or false), INPUT_TARGET, INPUT_URL, INPUT_WORKING_DIRECTORY,
GITHUB_OUTPUT. Runs under the Python of the venv the install step made; its `docker` CLI calls get their arguments
as a list, never through a shell.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

# The inputs of action.yml this script reads (beside target, url and working-directory, which scripts/action.py
# validates), with their defaults there; tests/test_action.py checks the two agree.
IMAGE_INPUTS = {"cache-images": "true"}
SHARED = ("sink", "proxy")  # every sandboxed package scan starts the sink; a cold install, the proxy
RUNTIME_OF = {"npm": "node", "pypi": "python"}
KEY_PREFIX = "mcp-sandbox-images"


class ImagesError(Exception):
    """What stops this step: printed as one line, exit 2."""


def wanted_images(target: str, url: str, workdir: Path) -> tuple[str, ...]:
    """The images a scan of `target` (in `workdir`) builds: its runtime, the sink and the proxy; none for a remote
    scan (`url`: not sandboxed) or a target that does not name a package here (the scan step says why)."""
    from scanner.errors import UsageError
    from scanner.pipeline.targets import parse_target

    if url.strip() or not target.strip():
        return ()
    registry = target.startswith(("npm:", "pypi:"))
    path = Path(target).expanduser()
    try:
        found = parse_target(target if registry or path.is_absolute() else str(workdir / path))
    except (UsageError, OSError):
        return ()
    runtime = RUNTIME_OF.get(found.ecosystem)
    return () if runtime is None else (runtime, *SHARED)


def cache_key(version: str, tags: Sequence[str], base_id: str) -> str:
    """The key: the version, and a digest of the images' tags and the base image's id."""
    digest = hashlib.sha256("\n".join([*sorted(tags), base_id]).encode()).hexdigest()[:24]
    return f"{KEY_PREFIX}-{version}-{digest}"


def _enabled(value: str) -> bool:
    if value not in ("true", "false"):
        raise ImagesError(f'input "cache-images": true or false, not {value!r}')
    return value == "true"


def _write_outputs(values: dict[str, str]) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    lines = "".join(f"{name}={value}\n" for name, value in values.items())  # one-line values of ours only
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(lines)
    print(lines, end="")


def key_step() -> None:
    from sandbox import __version__
    from sandbox.core import images

    names = wanted_images(os.environ.get("INPUT_TARGET", ""), os.environ.get("INPUT_URL", ""),
                          Path(os.environ.get("INPUT_WORKING_DIRECTORY") or "."))
    if not _enabled(os.environ.get("INPUT_CACHE_IMAGES", IMAGE_INPUTS["cache-images"])) or not names:
        _write_outputs({"enabled": "false"})
        return
    base = _docker(["image", "inspect", "--format", "{{.Id}}", images.DEFAULT_BASE_IMAGE], check=False).strip()
    tags = [images.image_tag(name) for name in names]
    _write_outputs({"enabled": "true", "key": cache_key(__version__, tags, base or "no-base-image"),
                    "images": " ".join(names)})


def load_step(archive: Path) -> None:
    """Load the restored images (a file that is not there, or does not load, is a build the scan does instead)."""
    if not archive.is_file():
        print(f"no cached images at {archive}: the scan builds what it needs")
        return
    try:
        print(_docker(["load", "--input", str(archive)]).strip())
    except ImagesError as exc:
        print(f"warning: the cached images did not load ({exc}); the scan builds what it needs", file=sys.stderr)
    finally:
        archive.unlink(missing_ok=True)


def save_step(archive: Path, names: Sequence[str]) -> None:
    """Build whichever of `names` is missing, then save them all to `archive` for the cache."""
    import docker

    from sandbox.core import images
    from sandbox.core.errors import SandboxError

    if not names:
        raise ImagesError("no images to save (the key step named none)")
    client = docker.from_env()
    try:
        tags = [images.ensure_runtime_image(client, name, progress=print).tag for name in names]
    except (SandboxError, docker.errors.DockerException) as exc:
        raise ImagesError(f"could not build the images to cache: {exc}") from None
    finally:
        client.close()
    archive.parent.mkdir(parents=True, exist_ok=True)
    _docker(["save", "--output", str(archive), *tags])
    print(f"saved {', '.join(tags)} ({archive.stat().st_size / 2**20:.0f} MiB) to {archive}")


def _docker(arguments: list[str], *, check: bool = True) -> str:
    done = subprocess.run(["docker", *arguments], capture_output=True, text=True, check=False)
    if done.returncode != 0 and check:
        raise ImagesError(f"docker {arguments[0]} failed: {' '.join(done.stderr.split())[:500]}")
    return done.stdout


def main(argv: Sequence[str]) -> int:
    try:
        if list(argv) == ["key"]:
            key_step()
        elif len(argv) == 2 and argv[0] == "load":
            load_step(Path(argv[1]))
        elif len(argv) >= 2 and argv[0] == "save":
            save_step(Path(argv[1]), argv[2:] or os.environ.get("IMAGES", "").split())
        else:
            raise ImagesError("usage: action_images.py key | load FILE | save FILE [IMAGE...]")
    except ImagesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
