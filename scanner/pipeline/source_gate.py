"""The SDK gate of the in-scan source stage: which MCP SDK major the installed package declares, from its own
manifest as read out of the image (npm: the package folder's package.json and lockfiles; PyPI: its dist-info
METADATA), decided by the same code `vet PATH` uses (scanner/vet/manifests.py, scanner/vet/sdk_gate.py).

Those read files, so the manifest bytes are written to a private temporary folder under fixed names only (never a
name from the image), with a `.git` marker so the walk up stops there, and the folder is removed at once. With
--vet-dependencies the files are many packages' (each with its own manifest), so the gate is not decided and the
advisories stay held back with that reason."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from scanner.vet import manifests
from scanner.vet.sdk_gate import SdkGate, gate_for
from scanner.vet.sources import Group

NPM_MANIFESTS = ("package.json", *manifests.TS_LOCKS)
METADATA = "METADATA"
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
DEPENDENCIES = ("--vet-dependencies reads many packages' files, each under its own manifest; run `mcp-sandbox vet` "
                "on a checkout for them")
NONE_READ = "the package's manifest (package.json / dist-info METADATA) could not be read out of the image"


@dataclass(frozen=True)
class SourceGate:
    """The gates of both advisory groups (None: not decided, `why` says why), and what decided them."""

    gates: dict[Group, SdkGate] | None = None
    why: str = NONE_READ
    said: list[str] = field(default_factory=list)  # one line per group, for the report's notes


def decide(found: dict[str, bytes]) -> SourceGate:
    """The gates from the manifest files (by base name: package.json, a lockfile, METADATA), as vet decides them."""
    if not found:
        return SourceGate()
    with tempfile.TemporaryDirectory(prefix="mcp-sandbox-manifest-") as folder:
        root = Path(folder)
        (root / ".git").mkdir()  # the repository boundary: the walk up never leaves this folder
        for name, data in found.items():
            target = root / "pkg.dist-info" / METADATA if name == METADATA else root / name
            target.parent.mkdir(exist_ok=True)
            target.write_bytes(data[:MAX_MANIFEST_BYTES])
        python, typescript = manifests.py_sdk(root), manifests.ts_sdk(root)
    gates: dict[Group, SdkGate] = {"python": gate_for("python", python), "typescript": gate_for("typescript", typescript)}
    said = [f"SDK gate from the installed package's manifest: {label} {_major(declaration.major)}"
            for label, declaration in (("Python (mcp)", python), ("TypeScript", typescript)) if declaration] or [
        "SDK gate: the installed package's manifest names no MCP SDK (advisories annotated)"]
    held = [label for label, gate in (("PY_SDK_V1_*", gates["python"]), ("TS_SDK_V1_*", gates["typescript"]))
            if gate.state == "held"]
    why = f"the installed package's manifest declares SDK v1, which the code is right for ({', '.join(held)})"
    return SourceGate(gates=gates, why=why, said=said)


def _major(major: str) -> str:
    return {"1": "v1 (advisories held back)", "2": "v2 (advisories active)",
            "both": "both majors"}.get(major, "undetermined (advisories annotated)")
