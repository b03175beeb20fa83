"""The install as steps the host runs one at a time (`docker exec`) in an idle install container, so that the host —
never anything inside — decides where one step ends and the next begins (sandbox/install_windows.py).

The container's own process is an idle `sleep` under docker-init, running as a different user than the install
(uid 10002, not 10001). After every step the host runs `kill -KILL -1` as the install user: that ends every process
the step left behind, and cannot touch the idle process, so the container lives on for the next step and for
`docker commit`. The host does not take that on trust: it then lists the container's processes itself (the engine's
`top`, which runs `ps` outside the container) and, while any process other than the idle ones is alive, kills again,
a few times; if one still lives, the install stops (StepLeftover): a process of one step running on into the next
would be blamed on the next package.

Each step starts from nothing the previous ones left in its environment: its own HOME and TMPDIR, in a new folder
with an unguessable name on the install user's tmpfs (removed after the step), and the paths the caller names
(`cleanup_paths`, e.g. npm's project-level /opt/server/.npmrc, which no environment variable switches off) removed
after every step and checked absent from the host. The step's output goes to a file in its folder and its tail is
read back after the step; it is the installer's output, shown to the user, and never used to attribute anything.

With a `watch` plan, once the step's processes are gone and before its folders are removed, the host lists what the
install user can write outside the install tree and records what the step created or modified there
(sandbox/install/writes.py).
"""

from __future__ import annotations

import io
import posixpath
import secrets
import shlex
import tarfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from docker.errors import APIError, NotFound

from sandbox.core.archive import read_member
from sandbox.core.errors import SandboxError
from sandbox.install.disk import DiskWatch
from sandbox.install.kept_roots import KeptRoots
from sandbox.install.windows import engine_time
from sandbox.install.writes import StepWrites, WatchPlan, WriteWatch

IDLE_COMMAND = ["sleep", "infinity"]
POLL_FIRST_SECONDS = 0.01
POLL_MAX_SECONDS = 0.05
STEP_FOLDER_PREFIX = "step-"
STEP_LOG_NAME = "output.log"
# After the step's own `kill -KILL -1`: how many more times the host kills while its list of the container's
# processes shows one the idle ones are not, pausing KILL_PAUSE_SECONDS × the round before each look.
KILL_RETRIES = 5
KILL_PAUSE_SECONDS = 0.05
# `ps` options for the engine's `top`: the state (a zombie has ended) and the user of each process, as the engine's
# kernel sees it (under a user-namespace remap that is not 10001: see StepRunner.start).
TOP_PS_ARGS = "-eo pid,stat,uid"


class StepTimeout(SandboxError):
    """The install's deadline passed while a step was running."""


class StepLeftover(SandboxError):
    """A process the step left was still running after every attempt to end it (the message says how many)."""


@dataclass(frozen=True)
class StepResult:
    exit_code: int
    output: str  # the tail of what the step printed (untrusted: shown, never interpreted)
    writes: StepWrites | None = None  # what it wrote outside the install tree (None: not watched)


