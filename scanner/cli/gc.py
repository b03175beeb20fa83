"""`mcp-sandbox gc`: remove what crashed or killed scans left behind, and evict cached installs (the installed-server
images) least recently used first (sandbox/core/gc.py, sandbox/core/image_cache.py)."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import typer

from scanner.errors import UsageError

if TYPE_CHECKING:
    from sandbox.core import image_cache

DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhdw])$")
INCOMPLETE = 3  # as a scan whose teardown was incomplete
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
HELP = {
    "all": "Remove every labelled container, network and volume, even of scans still running (with --images: "
           "cached installs used in the last 15 minutes too).",
    "images": "Also evict cached installs (installed-server images): all of them, or with --keep / --older-than "
              "the least recently used. Runtime base images, images a container uses and (without --all) images "
              "used in the last 15 minutes, which a running scan may be about to start, are never removed.",
    "keep": "With --images: keep the N most recently used cached installs.",
    "older-than": "With --images: remove the cached installs not used for longer than this (e.g. 30d, 12h, 90m).",
}


def parse_duration(text: str, flag: str) -> float:
    """`30d`, `12h`, `90m`, `3600s`, `2w` in seconds; UsageError otherwise."""
    match = DURATION.match(text.strip().lower())
    if not match:
        raise UsageError(f"{flag} {text!r} is not a duration; use e.g. 30d, 12h or 90m")
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)]


def collect_garbage(
    everything: bool = typer.Option(False, "--all", help=HELP["all"]),
    cached_images: bool = typer.Option(False, "--images", help=HELP["images"]),
    keep: int | None = typer.Option(None, "--keep", min=0, metavar="N", help=HELP["keep"]),
    older_than: str | None = typer.Option(None, "--older-than", metavar="D", help=HELP["older-than"]),
) -> None:
    """Remove what crashed or killed scans left behind (containers, networks, volumes labelled io.mcp-sandbox.* and
    named mcp-sandbox-<session>-…);
    exit 3, naming each, when the engine would not remove some."""
    if (keep is not None or older_than is not None) and not cached_images:
        raise UsageError("--keep and --older-than choose which cached installs to evict; add --images")
    age = parse_duration(older_than, "--older-than") if older_than is not None else None
    import time

    from sandbox.core import engine, gc, image_cache
    from sandbox.core.untrusted import escape_for_terminal

    client = engine.connect()
    result = gc.sweep(client, everything=everything)
    eviction = image_cache.Eviction()
    if cached_images:
        # After the sweep, so the stopped containers of dead scans no longer hold the images they used.
        eviction = image_cache.evict(client, eviction_policy(keep, age, everything=everything), time.time())
        if eviction.kept_in_use or eviction.failed:
            print(f"kept {len(eviction.kept_in_use) + len(eviction.failed)} cached installs a container uses")
        if eviction.kept_recent:
            print(f"kept {len(eviction.kept_recent)} cached installs used in the last "
                  f"{image_cache.DEFAULT_MIN_IDLE_SECONDS / 60:.0f} minutes (a running scan may be about to start "
                  "one; --all removes them)")
    print(f"removed {len(result.containers)} containers, {len(result.networks)} networks, "
          f"{len(result.volumes)} volumes, {len(eviction.removed)} images"
          + (f"; kept {len(result.kept_live_sessions)} live sessions" if result.kept_live_sessions else ""))
    refused = [*result.failed, *(f"cached install {line}" for line in eviction.refused)]
    if refused:  # a dead scan's leftover or a cached install the engine would not remove (the next gc asks again)
        for line in refused:
            print(f"could not remove {escape_for_terminal(line)}", file=sys.stderr)
        raise typer.Exit(INCOMPLETE)


def eviction_policy(keep: int | None, age: float | None, *, everything: bool) -> image_cache.Policy:
    """Which cached installs `gc --images` evicts: all (or those --keep / --older-than leave), less any used in the
    last 15 minutes unless --all. A scan records its use when it looks a cached install up (or commits a new one) and
    only then starts its containers from it; a gc run elsewhere in that gap (a cron job on a worker) removed the image
    and failed the scan."""
    from sandbox.core import image_cache

    return image_cache.Policy(keep=0 if keep is None and age is None else keep, older_than=age,
                              min_idle=0.0 if everything else image_cache.DEFAULT_MIN_IDLE_SECONDS)


def register(app: typer.Typer) -> None:
    app.command("gc")(collect_garbage)
