"""Stage 3b (source): `vet` over the installed package's own files, read out of the installed image.

Where they are: npm installs into /opt/server/node_modules/<name> (the whole folder, built output included, but not a
node_modules below it); PyPI into the venv's site-packages, where the package's files are those its dist-info RECORD
lists. With --vet-dependencies, the whole node_modules / site-packages. The files are read through the engine's
archive API from a container of the installed image that never starts, parsed in memory (sandbox/core/image_files),
bounded (bytes, files, vet's --max-file-size per file); paths are relative to the install root, so they start with the
package's own name (`@scope/pkg/dist/index.js`). Findings are V1 (scanner/rules/source_spec). When the files cannot be
read the stage is skipped with the reason. The same reads bring the package's manifest (package.json and lockfiles,
or the dist-info METADATA), which gates the SDK-migration advisories as `vet PATH` does (scanner/pipeline/source_gate)."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import packaging
from docker.errors import APIError
from packaging.utils import canonicalize_name

import scanner

from sandbox.core.errors import SandboxError
from sandbox.core.image_files import ArchiveBroken, ImageFiles, ReadLimits
from sandbox.core.untrusted import escape_for_terminal
from sandbox.install.phases import NPM_PREFIX
from sandbox.install.request import InstalledServer
from scanner.pipeline.installed_files import InstalledFiles, SourceRead, code_digest
from scanner.pipeline.scan_options import Progress
from scanner.pipeline.source_gate import DEPENDENCIES, METADATA, NPM_MANIFESTS, SourceGate, decide
from scanner.plugins.model import Unvetted
from scanner.plugins.package_parts import PLUGIN_FILES, PackedFiles, folder_parts, not_vetted_reason, package_parts
from scanner.report.model import Finding, SourceScanInfo
from scanner.rules.source_spec import source_findings
from scanner.vet.sources import LANGUAGES, vet_sources, vettable
from scanner.vet.walk import DEFAULT_MAX_KB

NODE_MODULES = f"{NPM_PREFIX}/node_modules"
VENV_LIB = "/opt/server/venv/lib"
MAX_RECORD_BYTES = 4 * 1024 * 1024
MAX_NOTE_CHARS = 300
PLUGIN_KEY = "plugin:"  # a plugin file read beside the sources (PLUGIN_FILES), as kept among the found manifests
READ_FORMAT = 1  # bump when what the reads below keep changes other than through what read_key names
READ_CODE = (__name__, "scanner.pipeline.installed_files", "sandbox.core.image_files", "sandbox.core.archive",
             "scanner.vet.sources", "scanner.vet.walk")  # the code that decides which files the read keeps
# Taken as this module is imported, when every module it names has just been loaded: a long-lived process (a batch
# worker) whose install is changed on disk keys its reads by the code it runs, not by the files that replaced it.
READ_CODE_DIGEST = code_digest(READ_CODE)


@dataclass
class SourceScan:
    """The stage's value: the report's `source` section and its V1 findings, or why it could not run."""

    info: SourceScanInfo | None = None
    findings: list[Finding] = field(default_factory=list)
    problem: str | None = None
    # What a client that installs the package as an agent plugin runs beside its server (scanner/plugins/package_parts)
    plugin_parts: list[Unvetted] = field(default_factory=list)

    @property
    def plugin_problem(self) -> str | None:
        """Why the scan is incomplete for the plugin parts it did not vet (None: the package runs none)."""
        return not_vetted_reason(self.plugin_parts)


def scan_source(reader: InstalledFiles, ecosystem: str, *, dependencies: bool, progress: Progress,
                folder: Path | None = None, plugin_listed: bool = False) -> SourceScan:
    """The stage over the installed image's files (`reader`, released here: the stage is done with it), and the
    parts a client runs when it installs the package as an agent plugin: read from `folder` (a folder target's),
    else out of the installed npm package; none when a plugin's envelope listed them (`plugin_listed`: its bundled
    server)."""
    progress("vetting the installed package's source")
    limits = ReadLimits(max_file_bytes=DEFAULT_MAX_KB * 1024)
    installed = reader.installed
    read = _read_npm if ecosystem == "npm" else _read_pypi
    parts = folder_parts(folder) if folder is not None and not plugin_listed else []

    def read_files() -> SourceRead:
        found: dict[str, bytes] = {}
        return read(reader, installed, dependencies, limits, found), found
    try:
        files, found = reader.kept(read_key(ecosystem, dependencies, limits), read_files)
    except (APIError, OSError, ArchiveBroken) as exc:  # the engine, or its stream, failed the read
        return SourceScan(problem=f"the installed package's files could not be read out of the image: {exc}",
                          plugin_parts=parts)
    finally:
        reader.release()
    if isinstance(files, str):
        return SourceScan(problem=files, plugin_parts=parts)
    plugin = {name[len(PLUGIN_KEY):]: found.pop(name) for name in list(found) if name.startswith(PLUGIN_KEY)}
    if folder is None and not plugin_listed:
        own = f"{installed.name}/"
        parts = package_parts(PackedFiles(plugin, {path[len(own):] for path in files.too_big if path.startswith(own)}))
    gate = SourceGate(why=DEPENDENCIES) if dependencies else decide(found)
    result = vet_sources(files.files, gates=gate.gates, held_why=gate.why)
    notes = [escape_for_terminal(note, MAX_NOTE_CHARS) for note in [*_read_notes(files), *gate.said, *result.notes]]
    info = SourceScanInfo(files_read=len(files.files), files_scanned=result.files_scanned, dependencies=dependencies,
                          suppressed=[escape_for_terminal(f"{s.file}:{s.line} {s.rule_id} ({s.directive})",
                                                          MAX_NOTE_CHARS) for s in result.suppressed],
                          notes=notes, partial=files.cut is not None)
    return SourceScan(info=info, findings=source_findings(result.findings), plugin_parts=parts)


def read_key(ecosystem: str, dependencies: bool, limits: ReadLimits) -> str:
    """What names this stage's read of an image, for the reads kept from earlier scans (InstalledFiles.kept): the
    format's version, mcp-sandbox's and packaging's (its name normalisation finds the dist-info), the code that
    reads (its source's digest) and every value that decides which files are read and kept (a change to any of them
    is another read)."""
    recipe = [READ_FORMAT, scanner.__version__, packaging.__version__, READ_CODE_DIGEST, ecosystem, dependencies,
              dataclasses.astuple(limits), sorted(LANGUAGES), NPM_MANIFESTS, METADATA, MAX_RECORD_BYTES, NODE_MODULES,
              VENV_LIB, PLUGIN_FILES]
    return hashlib.sha256(json.dumps(recipe, default=list).encode()).hexdigest()


def _read_notes(files: ImageFiles) -> list[str]:
    notes = [f"read cut short ({files.cut}): the files vetted are a partial set"] if files.cut else []
    if files.too_big:
        notes.append(f"skipped {len(files.too_big)} file(s) over {DEFAULT_MAX_KB} KB: {files.too_big[0]}"
                     f"{' …' if len(files.too_big) > 1 else ''}")
    if not files.files:
        notes.append("no TypeScript, JavaScript or Python source among the package's files")
    return notes


def own_npm_file(path: str) -> bool:
    """A file of the package itself: below `<name>/` (a scoped name has two parts) and in no node_modules of its own."""
    return vettable(path) and "node_modules" not in PurePosixPath(path).parts


def _read_npm(reader: InstalledFiles, installed: InstalledServer, dependencies: bool, limits: ReadLimits,
              found: dict[str, bytes]) -> ImageFiles | str:
    """The package's files; its own package.json and lockfiles (at its root) go to `found`, by base name, and so do
    its agent plugin files (PLUGIN_FILES, by their path in the package after PLUGIN_KEY)."""
    out = ImageFiles()
    plugin = {f"{installed.name}/{name}": PLUGIN_KEY + name for name in PLUGIN_FILES}
    manifests = {**{f"{installed.name}/{name}": name for name in NPM_MANIFESTS}, **plugin}
    if dependencies:
        reader.read(NODE_MODULES, "", lambda path: vettable(path) or path in plugin, limits, out)
    elif not reader.read(f"{NODE_MODULES}/{installed.name}", installed.name,
                         lambda path: own_npm_file(path) or path in manifests, limits, out):
        return f"the installed image has no {NODE_MODULES}/{escape_for_terminal(installed.name, 200)}"
    for path, name in manifests.items():
        if path in out.files:
            found[name] = out.files.pop(path)
    return out


def site_packages(manifest: dict[str, Any]) -> str | None:
    """The venv's site-packages, from the Python version the install description recorded ("3.13.1" -> 3.13)."""
    version = str(manifest.get("python") or "").split(".")
    if len(version) < 2 or not all(part.isdigit() for part in version[:2]):
        return None
    return f"{VENV_LIB}/python{version[0]}.{version[1]}/site-packages"