class StepRunner:
    """Runs commands in the started install container as `user`, with `environment` passed through `env` on the
    command line (like the one-shot install did: nothing reaches the container's config, so `docker commit` cannot
    carry proxy variables into the installed image), all before `deadline` (time.monotonic()).

    Each step gets HOME in a new folder under `home_root` (the install user's tmpfs) and TMPDIR in one of the same
    name under `tmp_root`; `cleanup_paths` are removed after every step and must then be gone. With `watch`, what
    each step wrote outside the install tree is listed before its folders are removed (sandbox/install/writes.py)."""

    def __init__(self, api: Any, container_id: str, *, user: str, environment: dict[str, str], deadline: float,
                 home_root: str, tmp_root: str = "/tmp", cleanup_paths: Sequence[str] = (),
                 workdir: str = "/opt/server", tail_chars: int = 8_000, watch: WatchPlan | None = None,
                 disk_bounds: tuple[int, int] | None = None) -> None:
        self.api = api
        self.container_id = container_id
        self.user = user
        self.environment = environment
        self.deadline = deadline
        self.home_root = home_root.rstrip("/")
        self.tmp_root = tmp_root.rstrip("/")
        self.cleanup_paths = tuple(cleanup_paths)
        self.workdir = workdir
        self.tail_chars = tail_chars
        self._idle_users: frozenset[str] | None = None
        self.watch = WriteWatch(self._run_captured, watch, self.home_root) if watch is not None else None
        # (bytes, files) the install may take of the engine's disk (sandbox/install/disk.py); None: not watched.
        # The disk's free space is read as the container's own user, that of its idle processes: a process the
        # install left, which ends each new process of the install user as it appears, cannot end that look too and
        # have the install stopped for an unreadable disk instead of for itself. The user is the container's as the
        # container knows it (left to the engine), not `top`'s uid, the host's view (unmapped inside under a
        # user-namespace remap).
        self.disk = (DiskWatch(partial(self._run_captured, user=""), max_bytes=disk_bounds[0],
                               max_files=disk_bounds[1])
                     if disk_bounds is not None else None)

    def start(self, kept: KeptRoots | None = None) -> None:
        """Start the container and note the user its idle processes run as, as the engine's `top` shows it: after a
        step, any live process of another user is one the install left. `kept`: where the writable places the watch
        lists are kept (taken from there when found before, else found, and kept when the find ran to its end)."""
        self._call(self.api.start, self.container_id)
        rows = self._processes()
        users = frozenset(row.get("uid") for row in rows)
        if len(users) != 1 or None in users:
            # Without it no leftover could be told from the idle processes: refuse rather than check nothing.
            raise SandboxError(f"the engine's process list of the install container (docker top) shows no single "
                               f"user for its idle processes: {rows}"[:500])
        self._idle_users = frozenset(user for user in users if user is not None)
        # The disk's baseline beside the listing of the writable places: two execs with no order between them, both
        # before any package code runs.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-sandbox-install-disk") as beside:
            baseline = beside.submit(self.disk.start) if self.disk is not None else None
            if self.watch is not None:
                known = kept.load() if kept is not None else None
                if known is not None and self.home_root not in known:
                    known = None  # not what a whole find keeps (it always sees HOME): found again
                found = self.watch.start(known)
                if kept is not None and self.watch.found_whole:  # found here, whole: kept for the next install
                    kept.keep(found)
            if baseline is not None:
                baseline.result()

    def run(self, command: list[str]) -> StepResult:
        """Run one step to its end, then end whatever it left running and remove what it may have left for the next
        step; raises StepTimeout at the deadline, StepLeftover when a process of the step outlives every kill."""
        name = f"{STEP_FOLDER_PREFIX}{secrets.token_hex(16)}"
        folder, tmpdir = f"{self.home_root}/{name}", f"{self.tmp_root}/{name}"
        log = f"{folder}/{STEP_LOG_NAME}"
        environment = {**self.environment, "HOME": f"{folder}/home", "TMPDIR": tmpdir}
        # mkdir without -p: the folders are new (their name cannot be guessed, and nothing of an earlier step runs).
        prepare = (f"mkdir -m 0700 -- {folder} {folder}/home {tmpdir} || exit 97; "
                   f'exec > {log} 2>&1 < /dev/null; exec "$@"')
        wrapped = ["env", *(f"{k}={v}" for k, v in environment.items()),
                   "sh", "-c", prepare, "mcp-sandbox-step", *command]
        exec_id = self._exec_create(wrapped)
        self._call(self.api.exec_start, exec_id, detach=True)
        exit_code = self._wait(exec_id)
        output = self._finish(log)
        self._end_leftovers()
        # Listed once nothing of the step runs any more, before its HOME goes: the removal runs after the listing, in
        # the same exec (one exec fewer a step, about 0.05 s).
        removal = self._removal_script([folder, tmpdir])
        if self.watch is not None:
            writes = self.watch.after_step(folder, tmpdir, then=removal)
        else:
            writes = None
            self._call(self.api.exec_start, self._exec_create(["sh", "-c", removal]))
        self._check_removed()
        return StepResult(exit_code, output, writes)

    def read_file(self, path: str, max_bytes: int = 64 * 1024 * 1024) -> bytes | None:
        """A file of the container's filesystem (not its tmpfs mounts) through the engine's archive API; None when
        it does not exist."""
        try:
            stream, _ = self.api.get_archive(self.container_id, path)
            return read_member(stream, max_bytes=max_bytes)
        except (NotFound, FileNotFoundError):
            return None
        except ValueError as exc:  # larger than max_bytes
            raise SandboxError(f"{path} in the install container is too large to read: {exc}") from None

    def write_file(self, path: str, data: bytes) -> None:
        """Put `data` at `path` on the container's filesystem (not a tmpfs), owned by the install user, mode 0644,
        replacing whatever is there (a link or folder a step left in its place included: the engine removes it);
        only once the install's steps are over, when nothing of the install runs."""
        uid, _, gid = self.user.partition(":")
        member = tarfile.TarInfo(posixpath.basename(path))
        member.size, member.mode, member.mtime = len(data), 0o644, int(time.time())
        member.uid = member.gid = 0
        if uid.isdigit() and gid.isdigit():
            member.uid, member.gid = int(uid), int(gid)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.addfile(member, io.BytesIO(data))
        if not self._call(self.api.put_archive, self.container_id, posixpath.dirname(path), buffer.getvalue()):
            raise SandboxError(f"could not put back {path} in the install container")

    def read_tmp_file(self, path: str, max_bytes: int) -> bytes:
        """A regular file on the container's tmpfs (which the archive API cannot see), by `head -c` as the install user;
        only between steps, when nothing else of the install runs. Anything else a step left there reads as empty: a
        FIFO would keep `head`, and so this exec (its stream has no timeout), waiting for ever; a link is not
        followed."""
        script = f'[ -f "$1" ] && [ ! -L "$1" ] && head -c {int(max_bytes)} -- "$1"; true'
        exec_id = self._exec_create(["sh", "-c", script, "mcp-sandbox-read", path])
        return bytes(self._call(self.api.exec_start, exec_id, demux=True)[0] or b"")

    def regular_files(self, folder: str, pattern: str) -> list[str]:
        """The regular files directly in `folder` whose names match `pattern` (find's -name), as the install user;
        only between steps."""
        stdout, _ = self._run_captured(["find", folder, "-mindepth", "1", "-maxdepth", "1", "-type", "f", "-name",
                                        pattern, "-print0"])
        return [path for path in stdout.decode("utf-8", "surrogateescape").split("\0") if path]

    def engine_now(self) -> float | None:
        """The engine's clock, the one squid, dnsmasq and the log timestamps use; None when the engine reports no
        time it can be read from (`SystemTime` missing or malformed). The host's clock is no substitute: a remote
        engine's may differ, and a window opened by it would give attempts to the wrong step."""
        info = self._call(self.api.info)
        return engine_time(str(info.get("SystemTime") or "")) if isinstance(info, dict) else None

    def _wait(self, exec_id: str) -> int:
        pause = POLL_FIRST_SECONDS
        while True:
            state = self._call(self.api.exec_inspect, exec_id)
            if not state.get("Running"):
                code = state.get("ExitCode")
                return int(code) if code is not None else -1
            if time.monotonic() >= self.deadline:
                raise StepTimeout("the install step did not finish before the deadline")
            if self.disk is not None:
                self.disk.check_if_due()  # DiskLimitReached: the container is then killed (sandbox/install/container.py)
            time.sleep(min(pause, max(0.0, self.deadline - time.monotonic())))
            pause = min(pause * 1.5, POLL_MAX_SECONDS)

    def _finish(self, log: str) -> str:
        """End every process of the install user (the idle process is another user's) and print the step's tail."""
        script = "; ".join([
            "kill -KILL -1 2>/dev/null",
            f"[ -f {log} ] && [ ! -L {log} ] && tail -c {self.tail_chars} -- {log} 2>/dev/null",
            "true",
        ])
        exec_id = self._exec_create(["sh", "-c", script])
        output = self._call(self.api.exec_start, exec_id)
        return bytes(output or b"").decode("utf-8", errors="replace")

    def _removal_script(self, folders: list[str]) -> str:
        """A shell script that removes the step's folders and the cleanup paths (a step may have taken write
        permission away: given back first, without following a symbolic link); it prints nothing."""
        removals = [*folders, *self.cleanup_paths]
        parents = sorted({posixpath.dirname(path) for path in self.cleanup_paths})
        return "; ".join([
            *(f"chmod u+rwx -- {shlex.quote(parent)} 2>/dev/null" for parent in parents),
            *(f"{{ rm -rf -- {shlex.quote(path)} || {{ [ -L {shlex.quote(path)} ] || "
              f"chmod -R u+rwX -- {shlex.quote(path)}; rm -rf -- {shlex.quote(path)}; }}; }} 2>/dev/null"
              for path in removals),
            "true",
        ])

    def _run_captured(self, command: list[str], user: str | None = None) -> tuple[bytes, bytes]:
        """Run a command of the host's as the install user (or `user`), between steps: (stdout, stderr)."""
        stdout, stderr = self._call(self.api.exec_start, self._exec_create(command, user), demux=True)
        return bytes(stdout or b""), bytes(stderr or b"")

    def _end_leftovers(self) -> None:
        """Check from outside the container that nothing but its idle processes lives on; kill again while something
        does (it may have raced the first kill, e.g. by forking, or ended it), up to KILL_RETRIES times."""
        for attempt in range(KILL_RETRIES + 1):
            left = self.leftovers()
            if not left:
                return
            if attempt == KILL_RETRIES:
                break
            time.sleep(KILL_PAUSE_SECONDS * (attempt + 1))
            exec_id = self._exec_create(["sh", "-c", "kill -KILL -1"])
            self._call(self.api.exec_start, exec_id)
        count = len(left)
        raise StepLeftover(f"{count} process{'es' if count != 1 else ''} it left {'were' if count != 1 else 'was'} "
                           f"still running after {KILL_RETRIES + 1} attempts to end {'them' if count != 1 else 'it'}")

    def leftovers(self) -> list[dict[str, str]]:
        """The container's live processes that are not its idle ones (the engine's `top`: `ps` run by the engine,
        outside the container)."""
        if self._idle_users is None:
            raise SandboxError("the install container was not started through StepRunner.start")
        return live_leftovers(self._processes(), self._idle_users)

    def _check_removed(self) -> None:
        """The cleanup paths are gone (the archive API sees the container's filesystem, whatever the step did)."""
        for path in self.cleanup_paths:
            try:
                stream, _ = self.api.get_archive(self.container_id, path)
            except NotFound:
                continue
            except APIError as exc:
                raise SandboxError(f"the install container stopped responding: {exc.explanation or exc}") from None
            close = getattr(stream, "close", None)
            if callable(close):
                close()
            raise SandboxError(f"{path}, left by an install step, could not be removed")

    def _processes(self) -> list[dict[str, str]]:
        try:
            top = self.api.top(self.container_id, ps_args=TOP_PS_ARGS)
        except APIError as exc:
            raise SandboxError(f"cannot list the install container's processes (docker top): "
                               f"{exc.explanation or exc}") from None
        return process_rows(top)

    def _exec_create(self, command: list[str], user: str | None = None) -> str:
        """An exec as the install user, or as `user` ("": the container's own user)."""
        created = self._call(self.api.exec_create, self.container_id, command,
                             user=self.user if user is None else user, workdir=self.workdir, stdout=True, stderr=True)
        return str(created["Id"])

    def _call(self, method: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except APIError as exc:  # the container stopped (out of memory) or vanished
            raise SandboxError(f"the install container stopped responding: {exc.explanation or exc}") from None


def process_rows(top: Any) -> list[dict[str, str]]:
    """The engine's `top` answer ({"Titles": [...], "Processes": [[...], ...]}) as rows keyed by lower-case title."""
    if not isinstance(top, dict):
        return []
    titles = [str(title).lower() for title in top.get("Titles") or []]
    return [dict(zip(titles, (str(value) for value in row))) for row in top.get("Processes") or []
            if isinstance(row, list)]


def live_leftovers(rows: Sequence[dict[str, str]], idle_users: frozenset[str]) -> list[dict[str, str]]:
    """Processes not of the idle user that have not ended: a zombie (state Z) or a dead one (X) has, and can do
    nothing more; a row the engine could not describe counts as alive. A zombie with the `l` flag has not ended: its
    first thread exited (`ps` shows that thread's state) while its other threads run on."""
    return [row for row in rows if row.get("uid") not in idle_users and not _ended(row.get("stat", ""))]


def _ended(stat: str) -> bool:
    return stat.startswith(("Z", "X")) and "l" not in stat
