"""The GitHub Action's images cache (scripts/action_images.py and its steps in action.yml): the key and the images it
covers for each kind of target, the steps wired to one key and one file before the scan and unable to stop it, an
archive loaded only when it names exactly the expected images, nothing saved from an engine that ran a server, and
archives saved and loaded through a real Docker engine."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from sandbox import __version__
from sandbox.core import images
from tests import mini_yaml
from tests.sandbox_helpers import REPO, ZOO

SCRIPT = REPO / "scripts" / "action_images.py"
PINNED = "55cc8345863c7cc4c66a329aec7e433d2d1c52a9"  # actions/cache v6.1.0
TINY = "mcp-sandbox-test-cached-image:1"

sys.path.insert(0, str(REPO / "scripts"))
import action_images  # scripts/action_images.py

sys.path.pop(0)


def run_step(tmp_path: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """The script as a step of the action runs it (inputs as INPUT_* variables); what it wrote to GITHUB_OUTPUT."""
    output = tmp_path / "github_output"
    output.write_text("")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    full.update({"GITHUB_OUTPUT": str(output), **env})
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=full,
                          cwd=tmp_path, timeout=600, check=False)
    written = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
    return done, written


# ---------------------------------------------------------------------------------------------- what is cached


@pytest.mark.parametrize(("target", "expected"), [
    ("pypi:mcp-server-time", ("python", "sink", "proxy")),
    ("npm:@modelcontextprotocol/server-filesystem", ("node", "sink", "proxy")),
    (f" {ZOO} ", ("python", "sink", "proxy")),  # a local folder (its manifest says the ecosystem), spaces dropped
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


def test_a_folder_whose_manifest_has_the_wrong_shape_caches_nothing(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('project = "x"\n')  # the scan step refuses it in one line
    assert action_images.wanted_images(str(tmp_path), "", REPO) == ()


def test_the_key_changes_with_any_tag_the_base_the_platform_the_week_and_the_version() -> None:
    tags = ["mcp-sandbox-sink:0.1.0-aaaa", "mcp-sandbox-proxy:0.1.0-bbbb", "mcp-sandbox-runtime-node:0.1.0-cccc"]
    amd = "linux/x86_64"
    key = action_images.cache_key("0.1.0", tags, "sha256:base", amd, "2026-W49")
    assert key.startswith("mcp-sandbox-images-0.1.0-")
    assert key == action_images.cache_key("0.1.0", list(reversed(tags)), "sha256:base", amd, "2026-W49")
    for other in (action_images.cache_key("0.1.0", [*tags[:2], "mcp-sandbox-runtime-node:0.1.0-dddd"],
                                          "sha256:base", amd, "2026-W49"),
                  action_images.cache_key("0.1.0", tags, "sha256:newer-base", amd, "2026-W49"),
                  action_images.cache_key("0.1.0", tags, "sha256:base", "linux/aarch64", "2026-W49"),
                  action_images.cache_key("0.1.0", tags, "sha256:base", amd, "2026-W50"),
                  action_images.cache_key("0.2.0", tags, "sha256:base", amd, "2026-W49")):
        assert other != key


# ---------------------------------------------------------------------------------------------- the key step


def _base_id() -> str:
    return _image_id(images.DEFAULT_BASE_IMAGE)


def _platform() -> str:
    return subprocess.run(["docker", "info", "--format", "{{.OSType}}/{{.Architecture}}"], capture_output=True,
                          text=True, check=True).stdout.strip()


@pytest.mark.docker
def test_the_key_step_writes_the_key_of_the_targets_images(tmp_path: Path) -> None:
    done, outputs = run_step(tmp_path, "key", INPUT_CACHE_IMAGES="true", INPUT_TARGET="pypi:mcp-server-time")
    assert done.returncode == 0, done.stderr
    tags = [images.image_tag(name) for name in ("python", "sink", "proxy")]
    weeks = {time.strftime("%G-W%V", time.gmtime(time.time() + drift)) for drift in (-60, 0)}  # a week may turn
    assert outputs["enabled"] == "true" and outputs["images"] == "python sink proxy"
    assert outputs["key"] in {action_images.cache_key(__version__, tags, _base_id(), _platform(), week)
                              for week in weeks}


@pytest.mark.parametrize("env", [
    {"INPUT_TARGET": "pypi:mcp-server-time"},  # the input left at its default: off (opt-in, docs/ci.md)
    {"INPUT_CACHE_IMAGES": "false", "INPUT_TARGET": "pypi:mcp-server-time"},
    {"INPUT_CACHE_IMAGES": "yes", "INPUT_TARGET": "pypi:mcp-server-time"},  # the scan step refuses it (exit 2)
    {"INPUT_CACHE_IMAGES": "true", "INPUT_URL": "https://mcp.example.invalid/mcp"},
])
def test_the_key_step_turns_the_cache_off_by_default_when_asked_or_when_nothing_is_sandboxed(
        tmp_path: Path, env: dict[str, str]) -> None:
    done, outputs = run_step(tmp_path, "key", **env)
    assert (done.returncode, outputs) == (0, {"enabled": "false"}), done.stderr


def test_the_cache_is_opt_in_in_the_action_and_its_input_check() -> None:
    """Whoever can write the Actions cache can run code in a job that restores it (`tar -P`): off unless asked."""
    action = mini_yaml.loads((REPO / "action.yml").read_text(encoding="utf-8"))
    assert action["inputs"]["cache-images"]["default"] == "false" == action_images.action_inputs.INPUTS["cache-images"]


@pytest.mark.docker
@pytest.mark.parametrize("value", ["true", "True", " TRUE "])
def test_the_key_step_is_on_when_asked_in_any_case(tmp_path: Path, value: str) -> None:
    done, outputs = run_step(tmp_path, "key", INPUT_TARGET="npm:x", INPUT_CACHE_IMAGES=value)
    assert outputs.get("enabled") == "true", done.stderr


def test_a_bad_command_line_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done, _ = run_step(tmp_path, "restore")
    assert done.returncode == 2
    assert done.stderr.strip() == "error: usage: action_images.py key | load FILE | save FILE [IMAGE...]"


# ---------------------------------------------------------------------------------------------- action.yml


def _steps() -> dict[str, dict[str, str]]:
    steps = mini_yaml.loads((REPO / "action.yml").read_text(encoding="utf-8"))["runs"]["steps"]
    return {step["id"]: step for step in steps}


def test_the_steps_share_one_key_and_file_run_before_the_scan_and_cannot_stop_it() -> None:
    steps = _steps()
    key, restore, load = steps["images-key"], steps["images-restore"], steps["images-load"]
    save, cache = steps["images-save"], steps["images-cache"]
    archive = "${{ runner.temp }}/mcp-sandbox-images.tar"
    assert key["env"]["INPUT_CACHE_IMAGES"] == "${{ inputs.cache-images }}"
    for step in (restore, cache):
        assert step["uses"].split()[0].endswith(f"@{PINNED}")  # pinned to a commit, not a movable tag
        assert step["with"] == {"path": archive, "key": "${{ steps.images-key.outputs.key }}"}
    cleanup = steps["images-cleanup"]
    for step in (key, restore, load, save, cache, cleanup):
        assert step["continue-on-error"] == "true", step["name"]
    assert cleanup["if"] == "steps.images-save.outputs.saved == 'true'"
    assert cleanup["env"]["IMAGES_ARCHIVE"] == archive and cleanup["run"] == 'rm -f -- "$IMAGES_ARCHIVE"'
    assert restore["if"] == "steps.images-key.outputs.enabled == 'true'"
    assert load["if"] == "steps.images-restore.outputs.cache-hit == 'true'"
    assert save["if"] == ("steps.images-key.outputs.enabled == 'true' && "
                          "steps.images-restore.outputs.cache-hit != 'true'")
    assert cache["if"] == "steps.images-save.outputs.saved == 'true'"
    assert load["env"]["IMAGES_ARCHIVE"] == save["env"]["IMAGES_ARCHIVE"] == archive
    assert load["env"]["IMAGES"] == save["env"]["IMAGES"] == "${{ steps.images-key.outputs.images }}"
    assert load["env"]["KEY"] == "${{ steps.images-key.outputs.key }}"
    order = list(steps)
    assert order.index("images-load") < order.index("images-save") < order.index("images-cache") < order.index(
        "images-cleanup") < order.index("scan"), "the images are kept before any server runs"


# ---------------------------------------------------------------------------------------------- the archive

GOOD = "mcp-sandbox-sink:0.1.0-a"


def _archive(path: Path, members: list[tuple[str, object]], links: tuple[tuple[str, str], ...] = ()) -> Path:
    """A tar of JSON (or bytes) members, in order, and symbolic links (name, target)."""
    with tarfile.open(path, "w") as archive:
        for name, content in members:
            data = content if isinstance(content, bytes) else json.dumps(content).encode()
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
        for name, target in links:
            link = tarfile.TarInfo(name)
            link.type, link.linkname = tarfile.SYMTYPE, target
            archive.addfile(link)
    return path


def _image(tags: list[str], **extra: object) -> list[tuple[str, object]]:
    return [("manifest.json", [{"Config": "blobs/sha256/c", "RepoTags": tags, "Layers": ["blobs/sha256/l"], **extra}]),
            ("blobs/sha256/c", b"{}"), ("blobs/sha256/l", b"layer")]


def _packed(path: Path) -> dict[str, bytes]:
    with tarfile.open(path) as packed:
        return {member.name: packed.extractfile(member).read() for member in packed.getmembers()}  # type: ignore[union-attr]


def test_the_repacked_archive_holds_only_the_named_blobs_under_a_manifest_of_the_expected_tags(tmp_path: Path) -> None:
    members = [*_image([f"docker.io/library/{GOOD}"], repotags=["evil:1"]),  # Docker 25+ full names; a key in
               ("repositories", {"evil": {"1": "x"}}),  # another case, which Go's JSON would read too
               ("index.json", {"manifests": [{"annotations": {"io.containerd.image.name": "docker.io/library/evil:1"}}]}),
               ("oci-layout", {"imageLayoutVersion": "1.0.0"}), ("blobs/sha256/other", b"not named"),
               ("blobs/../manifest.json", [{"Config": "x", "RepoTags": ["evil:1"], "Layers": []}])]
    links = (("legacy/layer.tar", "../blobs/sha256/l"),)  # links a Docker 25+ archive may carry for old readers
    loaded = action_images.repack(_archive(tmp_path / "a.tar", members, links), [GOOD, "mcp-sandbox-proxy:0.1.0-b"],
                                  tmp_path / "packed.tar")
    assert loaded == [GOOD]
    packed = _packed(tmp_path / "packed.tar")
    assert sorted(packed) == ["blob-0", "blob-1", "manifest.json"]  # the blobs under names of ours
    assert json.loads(packed["manifest.json"]) == [{"Config": "blob-0", "RepoTags": [GOOD], "Layers": ["blob-1"]}]
    assert (packed["blob-0"], packed["blob-1"]) == (b"{}", b"layer")


@pytest.mark.parametrize("smuggled", [["manifest.json"], ["index.json", "oci-layout"], ["repositories"]])
def test_a_file_the_engine_would_read_as_the_archive_s_own_is_passed_on_only_as_a_blob(tmp_path: Path,
                                                                                      smuggled: list[str]) -> None:
    """A manifest naming its own manifest.json (whose lower-case `repotags` Go's JSON reads, the last key winning),
    an OCI index or the repositories file as layers: each goes on under a name of ours, never its own."""
    evil = [{"Config": "c", "RepoTags": [GOOD], "Layers": ["l", *smuggled], "repotags": ["evil:1"], "layers": ["l"]}]
    members = [("manifest.json", evil), ("c", b"{}"), ("l", b"layer"),
               *[(name, {"manifests": [], "evil": {"1": "x"}}) for name in smuggled if name != "manifest.json"]]
    assert action_images.repack(_archive(tmp_path / "a.tar", members), [GOOD], tmp_path / "packed.tar") == [GOOD]
    packed = _packed(tmp_path / "packed.tar")
    assert sorted(packed) == sorted(["manifest.json", *(f"blob-{n}" for n in range(2 + len(smuggled)))])
    assert json.loads(packed["manifest.json"]) == [{"Config": "blob-0", "RepoTags": [GOOD],
                                                    "Layers": [f"blob-{n}" for n in range(1, 2 + len(smuggled))]}]


def test_a_blob_two_images_share_goes_on_once_under_one_name(tmp_path: Path) -> None:
    other = "mcp-sandbox-proxy:0.1.0-b"
    members = [("manifest.json", [{"Config": "c1", "RepoTags": [GOOD], "Layers": ["base", "l1"]},
                                  {"Config": "c2", "RepoTags": [other], "Layers": ["base"]}]),
               ("c1", b"1"), ("c2", b"2"), ("base", b"shared"), ("l1", b"own")]
    assert action_images.repack(_archive(tmp_path / "a.tar", members), [GOOD, other], tmp_path / "p.tar") == sorted(
        [GOOD, other])
    packed = _packed(tmp_path / "p.tar")
    assert json.loads(packed["manifest.json"]) == [{"Config": "blob-0", "RepoTags": [GOOD], "Layers": ["blob-1", "blob-2"]},
                                                   {"Config": "blob-3", "RepoTags": [other], "Layers": ["blob-1"]}]
    assert [packed[f"blob-{n}"] for n in range(4)] == [b"1", b"shared", b"own", b"2"]


@pytest.mark.parametrize(("members", "links", "message"), [
    (_image(["evil:1"]), (), "the archive names evil:1"),
    (_image([GOOD, "debian:trixie-slim"]), (), "the archive names debian:trixie-slim"),
    ([*_image([GOOD]), ("manifest.json", [])], (), "twice"),  # which one would the engine read?
    ([("manifest.json", [{"Config": "c", "RepoTags": [GOOD], "Layers": ["../l"]}]), ("c", b"{}")], (), "clean name"),
    ([("manifest.json", [{"Config": "./c", "RepoTags": [GOOD], "Layers": []}]), ("./c", b"{}")], (), "clean name"),
    (_image([GOOD])[:2], (("blobs/sha256/l", "/etc/shadow"),), "not a file of it"),  # a layer that is a link
    ([("./manifest.json", [])], (), "no manifest.json"),
    ([("blobs/sha256/c", b"{}")], (("manifest.json", "blobs/sha256/c"),), "no manifest.json"),  # a link
    ([("manifest.json", [["x"]])], (), "not a list of images"),
    ([("manifest.json", {"Config": "c"})], (), "not a list of images"),
    ([("manifest.json", b"{")], (), "not JSON"),
    (_image([GOOD])[:2], (), "names 'blobs/sha256/l'"),  # a layer it does not hold
    (_image([]), (), "an image with no name"),  # it would load untagged, as anything
    ([("manifest.json", [{"Config": "c", "RepoTags": [GOOD], "Layers": []}] * 2), ("c", b"{}")], (), "twice"),
    (_image(["evil:1\n::error::verified OK"]), (), r"names evil:1\\n::error::verified OK$"),  # one line
])
def test_an_archive_that_could_load_anything_else_is_refused(tmp_path: Path, members, links, message) -> None:
    with pytest.raises(action_images.ImagesError, match=message):
        action_images.repack(_archive(tmp_path / "a.tar", members, links), [GOOD], tmp_path / "packed.tar")


def _tiny_image(tmp_path: Path, tag: str = TINY) -> str:
    """An image of one file, made offline (`docker import`); its id."""
    rootfs = tmp_path / "rootfs.tar"
    with tarfile.open(rootfs, "w") as archive:
        member = tarfile.TarInfo("hello.txt")
        member.size = 6
        archive.addfile(member, io.BytesIO(b"hello\n"))
    subprocess.run(["docker", "import", str(rootfs), tag], check=True, capture_output=True)
    return _image_id(tag)


def _image_id(tag: str) -> str:
    return subprocess.run(["docker", "image", "inspect", "--format", "{{.Id}}", tag], capture_output=True,
                          text=True, check=False).stdout.strip()


@pytest.fixture
def saved_tiny(tmp_path: Path):
    """The tiny image saved to an archive and removed from the engine: (archive, its id)."""
    image_id = _tiny_image(tmp_path)
    archive = tmp_path / "images.tar"
    subprocess.run(["docker", "save", "--output", str(archive), TINY], check=True, capture_output=True)
    subprocess.run(["docker", "rmi", TINY], check=True, capture_output=True)
    yield archive, image_id
    subprocess.run(["docker", "rmi", "--force", TINY], capture_output=True, check=False)


@pytest.mark.docker
def test_load_brings_the_expected_images_back_and_removes_the_file(saved_tiny, monkeypatch, capsys) -> None:
    archive, image_id = saved_tiny
    monkeypatch.setattr(action_images, "expected_tags", lambda names: [TINY])  # the archive holds what is asked
    action_images.load_step(archive, ["sink"])
    out = capsys.readouterr().out
    assert f"Loaded image: {TINY}" in out and f"loaded {TINY} from the cache" in out
    assert _image_id(TINY) == image_id  # the same image: its configuration and layers, re-packed
    assert not archive.exists() and not archive.with_name(archive.name + ".repacked").exists()


@pytest.mark.docker
def test_an_archive_naming_other_images_is_not_loaded(saved_tiny, monkeypatch, capsys) -> None:
    archive, _ = saved_tiny
    monkeypatch.setenv("KEY", "mcp-sandbox-images-0.1.0-abc")
    action_images.load_step(archive, ["sink"])  # expects the sink's tag: the tiny image is not it
    err = capsys.readouterr().err
    assert err.startswith(f"::warning::the cached sandbox images were not loaded (the archive names {TINY})")
    assert "gh cache delete mcp-sandbox-images-0.1.0-abc" in err
    assert _image_id(TINY) == ""
    assert not archive.exists() and not archive.with_name(archive.name + ".repacked").exists()


@pytest.mark.docker
def test_an_archive_passing_its_own_manifest_as_a_layer_loads_no_name_of_its_own(saved_tiny, tmp_path: Path,
                                                                                monkeypatch, capsys) -> None:
    """The archive's manifest lists itself as a layer, with lower-case keys Go's JSON reads last: before the re-pack
    named blobs its own way, the engine read that manifest over ours and loaded the image as `evil`."""
    archive, _ = saved_tiny
    evil_tag = "mcp-sandbox-test-evil:1"
    with tarfile.open(archive) as saved:
        entry = json.loads(saved.extractfile("manifest.json").read())[0]  # type: ignore[union-attr]
        config, layer = entry["Config"], entry["Layers"][0]
        blobs = [(name, saved.extractfile(name).read()) for name in (config, layer)]  # type: ignore[union-attr]
    manifest = [{"Config": config, "RepoTags": [TINY], "Layers": [layer, "manifest.json"], "layers": [layer],
                 "repotags": [evil_tag]}]
    poisoned = _archive(tmp_path / "poisoned.tar", [("manifest.json", manifest), *blobs])
    monkeypatch.setattr(action_images, "expected_tags", lambda names: [TINY])
    try:
        action_images.load_step(poisoned, ["sink"])
        assert _image_id(evil_tag) == ""
    finally:
        subprocess.run(["docker", "rmi", "--force", evil_tag], capture_output=True, check=False)
    # the extra "layer" (the archive's manifest) is no layer of the image's: the engine refuses the load
    assert "::warning::the cached sandbox images were not loaded" in capsys.readouterr().err


def test_a_cache_that_does_not_load_is_a_warning_and_the_scan_builds_instead(tmp_path: Path) -> None:
    archive = tmp_path / "images.tar"
    archive.write_bytes(b"not a tar of images")
    done, _ = run_step(tmp_path, "load", str(archive), IMAGES="sink", KEY="k")
    assert done.returncode == 0
    assert done.stderr.startswith("::warning::the cached sandbox images were not loaded (")
    assert not archive.exists()
    done, _ = run_step(tmp_path, "load", str(archive), IMAGES="sink")  # nothing restored: nothing to say but that
    assert (done.returncode, done.stdout.strip()) == (0, f"no cached images at {archive}: the scan builds what it "
                                                         "needs")


# ---------------------------------------------------------------------------------------------- saving


class _Engine:
    """Stands in for the engine's image list (the label filter the guard asks with is checked)."""

    def __init__(self, installed: list[str]) -> None:
        self.images = self
        self.installed = installed

    def list(self, filters: dict[str, str]) -> list[str]:
        assert filters == {"label": "io.mcp-sandbox.kind=installed"}
        return self.installed


def test_an_installed_image_on_the_engine_means_a_server_ran_there() -> None:
    assert action_images.ran_a_server(_Engine(["sha256:installed"]))  # type: ignore[arg-type]
    assert not action_images.ran_a_server(_Engine([]))  # type: ignore[arg-type]


@pytest.mark.parametrize(("environ", "marked", "why"), [
    ({"RUNNER_ENVIRONMENT": "github-hosted"}, False, None),
    ({"RUNNER_ENVIRONMENT": "github-hosted"}, True, "the action has already scanned on this runner"),
    ({"RUNNER_ENVIRONMENT": "self-hosted"}, False, "only a GitHub-hosted runner"),
    ({}, False, "only a GitHub-hosted runner"),
])
def test_only_a_fresh_github_hosted_runner_saves(tmp_path: Path, environ: dict[str, str], marked: bool,
                                                 why: str | None) -> None:
    if marked:
        (tmp_path / "mcp-sandbox-engine-used").touch()
    refusal = action_images.save_refusal({**environ, "RUNNER_TEMP": str(tmp_path)})
    assert (refusal is None) if why is None else refusal.startswith(why)


def test_the_scan_step_marks_the_runner_before_it_starts_anything(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INPUT_", "GITHUB_"))}
    env.update({"RUNNER_TEMP": str(tmp_path), "INPUT_FAIL_ON": "sometimes"})  # refused before any scan
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "action.py")], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120, check=False)
    assert done.returncode == 2
    assert (tmp_path / "mcp-sandbox-engine-used").exists()


