"""The last stage, whatever failed before it: remove every container and network of the sandbox session (not to be
cut short by a signal), and say whether anything was left."""

from __future__ import annotations

from sandbox.core.session import SandboxSession
from scanner.pipeline.interrupts import uninterruptible
from scanner.report.model import TeardownInfo


def tear_down(session: SandboxSession) -> TeardownInfo:
    with uninterruptible():
        result = session.teardown()
    return TeardownInfo(complete=result.complete, seconds=result.seconds, removed=result.removed,
                        leftovers=result.leftovers)
