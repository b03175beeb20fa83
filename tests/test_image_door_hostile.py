"""`scan docker:IMAGE` against images built to fool the sandbox's looks (built here FROM the python runtime image with
the zoo inside, removed after): a link where the policy mounts its tmpfs, a `sh` that never ends, a HEALTHCHECK, a VOLUME."""

from __future__ import annotations

import json
import time

import pytest

from sandbox.core.session import SandboxSession
from sandbox.run import image_source, server
from sandbox.run.image_mounts import mount_paths
from sandbox.run.policy import HOME, WORKSPACE, RunPolicy
from tests.image_door_images import REPOSITORY, build_test_image, remove_test_images
from tests.sandbox_helpers import run_cli

ZOO = 'ENV PYTHONPATH=/opt/zoo\nENTRYPOINT ["python3", "/opt/zoo/run.py"]\n'
# B4's server (writes ~/.bashrc and a git hook in the workspace) in an image whose HOME and workspace are links: the
# engine mounts the tmpfs where they lead, `find /home/mcp` lists the link alone, and the writes were not seen.
LINKED = ZOO + ('CMD ["probed:persist"]\nUSER root\nRUN mkdir -p /opt/home /opt/work && rm -rf /home/mcp /workspace '
                '&& ln -s /opt/home /home/mcp && ln -s /opt/work /workspace\n')
# A `sh` that never ends: the check of the image's programs runs the image's own shell.
STUCK_SH = ZOO + ('CMD ["probed:good"]\nUSER root\n'
                  'RUN rm /usr/bin/sh && printf "#!/bin/bash\\nsleep 100000\\n" > /usr/bin/sh '
                  '&& chmod 755 /usr/bin/sh\n')

# A HEALTHCHECK the engine would run in the sandbox every second, outside the server's process tree.
HEALTH = ZOO + 'CMD ["probed:good"]\nHEALTHCHECK --interval=1s --timeout=1s CMD ["python3", "-c", "print(1)"]\n'

# A VOLUME: the engine would mount a writable volume at /data in every container made from it.
VOLUME = ZOO + 'CMD ["probed:good"]\nVOLUME /data\n'


def test_mount_paths_are_the_mount_points_and_the_folders_above_them():
    assert mount_paths(RunPolicy().tmpfs()) == ["/home", "/tmp", "/workspace", "/home/mcp"]


@pytest.fixture(scope="module")
def built(docker_client):
    images = {"linked": build_test_image(docker_client, "linked", LINKED),
              "stuck-sh": build_test_image(docker_client, "stuck-sh", STUCK_SH),
              "health": build_test_image(docker_client, "health", HEALTH),
              "volume": build_test_image(docker_client, "volume", VOLUME)}
    yield images
    remove_test_images(docker_client)


@pytest.mark.docker
def test_links_where_the_sandbox_mounts_make_the_scan_incomplete_not_clean(tmp_path, built, no_leftovers):
    out = tmp_path / "report.json"
    done = run_cli("scan", f"docker:{REPOSITORY}:linked", "--json", str(out), "-q")
    assert "Traceback" not in done.stderr and out.exists(), done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["status"] == "incomplete" and done.returncode != 0
    said = "\n".join(report["errors"])
    assert f"{HOME} is a symbolic link to '/opt/home'" in said and f"{WORKSPACE} is a symbolic link" in said
    assert any(line.startswith(f"{HOME} is a symbolic link") for line in report["target"]["image"]["unavailable"])


@pytest.mark.docker
def test_a_shell_that_never_ends_leaves_every_look_unavailable(docker_client, built, no_leftovers, monkeypatch):
    monkeypatch.setattr(image_source, "TOOL_CHECK_SECONDS", 3)
    with SandboxSession(docker_client) as session:
        checked = image_source.check_image(session, built["stuck-sh"].image_id, RunPolicy())
    assert checked.stuck and checked.missing == list(image_source.TOOL_USES) and checked.redirected == []


@pytest.mark.docker
def test_an_images_healthcheck_never_runs_in_the_sandbox(docker_client, built, no_leftovers):
    with SandboxSession(docker_client) as session:
        running = server.start_server(session, built["health"].image_id, ["python3", "/opt/zoo/run.py", "probed:good"],
                                      RunPolicy(env={"PYTHONPATH": "/opt/zoo"}))
        time.sleep(2.5)  # two of its intervals
        inspect = docker_client.api.inspect_container(running.container_id)
        server.close_attach(running)
    assert inspect["Config"]["Healthcheck"]["Test"] == ["NONE"] and inspect["State"].get("Health") is None


@pytest.mark.docker
def test_an_image_with_a_volume_is_refused_in_one_line_naming_it(built, no_leftovers):
    done = run_cli("scan", f"docker:{REPOSITORY}:volume", "-q", timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 3 and len(lines) == 1 and "Traceback" not in done.stderr
    assert f"image {REPOSITORY}:volume declares VOLUME /data" in lines[0] and "not scanned" in lines[0]
