"""Whether a file's SDK-migration advisories (PY_SDK_V1_* for Python, TS_SDK_V1_* for TypeScript/JavaScript) run,
from the SDK major its nearest manifest declares (scanner/vet/manifests.py). v2 declared: they run (the v1 code left
in the tree will break). v1 declared: the code is right for the SDK it runs on, so they are held back and the result
says how many in one note. Both TypeScript families declared: a staged migration, which is what they are for: they
run. Anything else (no manifest, no version, a Python range admitting both majors): they run and every finding says
the SDK version could not be determined. The protocol rules are never gated by this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from scanner.vet.manifests import Declaration
from scanner.vet.model import Language

State = Literal["active", "annotated", "held"]
PY_GROUP, TS_GROUP = "PY_SDK_V1", "TS_SDK_V1"


@dataclass(frozen=True)
class SdkGate:
    group: str
    state: State
    why_undetermined: str = ""
    httpx_declared: bool = False
    zod_below_floor: str = ""

    def annotation(self) -> str:
        """The sentence an annotated finding ends with; '' when the SDK major is known."""
        if self.state != "annotated":
            return ""
        return f" (the SDK version could not be determined: {self.why_undetermined}; this advisory applies once the " \
               f"project is on SDK v2)"


def _undetermined(declaration: Declaration | None, package: str) -> str:
    if declaration is None:
        return f"no manifest up to the repository boundary names {package}"
    if declaration.major == "both":
        return f"{declaration.manifest.name} admits both {package} 1.x and 2.x"
    return f"{declaration.manifest.name} names {package} without a version that settles the major"


def gate_for(language: Language, declaration: Declaration | None) -> SdkGate:
    python = language == "python"
    group = PY_GROUP if python else TS_GROUP
    major = declaration.major if declaration is not None else "undetermined"
    facts = {"httpx_declared": declaration.httpx_declared,
             "zod_below_floor": declaration.zod_below_floor} if declaration is not None else {}
    if major == "1":
        return SdkGate(group, "held", **facts)  # type: ignore[arg-type]
    if major == "2" or (major == "both" and not python):
        return SdkGate(group, "active", **facts)  # type: ignore[arg-type]
    why = _undetermined(declaration, "mcp" if python else "an @modelcontextprotocol SDK package")
    return SdkGate(group, "annotated", why, **facts)  # type: ignore[arg-type]
