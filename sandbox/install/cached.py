"""An earlier install of the same identity, read back from its image: the installed image's tag names the install
(sandbox/install/container.py `installed_tag`), and its manifest label holds what the install recorded (version,
entry points, output, egress attempts, writes, source builds). Reading it installs nothing and starts nothing."""

from __future__ import annotations

import json
from typing import Any

from docker.errors import ImageNotFound

from sandbox.core import image_use, labels
from sandbox.core.session import SandboxSession
from sandbox.install.proxy.log import EgressAttempt
from sandbox.install.pypi import BuiltFromSource
from sandbox.install.request import InstalledServer
from sandbox.install.writes import StepWrites

MANIFEST_LABEL = f"{labels.PREFIX}.install"


def cached_install(session: SandboxSession, tag: str, runtime_image: str) -> InstalledServer | None:
    """The earlier install tagged `tag` (`installed_tag`), or None; installs nothing (the head start looks it up)."""
    try:
        image = session.client.images.get(tag)
    except ImageNotFound:
        return None
    summary = json.loads(image.labels.get(MANIFEST_LABEL, "{}"))
    if not summary.get("version"):
        return None
    image_use.record_use(image.id)
    return InstalledServer(
        image=tag, image_id=image.id, runtime_image=runtime_image, cached=True, name=summary["name"],
        version=summary["version"], entry_points=summary.get("entry_points") or {},
        # The manifest is read later, beside the run, by what needs it (read_manifest): not on the lookup.
        installer_output=summary.get("output", ""), seconds=0.0, manifest=None,
        egress=[_attempt(record) for record in summary.get("egress") or []],
        attribution_note=_optional_text(summary.get("attribution_note")),
        writes=[_step_writes(record) for record in summary.get("writes") or []],
        built=[BuiltFromSource(package=_optional_text(record.get("package")), setup_py=bool(record.get("setup_py")))
               for record in summary.get("built") or []],
        built_unknown=summary.get("built_unknown") is True,
    )


def _step_writes(record: dict[str, Any]) -> StepWrites:
    return StepWrites(created=tuple(map(str, record.get("created") or ())),
                      modified=tuple(map(str, record.get("modified") or ())), more=int(record.get("more", 0)),
                      unreadable=int(record.get("unreadable", 0)), truncated=bool(record.get("truncated")),
                      package=_optional_text(record.get("package")), script=_optional_text(record.get("script")))


def _attempt(record: dict[str, Any]) -> EgressAttempt:
    return EgressAttempt(host=str(record["host"]), port=record.get("port"), allowed=bool(record["allowed"]),
                         count=int(record.get("count", 1)), via=str(record.get("via", "proxy")),
                         methods=tuple(record.get("methods") or ()), statuses=tuple(record.get("statuses") or ()),
                         package=_optional_text(record.get("package")), script=_optional_text(record.get("script")))


def _optional_text(value: Any) -> str | None:
    return str(value) if value is not None else None
