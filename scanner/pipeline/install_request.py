"""Stage 2: what the sandbox installs. A registry target is resolved to one version through the scan's registry
client; the ecosystem writes the installer's spec and the index its dependencies come from."""

from __future__ import annotations

from pathlib import Path

import httpx

from sandbox.core import images
from sandbox.install.request import InstallRequest, local_source
from scanner.ecosystems.registry import ecosystem as ecosystem_named
from scanner.ecosystems.registry import resolve
from scanner.pipeline.scan_options import Progress, ScanOptions
from scanner.pipeline.targets import Target, content_hash
from scanner.registry.endpoints import RegistryEndpoints


def install_request(target: Target, options: ScanOptions, endpoints: RegistryEndpoints, http: httpx.Client,
                    progress: Progress) -> InstallRequest:
    packages = ecosystem_named(target.ecosystem)
    if target.path is not None:
        return InstallRequest(
            target.ecosystem, local_source(target.path), target.name, f"local:{content_hash(target.path)}",
            local_path=target.path, ignore_scripts=options.ignore_scripts, ca_bundle=_ca(options),
            timeout_seconds=options.install_timeout, upstream_proxy=options.upstream_proxy,
            index_url=packages.install_index(endpoints),  # its dependencies come from the mirror too
        )
    progress(f"resolving {target.requested}")
    resolved = resolve(target, http, endpoints)
    return InstallRequest(
        target.ecosystem, packages.install_spec(resolved.name, resolved.version), resolved.name,
        f"{target.ecosystem}:{resolved.name}@{resolved.version}", ignore_scripts=options.ignore_scripts,
        ca_bundle=_ca(options), timeout_seconds=options.install_timeout, upstream_proxy=options.upstream_proxy,
        index_url=packages.install_index(endpoints), version=resolved.version,
    )


def _ca(options: ScanOptions) -> Path | None:
    if options.ca_bundle is not None:
        return options.ca_bundle
    return images.DEFAULT_CA_BUNDLE if images.DEFAULT_CA_BUNDLE.is_file() else None
