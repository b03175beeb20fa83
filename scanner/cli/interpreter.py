"""The interpreter's settings for one command, set before anything else runs (scanner/cli/entry.py, and the app's
`main` for callers that run it directly): the cyclic collector's thresholds, the threads' switch interval and the
collector's freeze at exit. Standard library only: the entry sets them before it imports the CLI."""

from __future__ import annotations

import atexit
import sys
from gc import freeze as freeze_gc, set_threshold as set_gc_threshold

# The cyclic collector's thresholds for one command: a command builds many objects that live until it ends (the
# imported modules, a tool list's views and findings) and few cycles, so the default (700, 10, 10) spends a third of a
# large `check` re-walking them (measured: 11.0 s against 8.3 s of CPU for 50,000 tools). Every cycle is still
# collected, only less often. The first threshold at 300,000 rather than 100,000: a 3,000-tool `check` holds up to
# ~150,000 young containers at once, so at 100,000 it paid one collection of them (~40 ms of its ~0.6 s) that found
# nothing to free; 50,000 tools take as long and as much memory either way.
GC_THRESHOLDS = (300_000, 50, 100)
# How long a thread holds the interpreter before another may take it (CPython's default: 5 ms). A scan's threads
# mostly wait on the engine, the registry and the server, and each of their steps needs the interpreter only for a
# moment: at 5 ms each step waits behind the import or the rules running in another thread, so the head start's
# engine calls and a probe call's looks queued for the interpreter longer than the engine took to answer. Measured on a
# warm scan (paired, 12 rounds): 0.11 s off the listing scan, 0.35-0.41 s off the probing scan of server-filesystem.
SWITCH_INTERVAL = 0.0005


def tune_interpreter() -> None:
    """Set the thresholds and the switch interval, and freeze the collector at exit (`_freeze_at_exit`)."""
    set_gc_threshold(*GC_THRESHOLDS)
    sys.setswitchinterval(SWITCH_INTERVAL)
    _freeze_at_exit()


def _freeze_at_exit() -> None:
    """At interpreter exit, before its last collection and module teardown, move every object still alive into the
    collector's permanent generation: the exit then does not walk what the command built (~30 ms of a 3,000-tool
    `check`). An atexit hook rather than a freeze here, so that a caller that runs main() in its own process (the
    tests) keeps collecting its garbage between calls; registered once however often it is called."""
    atexit.unregister(freeze_gc)
    atexit.register(freeze_gc)
