"""Where the run policy's tmpfs mounts land in a container image (`scan docker:IMAGE`): the engine mounts each at the
place its path leads to in the image, following a symbolic link on the way, so an image that ships /home/mcp,
/workspace or /tmp (or /home) as a link has the sandbox's HOME, workspace or /tmp mounted somewhere else. The looks
list those paths themselves (find and the observer never follow a link they are given), so behind such a link they
see nothing the server wrote or read, and the scan would read as clean. What the image has at each path is asked of
the engine (the archive API's stat, in a container created from the image), never of a program of the image.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Any

from sandbox.core.untrusted import escape_for_terminal

MODE_DIR = 1 << 31  # Go's os.ModeDir and os.ModeSymlink: how the engine's stat header gives a path's kind
MODE_SYMLINK = 1 << 27
STAT_HEADER = "X-Docker-Container-Path-Stat"
MAX_TARGET_CHARS = 200


def mount_paths(mount_points: Iterable[str]) -> list[str]:
    """The mount points and every folder above them but /, each once, shallowest first."""
    paths: set[str] = set()
    for point in mount_points:
        path = PurePosixPath(point)
        paths.update(str(parent) for parent in (path, *path.parents) if str(parent) != "/")
    return sorted(paths, key=lambda path: (path.count("/"), path))


def path_stat(api: Any, container_id: str, path: str) -> dict[str, Any] | None:
    """The engine's stat of `path` in the container ({} when the engine sent none it could read; None: no such
    path). The engine answers a missing container with the same 404: that raises NotFound, as inspect does."""
    url = api._url("/containers/{0}/archive", container_id)  # HEAD: the stat alone (docker-py has no call for it)
    response = api.head(url, params={"path": path}, timeout=api.timeout)
    if response.status_code == 404:
        api.inspect_container(container_id)  # NotFound when the container itself is gone
        return None
    api._raise_for_status(response)
    try:
        stat = json.loads(base64.b64decode(response.headers.get(STAT_HEADER, ""), validate=True))
    except (binascii.Error, ValueError):
        return {}
    return stat if isinstance(stat, dict) else {}


def redirected(api: Any, container_id: str, paths: Iterable[str]) -> list[str]:
    """One line for each of `paths` the image has as something other than a folder: a symbolic link (where it
    leads, escaped and capped: the image's text), or what is not a folder (a file, or a kind the engine did not say)."""
    lines: list[str] = []
    for path in paths:
        stat = path_stat(api, container_id, path)
        if stat is None:
            continue
        mode, target = stat.get("mode"), stat.get("linkTarget")
        if isinstance(mode, int) and mode & MODE_DIR and not mode & MODE_SYMLINK:
            continue
        if isinstance(target, str) and target:
            lines.append(f"{path} is a symbolic link to {escape_for_terminal(target, MAX_TARGET_CHARS)!r}")
        else:
            lines.append(f"{path} is not a folder")
    return lines
