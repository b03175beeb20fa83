#!/usr/bin/env python3
"""The sandbox's own images, kept in the Actions cache between runs of the GitHub Action (action.yml).

A fresh runner has none of the images mcp-sandbox builds from images/, and building them is most of a first scan's
time (the three a scan needs took 41-52 s to build here, 7-9 s to load: benchmarks/bench_images_cache.py). The
action keeps the ones a scan of the target needs: its runtime (node for npm, python for PyPI), the egress sink and
the install proxy; never anything of a scanned server (every run installs it afresh, so its install is observed
anew). Three steps run this script, all before the scan, each unable to stop it (continue-on-error in action.yml):

    key        the cache key and the images it covers (GITHUB_OUTPUT `enabled`, `key`, `images`)
    load FILE  after a hit: `docker load` the archive re-packed (`repack`: only the configurations and layers its
               manifest names, each under a name of ours, under a manifest of ours naming only the expected tags)
    save FILE  after a miss: build whichever is missing and `docker save` them (GITHUB_OUTPUT `saved`), only on a
               GitHub-hosted runner before the action scanned anything there and with no installed server on its
               engine, so what is cached was not within a scanned server's reach

The key holds the project version, the images' tags (each the hash of its build context), the id of the base image
they are built from (the install step pulls it when the engine has none, as on a fresh GitHub-hosted runner; it
refreshes none already there) and the ISO week, so a changed definition or a new base
builds afresh and a cached image is at most a week behind the Debian packages its build installs. What fails here
costs only the build the cache would have saved: the scan builds what is missing. A bad `cache-images` value turns
the cache off here and is refused by the scan step (scripts/action_inputs.py), like every input.

Inputs (environment): INPUT_CACHE_IMAGES, INPUT_TARGET, INPUT_URL, INPUT_WORKING_DIRECTORY, IMAGES and KEY (the key
step's outputs, for load and save), GITHUB_OUTPUT. Runs under the Python of the venv the install step made; the
`docker` CLI gets its arguments as a list, never through a shell.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import subprocess
import sys
import tarfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import action_inputs  # scripts/action_inputs.py
from action_inputs import ENGINE_USED, read_input
from sandbox.core.untrusted import escape_for_terminal  # one line: a workflow command cannot start in it

if TYPE_CHECKING:
    import docker

SHARED = ("sink", "proxy")  # every sandboxed package scan starts the sink; a cold install, the proxy
RUNTIME_OF = {"npm": "node", "pypi": "python"}
KEY_PREFIX = "mcp-sandbox-images"
REGISTRY_PREFIXES = ("npm:", "pypi:")
INSPECT_SECONDS, ARCHIVE_SECONDS = 60, 900


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


def cache_key(version: str, tags: Sequence[str], base_id: str, platform: str, week: str) -> str:
    """The key: the version, and a digest of the images' tags, the base image's id, the engine's platform (a
    containerd-store engine gives a multi-platform base one id on every architecture) and the ISO week."""
    digest = hashlib.sha256("\n".join([*sorted(tags), base_id, platform, week]).encode()).hexdigest()[:24]
    return f"{KEY_PREFIX}-{version}-{digest}"


def expected_tags(names: Sequence[str]) -> list[str]:
    from sandbox.core import images

    return [images.image_tag(name) for name in names]


def repack(archive: Path, tags: Sequence[str], out: Path) -> list[str]:
    """Write to `out` an archive `docker load` can read only one way: the image configurations and layers that
    `archive`'s manifest.json names, each under a name of ours (`blob-N`), under a manifest of ours that names only
    `tags`; the tags it loads. Raises ImagesError for a name given twice, a manifest of another shape, one that names
    a link or an unclean path, an image with no name or named other than `tags`, or a tag named twice. No name the
    archive gives reaches the engine: not its manifest (whose keys Go's JSON reads in any case, the last one winning),
    its repositories file, an OCI index, links, other files or its blobs' own names."""
    with tarfile.open(archive) as saved:
        files = _regular_files(saved.getmembers())
        entries = _manifest(saved, files)
        named = _names(entries, set(tags))
        ours: dict[str, str] = {}  # the archive's blob name -> ours
        with tarfile.open(out, "w") as packed:
            for entry in entries:
                for name in (entry["Config"], *entry["Layers"]):
                    if name not in ours:
                        ours[name] = f"blob-{len(ours)}"
                        blob = _blob(name, files)
                        packed.addfile(_member(ours[name], blob.size), saved.extractfile(blob))
            manifest = json.dumps([{"Config": ours[entry["Config"]], "RepoTags": names,
                                    "Layers": [ours[layer] for layer in entry["Layers"]]}
                                   for entry, names in zip(entries, named, strict=True)]).encode()
            packed.addfile(_member("manifest.json", len(manifest)), io.BytesIO(manifest))
    return sorted(tag for names in named for tag in names)


def _names(entries: list[dict[str, Any]], wanted: set[str]) -> list[list[str]]:
    """Each image's tags as `docker images` shows them; ImagesError unless every image has one or more, all
    of `wanted`, and no tag is given twice."""
    named = [sorted({_familiar(tag) for tag in entry["RepoTags"]}) for entry in entries]
    every = [tag for names in named for tag in names]
    if any(not names for names in named):
        raise ImagesError("the archive holds an image with no name")
    if set(every) - wanted:
        raise ImagesError(f"the archive names {escape_for_terminal(', '.join(sorted(set(every) - wanted)), 300)}")
    if len(every) != len(set(every)):
        raise ImagesError("the archive names an image twice")
    return named


def _regular_files(members: Sequence[tarfile.TarInfo]) -> dict[str, tarfile.TarInfo]:
    """The archive's regular files by name; ImagesError when a name is given twice (which one would be read?).
    Links, folders and the rest are not files of it here: nothing refers to them, and nothing of them is passed on."""
    files: dict[str, tarfile.TarInfo] = {}
    for member in members:
        if member.name in files:
            raise ImagesError(f"the archive holds {member.name[:200]!r} twice")  # repr: one line
        if member.isfile():
            files[member.name] = member
    return files


def _blob(name: str, files: dict[str, tarfile.TarInfo]) -> tarfile.TarInfo:
    """The regular file a manifest names, under a clean relative name (no link, no `..`, no `./`)."""
    clean = posixpath.normpath(name) == name and not name.startswith(("/", "../")) and name not in (".", "..")
    if not clean or name not in files:
        raise ImagesError(f"the archive's manifest names {name[:200]!r}, which is not a file of it under a clean name")
    return files[name]


def _manifest(saved: tarfile.TarFile, files: dict[str, tarfile.TarInfo]) -> list[dict[str, Any]]:
    """manifest.json's entries, each with a config path, layer paths and tags (as strings)."""
    if "manifest.json" not in files:
        raise ImagesError("the archive has no manifest.json")  # as a regular file of that exact name
    handle = saved.extractfile(files["manifest.json"])
    if handle is None or files["manifest.json"].size > 16 * 2**20:
        raise ImagesError("the archive's manifest.json cannot be read")
    try:
        entries = json.loads(handle.read())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ImagesError(f"the archive's manifest.json is not JSON: {exc}") from None
    shaped = isinstance(entries, list) and all(
        isinstance(entry, dict) and isinstance(entry.get("Config"), str)
        and _strings(entry.get("Layers")) and _strings(entry.get("RepoTags")) for entry in entries)
    if not shaped:
        raise ImagesError("the archive's manifest.json is not a list of images with Config, Layers and RepoTags")
    return entries


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _familiar(name: str) -> str:
    """A name as `docker images` shows it (a Docker 25+ archive may name docker.io/library/NAME:TAG)."""
    for prefix in ("docker.io/library/", "docker.io/"):
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def _member(name: str, size: int) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.size, member.mode = size, 0o644
    return member


def key_step() -> None:
    from sandbox import __version__
    from sandbox.core import images

    names = wanted_images(read_input("target"), read_input("url"), Path(read_input("working-directory") or "."))
    if read_input("cache-images").lower() != "true" or not names:
        _write_outputs({"enabled": "false"})
        return
    base = _docker(["image", "inspect", "--format", "{{.Id}}", images.DEFAULT_BASE_IMAGE], check=False).strip()
    platform = _docker(["info", "--format", "{{.OSType}}/{{.Architecture}}"], check=False).strip()
    if not base or not platform:
        _write_outputs({"enabled": "false"})
        return
    week = time.strftime("%G-W%V", time.gmtime())
    _write_outputs({"enabled": "true", "key": cache_key(__version__, expected_tags(names), base, platform, week),
                    "images": " ".join(names)})


def load_step(archive: Path, names: Sequence[str]) -> None:
    """Load what the restored archive holds of the images of `names`, re-packed (`repack`); a warning instead when it
    cannot be, and the scan builds them."""
    packed = archive.with_name(archive.name + ".repacked")
    try:
        if not archive.is_file():
            print(f"no cached images at {archive}: the scan builds what it needs")
            return
        loading = repack(archive, expected_tags(names), packed)
        archive.unlink()
        print(_docker(["load", "--input", str(packed)], timeout=ARCHIVE_SECONDS).strip())
        print(f"loaded {', '.join(loading)} from the cache")
    except (ImagesError, tarfile.TarError, OSError) as exc:
        key = os.environ.get("KEY", "")
        print(f"::warning::the cached sandbox images were not loaded ({escape_for_terminal(str(exc), 800)}); the scan builds them. "
              f"Runs this week meet the same entry: `gh cache delete {escape_for_terminal(key, 300)}` removes it", file=sys.stderr)
    finally:
        archive.unlink(missing_ok=True)
        packed.unlink(missing_ok=True)


def save_step(archive: Path, names: Sequence[str]) -> None:
    """Build whichever of `names` is missing, then save them all to `archive` (GITHUB_OUTPUT `saved`); nothing on an
    engine where a scanned server has run (an installed image is there)."""
    import docker

    from sandbox.core import images
    from sandbox.core.errors import SandboxError

    if not names:
        raise ImagesError("no images to save (the key step named none)")
    refusal = save_refusal()
    if refusal is not None:
        print(f"not saved: {refusal}")
        return
    client = docker.from_env()
    try:
        if ran_a_server(client):
            print("not saved: a scanned server has been installed on this engine, so its images are not cached from it")
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


def save_refusal(environ: dict[str, str] | None = None) -> str | None:
    """Why the images may not be saved from this runner, before the engine is asked (None: they may): only a
    GitHub-hosted runner (a fresh VM per job) on which the action has not scanned yet (its scan step leaves
    ENGINE_USED in RUNNER_TEMP before it starts anything)."""
    env = os.environ if environ is None else environ
    if env.get("RUNNER_ENVIRONMENT") != "github-hosted":
        return "only a GitHub-hosted runner, fresh for each job, saves the images (this engine may have run servers)"
    if (Path(env.get("RUNNER_TEMP") or "/nonexistent") / ENGINE_USED).exists():
        return "the action has already scanned on this runner, so its images are not cached from it"
    return None


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
