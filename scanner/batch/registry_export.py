"""Targets from a JSON export of the official MCP registry: its `server.json` entries, as a list, as the list API's
`{"servers": [{"server": {...}, "_meta": {...}}, ...]}`, or one entry alone.

Each entry's `packages[]` gives `registryType` (npm, pypi, oci, ...), `identifier` and `version`; a package's
`packageArguments` with a literal `value` become server arguments (positional as they are, named as `NAME VALUE`).
What the scan cannot vet yet (OCI images, other registries, remote-only servers, a non-stdio transport, a malformed
identifier, a package served by another registry than the public one: `registryBaseUrl`) is kept as an unsupported
target with the reason, never dropped.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from sandbox.core.untrusted import escape_for_terminal
from scanner.batch.targets import BatchTarget, unpassable
from scanner.errors import UsageError
from scanner.pipeline.targets import parse_target

MAX_TEXT = 200  # an identifier or version quoted in a reason: untrusted, escaped and capped
SCANNED = {"npm": "npm:{name}@{version}", "pypi": "pypi:{name}=={version}"}
PUBLIC_HOSTS = {"npm": "registry.npmjs.org", "pypi": "pypi.org"}  # a package's registryBaseUrl when it is theirs


def is_registry_export(data: Any) -> bool:
    if isinstance(data, list):
        return True
    return isinstance(data, dict) and (isinstance(data.get("servers"), list) or "packages" in data
                                       or "remotes" in data)


def export_targets(data: Any) -> list[BatchTarget]:
    entries = data if isinstance(data, list) else data["servers"] if isinstance(data.get("servers"), list) else [data]
    targets: list[BatchTarget] = []
    for index, raw in enumerate(entries):
        server = raw.get("server", raw) if isinstance(raw, dict) else raw
        if not isinstance(server, dict):
            raise UsageError(f"registry export entry {index} is not a JSON object; expected server.json entries")
        targets += _server_targets(server, f"servers[{index}]")
    return targets


def _server_targets(server: dict[str, Any], where: str) -> list[BatchTarget]:
    name = _text(server.get("name")) or where
    packages = server.get("packages")
    if not isinstance(packages, list) or not packages:
        why = "a remote server (no package to install)" if server.get("remotes") else "no packages"
        return [BatchTarget(f"registry:{name}", origin=where, unsupported=why)]
    return [_package_target(package, f"{where}.packages[{i}] ({name})") for i, package in enumerate(packages)]


def _package_target(package: Any, where: str) -> BatchTarget:
    if not isinstance(package, dict):
        return BatchTarget(f"registry:{where}", origin=where, unsupported="the package entry is not an object")
    kind = _text(package.get("registryType") or package.get("registry_type"))
    name = _text(package.get("identifier") or package.get("name"))
    version = _text(package.get("version"))
    shown = f"{kind or '?'}:{name or '?'}" + (f"@{version}" if version else "")
    if kind not in SCANNED:
        why = f"{kind or 'unknown'} packages are not supported yet" if kind != "oci" else \
            "OCI images are not supported yet"
        return BatchTarget(shown, origin=where, unsupported=why)
    transport = package.get("transport")
    kind_of_transport = transport.get("type") if isinstance(transport, dict) else "stdio"
    if kind_of_transport not in (None, "stdio"):
        return BatchTarget(shown, origin=where, unsupported=f"transport {_text(kind_of_transport)!r} is not "
                           "supported yet (stdio only)")
    elsewhere = _other_registry(kind, package.get("registryBaseUrl") or package.get("registry_base_url"))
    if elsewhere is not None:
        return BatchTarget(f"{shown} from {elsewhere}", origin=where,
                           unsupported=f"served by another registry ({elsewhere}) than the public {kind} one the scan "
                                       "installs from: a package of that name there is another package")
    target = SCANNED[kind].format(name=name, version=version) if version else f"{kind}:{name}"
    try:
        parse_target(target)
    except UsageError as exc:
        return BatchTarget(shown, origin=where, unsupported=f"not a valid target: {exc}")
    args = _arguments(package.get("packageArguments"))
    if (why := unpassable(args)) is not None:
        return BatchTarget(shown, origin=where, unsupported=f"packageArguments: {why}")
    return BatchTarget(target, server_args=args, origin=where)


def _other_registry(kind: str, base: Any) -> str | None:
    """The host of a `registryBaseUrl` that is not the public registry of `kind` (None: none given, or that one)."""
    if not isinstance(base, str) or not base.strip():
        return None
    try:
        host = urlsplit(base.strip()).hostname or ""
    except ValueError:  # not a URL (`https://[registry`): no registry the scan knows
        return _text(base)
    return None if host == PUBLIC_HOSTS[kind] else _text(host or base)


def _arguments(raw: Any) -> tuple[str, ...]:
    """The package arguments that carry a literal value; one that needs the user's input (no value) is left out."""
    args: list[str] = []
    for argument in raw if isinstance(raw, list) else []:
        if not isinstance(argument, dict) or not isinstance(argument.get("value"), (str, int, float)):
            continue
        if argument.get("type") == "named" and isinstance(argument.get("name"), str):
            args.append(argument["name"])
        args.append(str(argument["value"]))
    return tuple(args)


def _text(value: Any) -> str:
    return escape_for_terminal(value.strip(), MAX_TEXT) if isinstance(value, str) else ""
