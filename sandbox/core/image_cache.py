"""Evict installed-server images (the install cache, labelled io.mcp-sandbox.kind=installed) least recently used
first: keep the N most recent, drop those unused for longer than D, or shrink the cache under a size.

Only images labelled `installed` and named only in the install cache's repository are candidates, so a runtime base
image (kind=runtime), an image that labels itself `installed` (a `docker:` target's, pulled or named by its
author), or one built FROM an installed image under another name is never touched. An image any container uses
(running or stopped) is kept, and so is one used within the last `min_idle` seconds: a scan looks its cached install
up (or commits its install) and only then starts the server's container from it, and eviction must not fall into
that gap. Removal is by tag, never forced, so an image the engine says is in use stays. Last use comes from
sandbox/core/image_use.py (the image's creation time when there is no record).

Size is each image's own share: its size less the layers it shares with other images (the runtime base, which is
not the cache's to free), as the engine's disk-usage report gives it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import docker
from docker.errors import APIError, NotFound

from sandbox.core import image_use, labels
from sandbox.core.engine import EngineTimeout
from sandbox.core.image_reads import ReadStore
from sandbox.core.session import refusal_words

DEFAULT_MIN_IDLE_SECONDS = 900.0


@dataclass(frozen=True)
class CachedImage:
    image_id: str
    tags: tuple[str, ...]
    size: int  # bytes this image alone holds
    last_used: float
    in_use: bool = False


@dataclass(frozen=True)
class Policy:
    keep: int | None = None  # keep the N most recently used
    older_than: float | None = None  # remove those last used more than this many seconds ago
    max_bytes: int | None = None  # remove the least recently used until the rest fits
    min_idle: float = DEFAULT_MIN_IDLE_SECONDS


@dataclass
class Eviction:
    removed: list[str] = field(default_factory=list)
    freed_bytes: int = 0
    kept_in_use: list[str] = field(default_factory=list)
    kept_recent: list[str] = field(default_factory=list)  # the policy would remove them, but used within min_idle
    failed: list[str] = field(default_factory=list)  # in use since the listing (the engine said 409)
    refused: list[str] = field(default_factory=list)  # "name (the engine refused: its words)", any other refusal


def choose(images: list[CachedImage], policy: Policy, now: float) -> list[CachedImage]:
    """The images to remove, least recently used first (pure: the decision, apart from the engine)."""
    ordered = sorted(images, key=lambda i: i.last_used, reverse=True)  # most recent first
    doomed: dict[str, CachedImage] = {}
    if policy.keep is not None:
        doomed |= {i.image_id: i for i in ordered[policy.keep:]}
    if policy.older_than is not None:
        doomed |= {i.image_id: i for i in ordered if now - i.last_used > policy.older_than}
    if policy.max_bytes is not None:
        total = sum(i.size for i in ordered if i.image_id not in doomed)
        for image in reversed(ordered):
            if total <= policy.max_bytes:
                break
            if image.image_id not in doomed and _removable(image, policy, now):
                doomed[image.image_id] = image
                total -= image.size
    return sorted((i for i in doomed.values() if _removable(i, policy, now)), key=lambda i: i.last_used)


def _removable(image: CachedImage, policy: Policy, now: float) -> bool:
    return not image.in_use and now - image.last_used >= policy.min_idle


def cached_images(client: docker.DockerClient, uses: dict[str, float],
                  select: dict[str, str] | None = None) -> list[CachedImage]:
    """Every installed-server image (those with the `select` labels too, when given), with its own size, last use
    and whether a container uses it."""
    api = client.api
    wanted = {labels.KIND: labels.KIND_INSTALLED, **(select or {})}
    listed = api.images(filters={"label": [f"{key}={value}" for key, value in wanted.items()]})
    shared = {i["Id"]: i for i in (disk_usage(api).get("Images") or [])}
    used = {c.get("ImageID") for c in api.containers(all=True)}
    out = []
    for image in listed:
        if any((image.get("Labels") or {}).get(key) != value for key, value in wanted.items()):
            continue  # the filter is the engine's; the labels are checked here too
        if not _the_caches(image):
            continue  # labelled like an install, but named otherwise or pulled: someone else's
        usage = shared.get(image["Id"], {})
        own = int(usage.get("Size", image.get("Size", 0)) or 0) - max(0, int(usage.get("SharedSize", 0) or 0))
        created = float((image.get("Labels") or {}).get(labels.CREATED) or image.get("Created") or 0)
        out.append(CachedImage(image_id=image["Id"], tags=_tags(image), size=max(0, own),
                               last_used=max(created, uses.get(image["Id"], 0.0)), in_use=image["Id"] in used))
    return out


DISK_USAGE_BUSY = "disk usage operation is already running"
DISK_USAGE_WAIT_SECONDS = 120.0  # an engine with many images takes seconds to sum them up; another run's report waits


def disk_usage(api: docker.APIClient, *, wait: float = DISK_USAGE_WAIT_SECONDS,
               sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """The engine's disk-usage report. An engine before Docker 23 answers 500 "a disk usage operation is already
    running" while it sums one up for another client (a second `gc --images`, another batch's `--cache-size`): that
    report is asked for again, after 0.2 s and longer up to 2 s, until `wait` has passed; any other refusal is
    raised as it came."""
    deadline, pause = time.monotonic() + wait, 0.2
    while True:
        try:
            return api.df()
        except APIError as exc:
            if DISK_USAGE_BUSY not in str(exc.explanation or exc) or time.monotonic() + pause > deadline:
                raise
        sleep(pause)
        pause = min(2.0, pause * 2)


UNTAGGED = "<none>:<none>"  # the RepoTags an engine before API 1.42 gives an untagged image: no name to remove it by


def _tags(image: dict[str, Any]) -> tuple[str, ...]:
    """The image's tags; an untagged image has none (removing "<none>:<none>" is a 400, which ended `gc --images` as
    an internal error with the rest of the eviction undone)."""
    return tuple(tag for tag in image.get("RepoTags") or () if tag != UNTAGGED)


def evict(client: docker.DockerClient, policy: Policy, now: float, *, use_path: Path | None = None,
          select: dict[str, str] | None = None, reads: ReadStore | None = None) -> Eviction:
    """Remove what `choose` picks; an image the engine refuses to remove (in use since the listing) is kept. The
    reads kept of the images removed, and of any installed image gone since (`reads`: sandbox/core/image_reads.py's
    store), are dropped."""
    listed_at = time.time()
    images = cached_images(client, image_use.last_uses(use_path), select)
    result = Eviction(kept_in_use=[_name(i) for i in images if i.in_use], kept_recent=[
        _name(i) for i in choose(images, replace(policy, min_idle=0.0), now)
        if not i.in_use and now - i.last_used < policy.min_idle])
    gone = []
    for image in choose(images, policy, now):
        refusal = _remove(client, image)
        if refusal is None:
            result.removed.append(_name(image))
            result.freed_bytes += image.size
            gone.append(image.image_id)
        elif refusal == IN_USE:
            result.failed.append(_name(image))
        else:  # the next image is still tried: one the engine cannot remove keeps no other in the cache
            result.refused.append(f"{_name(image)} ({refusal})")
    image_use.forget(gone, use_path)
    if select is None:  # every installed image was listed: the reads of any other are of an image gone
        (reads or ReadStore()).prune({image.image_id for image in images} - set(gone), listed_at)
    else:
        (reads or ReadStore()).forget(gone)
    return result


IN_USE = "in use"


def _remove(client: docker.DockerClient, image: CachedImage) -> str | None:
    """None once the image is gone; IN_USE when a container started from it since the listing (409); else the
    engine's refusal in its own words (bounded)."""
    try:
        for tag in image.tags or (image.image_id,):
            client.api.remove_image(tag, force=False)
    except NotFound:
        return None
    except EngineTimeout:
        raise
    except APIError as exc:
        if exc.status_code == 409:
            return IN_USE
        return refusal_words(exc, "the engine refused")
    return None


def _the_caches(image: dict[str, Any]) -> bool:
    """Whether an image labelled `installed` is the install cache's: every name it has is in the cache's repository
    (labels.INSTALLED_REPOSITORY; an untagged one is a superseded install), and it came from no registry (an
    install is committed here, so it has no registry digest)."""
    tags = _tags(image)
    digests = [digest for digest in image.get("RepoDigests") or [] if digest != "<none>@<none>"]
    return not digests and all(tag.rpartition(":")[0] == labels.INSTALLED_REPOSITORY for tag in tags)


def _name(image: CachedImage) -> str:
    return image.tags[0] if image.tags else image.image_id[:19]
