"""Install phase: install the package in a container that reaches only the package registry, then commit the
installed tree as an image (labelled, tagged by the resolved identity) that every run starts from.

The container idles while the host runs the install in it as steps (sandbox/install_steps.py, install_phases.py), so
every host the install tries is given to the package and script whose step was running (install_windows.py). Once
the steps are over nothing of the install runs (each step's processes were ended and checked gone), so every tunnel
it had open is closed; the proxy's attempts are read once, after it has logged them all: the same list is returned
and kept in the image. The idle container is committed as it is (nothing of the install runs), not stopped first."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

import docker
import requests
from docker.errors import APIError

from sandbox.core import image_use, labels
from sandbox.core.archive import pack_path
from sandbox.core.errors import SandboxError
from sandbox.install.proxy.container import PROXY_PORT, InstallProxy, install_network_settings, launch_install_proxy
from sandbox.install.proxy.log import EgressAttempt, denied
from sandbox.install.installers import allowlist_key, install_allowlist, installer
from sandbox.install.cached import MANIFEST_LABEL, cached_install
from sandbox.install.kept_roots import kept_roots
from sandbox.install.manifest import read_manifest
from sandbox.install.phases import InstallSteps
from sandbox.install.steps import IDLE_COMMAND, StepRunner, StepTimeout
from sandbox.install.windows import Window
from sandbox.run.policy import RUN_UID
from sandbox.core.hardening import hardened_host_config
from sandbox.core.images import ProgressFn
from sandbox.core.session import SandboxSession
from sandbox.install.request import (LOCAL_SOURCE_DIR, Ecosystem, InstalledServer, InstallPhase, InstallRequest,
                                     local_source_name)

INSTALL_UID = 10001
INSTALL_HOME = "/home/mcp-install"  # the install user's tmpfs; each step's HOME is a new folder in it
INSTALLED_REPO = labels.INSTALLED_REPOSITORY
CONTAINER_CA_PATH = "/etc/ssl/certs/ca-certificates.crt"
NODE_HEADERS = "/usr/include/nodejs"  # where Debian's libnode-dev puts them (absent: a native build fails)
OUTPUT_TAIL_CHARS = 8_000
# Part of the installed image's tag: bumped when an install records something earlier ones did not (2: every egress
# attempt names the step that made it; 3: a step's leftover processes and configuration files no longer reach later
# steps, and the attempts kept are all of them; 4: what each step wrote outside the install tree, and the packages
# built from source; 5: the lockfile in the image is the one the installer wrote, put back after the install scripts
# ran; 6: the registry allowlist is part of the tag, so no image made under another allowlist keeps answering, and a
# local folder's prepare runs in a step of its own), so a cached image never answers for an install it cannot describe.
INSTALL_FORMAT = 6
# After the install ended: the wait for the proxy to close (so log) every connection, then the engine to copy its log.
PROXY_SETTLE_SECONDS = 5.0
PROXY_SETTLE_PAUSE = 0.05
STOP_WAIT_SECONDS = 30

P = ParamSpec("P")
R = TypeVar("R")


def installed_tag(runtime_image_id: str, request: InstallRequest) -> str:
    # An install from a mirror, or under another allowlist, is another install (the bytes came from elsewhere; other
    # hosts were reached or refused); without a mirror the tag is as before.
    mirror = [request.index_url] if request.index_url else []
    material = json.dumps([runtime_image_id, request.ecosystem, request.identity, request.ignore_scripts,
                           INSTALL_FORMAT, *mirror, *allowlist_key(request)])
    return f"{INSTALLED_REPO}:{hashlib.sha256(material.encode()).hexdigest()[:20]}"


def install(session: SandboxSession, request: InstallRequest, runtime_image: str, runtime_image_id: str, *,
            use_cache: bool = True, progress: ProgressFn = lambda _step: None,
            phases: dict[InstallPhase, float] | None = None) -> InstalledServer:
    """Install the package (or reuse an earlier install of the same identity) and return the installed image;
    `progress` is told what a fresh install is doing (each step as it begins), `phases` (the caller's: kept when the
    install fails) receives each phase's seconds as it ends (a cached install adds none)."""
    tag = installed_tag(runtime_image_id, request)
    if use_cache:
        cached = cached_install(session, tag, runtime_image)
        if cached is not None:
            return cached
    return _install_afresh(session, request, runtime_image, tag, progress, {} if phases is None else phases)


