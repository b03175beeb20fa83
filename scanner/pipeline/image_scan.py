"""`scan docker:IMAGE[:TAG|@sha256:…] [-- ARGS]`: a server shipped as a container image, run as shipped under the
same run policy as an installed package.

    target (image_target) → the image, local or pulled (sandbox/run/image_source) → the programs its looks need
    (check_image) → run, list, lint, probe, list again, conformance (scan.serve, as for a package) → assemble

Nothing is installed, so install and the source scan do not run, and provenance has nothing to ask a registry
about: each says so (a Skipped record, never a silent pass). What the door checks instead is pinning: the digest the
image is pinned by is recorded (`target.image`) and pinned in the lock, and a tag without a digest is I1's
no-digest case. The image's USER is never used (the run uid replaces it); an image that runs as root by default and
whose server ends before answering gets the plain statement that it appears to need root (`needs_root`).
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from sandbox.core import engine
from sandbox.core.session import SandboxSession
from sandbox.run.image_source import (TOOL_USES, ImageCheck, ImageConfig, acquire_image, check_image, image_policy,
                                      refuse_volumes, server_command)
from sandbox.run.policy import RUN_GID, RUN_UID, WORKSPACE, RunPolicy
from scanner.pipeline.assemble import ScanParts, assemble
from scanner.pipeline.head_start import HeadStart
from scanner.pipeline.image_target import ImageTarget, is_image_target, parse_image_target
from scanner.pipeline.launch import choose_command
from scanner.pipeline.phase_clock import PhaseClock
from scanner.pipeline.provenance_check import Provenance
from scanner.pipeline.scan import Concurrent, in_session, run_scan, serve
from scanner.pipeline.scan_options import Progress, ScanOptions
from scanner.pipeline.server_start import start_sink_container
from scanner.probes import phase as probe_phase
from scanner.provenance.launch import unpinned_finding
from scanner.provenance.model import ProvenanceReport
from scanner.provenance.package_specs import image_ref
from scanner.report.model import ImageInfo, Report, Skipped, TargetInfo

NOT_RUN = (("install", "not applicable: container image (nothing is installed; the image runs as shipped)"),
           ("source", "not available: container image (the source scan reads an installed package's own files)"),
           ("provenance", "not available: container image (registry metadata, signatures, attestations, advisories "
                          "and the dependency tree are checked for packages only; the image's digest is recorded "
                          "and pinned in the lock, and a tag without a digest is I1)"))

# Why a link where the policy mounts its tmpfs leaves the scan incomplete (sandbox/run/image_mounts.py).
REDIRECTED = ("the engine mounted the sandbox's tmpfs where it leads, and the file looks list the path itself, so "
              "what the server wrote or read there (file changes, canary reads) was not seen")


def run_target(options: ScanOptions, progress: Progress = lambda _: None, head_start: HeadStart | None = None
               ) -> Report:
    """The sandboxed scan of any target: a container image (docker:…) here, else a package (`run_scan`, which takes
    over `head_start`'s session; an image scan leaves it to its caller to close)."""
    if is_image_target(options.target):
        return run_image_scan(options, progress)
    return run_scan(options, progress, head_start)


def run_image_scan(options: ScanOptions, progress: Progress = lambda _: None) -> Report:
    began = time.monotonic()
    wanted = parse_image_target(options.target)  # exit 2 before the engine is asked anything
    clock = PhaseClock()
    with clock.phase("engine_connect"):
        client = engine.connect()
    progress(f"image {wanted.reference}")
    with clock.phase("image_check"):
        image = acquire_image(client, wanted.reference, wanted.repository, wanted.digest)
    refuse_volumes(image)
    command = (choose_command(wanted.repository, {}, options.command, options.server_args)  # --command replaces it
               if options.command is not None else server_command(image, options.server_args))
    policy = image_policy(options.policy, image)
    info = image_info(wanted, image, command)
    parts = ScanParts(target=TargetInfo(kind="image", name=wanted.repository, requested=wanted.requested,
                                        version=wanted.tag, image=info),
                      probes_enabled=options.probes.enabled, clock=clock,
                      not_run=[Skipped(stage=stage, reason=reason, chosen=True) for stage, reason in NOT_RUN])  # type: ignore[arg-type]
    pinning = [] if wanted.pinned else [unpinned_finding(image_ref(wanted.display))]
    parts.provenance = Provenance(report=ProvenanceReport(), findings=pinning)
    with ThreadPoolExecutor(max_workers=6, thread_name_prefix="mcp-sandbox") as pool:
        in_session(parts, client, pool, began, lambda session, running: _image_stages(
            parts, session, image, command, policy, options, progress, running))
    info.needs_root = root_statement(image, parts)
    return assemble(parts, options.config)


def _image_stages(parts: ScanParts, session: SandboxSession, image: ImageConfig, command: list[str],
                  policy: RunPolicy, options: ScanOptions, progress: Progress, running: Concurrent) -> None:
    """The sink and the probe plan beside the look at what the image lacks; then the run, as for a package."""
    clock = parts.clock
    parts.stage = "run"
    if options.network == "observe":
        running.sink = running.pool.submit(start_sink_container, session, policy, progress, clock)
    plan = running.pool.submit(clock.timed, "probe_plan", probe_phase.prepare, options.probes, policy)
    with clock.phase("image_check"):  # the image: acquired, then what it lacks
        checked = check_image(session, image.image_id, policy)
    assert isinstance(parts.target, TargetInfo) and parts.target.image is not None
    parts.target.image.unavailable = unavailable_looks(checked)
    parts.image_gaps = [f"{line}: {REDIRECTED}" for line in checked.redirected]
    running.sweep.result()
    serve(parts, session, image.image_id, command, options, progress, running, plan,
          working_dir=image.working_dir or WORKSPACE)


def unavailable_looks(checked: ImageCheck) -> list[str]:
    """What the image keeps the looks from, one line each: the programs it lacks (or whose check never ended), then
    the mount points it has as a link or a file."""
    why = " (the check of the image's programs did not finish)" if checked.stuck else ""
    return [*(f"{tool}: {TOOL_USES[tool]}{why}" for tool in checked.missing),
            *(f"{line}: {REDIRECTED}" for line in checked.redirected)]


def image_info(wanted: ImageTarget, image: ImageConfig, command: list[str]) -> ImageInfo:
    return ImageInfo(reference=wanted.reference, repository=wanted.repository, tag=wanted.tag,
                     digest=wanted.digest or image.digest_of(wanted.repository), pinned=wanted.pinned,
                     image_id=image.image_id, repo_digests=image.repo_digests, pulled=image.pulled,
                     configured_user=image.user, working_dir=image.working_dir,
                     env_names=sorted(name for name in image.env if name != "HOME"), command=command)


def root_statement(image: ImageConfig, parts: ScanParts) -> str | None:
    """The plain statement for an image that runs as root by default and whose server ended before it answered
    tools/list as the run uid; None otherwise."""
    listing = parts.listing
    if not image.runs_as_root or listing is None or listing.exit_code is None:
        return None
    inventory = listing.inventory
    if inventory.connected and inventory.first_tools_list_seconds is not None:
        return None
    user = f"USER {image.user}" if image.user else "no USER, so root"
    return (f"the image is configured to run as root ({user}), and its server exited (code {listing.exit_code}) "
            f"before answering as uid {RUN_UID}:{RUN_GID}, the sandbox's user: it appears to need root. The "
            "sandbox never runs a server as root, so this image was not vetted; an image built to run as a "
            "non-root USER can be")
