"""An image-sourced server: a container image the run phase starts as it is shipped (nothing is installed), under the
same run policy as an installed package.

The image is used when the engine has it, else pulled; what is read from it is its identity (the image ID, and the
registry digests the engine recorded) and its configuration: ENTRYPOINT and CMD (the server command; arguments given
replace CMD, as for `docker run IMAGE ARGS`), USER (never used: the run uid replaces it), WORKDIR and the image's own
environment, which the policy then asks for by name, so the policy check still refuses any variable nobody asked for.

The run phase's looks into the container (sandbox/run/observe.py) are execs of the image's own programs: `tar` to
seed the workspace and plant the canaries, `sh` and GNU `find -printf` for the file snapshots and the network
namespace. `check_image` finds which of them an image lacks, in one throwaway container under the run policy, and
whether the image has a link where the policy mounts its tmpfs (sandbox/run/image_mounts.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import docker
import requests
from docker.errors import APIError, ImageNotFound, NotFound

from sandbox.core.errors import SandboxError, UserInputError
from sandbox.core.session import SandboxSession
from sandbox.core.untrusted import escape_for_terminal
from sandbox.run import image_mounts
from sandbox.run.policy import RunPolicy

ROOT_USERS = ("", "root", "0", "root:root", "0:0", "root:0", "0:root")
# What observe.py runs inside the server's container, and what is lost without it.
TOOL_USES = {
    "sh": "the file snapshots and the network namespace read (no shell)",
    "tar": "the workspace seed and the canary files (no tar): no probe calls",
    "find": "the file snapshots (no GNU find with -printf): file changes and canary reads",
}
TOOL_CHECK_SECONDS = 60
MAX_VOLUMES_NAMED = 5
TOOL_CHECK_LINES = 20  # of its log: the check prints three at most, a shell that floods it is not read whole
_TOOL_CHECK = ("for t in tar find; do command -v \"$t\" >/dev/null 2>&1 || echo \"missing $t\"; done; "
               "find / -maxdepth 0 -printf '' >/dev/null 2>&1 || echo 'missing find'; true")


@dataclass(frozen=True)
class ImageConfig:
    """A local image's identity and the configuration the server command comes from."""

    reference: str
    image_id: str
    repo_digests: list[str]
    entrypoint: list[str]
    cmd: list[str]
    user: str
    working_dir: str
    env: dict[str, str] = field(default_factory=dict)
    pulled: bool = False
    volumes: list[str] = field(default_factory=list)  # the image's VOLUME paths

    @property
    def runs_as_root(self) -> bool:
        """The image's configured USER is root (or none, which is root)."""
        return self.user.strip() in ROOT_USERS

    def digest_of(self, repository: str) -> str:
        """The registry digest the engine recorded for this repository when there is one, else the image ID
        (sha256 of the image's configuration, which names every layer's content)."""
        for entry in self.repo_digests:
            name, _, digest = entry.partition("@")
            if name == repository and digest:
                return digest
        return self.image_id


def acquire_image(client: docker.DockerClient, reference: str, repository: str, digest: str | None) -> ImageConfig:
    """The image, local or pulled; SandboxError (exit 3, one line) when it is neither here nor pullable."""
    inspect = _local(client, reference, repository, digest)
    pulled = False
    if inspect is None:
        try:
            client.api.pull(repository, tag=digest or reference.rpartition(":")[2])
        except (APIError, NotFound) as exc:
            reason = str(getattr(exc, "explanation", None) or exc).splitlines()[0][:300]
            raise SandboxError(f"image {reference} is not on this engine and could not be pulled: {reason}") from None
        inspect, pulled = _local(client, reference, repository, digest), True
        if inspect is None:
            raise SandboxError(f"image {reference} was pulled but the engine does not show it")
    config = inspect.get("Config") or {}
    env = dict(entry.split("=", 1) for entry in config.get("Env") or [] if "=" in entry)
    return ImageConfig(reference=reference, image_id=str(inspect.get("Id") or ""),
                       repo_digests=[str(d) for d in inspect.get("RepoDigests") or []],
                       entrypoint=list(config.get("Entrypoint") or []), cmd=list(config.get("Cmd") or []),
                       user=str(config.get("User") or ""), working_dir=str(config.get("WorkingDir") or ""),
                       env=env, pulled=pulled, volumes=[str(path) for path in config.get("Volumes") or {}])


