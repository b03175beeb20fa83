"""A crash more than one call may have caused (scanner/probes/crash_attribution.py, `suspects`), held until the
suspects are sent again to the restarted server, one at a time, each given EXIT_AFTER_ANSWER_SECONDS after its
answer: the first that stops the fresh server is P6's. One that crashes it while it runs gets its own P6 from the
runner (labelled "… (sent again)"); one the server outlives that long is cleared. When none stops it, or probing
ends before they can be sent, P6 names the likeliest (the call out when the server ended, else the last one
answered) and says the others may have done it."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio
import docker

from sandbox.run import observe
from scanner.probes.crash_attribution import EXIT_AFTER_ANSWER_SECONDS, Answered, finished_at, suspects
from scanner.probes.model import ProbeCall
from scanner.report.model import Finding
from scanner.rules.probe_crashes import crash_finding, replayed_crash_finding

AGAIN = " (sent again)"  # the label of a call sent again to decide a crash


@dataclass(frozen=True)
class Undecided:
    suspects: tuple[ProbeCall, ...]  # in the order they were sent; the last the likeliest
    noticing: ProbeCall  # the call that found the server gone
    exit_code: int | None
    stderr_tail: str

    @property
    def out(self) -> bool:
        """The server ended while `noticing` was out (it is then the last suspect), else before it was sent."""
        return self.suspects[-1] is self.noticing

    def again(self, call: ProbeCall) -> ProbeCall:
        """A suspect as it is sent again (its label says so)."""
        return dataclasses.replace(call, label=f"{call.label}{AGAIN}")

    def stopped_by(self, call: ProbeCall) -> Finding:
        """P6 for the suspect that stopped the fresh server too, after answering."""
        return self._finding(call, f"sent again to a fresh server, probe '{call.label}' stopped it too, after "
                                   "answering; it was restarted fresh")

    def unusable(self, call: ProbeCall) -> Finding:
        """P6 for the likeliest suspect when a suspect sent again left the fresh server unusable without crashing it
        (it hung, closed the connection, flooded stdout): the others were not sent."""
        return self._likeliest(f"sent again to a fresh server, probe '{call.label}' of '{call.tool}' left it "
                               "unusable (no answer, or a closed connection), so the others were not sent")

    def unreproduced(self, *, sent_again: bool) -> Finding:
        """P6 for the likeliest suspect when none stopped the fresh server (`sent_again`), or none could be sent."""
        return self._likeliest("sent again to a fresh server, none of them stopped it" if sent_again else
                               "probing ended before they could be sent again")

    def _likeliest(self, why: str) -> Finding:
        """P6 for the call out when the server ended, else the last one answered, naming the other suspects."""
        likeliest = self.suspects[-1]
        others = ", ".join(f"'{call.label}' of '{call.tool}'" for call in self.suspects if call is not likeliest)
        return self._finding(likeliest, f"it may have been {others} instead ({why})")

    def _finding(self, culprit: ProbeCall, decided: str) -> Finding:
        when = f"during probe '{self.noticing.label}'" if self.out else f"before probe '{self.noticing.label}' was sent"
        return replayed_crash_finding(culprit.tool, exit_code=self.exit_code, stderr_tail=self.stderr_tail,
                                      when=when, decided=decided)


def charged_crash(answered: list[Answered], noticing: ProbeCall, sent_at: float, finished: float | None, *,
                  exit_code: int | None, stderr_tail: str) -> Finding | Undecided:
    """The P6 for a server found dead by `noticing` (sent at `sent_at`; `finished`: when the engine says it ended,
    epoch seconds; `answered`: the calls this server answered), or the crash held for its suspects to be sent again."""
    found = suspects(answered, noticing, sent_at, finished)
    if len(found) > 1:
        return Undecided(tuple(found), noticing, exit_code, stderr_tail)
    culprit = found[0]
    return crash_finding(culprit.tool, culprit.label, exit_code=exit_code, stderr_tail=stderr_tail,
                         noticed_by=None if culprit is noticing else noticing.label)


async def late_exit(answered: list[Answered], client: docker.DockerClient, container_id: str,
                    stderr_tail: Callable[[], str]) -> Finding | Undecided | None:
    """After the last planned call, no call is left to find a server gone: one that ended within
    EXIT_AFTER_ANSWER_SECONDS of the last answer (to any call: a read-only annotation is the server's own word) is
    charged as a crash noticed by the last call answered (waited for until that window closes); None when it still
    runs."""
    if not answered:
        return None
    await anyio.sleep(max(0.0, answered[-1].at + EXIT_AFTER_ANSWER_SECONDS - time.time()))
    state = await anyio.to_thread.run_sync(observe.exit_state, client, container_id)
    if state.running:
        return None
    finished = await anyio.to_thread.run_sync(finished_at, client, container_id)
    return charged_crash(answered, answered[-1].call, time.time(), finished, exit_code=state.exit_code,
                         stderr_tail=stderr_tail())
