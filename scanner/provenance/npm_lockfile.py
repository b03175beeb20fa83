"""I5 from the lockfile an npm install produced: every resolved package, git/URL dependencies, install scripts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from scanner.errors import UsageError
from scanner.provenance.model import Dependency, DependencyTree, SourceKind
from scanner.provenance.redact import without_secrets
from scanner.rules.provenance import finding
from scanner.report.model import Finding

INSTALL_SCRIPTS = ("preinstall", "install", "postinstall")
REGISTRY_HOSTS = frozenset({"registry.npmjs.org", "registry.yarnpkg.com"})
MAX_NAMED = 20


def read_npm_lockfile(path: Path, node_modules_parent: Path | None = None) -> DependencyTree:
    """Read package-lock.json / npm-shrinkwrap.json (v1, v2, v3). node_modules_parent: the install folder, to
    name each flagged package's actual install scripts from its package.json."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: not a readable npm lockfile ({exc.__class__.__name__})") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path}: not an npm lockfile (top level is not an object)")
    return lockfile_tree(data, path.name, node_modules_parent)


def lockfile_tree(data: dict[str, Any], name: str, node_modules_parent: Path | None = None,
                  registry_hosts: frozenset[str] = REGISTRY_HOSTS) -> DependencyTree:
    """The dependency tree of an already parsed lockfile (v1, v2, v3); `registry_hosts`: where a `resolved` URL
    counts as the registry (a mirror the install used is one)."""
    if isinstance(data.get("packages"), dict):
        deps = [_from_v2(key, entry, node_modules_parent, registry_hosts) for key, entry in data["packages"].items()
                if key and isinstance(entry, dict)]
    else:
        deps = list(_from_v1(_object(data.get("dependencies")), registry_hosts))
    return DependencyTree(lockfile=name, total=len(deps), dependencies=deps)


def _name_from_key(key: str) -> str:
    return key.rsplit("node_modules/", 1)[-1]


def _from_v2(key: str, entry: dict[str, Any], root: Path | None, registry_hosts: frozenset[str]) -> Dependency:
    name = str(entry.get("name") or _name_from_key(key))
    resolved = entry.get("resolved") if isinstance(entry.get("resolved"), str) else None
    source = "link" if entry.get("link") is True else classify(resolved, str(entry.get("version") or ""),
                                                                    registry_hosts)
    scripts: list[str] = []
    if entry.get("hasInstallScript") is True:
        scripts = _scripts_on_disk(root / key if root else None) or ["install script (hasInstallScript)"]
    return Dependency(name=name, version=_str(entry.get("version")), integrity=_str(entry.get("integrity")),
                      source=source, resolved=without_secrets(resolved) if resolved else None,
                      install_scripts=scripts, dev=entry.get("dev") is True)


def _from_v1(dependencies: dict[str, Any], registry_hosts: frozenset[str]) -> list[Dependency]:
    out: list[Dependency] = []
    stack = list(dependencies.items())
    while stack:
        name, entry = stack.pop()
        if not isinstance(entry, dict):
            continue
        version = str(entry.get("version") or "")
        resolved = entry.get("resolved") if isinstance(entry.get("resolved"), str) else None
        out.append(Dependency(name=name, version=version or None, integrity=_str(entry.get("integrity")),
                              source=classify(resolved or version, version, registry_hosts),
                              resolved=without_secrets(resolved) if resolved else None, dev=entry.get("dev") is True))
        stack.extend(_object(entry.get("dependencies")).items())
    return sorted(out, key=lambda d: d.name)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _object(value: Any) -> dict[str, Any]:
    """A lockfile slot that must be an object (the install's file, written where packages' scripts ran): any other
    shape holds no dependencies."""
    return value if isinstance(value, dict) else {}


def classify(resolved: str | None, version: str, registry_hosts: frozenset[str] = REGISTRY_HOSTS) -> SourceKind:
    """Where a locked package came from: the registry, git, another URL, or a local file."""
    spec = resolved or version
    if not spec:
        return "unknown"
    if spec.startswith(("git+", "git:", "github:", "gitlab:", "bitbucket:")):
        return "git"
    if spec.startswith("file:"):
        return "file"
    if spec.startswith(("http://", "https://")):
        return "registry" if urlsplit(spec).hostname in registry_hosts else "url"
    return "registry" if resolved is None else "unknown"


def _scripts_on_disk(package_dir: Path | None) -> list[str]:
    if package_dir is None:
        return []
    try:
        manifest = json.loads((package_dir / "package.json").read_text("utf-8"))
    except (OSError, ValueError):
        return []
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    if not isinstance(scripts, dict):
        return []
    return [f"{k}: {str(scripts[k])[:200]}" for k in INSTALL_SCRIPTS if isinstance(scripts.get(k), str)]


def tree_findings(tree: DependencyTree) -> list[Finding]:
    """I5 for git/URL dependencies and for packages with install scripts anywhere in the tree, naming them."""
    out: list[Finding] = []
    remote = tree.non_registry
    if remote:
        names = _names(remote)
        out.append(finding("I5", f"{len(remote)} dependencies are fetched from git or a URL, outside the registry: "
                                 f"{names}.", evidence=names))
    scripted = tree.with_install_scripts
    if scripted:
        names = _names(scripted)
        out.append(finding("I5", f"{len(scripted)} packages run install scripts: {names}.",
                           evidence="; ".join(f"{d.name}@{d.version}: {', '.join(d.install_scripts)}"
                                              for d in scripted[:MAX_NAMED])))
    return out


def _names(deps: list[Dependency]) -> str:
    shown = ", ".join(f"{d.name}@{d.version or '?'}" for d in deps[:MAX_NAMED])
    return shown + (f" and {len(deps) - MAX_NAMED} more" if len(deps) > MAX_NAMED else "")
