"""The hardened host-config baseline every container of the sandbox starts from."""

from __future__ import annotations

from typing import Any


def hardened_host_config(api: Any, *, memory_bytes: int, nano_cpus: int, pids_limit: int,
                         **settings: Any) -> dict[str, Any]:
    """The baseline of every container the sandbox starts (install, run, sink, proxy): all capabilities dropped
    (a container that needs one adds it back by name with cap_add), no-new-privileges, not privileged, memory equal
    to memory+swap, a CPU quota, a pids limit, docker-init as PID 1, no restart. `settings` adds the rest."""
    return api.create_host_config(
        cap_drop=["ALL"], security_opt=["no-new-privileges"], privileged=False, pids_limit=pids_limit,
        mem_limit=memory_bytes, memswap_limit=memory_bytes, nano_cpus=nano_cpus, restart_policy={"Name": "no"},
        **{"init": True, **settings},
    )
