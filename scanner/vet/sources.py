"""`vet` over files held in memory (the scan's in-image stage reads them out of the installed image: nothing is
written to disk by an untrusted name): each file by its path, parsed and vetted like a file on disk, minified
bundles and unparsable files noted. No manifest walk: the caller gives the SDK advisory groups' gates (the scan reads
the installed package's own manifest out of the image: scanner/pipeline/source_scan.py), or none, and then the groups
are held back with a note saying why and how many."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Literal

from scanner.vet import engine
from scanner.vet.sdk_gate import PY_GROUP, TS_GROUP, SdkGate
from scanner.vet.model import VetResult
from scanner.vet.walk import LANGUAGES

ROOT_LABEL = "<installed image>"
NO_MANIFEST = "a scan reads no manifest to tell the SDK major; run `mcp-sandbox vet` on the source for them"
Group = Literal["python", "typescript"]


def vettable(path: str) -> bool:
    """A path whose extension `vet` reads (TypeScript, JavaScript, Python)."""
    return PurePosixPath(path).suffix.lower() in LANGUAGES


def vet_sources(files: Mapping[str, bytes], min_confidence: str = "low", *,
                gates: Mapping[Group, SdkGate] | None = None, held_why: str = NO_MANIFEST) -> VetResult:
    """Vet each (path, bytes); the paths are the findings' `file`, as given. `gates`: the advisory groups' gates for
    Python and for TypeScript/JavaScript files; without them both are held back, and the note says `held_why`."""
    result = VetResult(root=Path(ROOT_LABEL))
    minified = []
    held = 0
    for relative in sorted(files):
        language = LANGUAGES.get(PurePosixPath(relative).suffix.lower())
        if language is None:
            continue
        source = files[relative]
        if engine.is_minified(source):
            minified.append(relative)
            continue
        try:
            parsed = engine.parse_file(Path(relative), relative, language, source)
        except engine.Unparsable as exc:
            result.notes.append(f"not vetted: {exc}")
            continue
        group: Group = "python" if language == "python" else "typescript"
        gate = gates[group] if gates is not None else SdkGate(PY_GROUP if group == "python" else TS_GROUP, "held")
        outcome = engine.vet_file(parsed, min_confidence, gate)
        held += outcome.held_back
        result.findings += outcome.findings
        result.suppressed += outcome.suppressed
        result.files_scanned += 1
    if held:
        result.notes.append(f"{held} SDK migration advisories held back: {held_why}")
    if minified:
        result.notes.append(f"not vetted: {len(minified)} minified bundle(s) (a line over {engine.MINIFIED_LINE} "
                            f"characters: usually vendored library code): {minified[0]}"
                            f"{' …' if len(minified) > 1 else ''}")
    result.findings.sort(key=lambda f: (f.file, f.line, f.column, f.rule_id))
    return result
