"""plugin.json: the findings split by what a conformant client does (agent-plugins-spec#77). FATAL when it rejects
the plugin (no manifest, not JSON, a required field missing or wrong, an unknown $schema, a name outside §5.5);
TOLERATED when it reports and keeps loading (an unknown top-level field §5.2, a non-object `extensions` §8.1)."""

from __future__ import annotations

from pathlib import Path

from sandbox.core.untrusted import escape_for_terminal
from scanner.plugins.folder import MANIFEST
from scanner.plugins.jsontext import line_of, read_json, type_name
from scanner.plugins.model import EnvelopeResult
from scanner.plugins.schema_check import SchemaError, manifest_errors, manifest_fields

COMPONENT_NOTES = {
    "skills": "note: skills declared here will NOT load: §6.1 discovers skills only from the skills/ folder",
    "mcpServers": "note: MCP servers declared here will NOT load: §6.1 discovers them only from mcp.json at the "
                  "plugin root (Copilot CLI and VS Code do read this field: listed as not vetted)",
}


def check_manifest(result: EnvelopeResult, root: Path) -> None:
    path = root / MANIFEST
    if not path.is_file():
        result.add("PLUGIN_MANIFEST_INVALID", MANIFEST, 1, "no plugin.json at the plugin root: a plugin MUST have a "
                   "manifest there, and conformant clients reject the package without one", "5.1")
        return
    try:
        manifest, text = read_json(path, root)
    except ValueError as exc:
        result.add("PLUGIN_MANIFEST_INVALID", MANIFEST, 1, f"plugin.json {exc}", "5.1")
        return
    if isinstance(manifest, dict):
        _unknown_and_extensions(result, manifest, text)
        if isinstance(manifest.get("name"), str):
            result.name = escape_for_terminal(manifest["name"], 64)
    for error in manifest_errors(manifest):
        if error.keyword == "additionalProperties" and not error.path:
            continue  # the unknown top-level fields, reported one by one above
        line = line_of(text, error.path) if error.path else 1
        result.add("PLUGIN_MANIFEST_INVALID", MANIFEST, line, f"{error.field or 'plugin.json'}: {error.message}",
                   _section(error))
        if error.path == ["name"] and error.keyword == "pattern":
            result.add("PLUGIN_NAME_RE2_LOOKAHEAD", MANIFEST, line, "the schema's name pattern uses a negative "
                       "lookahead, which RE2-based (Go) validators cannot compile: they fail on the schema instead of "
                       "reporting this name (agent-plugins-spec#76)")


def _unknown_and_extensions(result: EnvelopeResult, manifest: dict[str, object], text: str) -> None:
    for name in sorted(set(manifest) - manifest_fields()):
        shown = escape_for_terminal(name, 80)
        note = f"; {COMPONENT_NOTES[name]}" if name in COMPONENT_NOTES else ""
        result.add("PLUGIN_UNKNOWN_FIELD", MANIFEST, line_of(text, [name]), f"unknown top-level field {shown!r}: a "
                   f"conformant client reports it, ignores it and keeps loading{note}")
    if "extensions" in manifest and not isinstance(manifest["extensions"], dict):
        result.add("PLUGIN_EXTENSIONS_NOT_OBJECT", MANIFEST, line_of(text, ["extensions"]), "extensions must be an "
                   f"object keyed by reverse-domain namespace, not {type_name(manifest['extensions'])}: a conformant "
                   "client reports it, ignores it and keeps loading components")


def _section(error: SchemaError) -> str:
    """The section a fatal manifest error violates: §5.3 a required field missing, mistyped or empty, §5.2 the
    $schema, §5.5 the name's form, §5.1 a manifest that is no object, §5.4 the metadata fields."""
    if error.keyword == "required":
        return "5.3"
    if not error.path:
        return "5.1"
    if error.path[0] == "$schema":
        return "5.2"
    if error.path[0] == "name":
        return "5.3" if error.keyword in ("type", "minLength") else "5.5"
    return "5.4"
