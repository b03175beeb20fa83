"""What the GitHub Action's images cache saves a fresh runner: building the images a scan needs, against loading them
from the archive the action keeps (scripts/action_images.py), on this machine, in the same rounds.

    .venv/bin/python benchmarks/bench_images_cache.py [--rounds 1] [--images python,sink,proxy]

Each round builds each image afresh (no build cache, the base image present, as on a runner after the install
step) under a tag of this benchmark's own, saves them to one archive (`docker save`, what the action caches after a
miss), removes them, then loads the archive as the action does after a hit (re-packed, then `docker load`) and removes
them again.
The scan's own images and tags are not touched. What the Actions cache itself adds (its upload, its download and
their zstd) is GitHub's and is not measured here. Prints the medians and the ratio of the build to the load.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import docker

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]
import action_images  # noqa: E402 - scripts/action_images.py, after the checkout is on the path
from sandbox.core import images  # noqa: E402

BENCH_REPOSITORY = "mcp-sandbox-bench-images-cache"


def build_afresh(client: docker.DockerClient, name: str) -> str:
    """`name`'s image built with no build cache under the benchmark's tag; the tag."""
    tag = f"{BENCH_REPOSITORY}:{name}"
    context = images._build_context(name, images.DEFAULT_CA_BUNDLE)  # the context a scan's build sends
    for chunk in client.api.build(fileobj=io.BytesIO(context), custom_context=True, tag=tag, rm=True, forcerm=True,
                                  pull=False, nocache=True, decode=True,
                                  buildargs={"BASE": images.DEFAULT_BASE_IMAGE}):
        if "error" in chunk:
            raise SystemExit(f"building {name} failed: {chunk['error'].strip()}")
    return tag


def docker_cli(*arguments: str) -> None:
    subprocess.run(["docker", *arguments], check=True, capture_output=True)


def one_round(client: docker.DockerClient, names: list[str], work: Path) -> dict[str, float]:
    began = time.perf_counter()
    tags = [build_afresh(client, name) for name in names]
    built = time.perf_counter()
    archive = work / "images.tar"
    docker_cli("save", "--output", str(archive), *tags)
    saved = time.perf_counter()
    size = archive.stat().st_size / 2**20
    docker_cli("rmi", *tags)
    loading = time.perf_counter()
    packed = work / "images.repacked"
    action_images.repack(archive, tags, packed)  # what the action's load step hands to the engine
    repacked = time.perf_counter()
    docker_cli("load", "--input", str(packed))
    loaded = time.perf_counter()
    packed.unlink()
    docker_cli("rmi", *tags)
    archive.unlink()
    return {"build": built - began, "save": saved - built, "load": loaded - loading, "of which repack": repacked - loading,
            "MiB": size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--images", default="python,sink,proxy", help="comma-separated: node, python, sink, proxy")
    args = parser.parse_args()
    names = [name for name in args.images.split(",") if name]
    unknown = sorted(set(names) - set(images.REPOSITORIES))
    if unknown or not names:
        parser.error(f"--images: unknown {', '.join(unknown) or 'nothing given'}; use node, python, sink, proxy")
    client = docker.from_env()
    rounds = []
    with tempfile.TemporaryDirectory(prefix="mcp-sandbox-bench-images-") as work:
        for number in range(1, args.rounds + 1):
            rounds.append(one_round(client, names, Path(work)))
            print(f"  round {number}: " + ", ".join(f"{k} {v:.1f}" for k, v in rounds[-1].items()), flush=True)
    median = {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
    print(f"images cache ({', '.join(names)}; medians of {len(rounds)} rounds): build afresh {median['build']:.1f} s, "
          f"load the archive {median['load']:.1f} s (re-packing {median['of which repack']:.1f} s; {median['MiB']:.0f} MiB): {median['build'] / median['load']:.1f}x "
          f"faster; saving it after a miss {median['save']:.1f} s")


if __name__ == "__main__":
    main()