def test_an_engine_that_ran_a_server_saves_nothing(tmp_path: Path, monkeypatch, capsys) -> None:
    output = tmp_path / "github_output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setattr(action_images, "save_refusal", lambda: None)
    monkeypatch.setattr(action_images, "ran_a_server", lambda client: True)
    archive = tmp_path / "images.tar"
    action_images.save_step(archive, ["sink"])
    assert capsys.readouterr().out.startswith("not saved: a scanned server has been installed on this engine")
    assert output.read_text() == "" and not archive.exists()


def test_a_runner_that_may_not_save_does_not_ask_the_engine(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RUNNER_ENVIRONMENT", "self-hosted")
    monkeypatch.setattr(action_images, "ran_a_server", lambda client: pytest.fail("the engine was asked"))
    action_images.save_step(tmp_path / "images.tar", ["sink"])
    assert capsys.readouterr().out.startswith("not saved: only a GitHub-hosted runner")


@pytest.mark.docker
def test_a_fresh_engine_saves_the_named_images_and_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    output = tmp_path / "github_output"
    output.write_text("")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setattr(action_images, "save_refusal", lambda: None)  # as on a GitHub-hosted runner before its first
    monkeypatch.setattr(action_images, "ran_a_server", lambda client: False)  # scan
    archive = tmp_path / "cache" / "images.tar"
    action_images.save_step(archive, ["sink"])  # built by the set-up: nothing is built here
    with tarfile.open(archive) as saved:
        manifest = json.load(saved.extractfile("manifest.json"))  # type: ignore[arg-type]
    assert [entry["RepoTags"] for entry in manifest] == [[images.image_tag("sink")]]
    assert output.read_text() == "saved=true\n"


def test_save_with_nothing_to_save_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done, _ = run_step(tmp_path, "save", str(tmp_path / "images.tar"))
    assert (done.returncode, done.stderr.strip()) == (2, "error: no images to save (the key step named none)")