def _install_afresh(session: SandboxSession, request: InstallRequest, runtime_image: str, tag: str,
                    progress: ProgressFn, phases: dict[InstallPhase, float]) -> InstalledServer:
    """The install itself; `phases` (also the result's): where its wall time went (INSTALL_PHASES), all on this
    thread, filled as each phase ends (a failed install's too)."""
    client = session.client
    started = time.monotonic()
    progress(f"installing {request.spec}: starting the install proxy and container")
    # The install reaches only the registry: an internal network whose one way out is an allowlisting proxy. Its
    # squid and dnsmasq boot while the install container is created and started; no step runs before they are ready.
    proxy = _timed(phases, "proxy", launch_install_proxy, session, install_allowlist(request),
                   upstream=request.upstream_proxy)
    network = install_network_settings(proxy)
    windows: list[Window] = []
    container_id = _timed(phases, "container", _create_install_container, session, request, runtime_image, network)
    try:
        steps: InstallSteps | None = None
        failure: SandboxError | None = None
        try:
            runner = _timed(phases, "container", _started_runner, session, container_id, request,
                            network["environment"])
            _timed(phases, "proxy", proxy.wait_ready)
            steps = _timed(phases, "steps", _run_steps, runner, request, windows, progress)
        except SandboxError as exc:
            failure = exc
        if failure is not None or steps is None:
            _stop(client.api, container_id)
            raise SandboxError(f"{failure}{_refused_note(_settled_attempts(proxy, windows))}") from None
        manifest, attempts = _timed(phases, "finish", _finished_install, client, container_id, request.ecosystem,
                                    proxy, windows, steps.runner)
        output = steps.output(OUTPUT_TAIL_CHARS)
        version, entry_points = installer(request.ecosystem).describe(manifest, request)
        summary = {"name": request.name, "version": version, "entry_points": entry_points,
                   "output": output[-2000:], "ecosystem": request.ecosystem,
                   "egress": [dataclasses.asdict(a) for a in attempts],
                   "attribution_note": steps.attribution_note,
                   "writes": [dataclasses.asdict(w) for w in steps.writes],
                   "built": [dataclasses.asdict(b) for b in steps.built], "built_unknown": steps.built_unknown}
        progress(f"installing {request.spec}: saving the installed server as an image (docker commit)")
        image_id = _timed(phases, "commit", _commit, client, container_id, tag, request, summary)  # nothing runs
    except BaseException:
        _remove_install(session, container_id, proxy)
        raise
    # Nothing of the scan waits for the removal (a second or two: the container's layer, the proxy, the network):
    # it runs beside the scan's next stages, and the session's teardown removes whatever it had not yet.
    threading.Thread(target=_remove_install_later, args=(session, container_id, proxy), daemon=True,
                     name="mcp-sandbox-install-removal").start()
    return InstalledServer(
        image=tag, image_id=image_id, runtime_image=runtime_image, cached=False, name=request.name, version=version,
        entry_points=entry_points, installer_output=output, seconds=round(time.monotonic() - started, 3),
        manifest=manifest, egress=attempts, attribution_note=steps.attribution_note, writes=steps.writes,
        built=steps.built, built_unknown=steps.built_unknown, phases=phases,
    )


def _timed(phases: dict[InstallPhase, float], name: InstallPhase, function: Callable[P, R], *args: P.args,
           **kwargs: P.kwargs) -> R:
    """`function(*args, **kwargs)`, its wall seconds added to `phases[name]` (also when it raises)."""
    began = time.monotonic()
    try:
        return function(*args, **kwargs)
    finally:
        phases[name] = round(phases.get(name, 0.0) + time.monotonic() - began, 3)


