"""The run-phase sandbox policy: what we ask the engine for, what it applied (read back), and the check between."""

from __future__ import annotations

import re
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

from sandbox.core.errors import PolicyNotApplied
from sandbox.core.hardening import hardened_host_config

RUN_UID = 10002
RUN_GID = 10002
HOME = "/home/mcp"
WORKSPACE = "/workspace"
SERVER_PATH = "/opt/server/node_modules/.bin:/opt/server/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SHELL = "/bin/bash"  # a developer's login shell, as the MCP SDKs' launch passes it on (the runtime images have it)
TMPFS_OPTIONS = "rw,noexec,nosuid,nodev"
STRICT_NETWORK = "none"  # only lo, DNS fails
# "observe": join the namespace of this session's egress sink (sandbox/egress.py), which answers and logs all traffic.
_SINK_NETWORK = re.compile(r"container:[0-9a-f]{64}")
# The host name the server sees: a developer machine's, drawn per run, never Docker's default (the container id,
# twelve hex digits, which says "container") nor anything that says sandbox or scanner.
_HOST_OWNERS = ("ana", "bo", "chen", "dara", "eli", "fay", "gus", "hana", "ivan", "jo", "kai", "lena", "mo", "nia")
_HOST_DEVICES = ("laptop", "thinkpad", "xps", "desktop", "workstation", "macbook", "dev", "pc")


def plausible_hostname() -> str:
    """A host name like a developer's machine (`lena-thinkpad`), different from run to run."""
    return f"{secrets.choice(_HOST_OWNERS)}-{secrets.choice(_HOST_DEVICES)}"


# A Debian machine names itself in /etc/hosts (127.0.1.1), so a program resolving its own host name (git writing a
# reflog, Python's socket.getfqdn()) asks no DNS. The engine writes no such line in network mode "none", and every
# lookup then reached the sink: B2 reported mcp-server-git's git_checkout looking up "gus-desktop" as egress (an error
# beside openWorldHint: false), and a lookup of one's own name answered from outside is a tell.
OWN_NAME_ADDRESS = "127.0.1.1"


def own_name_hosts(hostname: str | None) -> dict[str, str] | None:
    """The /etc/hosts line naming the machine itself, as the engine's `extra_hosts` takes it (None: no host name)."""
    return {hostname: OWN_NAME_ADDRESS} if hostname else None


def network_mode_allowed(network_mode: str) -> bool:
    """`none`, or `container:<full id>` of an egress sink. Anything else (bridge, host, a name) could reach out."""
    return network_mode == STRICT_NETWORK or bool(_SINK_NETWORK.fullmatch(network_mode))


@dataclass(frozen=True)
class RunPolicy:
    """What the run container is asked for. Defaults are strict; the CLI may loosen limits, never drop the rest."""

    network_mode: str = "none"
    memory_bytes: int = 512 * 1024 * 1024
    nano_cpus: int = 1_000_000_000
    pids_limit: int = 128
    tmp_size: str = "64m"
    home_size: str = "64m"
    workspace_size: str = "256m"
    user: str = f"{RUN_UID}:{RUN_GID}"
    env: dict[str, str] = field(default_factory=dict)
    # Set on the run container in network mode "none"; in "observe" mode the server shares the sink's namespaces and
    # the engine gives it the sink's host name, so the sink is created with this one (sandbox/run/sink.py).
    hostname: str = field(default_factory=plausible_hostname)
    # The server's own code waits for its seeding (sandbox/run/start_gate.py); turned off where nothing seeds it (the
    # probe plan without canaries) or the image may have no shell (a container image as shipped).
    start_gate: bool = True

    def __post_init__(self) -> None:
        if not network_mode_allowed(self.network_mode):
            raise ValueError(f"run network mode must be 'none' or 'container:<sink id>', not {self.network_mode!r}")

    def login_name(self) -> str:
        """The user the environment names: the host name's owner (`lena` of `lena-thinkpad`)."""
        return self.hostname.split("-", 1)[0]

    def environment(self) -> dict[str, str]:
        """PATH, HOME, LANG and what a real client's launch passes on besides (the MCP SDKs' default environment:
        USER, LOGNAME, SHELL; without them the process said it was started by no login), plus what the user passed.
        Never the host's environment."""
        login = self.login_name()
        return {"PATH": SERVER_PATH, "HOME": HOME, "LANG": "C.UTF-8", "USER": login, "LOGNAME": login, "SHELL": SHELL,
                **self.env}

    def tmpfs(self) -> dict[str, str]:
        owned = f"uid={RUN_UID},gid={RUN_GID}"
        return {
            "/tmp": f"{TMPFS_OPTIONS},size={self.tmp_size},mode=1777",
            HOME: f"{TMPFS_OPTIONS},size={self.home_size},{owned},mode=0700,strictatime",  # canary reads move atime
            WORKSPACE: f"{TMPFS_OPTIONS},size={self.workspace_size},{owned},mode=0755",
        }

    def host_config(self, api: Any) -> dict[str, Any]:
        return hardened_host_config(
            api, memory_bytes=self.memory_bytes, nano_cpus=self.nano_cpus, pids_limit=self.pids_limit,
            network_mode=self.network_mode, read_only=True, tmpfs=self.tmpfs(), binds=[], ipc_mode="private",
            # beside container:<sink> the engine refuses host entries: the container reads the sink's /etc/hosts
            extra_hosts=own_name_hosts(self.hostname) if self.network_mode == STRICT_NETWORK else None,
        )