def _install_description(reader: InstalledFiles) -> dict[str, Any]:
    """The Python install description (the install manifest, read once for provenance too); {} when it is not there
    or not a JSON object."""
    try:
        found = reader.manifest()
    except SandboxError:
        return {}
    return found if isinstance(found, dict) else {}


def dist_info_names(name: str, version: str) -> list[str]:
    """The folder names a wheel's dist-info may have: the normalized name (wheel spec), and older spellings."""
    spellings = [canonicalize_name(name).replace("-", "_"), name.replace("-", "_"), name]
    return list(dict.fromkeys(f"{spelling}-{version}.dist-info" for spelling in spellings))


def record_paths(record: bytes) -> list[str]:
    """The files a RECORD lists, relative to site-packages, that `vet` reads; none that climbs out (`../bin`) or is
    absolute."""
    rows = csv.reader(io.StringIO(record.decode("utf-8", "replace")))
    paths = []
    for row in rows:
        if not row:
            continue
        parts = PurePosixPath(row[0]).parts
        if row[0].startswith("/") or ".." in parts or not vettable(row[0]):
            continue
        paths.append(PurePosixPath(row[0]).as_posix())
    return paths


def _read_pypi(reader: InstalledFiles, installed: InstalledServer, dependencies: bool, limits: ReadLimits,
               found: dict[str, bytes]) -> ImageFiles | str:
    """The files the package's RECORD lists; its dist-info METADATA goes to `found`."""
    root = site_packages(_install_description(reader))
    if root is None:
        return "the install description names no Python version, so site-packages could not be found"
    out = ImageFiles()
    if dependencies:
        reader.read(root, "", vettable, limits, out)
        return out
    record = ImageFiles()
    for folder in dist_info_names(installed.name, installed.version):
        wanted = (f"{folder}/RECORD", f"{folder}/{METADATA}")
        if reader.read(f"{root}/{folder}", folder, wanted.__contains__, ReadLimits(max_file_bytes=MAX_RECORD_BYTES),
                       record) and wanted[0] in record.files:
            break
    records = [data for path, data in record.files.items() if path.endswith("/RECORD")]
    if not records:
        return f"no dist-info RECORD for {escape_for_terminal(installed.name, 200)} {installed.version} in site-packages"
    found.update({METADATA: data for path, data in record.files.items() if path.endswith(f"/{METADATA}")})
    listed = set(record_paths(records[0]))
    for top in sorted({path.split("/", 1)[0] for path in listed}):
        reader.read(f"{root}/{top}", top, listed.__contains__, limits, out)
        if out.cut:
            break
    return out
