"""Seeding a running sandbox before its server is sent anything: the workspace filled and the canaries planted in
HOME (both in one tar, `rooted`, streamed into one `tar -x` by sandbox.run.exec_stream) while its observer starts,
then the baseline snapshot every later look is compared with.

Apart from the probe phase (which imports mcp) and importing only the sandbox side, so that the head start's thread
can seed the server it started while the CLI imports the listing code (scanner/pipeline/early_server.py): `seed_ahead`
keeps what seeding gave, or how it failed, for the scan to take over (`Seeded.result` raises that failure where the
scan seeds, so it surfaces as it does when the scan seeds itself)."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import PurePosixPath

import docker
import requests
from docker.errors import APIError, NotFound

from sandbox.run.exec_stream import EXEC_ENVIRONMENT, EXEC_USER, extract_tar
from sandbox.run.observe import Snapshot
from sandbox.run.observer_watch import Watch, watch
from sandbox.run.start_gate import open_only

Archive = tuple[bytes, str]  # a tar and the directory it is extracted into (WORKSPACE, HOME; ROOT for `rooted`)
ROOT = "/"
THREADS = "mcp-sandbox-seed"  # the name of the threads seeding runs in
OPEN_GATE_SECONDS = 5  # the bound on the exec that opens a start gate on its own


def rooted(archives: Sequence[Archive]) -> Archive:
    """The archives as one tar extracted at / (one exec seeds the sandbox instead of one per directory): each member
    renamed under its directory. They are the scanner's own (sandbox/run/workspace_seed.py, canaries.py): relative
    names that stay in their directory, directories and regular files only; anything else is refused."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as whole:
        for data, dest in archives:
            with tarfile.open(fileobj=io.BytesIO(data)) as part:
                for member in part.getmembers():
                    name = PurePosixPath(member.name)
                    if name.is_absolute() or ".." in name.parts or not (member.isdir() or member.isfile()):
                        raise ValueError(f"not a seed archive's member: {member.name!r} ({member.type!r})")
                    member.name = str(PurePosixPath(dest) / name).lstrip("/")
                    member.pax_headers = {k: v for k, v in member.pax_headers.items() if k != "path"}
                    whole.addfile(member, part.extractfile(member) if member.isfile() else None)
    return buffer.getvalue(), ROOT


def fill(client: docker.DockerClient, container_id: str, archives: Sequence[Archive], *,
         open_gate: bool = False) -> None:
    """Extract each archive into its directory of the running sandbox (ObserveError when one could not be);
    `open_gate`: then let the server's own code start (sandbox/run/start_gate.py), also when an extraction failed."""
    try:
        for index, (archive, dest) in enumerate(archives):
            extract_tar(client, container_id, archive, dest, open_gate=open_gate and index == len(archives) - 1)
    except Exception:  # an interrupt goes on at once: the session's teardown removes the waiting server
        if open_gate:
            _open_gate_alone(client, container_id)
        raise
    if open_gate and not archives:
        _open_gate_alone(client, container_id)


def _open_gate_alone(client: docker.DockerClient, container_id: str) -> None:
    """The start gate opened by an exec of its own (bounded): a server whose seeding failed still starts, and the
    scan says why its probes were skipped. A gate that cannot be opened leaves the server waiting: its handshake
    then times out, and the scan is incomplete."""
    api = client.api
    try:
        exec_id = api.exec_create(container_id, ["timeout", str(OPEN_GATE_SECONDS), *open_only()], user=EXEC_USER,
                                  environment=EXEC_ENVIRONMENT)["Id"]
        api.exec_start(exec_id)
    except (APIError, NotFound, requests.exceptions.RequestException):
        return  # said by the handshake's timeout, which this leaves to happen; the seeding's own error is raised


def seed(client: docker.DockerClient, container_id: str, archives: Sequence[Archive], *,
         use_observer: bool = True, opens: tuple[str, ...] = (), open_gate: bool = False) -> tuple[Watch, Snapshot]:
    """Fill the running sandbox (`fill`) while its observer starts (all before the server is sent anything); returns
    the Watch its looks go through and the baseline snapshot. `open_gate`: the server waits at its start gate until
    the fill is done."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix=THREADS) as pool:
        starting = pool.submit(watch, client, container_id, use_observer=use_observer, opens=opens)
        try:
            fill(client, container_id, archives, open_gate=open_gate)
        except BaseException:
            starting.result().close()
            raise
        looking = starting.result()
    try:
        return looking, looking.snapshot()
    except BaseException:
        looking.close()
        raise


@dataclass(frozen=True)
class Seeded:
    """A sandbox seeded ahead of the scan: its Watch and baseline snapshot, or why seeding failed (`failure`)."""

    watch: Watch | None = None
    baseline: Snapshot | None = None
    failure: Exception | None = None

    def result(self) -> tuple[Watch, Snapshot]:
        """The Watch and the baseline, now the caller's to close; the seeding's failure raised here."""
        if self.failure is not None:
            raise self.failure
        assert self.watch is not None and self.baseline is not None
        return self.watch, self.baseline

    def close(self) -> None:
        """The Watch's observer (again for nothing when the scan finished it; the session's teardown removes its
        container)."""
        if self.watch is not None:
            self.watch.close()


def seed_ahead(client: docker.DockerClient, container_id: str, archives: Sequence[Archive], *,
               use_observer: bool = True, opens: tuple[str, ...] = (), open_gate: bool = False) -> Seeded:
    """`seed`, its failure kept for the scan to raise where it takes the seeded sandbox over."""
    try:
        looking, baseline = seed(client, container_id, archives, use_observer=use_observer, opens=opens,
                                 open_gate=open_gate)
    except Exception as exc:  # noqa: BLE001 - not hidden: Seeded.result raises it where the scan seeds
        return Seeded(failure=exc)
    return Seeded(watch=looking, baseline=baseline)