# Also the report's model (scanner.report.SandboxInfo.applied): the docstring and metadata["description"] are its
# JSON Schema text, so the field list exists once.
@dataclass(frozen=True)
class AppliedPolicy:
    """The sandbox policy as the engine applied it, read back from `docker inspect`."""

    network_mode: str
    read_only_rootfs: bool
    cap_drop: list[str]
    cap_add: list[str]
    no_new_privileges: bool
    privileged: bool
    user: str
    pids_limit: int | None
    memory_bytes: int
    memory_swap_bytes: int
    nano_cpus: int
    init: bool
    restart_policy: str
    tmpfs: dict[str, str]
    mounts: list[str] = field(metadata={"description": "Host paths mounted into the container (must be empty)."})
    env_names: list[str] = field(
        metadata={"description": "Names of the environment variables set (values are not recorded)."})
    image: str
    image_id: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


LISTENER_CAP_SETS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


# Also the report's model (scanner.report.SandboxInfo.sink). The sink itself is sandbox.run.sink.
@dataclass(frozen=True)
class SinkPolicy:
    """The egress sink container's own policy: as the engine applied it (read back from `docker inspect`; setup.sh
    starts as root with only the capabilities it needs), and the listener's identity once setup.sh dropped them."""

    applied: AppliedPolicy
    listener_uid: int | None = field(metadata={"description": "The uid the listener runs as (10003)."})
    listener_capabilities: dict[str, str] = field(metadata={
        "description": "The listener's capability sets (/proc/self/status, hex): all zero, bounding set included."})
    listener_no_new_privs: bool


def read_applied(inspect: dict[str, Any]) -> AppliedPolicy:
    """Build the applied policy from a container's inspect document."""
    host = inspect.get("HostConfig") or {}
    config = inspect.get("Config") or {}
    security = host.get("SecurityOpt") or []
    return AppliedPolicy(
        network_mode=str(host.get("NetworkMode") or ""),
        read_only_rootfs=bool(host.get("ReadonlyRootfs")),
        cap_drop=sorted(host.get("CapDrop") or []),
        cap_add=sorted(host.get("CapAdd") or []),
        no_new_privileges=any(opt.split("=")[0].split(":")[0] == "no-new-privileges" and not opt.endswith("false")
                              for opt in security),
        privileged=bool(host.get("Privileged")),
        user=str(config.get("User") or ""),
        pids_limit=host.get("PidsLimit"),
        memory_bytes=int(host.get("Memory") or 0),
        memory_swap_bytes=int(host.get("MemorySwap") or 0),
        nano_cpus=int(host.get("NanoCpus") or 0),
        init=bool(host.get("Init")),
        restart_policy=str((host.get("RestartPolicy") or {}).get("Name") or "no"),
        tmpfs=dict(host.get("Tmpfs") or {}),
        mounts=[str(m.get("Source")) for m in inspect.get("Mounts") or [] if m.get("Type") != "tmpfs"],
        env_names=sorted(entry.split("=", 1)[0] for entry in config.get("Env") or []),
        image=str(config.get("Image") or ""),
        image_id=str(inspect.get("Image") or ""),
    )


def mismatches(requested: RunPolicy, applied: AppliedPolicy) -> list[str]:
    """Every way the applied policy is weaker than the requested one. Empty means the engine applied all of it."""
    problems: list[str] = []
    expect = {
        "network_mode": requested.network_mode,
        "read_only_rootfs": True,
        "no_new_privileges": True,
        "privileged": False,
        "user": requested.user,
        "pids_limit": requested.pids_limit,
        "memory_bytes": requested.memory_bytes,
        "memory_swap_bytes": requested.memory_bytes,
        "nano_cpus": requested.nano_cpus,
        "init": True,
        "restart_policy": "no",
        "mounts": [],
        "cap_add": [],
    }
    if not network_mode_allowed(applied.network_mode):
        problems.append(f"network_mode: engine applied {applied.network_mode!r}, neither none nor a sink namespace")
    for name, wanted in expect.items():
        got = getattr(applied, name)
        if got != wanted:
            problems.append(f"{name}: asked {wanted!r}, engine applied {got!r}")
    if "ALL" not in applied.cap_drop:
        problems.append(f"cap_drop: asked ['ALL'], engine applied {applied.cap_drop!r}")
    for path, options in requested.tmpfs().items():
        if applied.tmpfs.get(path) != options:
            problems.append(f"tmpfs {path}: asked {options!r}, engine applied {applied.tmpfs.get(path)!r}")
    extra_env = set(applied.env_names) - set(requested.environment()) - {"HOSTNAME"}
    if extra_env:
        problems.append(f"environment: unexpected variables {sorted(extra_env)} (from the image?)")
    return problems


def enforce(requested: RunPolicy, applied: AppliedPolicy) -> None:
    problems = mismatches(requested, applied)
    if problems:
        raise PolicyNotApplied("the engine did not apply the sandbox policy: " + "; ".join(problems))

