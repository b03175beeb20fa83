"""The install container's writable places, found once for a runtime image and kept for the next cold install.

Before the first step, the write watch (sandbox/install/writes.py) finds every folder and file the install user can
write: `find / -writable` over the whole runtime image. That walk took 0.2 s of every cold install of a PyPI server
and 0.5-1.1 s of every npm one (the Node image held 43,000 files), on the path to the first step. What it finds is
settled before any package code runs, by these alone:

- the runtime image (its id is its content's digest: a rebuilt image is another id);
- the container as created: its user, working folder and host configuration (mounts, tmpfs, limits, security);
- the engine that makes the container (its version, kernel, storage driver, security options);
- the command and the places it skips (this module's KEY_VERSION moves when they change).

None of it comes from the package. So the places found are kept in a per-user SQLite file (FILE_NAME, beside the
reads kept of installed images, sandbox/core/image_reads.py), under the runtime image's id and a digest of the rest,
and an install with the same key takes them from there. The listing of those places (each step's baseline and
after-image) is still made in every install. Left out of the key: the network and its DNS server (`NetworkMode`,
`Dns`), which are new with every install and decide nothing of what a user may write. Only a find that ran to its end
is kept (sandbox/install/writes.py, `found_whole`). An entry that cannot be read, does not hold absolute paths as
counted, or lacks the install user's home (which a whole find always sees) is as if absent: the places are found
again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docker.errors import APIError

from sandbox.core.image_reads import ReadStore, StoredRead
from sandbox.core.state_dir import state_file
from sandbox.install.writes import ROOTS_COMMAND, SKIPPED_ROOTS

FILE_NAME = "install-roots.sqlite"
KEY_VERSION = 1  # moved whenever the find, or what its output is turned into, changes
# The container's host configuration minus what is new with every install (its network and that network's DNS).
PER_INSTALL = frozenset({"NetworkMode", "Dns"})
ENGINE_FIELDS = ("ServerVersion", "KernelVersion", "OperatingSystem", "Architecture", "Driver", "SecurityOptions",
                 "CgroupDriver", "CgroupVersion")
BLOB = "roots"


def roots_key(container: Mapping[str, Any], engine: Mapping[str, Any], install_tree: Sequence[str],
              local: bool) -> str:
    """The digest of everything but the image that decides the places (`container`: the engine's inspect of the
    created install container; `engine`: its info)."""
    config = container.get("Config") or {}
    host = {name: value for name, value in (container.get("HostConfig") or {}).items() if name not in PER_INSTALL}
    described = {
        "version": KEY_VERSION, "command": list(ROOTS_COMMAND), "skipped": list(SKIPPED_ROOTS),
        "install_tree": list(install_tree), "local": local,
        "user": config.get("User"), "workdir": config.get("WorkingDir"), "host": host,
        "engine": {name: engine.get(name) for name in ENGINE_FIELDS},
    }
    text = json.dumps(described, sort_keys=True, default=str)
    return f"install-writable-roots:{hashlib.sha256(text.encode()).hexdigest()}"


@dataclass(frozen=True)
class KeptRoots:
    """Where one install container's writable places are kept: `key` of the runtime image `image_id` in `store`."""

    store: ReadStore
    image_id: str
    key: str

    def load(self) -> tuple[str, ...] | None:
        """The places kept, or None when none are (or what is kept is not a list of absolute paths as counted)."""
        kept = self.store.load(self.image_id, self.key)
        if kept is None or BLOB not in kept.blobs:
            return None
        data = kept.blobs[BLOB]
        roots = tuple(data.decode("utf-8", "surrogateescape").split("\0")) if data else ()
        if kept.meta.get("count") != len(roots) or not all(root.startswith("/") for root in roots):
            return None
        return roots

    def keep(self, roots: Sequence[str]) -> None:
        """Keep the places found (not kept when the file cannot be written: the next install finds them again)."""
        data = "\0".join(roots).encode("utf-8", "surrogateescape")
        self.store.save(self.image_id, self.key, StoredRead({BLOB: data}, {"count": len(roots)}))


def kept_roots(api: Any, container_id: str, install_tree: Sequence[str], *, local: bool,
               path: Path | None = None) -> KeptRoots | None:
    """The keeping place of the created (not yet started) install container's writable places; None when the engine
    did not describe the container or itself, or no state file can be named (the places are then found, as
    always). `path`: the SQLite file (default FILE_NAME in the per-user state folder)."""
    try:
        container = api.inspect_container(container_id)
        engine = api.info()
    except APIError:
        return None
    image_id = container.get("Image") if isinstance(container, dict) else None
    if not isinstance(image_id, str) or not image_id or not isinstance(engine, dict):
        return None
    if path is None:
        try:
            path = state_file(FILE_NAME)
        except OSError:
            return None
    return KeptRoots(ReadStore(path), image_id, roots_key(container, engine, install_tree, local))