def _finished_install(client: docker.DockerClient, container_id: str, ecosystem: Ecosystem, proxy: InstallProxy,
                      windows: list[Window], runner: StepRunner) -> tuple[dict[str, Any], list[EgressAttempt]]:
    """The manifest the last step wrote (read beside) and the proxy's attempts once it logged them all, after every
    step succeeded: nothing of the install runs (StepRunner.run ended each step's processes; checked again here from
    outside), so every tunnel is closed and the container commits without a stop (which cost a cold scan 0.2 s)."""
    if runner.leftovers():  # StepRunner.run refuses a step that leaves one: a bug, not a package's doing
        raise SandboxError("the install container still runs a process of the install after its last step")
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="mcp-sandbox-manifest") as pool:
        reading = pool.submit(read_manifest, client, container_id, ecosystem)
        attempts = _settled_attempts(proxy, windows)
        return reading.result(), attempts


def _remove_install_later(session: SandboxSession, container_id: str, proxy: InstallProxy) -> None:
    """_remove_install in the background thread: an engine error there is left to the session's teardown, which
    removes what is left and verifies that nothing is."""
    try:
        _remove_install(session, container_id, proxy)
    except (APIError, requests.exceptions.RequestException):
        pass


def _remove_install(session: SandboxSession, container_id: str, proxy: InstallProxy) -> None:
    """Remove the install container, then the proxy and its network."""
    try:
        session.remove_container(container_id)
    finally:
        proxy.close()


def _started_runner(session: SandboxSession, container_id: str, request: InstallRequest,
                    proxy_environment: dict[str, str]) -> StepRunner:
    """Start the idle install container (no step runs yet) with the runner of the ecosystem's steps, all of which
    must end within request.timeout_seconds."""
    steps = installer(request.ecosystem)
    runner = StepRunner(session.client.api, container_id, user=f"{INSTALL_UID}:{INSTALL_UID}",
                        environment=_install_environment(request, proxy_environment),
                        deadline=time.monotonic() + request.timeout_seconds, home_root=INSTALL_HOME,
                        cleanup_paths=steps.cleanup_paths, tail_chars=OUTPUT_TAIL_CHARS, watch=steps.watch,
                        disk_bounds=(request.disk_limit_bytes, request.disk_limit_files))
    # The writable places the watch lists, found before in a container like this one (sandbox/install/kept_roots.py)
    runner.start(kept_roots(session.client.api, container_id, steps.watch.install_tree,
                            local=request.local_path is not None))
    return runner


def _run_steps(runner: StepRunner, request: InstallRequest, windows: list[Window],
               progress: ProgressFn) -> InstallSteps:
    """Run the ecosystem's steps in the started install container; `windows` receives the window each step opened
    (also when a step fails), `progress` each step as it begins. Returns the steps run (their output and whether
    they could all be timed)."""
    steps = InstallSteps(runner, request.spec, windows, progress)
    try:
        installer(request.ecosystem).run(steps, request)
        steps.put_back()
        if runner.disk is not None:
            runner.disk.check()  # once more before the commit, which copies what the install wrote
    except StepTimeout:
        raise SandboxError(f"installing {request.spec} took longer than {request.timeout_seconds} s; "
                           "raise --install-timeout") from None
    return steps


def _stop(api: Any, container_id: str) -> None:
    """Kill the install container (docker-init, and with it every process left in it: a failed step, one cut at the
    deadline, may have left some) and wait until it has stopped, before the proxy's attempts are read."""
    try:
        api.kill(container_id)
    except APIError:
        pass  # not running any more (out of memory, or a failed start)
    try:
        api.wait(container_id, timeout=STOP_WAIT_SECONDS)
    except (APIError, requests.exceptions.RequestException) as exc:
        raise SandboxError(f"the install container did not stop: {exc}") from None


