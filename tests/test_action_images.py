"""The GitHub Action's images cache (scripts/action_images.py and its steps in action.yml): the key and the images it
covers for each kind of target, a bad input refused in one line, the steps wired to one key and one file, and the
archive saved and loaded through a real Docker engine."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from sandbox import __version__
from sandbox.core import images
from tests import mini_yaml
from tests.sandbox_helpers import REPO, ZOO

SCRIPT = REPO / "scripts" / "action_images.py"
PINNED = "55cc8345863c7cc4c66a329aec7e433d2d1c52a9"  # actions/cache v6.1.0

sys.path.insert(0, str(REPO / "scripts"))
import action_images  # scripts/action_images.py

sys.path.pop(0)


def run_step(tmp_path: Path, *args: str, **inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """The script as a step of the action runs it: inputs as INPUT_* variables, outputs in GITHUB_OUTPUT."""
    output = tmp_path / "github_output"
    output.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env.update({"GITHUB_OUTPUT": str(output), **{f"INPUT_{k.upper()}": v for k, v in inputs.items()}})
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=600, check=False)
    written = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
    return done, written


# ---------------------------------------------------------------------------------------------- what is cached


@pytest.mark.parametrize(("target", "expected"), [
    ("pypi:mcp-server-time", ("python", "sink", "proxy")),
    ("npm:@modelcontextprotocol/server-filesystem", ("node", "sink", "proxy")),
    (str(ZOO), ("python", "sink", "proxy")),  # a local folder: its manifest says the ecosystem
])
def test_a_package_target_caches_its_runtime_the_sink_and_the_proxy(target: str, expected: tuple[str, ...]) -> None:
    assert action_images.wanted_images(target, "", REPO) == expected


def test_a_relative_folder_is_read_from_the_working_directory() -> None:
    assert action_images.wanted_images("zoo", "", ZOO.parent) == ("python", "sink", "proxy")
    assert action_images.wanted_images("zoo", "", REPO) == ()  # no such folder there


@pytest.mark.parametrize(("target", "url"), [
    ("", "https://mcp.example.invalid/mcp"),  # a remote scan runs no sandbox
    ("", ""),  # nothing to scan: the scan step says so
    ("mcp-server-time", ""),  # not a target (the scan step says what was meant)
    ("docker:example.invalid/server:1", ""),  # a container image as shipped brings its own runtime
])
def test_what_names_no_package_caches_nothing(target: str, url: str) -> None:
    assert action_images.wanted_images(target, url, REPO) == ()


def test_the_key_names_the_version_and_changes_with_any_tag_and_the_base() -> None:
    tags = ["mcp-sandbox-sink:0.1.0-aaaa", "mcp-sandbox-proxy:0.1.0-bbbb", "mcp-sandbox-runtime-node:0.1.0-cccc"]
    key = action_images.cache_key("0.1.0", tags, "sha256:base")
    assert key.startswith("mcp-sandbox-images-0.1.0-")
    assert key == action_images.cache_key("0.1.0", list(reversed(tags)), "sha256:base")  # the order is not the key
    assert key != action_images.cache_key("0.1.0", [*tags[:2], "mcp-sandbox-runtime-node:0.1.0-dddd"], "sha256:base")
    assert key != action_images.cache_key("0.1.0", tags, "sha256:newer-base")
    assert key != action_images.cache_key("0.2.0", tags, "sha256:base")


# ---------------------------------------------------------------------------------------------- the key step


def test_the_key_step_writes_the_key_of_the_targets_images(tmp_path: Path) -> None:
    done, outputs = run_step(tmp_path, "key", cache_images="true", target="pypi:mcp-server-time")
    assert done.returncode == 0, done.stderr
    assert outputs["enabled"] == "true"
    assert outputs["images"] == "python sink proxy"
    tags = [images.image_tag(name) for name in ("python", "sink", "proxy")]
    assert outputs["key"].startswith(f"mcp-sandbox-images-{__version__}-")
    assert outputs["key"] in {action_images.cache_key(__version__, tags, base) for base in
                              (_base_id(), "no-base-image")}


@pytest.mark.parametrize("inputs", [
    {"cache_images": "false", "target": "pypi:mcp-server-time"},
    {"cache_images": "true", "url": "https://mcp.example.invalid/mcp"},
])
def test_the_key_step_turns_the_cache_off_when_asked_or_when_nothing_is_sandboxed(tmp_path: Path,
                                                                                 inputs: dict[str, str]) -> None:
    done, outputs = run_step(tmp_path, "key", **inputs)
    assert (done.returncode, outputs) == (0, {"enabled": "false"}), done.stderr


def test_a_bad_cache_images_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done, outputs = run_step(tmp_path, "key", cache_images="yes", target="pypi:mcp-server-time")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: input \"cache-images\": true or false, not 'yes'"]
    assert outputs == {}


def test_a_bad_command_line_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done, _ = run_step(tmp_path, "restore")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: usage: action_images.py key | load FILE | save FILE [IMAGE...]"


# ---------------------------------------------------------------------------------------------- action.yml


def _steps() -> dict[str, dict[str, str]]:
    steps = mini_yaml.loads((REPO / "action.yml").read_text(encoding="utf-8"))["runs"]["steps"]
    return {step["name"]: step for step in steps}


def test_the_steps_share_one_key_one_file_and_save_only_after_a_miss() -> None:
    steps = _steps()
    key, restore, load = steps["Key of the cached images"], steps["Restore the cached images"], steps[
        "Load the cached images"]
    save, cache = steps["Save the images for the cache"], steps["Cache the images"]
    archive = "${{ runner.temp }}/mcp-sandbox-images.tar"
    assert key["env"]["INPUT_CACHE_IMAGES"] == "${{ inputs.cache-images }}"
    for step in (restore, cache):
        assert step["uses"].split()[0].endswith(f"@{PINNED}")  # pinned to a commit, not a movable tag
        assert step["with"] == {"path": archive, "key": "${{ steps.images-key.outputs.key }}"}
    assert restore["if"] == "steps.images-key.outputs.enabled == 'true'"
    assert load["if"] == "steps.images-restore.outputs.cache-hit == 'true'"
    assert load["env"]["IMAGES_ARCHIVE"] == save["env"]["IMAGES_ARCHIVE"] == archive
    assert save["env"]["IMAGES"] == "${{ steps.images-key.outputs.images }}"
    assert "steps.images-restore.outputs.cache-hit != 'true'" in save["if"] and "!cancelled()" in save["if"]
    assert cache["if"] == "${{ !cancelled() && steps.images-save.outcome == 'success' }}"
    order = list(steps)
    assert order.index("Load the cached images") < order.index("Scan") < order.index("Save the images for the cache")


# ---------------------------------------------------------------------------------------------- a real engine


def _base_id() -> str:
    done = subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", images.DEFAULT_BASE_IMAGE],
                          capture_output=True, text=True, check=False)
    return done.stdout.strip()


def _tiny_image(tmp_path: Path, tag: str) -> str:
    """An image of one file, made offline (`docker import`); its id."""
    rootfs = tmp_path / "rootfs.tar"
    with tarfile.open(rootfs, "w") as archive:
        member = tarfile.TarInfo("hello.txt")
        member.size = 6
        archive.addfile(member, fileobj=io.BytesIO(b"hello\n"))
    subprocess.run(["docker", "import", str(rootfs), tag], check=True, capture_output=True)
    return subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", tag], check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.mark.docker
def test_load_brings_a_saved_image_back_and_removes_the_file(tmp_path: Path) -> None:
    tag = "mcp-sandbox-test-cached-image:1"
    image_id = _tiny_image(tmp_path, tag)
    archive = tmp_path / "images.tar"
    try:
        subprocess.run(["docker", "save", "--output", str(archive), tag], check=True, capture_output=True)
        subprocess.run(["docker", "rmi", tag], check=True, capture_output=True)
        done, _ = run_step(tmp_path, "load", str(archive))
        assert done.returncode == 0, done.stderr
        assert f"Loaded image: {tag}" in done.stdout
        assert _tiny_id(tag) == image_id
        assert not archive.exists()
    finally:
        subprocess.run(["docker", "rmi", "--force", tag], capture_output=True, check=False)


def _tiny_id(tag: str) -> str:
    return subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True,
                          text=True, check=False).stdout.strip()


@pytest.mark.docker
def test_a_cache_that_does_not_load_is_a_warning_and_the_scan_builds_instead(tmp_path: Path) -> None:
    archive = tmp_path / "images.tar"
    archive.write_bytes(b"not a tar of images")
    done, _ = run_step(tmp_path, "load", str(archive))
    assert done.returncode == 0
    assert done.stderr.startswith("warning: the cached images did not load (docker load failed:")
    assert not archive.exists()
    done, _ = run_step(tmp_path, "load", str(archive))  # nothing restored: nothing to say but that
    assert (done.returncode, done.stdout.strip()) == (0, f"no cached images at {archive}: the scan builds what it "
                                                         "needs")


@pytest.mark.docker
def test_save_writes_the_named_images_for_the_cache(tmp_path: Path) -> None:
    archive = tmp_path / "cache" / "images.tar"
    done, _ = run_step(tmp_path, "save", str(archive), "sink")  # built by the set-up: nothing is built here
    assert done.returncode == 0, done.stderr
    with tarfile.open(archive) as saved:
        manifest = json.load(saved.extractfile("manifest.json"))  # type: ignore[arg-type]
    assert [entry["RepoTags"] for entry in manifest] == [[images.image_tag("sink")]]


def test_save_with_nothing_to_save_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done, _ = run_step(tmp_path, "save", str(tmp_path / "images.tar"))
    assert (done.returncode, done.stderr.strip()) == (2, "error: no images to save (the key step named none)")
