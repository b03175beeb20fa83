"""Small MCP server images for the container-image door's tests, built here FROM the project's python runtime image
with the zoo copied in (no registry is reachable): labelled like the install cache (kind=installed, as any image may
label itself: `gc --images` leaves them all the same, named outside the cache's repository) and tagged under
mcp-sandbox-test/…; the fixture that builds them removes them."""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

import docker

from sandbox.core import images, labels

ZOO_PACKAGE = Path(__file__).resolve().parent / "servers" / "zoo" / "mcp_zoo"
TEST_LABEL = f"{labels.PREFIX}.test"
REPOSITORY = "mcp-sandbox-test/image-door"
# argv[1] is module:function of the zoo; the rest are the server's own arguments.
RUN_ZOO = ("import importlib, sys\n"
           "module, _, function = sys.argv[1].partition(':')\n"
           "sys.argv = [sys.argv[0], *sys.argv[2:]]\n"
           "getattr(importlib.import_module('mcp_zoo.' + module), function)()\n")
PLAIN = """
ENV PYTHONPATH=/opt/zoo ZOO_IMAGE_FLAVOUR=plain
USER root
WORKDIR /opt/zoo
ENTRYPOINT ["python3", "/opt/zoo/run.py"]
CMD ["servers:plain"]
"""
# A server that reads a root-only file at start and exits when it cannot: it works only as root.
NEEDS_ROOT = """
ENV PYTHONPATH=/opt/zoo
RUN printf 'licence' > /opt/zoo/root-only.conf && chmod 600 /opt/zoo/root-only.conf
ENTRYPOINT ["sh", "-c", "cat /opt/zoo/root-only.conf >/dev/null || { echo 'cannot read /opt/zoo/root-only.conf: run me as root' >&2; exit 1; }; exec python3 /opt/zoo/run.py servers:plain"]
"""


@dataclass(frozen=True)
class BuiltImage:
    tag: str
    image_id: str


def build_test_image(client: docker.DockerClient, flavour: str, body: str) -> BuiltImage:
    """Build FROM the python runtime image (which must exist: `mcp-sandbox images build`)."""
    base = images.image_tag("python")
    dockerfile = f"FROM {base}\nCOPY mcp_zoo /opt/zoo/mcp_zoo\nCOPY run.py /opt/zoo/run.py\n{body}"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        _add(tar, "Dockerfile", dockerfile.encode())
        _add(tar, "run.py", RUN_ZOO.encode())
        for path in sorted(ZOO_PACKAGE.rglob("*.py")):
            _add(tar, f"mcp_zoo/{path.relative_to(ZOO_PACKAGE)}", path.read_bytes())
    tag = f"{REPOSITORY}:{flavour}"
    image, _ = client.images.build(fileobj=io.BytesIO(buffer.getvalue()), custom_context=True, tag=tag, rm=True,
                                   pull=False, labels={labels.KIND: labels.KIND_INSTALLED, TEST_LABEL: "image-door"})
    return BuiltImage(tag=tag, image_id=str(image.id))


def remove_test_images(client: docker.DockerClient) -> None:
    for image in client.images.list(filters={"label": f"{TEST_LABEL}=image-door"}):
        for tag in image.tags:
            try:
                client.images.remove(tag, noprune=False)
            except docker.errors.APIError:
                pass  # in use by a container another test still tears down: the next run's fixture takes it


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))
