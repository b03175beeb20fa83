"""Whether a scan saw what it set out to see: its status (complete, incomplete, failed) and the stages it skipped,
each with why, read from the values the stages returned (`ScanParts`).

- An internal error (an exception no stage expected) is `failed`: the stage it ended in, and every stage after it
  but teardown, are skipped; provenance runs beside the other stages (in a thread), so its failure skips only it.
- tools/list not read (no session, the server exited or timed out, the listing unparseable) is `incomplete`: the
  listing is skipped with the reason, and lint and probes with it.
- Probes that did not run although asked for, a second listing (under another client identity) that could not be
  read, a conformance probe whose fresh server gave no evidence (--spec-version), or a teardown that did not
  finish, are `incomplete`.
- The installed package's files that could not be read out of the image for `vet` (the source stage) is
  `incomplete`; so is a package that is also an agent plugin whose hooks or servers a client runs beside its own
  server, which the scan does not vet (the `plugin` stage: scanner/plugins/package_parts.py).
- `--no-probes` is a choice: recorded as skipped (chosen), the scan still complete.
- Any other error the scan recorded (one line each in `Report.errors`) leaves it `incomplete` too.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.core.untrusted import cap_text
from scanner.report.model import Skipped, Stage, Status

STAGES: tuple[Stage, ...] = ("install", "provenance", "source", "plugin", "run", "listing", "lint", "probes",
                              "relisting", "conformance", "teardown")
BESIDE: tuple[Stage, ...] = ("provenance",)  # stages that run beside the others: their failure stops no other stage
MAX_REASON_CHARS = 500
NOT_LISTED = "the tools were not listed"
PROBES_OFF = "turned off (--no-probes)"


@dataclass(frozen=True)
class Failure:
    """An exception no stage expected, and the stage it ended the scan in."""

    stage: Stage
    error: str  # one line: internal error in <stage>: <Type>: <message>

    @classmethod
    def of(cls, stage: Stage, exc: BaseException) -> Failure:
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:  # the task groups' wrapping says nothing
            exc = exc.exceptions[0]
        message = " ".join(str(exc).split())
        detail = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
        return cls(stage=stage, error=cap_text(f"internal error in {stage}: {detail}", MAX_REASON_CHARS))


@dataclass(frozen=True)
class StageFacts:
    """What the assembly knows of each stage, reduced to what the status depends on."""

    failure: Failure | None
    listing_problem: str | None  # why tools/list was not read, when it was not
    probes_enabled: bool
    probes_problem: str | None  # why the probes did not run although asked for, when they did not
    teardown_problem: str | None
    relisting_problem: str | None = None  # why the second listing (another client identity) was not read
    relisting_chosen: bool = False  # the user turned it off (P10 disabled by --config)
    conformance_problem: str | None = None  # why the conformance probe's fresh server gave no evidence
    source_problem: str | None = None  # why the installed package's files could not be read for `vet`
    plugin_problem: str | None = None  # the agent plugin parts a client runs that the scan did not vet


def skipped_stages(facts: StageFacts) -> list[Skipped]:
    """One record per stage that did not run or finish, in stage order (the first reason for a stage wins)."""
    records: list[Skipped] = []
    if facts.failure is not None:
        at = STAGES.index(facts.failure.stage)
        records.append(Skipped(stage=facts.failure.stage, reason=facts.failure.error))
        later = () if facts.failure.stage in BESIDE else STAGES[at + 1:-1]
        records += [Skipped(stage=stage, reason=f"not run: the scan failed in {facts.failure.stage}")
                    for stage in later]
    if facts.source_problem is not None:
        records.append(Skipped(stage="source", reason=cap_text(facts.source_problem, MAX_REASON_CHARS)))
    if facts.plugin_problem is not None:
        records.append(Skipped(stage="plugin", reason=cap_text(facts.plugin_problem, MAX_REASON_CHARS)))
    if facts.listing_problem is not None:
        records.append(Skipped(stage="listing", reason=cap_text(facts.listing_problem, MAX_REASON_CHARS)))
        records.append(Skipped(stage="lint", reason=NOT_LISTED))
    if not facts.probes_enabled:
        records.append(Skipped(stage="probes", reason=PROBES_OFF, chosen=True))
    elif facts.listing_problem is not None:
        records.append(Skipped(stage="probes", reason=NOT_LISTED))
    elif facts.probes_problem is not None:
        records.append(Skipped(stage="probes", reason=cap_text(facts.probes_problem, MAX_REASON_CHARS)))
    if facts.listing_problem is not None:
        records.append(Skipped(stage="relisting", reason=NOT_LISTED))
    elif facts.relisting_problem is not None:
        records.append(Skipped(stage="relisting", reason=cap_text(facts.relisting_problem, MAX_REASON_CHARS),
                               chosen=facts.relisting_chosen))
    if facts.listing_problem is None and facts.conformance_problem is not None:
        records.append(Skipped(stage="conformance", reason=cap_text(facts.conformance_problem, MAX_REASON_CHARS)))
    if facts.teardown_problem is not None:
        records.append(Skipped(stage="teardown", reason=cap_text(facts.teardown_problem, MAX_REASON_CHARS)))
    return _first_per_stage(records)


def status_of(failure: Failure | None, skipped: list[Skipped], errors: list[str]) -> Status:
    if failure is not None:
        return "failed"
    if errors or any(not record.chosen for record in skipped):
        return "incomplete"
    return "complete"


def _first_per_stage(records: list[Skipped]) -> list[Skipped]:
    """A chosen skip (--no-probes) is the truer reason than a consequence; otherwise the first record wins."""
    chosen = {record.stage for record in records if record.chosen}
    kept: dict[Stage, Skipped] = {}
    for record in records:
        if record.stage in kept or (record.stage in chosen and not record.chosen):
            continue
        kept[record.stage] = record
    return sorted(kept.values(), key=lambda record: STAGES.index(record.stage))
