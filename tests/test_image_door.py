"""`scan docker:IMAGE` against real images built here FROM the python runtime image with the zoo inside: the digest
recorded and pinned, the hardened policy read back (the image's USER root overridden), tools listed and probed, a tag
alone is I1, a root-needing server gets the statement, and an image the engine cannot pull is exit 3 in one line."""

from __future__ import annotations

import json

import pytest

from scanner.lock.model import LockFile
from sandbox.run.policy import RUN_GID, RUN_UID
from tests.image_door_images import NEEDS_ROOT, PLAIN, REPOSITORY, build_test_image, remove_test_images
from tests.sandbox_helpers import run_cli

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def built(docker_client):
    images = {"plain": build_test_image(docker_client, "plain", PLAIN),
              "rebuilt": build_test_image(docker_client, "rebuilt", PLAIN.replace("=plain", "=rebuilt")),
              "needs-root": build_test_image(docker_client, "needs-root", NEEDS_ROOT)}
    yield images
    remove_test_images(docker_client)


def _scan(tmp_path, target: str, *extra: str) -> tuple[int, dict, str]:
    out = tmp_path / "report.json"
    done = run_cli("scan", target, "--json", str(out), "-q", *extra)
    assert "Traceback" not in done.stderr, done.stderr
    assert out.exists(), f"no report (exit {done.returncode}): {done.stderr[-3000:]}"
    return done.returncode, json.loads(out.read_text()), done.stderr


def test_a_tagged_image_runs_hardened_and_is_probed_and_unpinned_is_i1(tmp_path, built, no_leftovers):
    code, report, _ = _scan(tmp_path, f"docker:{REPOSITORY}:plain")
    image = report["target"]["image"]
    assert report["target"]["kind"] == "image" and report["status"] == "complete", report["errors"]
    assert image["digest"] == built["plain"].image_id and image["pinned"] is False
    assert image["configured_user"] == "root" and image["command"] == ["python3", "/opt/zoo/run.py", "servers:plain"]
    applied = report["sandbox"]["applied"]
    assert applied["user"] == f"{RUN_UID}:{RUN_GID}" and applied["read_only_rootfs"] is True
    assert applied["cap_drop"] == ["ALL"] and applied["cap_add"] == [] and applied["no_new_privileges"] is True
    assert applied["network_mode"].startswith("container:") and applied["mounts"] == []
    assert applied["image_id"] == built["plain"].image_id
    assert {"PYTHONPATH", "ZOO_IMAGE_FLAVOUR", "GITHUB_TOKEN"} <= set(applied["env_names"])  # image env, canaries
    assert [tool["name"] for tool in report["tools"]] == ["echo_text"]
    assert {probe["tool"] for probe in report["probes"]} == {"echo_text"}
    assert report["behavior"] and image["unavailable"] == [] and image["needs_root"] is None
    assert [f["rule_id"] for f in report["findings"]] == ["I1"]
    assert "has no @sha256: digest" in report["findings"][0]["message"]
    assert {s["stage"] for s in report["skipped"]} == {"install", "source", "provenance"}


def test_a_digest_pinned_image_is_pinned_in_the_lock_and_checked(tmp_path, built, no_leftovers):
    digest = built["plain"].image_id
    lock = tmp_path / "mcp-sandbox.lock"
    target = f"docker:{REPOSITORY}@{digest}"
    done = run_cli("lock", target, "--lock", str(lock), "--", "probed:good")
    assert done.returncode == 0, done.stderr
    pinned = LockFile.model_validate_json(lock.read_text())
    assert pinned.target is not None and pinned.target.kind == "image" and pinned.target.image_digest == digest
    assert pinned.tools and pinned.install is None
    assert run_cli("lock", target, "--lock", str(lock), "--check", "--", "probed:good").returncode == 0
    other = run_cli("lock", f"docker:{REPOSITORY}@{built['rebuilt'].image_id}", "--lock", str(lock), "--check",
                    "--", "probed:good")
    assert other.returncode != 0 and "image digest" in other.stdout + other.stderr


def test_an_image_that_needs_root_gets_the_statement(tmp_path, built, no_leftovers):
    code, report, _ = _scan(tmp_path, f"docker:{REPOSITORY}:needs-root", "--no-probes")
    assert code == 3 and report["status"] == "incomplete"
    statement = report["target"]["image"]["needs_root"]
    assert statement and "appears to need root" in statement and "no USER" in statement
    assert report["sandbox"]["applied"]["user"] == f"{RUN_UID}:{RUN_GID}"


def test_an_image_neither_here_nor_pullable_is_exit_3_in_one_line(docker_client):
    done = run_cli("scan", "docker:mcp-sandbox-test/not-built-anywhere:1", "-q", timeout=120)
    assert done.returncode == 3
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "could not be pulled" in lines[0] and "Traceback" not in done.stderr
