"""The walk of one root through the engine: each file read, parsed and vetted; minified bundles, unreadable and
unparsable files noted; the SDK major each manifest declares recorded for the advisory groups' gate."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.vet import engine, manifests
from scanner.vet.catalogue import PLANNED_GROUPS
from scanner.vet.model import VetResult
from scanner.vet.walk import WalkOptions, walk

if TYPE_CHECKING:
    from scanner.vet import VetOptions


def _record_sdk(result: VetResult, folder: Path, language: str, base: Path) -> None:
    found = manifests.py_sdk(folder) if language == "python" else manifests.ts_sdk(folder)
    if found is not None:
        major, manifest = found
        key = manifest.relative_to(base).as_posix() if manifest.is_relative_to(base) else manifest.as_posix()
        result.sdk.setdefault(key, major)


def run(root: Path, options: VetOptions) -> VetResult:
    result = VetResult(root=root)
    walked = walk(root, WalkOptions(options.max_file_kb, options.include_built, options.ignore))
    base = root if root.is_dir() else root.parent
    minified, unparsable, seen_folders = [], [], set()
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
        if (path.parent, language == "python") not in seen_folders:
            seen_folders.add((path.parent, language == "python"))
            _record_sdk(result, path.parent, language, base)
        outcome = engine.vet_file(parsed, options.min_confidence)
        result.findings += outcome.findings
        result.suppressed += outcome.suppressed
        result.files_scanned += 1
    result.notes += walked.notes + [f"not vetted: {u}" for u in unparsable]
    if minified:
        result.notes.append(f"not vetted: {len(minified)} minified bundle(s) or generated file(s) (a line over "
                            f"{engine.MINIFIED_LINE} characters: usually vendored library code, whose findings are "
                            f"not the server's own): {minified[0]}{' …' if len(minified) > 1 else ''}")
    if not walked.files:
        result.notes.append(f"no TypeScript, JavaScript or Python source found under {root.name or root}")
    result.notes.append("not implemented yet: " + "; ".join(PLANNED_GROUPS.values()))
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
    return out
