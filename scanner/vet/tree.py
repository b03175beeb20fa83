"""The walk of one root through the engine: each file read, parsed and vetted; minified bundles, unreadable and
unparsable files noted; the SDK major each manifest declares recorded (JSON `sdk`) and turned into each folder's gate
of the SDK-migration advisories; the advisories a v1 declaration holds back said in one note per group."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.vet import engine, manifests
from scanner.vet.model import Language, VetResult
from scanner.vet.sdk_gate import PY_GROUP, SdkGate, gate_for
from scanner.vet.walk import WalkOptions, walk

if TYPE_CHECKING:
    from scanner.vet import VetOptions


def _gate(result: VetResult, folder: Path, language: Language, base: Path) -> SdkGate:
    found = manifests.py_sdk(folder) if language == "python" else manifests.ts_sdk(folder)
    if found is not None:
        manifest = found.manifest
        key = manifest.relative_to(base).as_posix() if manifest.is_relative_to(base) else manifest.as_posix()
        result.sdk.setdefault(key, found.major)
    return gate_for(language, found)


def _held_back_notes(result: VetResult) -> list[str]:
    notes = []
    for group, count in sorted(result.held_back.items()):
        sdk = "the Python SDK (mcp)" if group == PY_GROUP else "the TypeScript SDK (@modelcontextprotocol/sdk)"
        notes.append(f"{count} {group}_* migration advisor{'y' if count == 1 else 'ies'} held back: the nearest "
                     f"manifest declares v1 of {sdk}, which the code is right for; they are reported once it "
                     f"declares v2")
    return notes


def run(root: Path, options: VetOptions) -> VetResult:
    result = VetResult(root=root)
    walked = walk(root, WalkOptions(options.max_file_kb, options.include_built, options.ignore))
    base = root if root.is_dir() else root.parent
    minified, unparsable, gates = [], [], {}
    for path, language in walked.files:
        relative = path.relative_to(base).as_posix()
        try:
            source = path.read_bytes()
        except OSError as exc:
            result.notes.append(f"could not read {relative}: {exc.strerror or exc}")
            continue
        if engine.is_minified(source):
            minified.append(relative)
            continue
        try:
            parsed = engine.parse_file(path, relative, language, source)
        except engine.Unparsable as exc:
            unparsable.append(str(exc))
            continue
        where = (path.parent, language == "python")
        if where not in gates:
            gates[where] = _gate(result, path.parent, language, base)
        outcome = engine.vet_file(parsed, options.min_confidence, gates[where])
        result.findings += outcome.findings
        result.suppressed += outcome.suppressed
        if outcome.held_back:
            group = gates[where].group
            result.held_back[group] = result.held_back.get(group, 0) + outcome.held_back
        result.files_scanned += 1
    result.notes += walked.notes + [f"not vetted: {u}" for u in unparsable]
    if minified:
        result.notes.append(f"not vetted: {len(minified)} minified bundle(s) or generated file(s) (a line of code over "
                            f"{engine.MINIFIED_LINE} characters: usually vendored library code, whose findings are "
                            f"not the server's own): {minified[0]}{' …' if len(minified) > 1 else ''}")
    if not walked.files:
        result.notes.append(f"no TypeScript, JavaScript or Python source found under {root.name or root}")
    result.notes += _held_back_notes(result)
    result.findings.sort(key=lambda f: (f.file, f.line, f.column, f.rule_id))
    return result


def _prefixed(prefix: str, path: str) -> str:
    return path if prefix in ("", ".") else f"{prefix}/{path}"


def merged(results: list[VetResult], cwd: Path) -> VetResult:
    """Several roots as one result, every path relative to `cwd` when the root is under it (what SARIF's %SRCROOT%
    and a CI checkout expect), else to the root itself."""
    out = VetResult(root=cwd)
    for result in results:
        base = result.root if result.root.is_dir() else result.root.parent
        resolved = base.resolve()
        prefix = resolved.relative_to(cwd).as_posix() if resolved.is_relative_to(cwd) else ""
        out.findings += [replace(f, file=_prefixed(prefix, f.file)) for f in result.findings]
        out.suppressed += [replace(s, file=_prefixed(prefix, s.file)) for s in result.suppressed]
        out.files_scanned += result.files_scanned
        out.notes += [n for n in result.notes if n not in out.notes]
        out.sdk.update({_prefixed(prefix, k): v for k, v in result.sdk.items()})
        for group, count in result.held_back.items():
            out.held_back[group] = out.held_back.get(group, 0) + count
    return out