def _local(client: docker.DockerClient, reference: str, repository: str, digest: str | None) -> dict[str, Any] | None:
    """The local image's inspect document. A digest names a registry digest the engine recorded, or the image ID of
    an image of that repository (an image built here has no registry digest)."""
    for name in (reference, digest) if digest else (reference,):
        try:
            inspect: dict[str, Any] = client.api.inspect_image(name)
        except (ImageNotFound, NotFound):
            continue
        if name == reference or any(tag.rpartition(":")[0] == repository for tag in inspect.get("RepoTags") or []):
            return inspect
    return None


def server_command(image: ImageConfig, args: list[str]) -> list[str]:
    """ENTRYPOINT, then the arguments given (else CMD), as `docker run IMAGE ARGS` runs it."""
    command = [*image.entrypoint, *(args or image.cmd)]
    if not command:
        raise UserInputError(f"image {image.reference} has no ENTRYPOINT or CMD; give the command after -- or with "
                             "--command 'PROGRAM ARGS'")
    return command


def refuse_volumes(image: ImageConfig) -> None:
    """SandboxError (exit 3, one line) for an image that declares a VOLUME: the engine mounts a writable volume there
    in every container made from it, which the run policy refuses (no mounts), so no container of it is made."""
    if image.volumes:
        named = ", ".join(escape_for_terminal(path, 200) for path in image.volumes[:MAX_VOLUMES_NAMED])
        more = f" and {len(image.volumes) - MAX_VOLUMES_NAMED} more" if len(image.volumes) > MAX_VOLUMES_NAMED else ""
        raise SandboxError(f"image {image.reference} declares VOLUME {named}{more}: the engine would mount a writable "
                           "volume there, which the sandbox's run policy refuses (no mounts); not scanned")


def image_policy(policy: RunPolicy, image: ImageConfig) -> RunPolicy:
    """The run policy with the image's own environment asked for by name (HOME stays the sandbox's canary HOME; what
    the user passed with --env wins)."""
    own = {name: value for name, value in image.env.items() if name != "HOME"}
    # No start gate (sandbox/run/start_gate.py): it needs a POSIX shell and mkfifo, which an image may not have.
    return replace(policy, env={**own, **policy.env}, start_gate=False)


@dataclass(frozen=True)
class ImageCheck:
    """What the image keeps the run phase's looks from: the programs they need that it lacks (`missing`, or all of
    them when the check did not finish: `stuck`), and the policy's mount points it has as a link or a file
    (`redirected`, sandbox/run/image_mounts.py: the looks would not see behind them)."""

    missing: list[str]
    redirected: list[str] = field(default_factory=list)
    stuck: bool = False


def check_image(session: SandboxSession, image_id: str, policy: RunPolicy) -> ImageCheck:
    """The image's paths where the policy mounts its tmpfs, read through the engine, then the programs the looks need
    (sh, tar, find -printf), found in a throwaway container under the run policy (network none)."""
    api = session.client.api
    host_config = {**replace(policy, network_mode="none").host_config(api),
                   "LogConfig": {"Type": "json-file", "Config": {}}}
    container = session.create_container("image-check", image=image_id, entrypoint=["sh", "-c", _TOOL_CHECK],
                                         command=[], user=policy.user, environment=policy.environment(),
                                         network_disabled=True, host_config=host_config, working_dir="/")
    redirected = image_mounts.redirected(api, container, image_mounts.mount_paths(policy.tmpfs()))
    try:
        api.start(container)
    except APIError:
        return ImageCheck(list(TOOL_USES), redirected)  # no shell to run: every look is an exec of sh or tar
    try:
        api.wait(container, timeout=TOOL_CHECK_SECONDS)
    except (APIError, requests.exceptions.ConnectionError):  # the wait's read timeout: the image's `sh` never ended
        session.remove_container(container)
        return ImageCheck(list(TOOL_USES), redirected, stuck=True)
    output = api.logs(container, stdout=True, stderr=False, tail=TOOL_CHECK_LINES).decode("utf-8", "replace")
    session.remove_container(container)
    missing = sorted({line.split()[1] for line in output.splitlines() if line.startswith("missing ")})
    return ImageCheck([tool for tool in TOOL_USES if tool in missing], redirected)
