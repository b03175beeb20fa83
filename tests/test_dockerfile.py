"""The scanner's own image (Dockerfile): builds from debian:trixie-slim with the CA bundle only in its throwaway build
stage, runs `--version` and an offline `check`, and scans a zoo server by driving the host engine through the mounted
socket."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import docker
import pytest

from sandbox.core.images import DEFAULT_CA_BUNDLE
from tests.sandbox_helpers import REPO, ZOO

pytestmark = pytest.mark.docker

TAG = "mcp-sandbox-scanner:test"
SOCKET = "/var/run/docker.sock"
FIXTURE = REPO / "tests" / "fixtures" / "corpus" / "mcp-server-time.json"
CA_MARKER = b"# mcp-sandbox test CA marker\n"


def dockerignored(path: Path) -> bool:
    return "__pycache__" in path.parts or path.suffix == ".pyc" or any(p.endswith(".egg-info") for p in path.parts)


def build_context(ca_bundle: Path) -> bytes:
    """What `docker build .` sends under .dockerignore, plus ca-bundle.crt (only the build stage reads it)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in ("Dockerfile", "pyproject.toml", "README.md"):
            tar.add(REPO / name, arcname=name)
        for folder in ("scanner", "sandbox", "images"):
            for path in sorted((REPO / folder).rglob("*")):
                if path.is_file() and not dockerignored(path.relative_to(REPO)):
                    tar.add(path, arcname=str(path.relative_to(REPO)))
        data = (ca_bundle.read_bytes() if ca_bundle.is_file() else b"") + CA_MARKER
        info = tarfile.TarInfo("ca-bundle.crt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture(scope="module")
def scanner_image(docker_client: docker.DockerClient) -> str:
    stream = docker_client.api.build(fileobj=io.BytesIO(build_context(DEFAULT_CA_BUNDLE)), custom_context=True,
                                     tag=TAG, rm=True, forcerm=True, pull=False, decode=True)
    log: list[str] = []
    for chunk in stream:
        assert "error" not in chunk, f"build failed: {chunk['error']} (last output: {log[-10:]})"
        if chunk.get("stream", "").strip():
            log.append(chunk["stream"].strip())
    return TAG


def run(client: docker.DockerClient, image: str, *args: str, stderr: bool = True, **kwargs) -> tuple[int, str]:
    container = client.containers.run(image, list(args), detach=True, **kwargs)
    try:
        code = container.wait(timeout=300)["StatusCode"]
        return code, container.logs(stdout=True, stderr=stderr).decode()
    finally:
        container.remove(force=True)


def test_image_is_debian_trixie_with_the_scanner_as_entrypoint(docker_client, scanner_image):
    attrs = docker_client.images.get(scanner_image).attrs
    assert attrs["Config"]["Entrypoint"] == ["mcp-sandbox"]
    assert attrs["Config"]["User"] == "10000:10000"
    code, out = run(docker_client, scanner_image, "--version")
    assert (code, out.strip()) == (0, "mcp-sandbox 0.1.0")
    code, out = run(docker_client, scanner_image, entrypoint=["cat", "/etc/os-release"])
    assert 'VERSION_CODENAME=trixie' in out


def test_the_build_stage_ca_bundle_never_reaches_the_image(docker_client, scanner_image):
    # as root, so no directory is skipped as unreadable; the marker line was appended to the bundle in the context
    script = ("if grep -rqs 'mcp-sandbox test CA marker' /etc /opt /tmp /usr /root /home /work; then "
              "echo CA-FOUND; fi; ls -A /tmp/ca 2>/dev/null; echo done")
    code, out = run(docker_client, scanner_image, user="0", entrypoint=["sh", "-c", script])
    assert (code, out.strip()) == (0, "done"), out
    history = docker_client.api.history(scanner_image)
    assert not any("ca-bundle" in (layer.get("CreatedBy") or "") for layer in history), "a final layer copied the CA"


def test_check_runs_offline_inside_the_image(docker_client, scanner_image, tmp_path):
    code, out = run(docker_client, scanner_image, "check", "/in/tools.json", "--json", "-", "--fail-on", "never",
                    volumes={str(FIXTURE): {"bind": "/in/tools.json", "mode": "ro"}}, network_mode="none",
                    stderr=False)
    assert code == 0, out
    report = json.loads(out)
    assert report["verdict"] in ("pass", "review", "block")
    assert {t["name"] for t in report["tools"]} >= {"get_current_time", "convert_time"}


def test_scan_through_the_mounted_socket(docker_client, scanner_image, tmp_path, no_leftovers):
    """The image's whole point: a scan inside it drives the host engine (the sandbox is a sibling container)."""
    socket_gid = Path(SOCKET).stat().st_gid
    out_dir = tmp_path / "out"
    out_dir.mkdir(mode=0o777)
    out_dir.chmod(0o777)
    code, out = run(docker_client, scanner_image, "scan", "/src/zoo", "--command", "zoo-plain", "--json",
                    "/out/report.json", "--quiet",
                    volumes={SOCKET: {"bind": SOCKET, "mode": "rw"},
                             str(ZOO): {"bind": "/src/zoo", "mode": "ro"},
                             str(out_dir): {"bind": "/out", "mode": "rw"}},
                    group_add=[str(socket_gid)])
    assert code == 0, out
    report = json.loads((out_dir / "report.json").read_text())
    assert report["verdict"] == "pass" and [t["name"] for t in report["tools"]] == ["echo_text"]
    assert report["sandbox"]["teardown"]["complete"] is True
    assert report["sandbox"]["applied"]["network_mode"] not in ("host", "bridge", "default")
