"""The last stage, whatever failed before it: remove every container and network of the sandbox session (not to be
cut short by a signal), and say whether anything was left; with it, what the sandbox ran when teardown began and how
the server ended (`server_end_info`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandbox.core.session import SandboxSession
from scanner.pipeline.interrupts import uninterruptible
from scanner.report.model import ProcessSeen, ServerEnding, TeardownInfo

if TYPE_CHECKING:
    from scanner.pipeline.listing import Listing


def tear_down(session: SandboxSession) -> TeardownInfo:
    with uninterruptible():
        result = session.teardown()
    return TeardownInfo(complete=result.complete, seconds=result.seconds, removed=result.removed,
                        leftovers=result.leftovers)


def server_end_info(listing: Listing, teardown: TeardownInfo | None) -> tuple[list[ProcessSeen], TeardownInfo | None]:
    """The start-up processes (for the sandbox section), and the teardown record with the processes found when
    teardown began and how the server ended."""
    outcome = listing.probed.outcome
    startup = list(outcome.startup_processes) if outcome is not None else []
    if teardown is None:
        return startup, None
    ending = listing.ending
    update = {"processes": list(outcome.teardown_processes) if outcome is not None else [],
              "server_ending": None if ending is None else ServerEnding(
                  ended_by=ending.ended_by, exit_code=ending.exit_code, seconds=ending.seconds)}  # type: ignore[arg-type]
    return startup, teardown.model_copy(update=update)