def _settled_attempts(proxy: InstallProxy, windows: list[Window]) -> list[EgressAttempt]:
    """The proxy's attempts once it has logged everything the ended install did: squid logs a request when it ends
    (a CONNECT when its tunnel closes), so first until squid has closed every client connection (its own socket
    table), then until two reads of the engine's copy of its log agree. Bounded by PROXY_SETTLE_SECONDS."""
    deadline = time.monotonic() + PROXY_SETTLE_SECONDS
    while open_proxy_connections(_proxy_socket_table(proxy)) and time.monotonic() < deadline:
        time.sleep(PROXY_SETTLE_PAUSE)
    attempts = proxy.attempts(windows)
    while time.monotonic() < deadline:
        time.sleep(PROXY_SETTLE_PAUSE)
        again = proxy.attempts(windows)
        if again == attempts:
            break
        attempts = again
    return attempts


def _proxy_socket_table(proxy: InstallProxy) -> str:
    """The proxy container's TCP socket table (/proc/net/tcp and tcp6, read in the proxy container, which runs only
    squid and dnsmasq); empty when it cannot be read."""
    api = proxy.session.client.api
    try:
        exec_id = api.exec_create(proxy.container_id, ["cat", "/proc/net/tcp", "/proc/net/tcp6"], stdout=True,
                                  stderr=False)
        return bytes(api.exec_start(exec_id["Id"]) or b"").decode("ascii", errors="replace")
    except APIError:
        return ""


# /proc/net/tcp states of a connection squid has not closed yet: established, half-open, closed by the client only.
_OPEN_STATES = {"01", "03", "08"}


def open_proxy_connections(socket_table: str, port: int = PROXY_PORT) -> int:
    """How many client connections to the proxy's `port` are still open on its side, from /proc/net/tcp{,6} text
    (`sl local_address rem_address st …`, addresses as HEX_IP:HEX_PORT, state in hex)."""
    wanted = f"{port:04X}"
    count = 0
    for line in socket_table.splitlines():
        fields = line.split()
        if len(fields) < 4 or ":" not in fields[1]:
            continue
        if fields[1].rsplit(":", 1)[1].upper() == wanted and fields[3].upper() in _OPEN_STATES:
            count += 1
    return count


def _refused_note(attempts: list[EgressAttempt]) -> str:
    """For a failed install's one-line error: the refused hosts, and the step that tried each."""
    refused = sorted({f"{a.host} ({a.script} of {a.package})" if a.package and a.script else a.host
                      for a in denied(attempts)})
    return f"; during the install it tried to reach {', '.join(refused)} (refused)" if refused else ""


def installed_manifest(session: SandboxSession, installed: InstalledServer, ecosystem: Ecosystem) -> dict[str, Any]:
    """The install manifest (npm lockfile / Python install description): as the install read it, or, for a cached
    install (whose lookup does not read it), from the installed image."""
    if installed.manifest is not None:
        return installed.manifest
    return _manifest_from_image(session, installed.image, ecosystem)


def _manifest_from_image(session: SandboxSession, image: str, ecosystem: Ecosystem) -> dict[str, Any]:
    """The install manifest kept in an installed image, read through a container that never starts."""
    container_id = session.create_container("read-manifest", image=image, command=["/bin/false"], entrypoint=[],
                                            network_disabled=True)
    try:
        return read_manifest(session.client, container_id, ecosystem)
    finally:
        session.remove_container(container_id)


