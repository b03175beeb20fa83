#!/usr/bin/env python3
"""The sandbox's own images, kept in the Actions cache between runs of the GitHub Action (action.yml).

A fresh runner has none of the images mcp-sandbox builds from images/, and building them is most of a first scan's
time (the three a scan needs took 40-55 s to build here, 6-9 s to load: benchmarks/bench_images_cache.py). The
action keeps the ones a scan of the target needs: its runtime (node for npm, python for PyPI), the egress sink and
the install proxy; never anything of a scanned server (every run installs it afresh, so its install is observed
anew). Three steps run this script, all before the scan, each unable to stop it (continue-on-error in action.yml):

    key        the cache key and the images it covers (GITHUB_OUTPUT `enabled`, `key`, `images`)
    load FILE  after a hit: check that the archive holds exactly those images, then `docker load` it
    save FILE  after a miss: build whichever is missing and `docker save` them (GITHUB_OUTPUT `saved`), only on an
               engine that has not run a scanned server yet, so what is cached was never within a server's reach

The key holds the project version, the images' tags (each the hash of its build context), the id of the base image
they are built from (the install step pulls it each run) and the ISO week, so a changed definition or a new base
builds afresh and a cached image is at most a week behind the Debian packages its build installs. What fails here
costs only the build the cache would have saved: the scan builds what is missing. A bad `cache-images` value turns
the cache off here and is refused by the scan step (scripts/action_inputs.py), like every input.

Inputs (environment): INPUT_CACHE_IMAGES, INPUT_TARGET, INPUT_URL, INPUT_WORKING_DIRECTORY, IMAGES and KEY (the key
step's outputs, for load and save), GITHUB_OUTPUT. Runs under the Python of the venv the install step made; the
`docker` CLI gets its arguments as a list, never through a shell.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from action_inputs import read_input  # scripts/action_inputs.py

if TYPE_CHECKING:
    import docker

SHARED = ("sink", "proxy")  # every sandboxed package scan starts the sink; a cold install, the proxy
RUNTIME_OF = {"npm": "node", "pypi": "python"}
KEY_PREFIX = "mcp-sandbox-images"
REGISTRY_PREFIXES = ("npm:", "pypi:")
INSPECT_SECONDS, ARCHIVE_SECONDS = 60, 900
# Where a `docker save` archive names its images: the image manifest (every engine writes it), the legacy
# repositories file, and the OCI index of newer engines (full name, or only the tag).
NAME_ANNOTATIONS = ("io.containerd.image.name", "org.opencontainers.image.ref.name")


class ImagesError(Exception):
    """What stops this step: printed as one line, exit 2."""


def wanted_images(target: str, url: str, workdir: Path) -> tuple[str, ...]:
    """The images a scan of `target` (in `workdir`) builds: its runtime, the sink and the proxy; none for a remote
    scan (`url`: not sandboxed) or a target that does not name a package here (the scan step says why)."""
    from scanner.errors import UsageError
    from scanner.pipeline.targets import parse_target

    target = target.strip()
    if url.strip() or not target:
        return ()
    path = Path(target).expanduser()
    local = not target.startswith(REGISTRY_PREFIXES) and not path.is_absolute()
    try:
        found = parse_target(str(workdir / path) if local else target)
    except (UsageError, OSError):
        return ()
    runtime = RUNTIME_OF.get(found.ecosystem)
    return () if runtime is None else (runtime, *SHARED)


def cache_key(version: str, tags: Sequence[str], base_id: str, week: str) -> str:
    """The key: the version, and a digest of the images' tags, the base image's id and the ISO week."""
    digest = hashlib.sha256("\n".join([*sorted(tags), base_id, week]).encode()).hexdigest()[:24]
    return f"{KEY_PREFIX}-{version}-{digest}"


def expected_tags(names: Sequence[str]) -> list[str]:
    from sandbox.core import images

    return [images.image_tag(name) for name in names]


def archive_names(archive: Path) -> set[str]:
    """Every image name the `docker save` archive would give on load (ImagesError when it has no image manifest)."""
    names: set[str] = set()
    with tarfile.open(archive) as saved:
        members = {member.name.lstrip("./"): member for member in saved.getmembers() if member.isfile()}
        if "manifest.json" not in members:
            raise ImagesError("the archive has no manifest.json")
        for entry in _json_member(saved, members["manifest.json"]):
            names.update(entry.get("RepoTags") or [])
        if "repositories" in members:
            for repository, tags in _json_member(saved, members["repositories"]).items():
                names.update(f"{repository}:{tag}" for tag in tags)
        if "index.json" in members:
            for manifest in _json_member(saved, members["index.json"]).get("manifests") or []:
                names.update(str(value) for key, value in (manifest.get("annotations") or {}).items()
                             if key in NAME_ANNOTATIONS)
    return names


def unexpected_names(found: set[str], tags: Sequence[str]) -> list[str]:
    """The names in `found` that are none of `tags` (an OCI ref.name may be a tag's part after the colon)."""
    allowed = set(tags) | {tag.rpartition(":")[2] for tag in tags}
    return sorted(found - allowed)


def _json_member(saved: tarfile.TarFile, member: tarfile.TarInfo) -> object:
    handle = saved.extractfile(member)
    if handle is None or member.size > 16 * 2**20:
        raise ImagesError(f"the archive's {member.name} cannot be read")
    try:
        return json.loads(handle.read())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ImagesError(f"the archive's {member.name} is not JSON: {exc}") from None


def key_step() -> None:
    from sandbox import __version__
    from sandbox.core import images

    names = wanted_images(read_input("target"), read_input("url"), Path(read_input("working-directory") or "."))
    base = _docker(["image", "inspect", "--format", "{{.Id}}", images.DEFAULT_BASE_IMAGE], check=False).strip()
    if read_input("cache-images").lower() != "true" or not names or not base:
        _write_outputs({"enabled": "false"})
        return
    week = time.strftime("%G-W%V", time.gmtime())
    _write_outputs({"enabled": "true", "key": cache_key(__version__, expected_tags(names), base, week),
                    "images": " ".join(names)})


def load_step(archive: Path, names: Sequence[str]) -> None:
    """Load the restored archive when it holds exactly the images of `names`; else a warning, and the scan builds."""
    try:
        if not archive.is_file():
            print(f"no cached images at {archive}: the scan builds what it needs")
            return
        tags = expected_tags(names)
        unexpected = unexpected_names(archive_names(archive), tags)
        if unexpected:
            raise ImagesError(f"the archive also names {', '.join(unexpected)[:300]}; not loaded")
        print(_docker(["load", "--input", str(archive)], timeout=ARCHIVE_SECONDS).strip())
    except (ImagesError, tarfile.TarError, OSError) as exc:
        key = os.environ.get("KEY", "")
        print(f"::warning::the cached sandbox images were not loaded ({exc}); the scan builds them. The entry "
              f"stays until it is unused for 7 days: `gh cache delete {key}` removes it now", file=sys.stderr)
    finally:
        archive.unlink(missing_ok=True)


def save_step(archive: Path, names: Sequence[str]) -> None:
    """Build whichever of `names` is missing, then save them all to `archive` (GITHUB_OUTPUT `saved`); nothing on an
    engine where a scanned server has run (an installed image is there)."""
    import docker

    from sandbox.core import images
    from sandbox.core.errors import SandboxError

    if not names:
        raise ImagesError("no images to save (the key step named none)")
    client = docker.from_env()
    try:
        if ran_a_server(client):
            print("not saved: a scanned server has already run on this engine, so its images are not cached from it")
            return
        tags = [images.ensure_runtime_image(client, name, progress=print).tag for name in names]
    except (SandboxError, docker.errors.DockerException) as exc:
        raise ImagesError(f"could not build the images to cache: {exc}") from None
    finally:
        client.close()
    archive.parent.mkdir(parents=True, exist_ok=True)
    _docker(["save", "--output", str(archive), *tags], timeout=ARCHIVE_SECONDS)
    print(f"saved {', '.join(tags)} ({archive.stat().st_size / 2**20:.0f} MiB) to {archive}")
    _write_outputs({"saved": "true"})


def ran_a_server(client: docker.DockerClient) -> bool:
    """Whether a scan installed a server on this engine (an installed image is there): from then on the images
    were within a server's reach, however well it was contained."""
    from sandbox.core import labels

    return bool(client.images.list(filters={"label": f"{labels.KIND}={labels.KIND_INSTALLED}"}))


def _write_outputs(values: dict[str, str]) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    lines = "".join(f"{name}={value}\n" for name, value in values.items())  # one-line values of ours only
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(lines)
    print(lines, end="")


def _docker(arguments: list[str], *, check: bool = True, timeout: float = INSPECT_SECONDS) -> str:
    try:
        done = subprocess.run(["docker", *arguments], capture_output=True, text=True, check=False, timeout=timeout)
    except (subprocess.TimeoutExpired, OSError) as exc:
        raise ImagesError(f"docker {arguments[0]} did not finish: {exc}") from None
    if done.returncode != 0 and check:
        raise ImagesError(f"docker {arguments[0]} failed: {' '.join(done.stderr.split())[:500]}")
    return done.stdout


def main(argv: Sequence[str]) -> int:
    names = os.environ.get("IMAGES", "").split()
    try:
        if list(argv) == ["key"]:
            key_step()
        elif len(argv) == 2 and argv[0] == "load":
            load_step(Path(argv[1]), names)
        elif len(argv) >= 2 and argv[0] == "save":
            save_step(Path(argv[1]), argv[2:] or names)
        else:
            raise ImagesError("usage: action_images.py key | load FILE | save FILE [IMAGE...]")
    except ImagesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
