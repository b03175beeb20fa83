"""The built wheel is the tool: installed into a fresh venv outside the checkout, it finds its image definitions
(package data, not the source tree), builds or reuses its images and scans a real server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.docker, pytest.mark.registry]


def _run(args: list[str], cwd: Path, timeout: int) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _tracked_copy(dest: Path) -> Path:
    """The files git tracks (and untracked ones it does not ignore), as a clean tree to build from."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, dest / name)
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv outside the checkout with the wheel (not the source tree) installed; returns its bin folder."""
    work = tmp_path_factory.mktemp("wheel")
    source = _tracked_copy(work / "src")  # a build in the checkout would leave build/, whose stale files ship
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(source)],
                 work, 600)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (work / "dist").glob("mcp_sandbox-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "sandbox/image_contexts/node/Dockerfile" in names and "sandbox/install/proxy/registries.json" in names
    assert not any(n.startswith(("tests/", "images/")) for n in names), "the wheel ships only the packages"
    venv = work / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)], work, 120).returncode == 0
    pip = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                str(wheel)], work, 900)
    assert pip.returncode == 0, pip.stderr[-2000:]
    return venv / "bin"


def test_the_wheel_reads_its_images_from_package_data(installed: Path, tmp_path: Path) -> None:
    where = _run([str(installed / "python"), "-c", "import sandbox.core.images as i; print(i.IMAGES_DIR)"],
                 tmp_path, 60)
    images_dir = Path(where.stdout.strip())
    assert images_dir.is_relative_to(installed.parent), where.stdout + where.stderr
    assert not images_dir.is_relative_to(ROOT)
    version = _run([str(installed / "mcp-sandbox"), "--version"], tmp_path, 60)
    assert version.returncode == 0 and version.stdout.startswith("mcp-sandbox ")


def test_the_wheel_builds_its_images_and_scans_a_real_server(installed: Path, tmp_path: Path) -> None:
    images = _run([str(installed / "mcp-sandbox"), "images", "build"], tmp_path, 900)
    assert images.returncode == 0, images.stdout + images.stderr
    # The wheel's build contexts hash like the checkout's: the images the checkout built are the wheel's too.
    checkout = _run([sys.executable, "-c", "import sandbox.core.images as i; print(i.image_tag('python'))"],
                    ROOT, 60).stdout.strip()
    assert f"python: {checkout} (up to date)" in images.stdout + images.stderr
    report = tmp_path / "report.json"
    scan = _run([str(installed / "mcp-sandbox"), "scan", "pypi:mcp-server-time", "--no-probes", "--json",
                 str(report), "--fail-on", "never"], tmp_path, 900)
    assert scan.returncode == 0, scan.stdout[-2000:] + scan.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["target"]["name"] == "mcp-server-time"
    assert {"get_current_time", "convert_time"} <= {tool["name"] for tool in data["tools"]}
    assert data["sandbox"]["teardown"]["complete"] is True
