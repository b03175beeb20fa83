"""The container-image door's target grammar (docker:IMAGE[:TAG|@sha256:…]) and the `docker run` lines it maps."""

from __future__ import annotations

from pathlib import Path

import pytest

from scanner.errors import UsageError
from scanner.pipeline.doors import NotMapped, map_launch
from scanner.pipeline.image_target import parse_image_target
from tests.sandbox_helpers import run_cli

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(("text", "repository", "tag", "digest", "reference"), [
    ("docker:mcp/time", "mcp/time", None, None, "mcp/time:latest"),
    ("docker:mcp/time:1.0", "mcp/time", "1.0", None, "mcp/time:1.0"),
    (f"docker:mcp/time@{DIGEST}", "mcp/time", None, DIGEST, f"mcp/time@{DIGEST}"),
    (f"docker:ghcr.io:443/org/srv:v2@{DIGEST}", "ghcr.io:443/org/srv", "v2", DIGEST, f"ghcr.io:443/org/srv@{DIGEST}"),
    ("docker:localhost:5000/a_b/c--d:latest", "localhost:5000/a_b/c--d", "latest", None,
     "localhost:5000/a_b/c--d:latest"),
])
def test_image_targets_parse(text: str, repository: str, tag: str | None, digest: str | None, reference: str) -> None:
    target = parse_image_target(text)
    assert (target.repository, target.tag, target.digest, target.reference) == (repository, tag, digest, reference)
    assert target.pinned is (digest is not None)


@pytest.mark.parametrize(("text", "says"), [
    ("docker:", "names no image"),
    ("docker:Mcp/Time", "not a valid image name"),
    ("docker:mcp/time:", "not a valid tag"),
    ("docker:mcp/time:bad tag", "not an image reference"),
    ("docker:mcp/time@sha256:abc", "must be sha256:"),
    ("docker:mcp/time@md5:" + "ab" * 16, "must be sha256:"),
    ("docker:-rm", "not an image reference"),
    ("docker:mcp//time", "not a valid image name"),
])
def test_bad_image_targets_are_refused(text: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        parse_image_target(text)


def test_a_bad_image_target_is_exit_2_with_one_line() -> None:
    done = run_cli("scan", "docker:Not/Valid:x y", "-q", timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in done.stderr


def test_docker_run_with_safe_options_maps_to_the_image_door() -> None:
    mapping = map_launch(["docker", "run", "-i", "--rm", "--init", "-e", "GITHUB_TOKEN", "ghcr.io/org/srv:1.2",
                          "stdio", "--read-only"], Path.cwd())
    assert (mapping.target, mapping.runner, mapping.server_args) == ("docker:ghcr.io/org/srv:1.2", "docker run",
                                                                      ["stdio", "--read-only"])
    assert any("GITHUB_TOKEN" in note and "not passed" in note for note in mapping.notes)
    assert map_launch(["docker run --rm -i mcp/time"], Path.cwd()).target == "docker:mcp/time"


@pytest.mark.parametrize("argv", [
    ["docker", "run", "-i", "-v", "/:/host", "mcp/time"],
    ["docker", "run", "-e", "TOKEN=secret", "mcp/time"],
    ["docker", "run", "--network", "host", "mcp/time"],
    ["docker", "run", "-u", "0", "mcp/time"],
    ["docker", "run", "-i", "--rm"],
    ["docker", "run", "Not/An/Image"],
    ["docker", "compose", "up"],
])
def test_docker_run_with_other_options_is_refused_with_the_pointer(argv: list[str]) -> None:
    with pytest.raises(NotMapped, match="docker:IMAGE"):
        map_launch(argv, Path.cwd())