def _install_environment(request: InstallRequest, proxy_environment: dict[str, str]) -> dict[str, str]:
    # HOME and TMPDIR: a new folder per step (sandbox/install_steps.py). No configuration file one step could write
    # is read by a later one: npm's user and global files are off (npm refuses to load the same file for both, so
    # the global one is a path that cannot exist), uv reads none (uv.toml, pyproject.toml), pip none (pip.conf).
    env = {
        "NPM_CONFIG_USERCONFIG": "/dev/null",
        "NPM_CONFIG_GLOBALCONFIG": "/dev/null/npmrc",
        "UV_NO_CONFIG": "1",
        "PIP_CONFIG_FILE": "/dev/null",
        "NPM_CONFIG_CAFILE": CONTAINER_CA_PATH,
        "NODE_EXTRA_CA_CERTS": CONTAINER_CA_PATH,
        "NPM_CONFIG_UPDATE_NOTIFIER": "false",
        "NPM_CONFIG_FUND": "false",
        "NPM_CONFIG_AUDIT": "false",
        # npm 10's node-gyp fetches Node's headers from nodejs.org (refused: an I7 charged to the package being built)
        # unless given a folder; Debian's, which npm 9 ran, used this one. node-gyp reads the lower-case name only.
        "npm_config_nodedir": NODE_HEADERS,
        "SSL_CERT_FILE": CONTAINER_CA_PATH,
        "UV_SYSTEM_CERTS": "1",
        "UV_NO_PROGRESS": "1",
        "UV_PYTHON_DOWNLOADS": "never",
        "LANG": "C.UTF-8",
    }
    if request.index_url is not None:  # a mirror: the install proxy allows its host (installers.install_allowlist)
        env[installer(request.ecosystem).index_variable] = request.index_url
    # Only the install proxy's own variables: the host's (which may hold an upstream's credentials) never reach the
    # container, whose command line `docker inspect` shows; an upstream is chained by the install proxy instead.
    env.update(proxy_environment)
    return env


def _create_install_container(session: SandboxSession, request: InstallRequest, runtime_image: str,
                              network: dict[str, Any]) -> str:
    api = session.client.api
    binds = {}
    ca_bundle = request.ca_bundle
    if ca_bundle is not None:
        if not ca_bundle.is_file():
            raise SandboxError(f"CA bundle {ca_bundle} is not a readable file; pass --ca-bundle PATH")
        binds[str(ca_bundle.resolve())] = {"bind": CONTAINER_CA_PATH, "mode": "ro"}
    host_config = hardened_host_config(
        api, memory_bytes=2 * 1024**3, nano_cpus=2_000_000_000, pids_limit=512,
        binds=binds,
        tmpfs={INSTALL_HOME: f"rw,nosuid,nodev,size=1g,uid={INSTALL_UID},gid={INSTALL_UID},mode=0700",
               "/tmp": "rw,nosuid,nodev,size=1g,mode=1777"},
        network_mode=network["network_mode"],
        dns=network["dns"],
    )
    container_id = session.create_container(
        "install",
        image=runtime_image,
        # It only idles; the host runs each step with `docker exec` (sandbox/install_steps.py), the environment passed
        # through `env` on each step's command line, not the container config: `docker commit` would carry config
        # variables (proxies, CA paths) into the installed image and so into the run phase. The idle process runs as
        # another user than the install, so ending the install user's leftovers after a step never stops it.
        command=IDLE_COMMAND,
        user=f"{RUN_UID}:{RUN_UID}",
        working_dir="/opt/server",
        host_config=host_config,
    )
    if request.local_path is not None:
        data = pack_path(request.local_path, local_source_name(request.local_path), INSTALL_UID, INSTALL_UID)
        api.put_archive(container_id, LOCAL_SOURCE_DIR, data)
    return container_id


def _commit(client: docker.DockerClient, container_id: str, tag: str, request: InstallRequest,
            summary: dict[str, Any]) -> str:
    repository, _, image_tag = tag.partition(":")
    image_labels = {
        labels.KIND: labels.KIND_INSTALLED,
        labels.CREATED: str(int(time.time())),
        f"{labels.PREFIX}.ecosystem": request.ecosystem,
        f"{labels.PREFIX}.package": request.name,
        f"{labels.PREFIX}.version": summary["version"],
        MANIFEST_LABEL: json.dumps(summary),
        **labels.SESSION_CLEARED,  # the install's session is not the image's (see labels.SESSION_CLEARED)
    }
    conf = {"Labels": image_labels, "Env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "Cmd": ["/bin/false"], "User": "10002:10002", "WorkingDir": "/workspace"}
    try:
        committed = client.api.commit(container_id, repository=repository, tag=image_tag, conf=conf)
    except APIError as exc:
        raise SandboxError(f"could not save the installed server as an image: {exc}") from exc
    image_use.record_use(str(committed["Id"]))  # for the cache's LRU eviction (sandbox/core/image_cache.py)
    return str(committed["Id"])
