"""What one scan is asked to do: the target and every option the CLI, the action and the lock command set. Imports no
mcp, nor httpx (the registry endpoints are imported when asked for): the CLI builds it before the scan path is
imported and before its head start begins (which begins a cached install's server with it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sandbox.install.proxy.upstream import UpstreamProxy
from sandbox.run.policy import RunPolicy
from scanner.config import Config
from scanner.conformance.options import ConformanceOptions
from scanner.pipeline.timeouts import Timeouts
from scanner.probes.options import ProbeOptions

if TYPE_CHECKING:
    from scanner.registry.endpoints import RegistryEndpoints
    from scanner.report.model import Finding

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ScanOptions:
    target: str
    server_args: list[str] = field(default_factory=list)
    command: str | None = None
    policy: RunPolicy = field(default_factory=RunPolicy)
    timeouts: Timeouts = field(default_factory=Timeouts)
    use_cache: bool = True
    ca_bundle: Path | None = None
    ignore_scripts: bool = False
    install_timeout: int = 600
    config: Config = field(default_factory=Config)
    advisories: str | None = None
    probes: ProbeOptions = field(default_factory=ProbeOptions)
    network: Literal["observe", "none"] = "observe"
    conformance: ConformanceOptions = field(default_factory=ConformanceOptions)  # --spec-version / --spec
    vet_dependencies: bool = False  # the source stage vets the dependencies' files too (--vet-dependencies)
    # The proxy the install proxy chains to; the CLI resolves --upstream-proxy / HTTPS_PROXY into it. None: direct.
    upstream_proxy: UpstreamProxy | None = None
    # Where registry lookups go (mirrors, CA bundle, upstream, allowed hosts); None: from the environment and the
    # options above (RegistryEndpoints.from_environment).
    endpoints: RegistryEndpoints | None = None
    # Findings about how the server is launched, which no stage makes: I1 for a launch command that fetches whatever
    # version is newest at each start (`scan -- npx -y pkg`, a config's entry), when this scan vetted one version.
    launch_findings: tuple[Finding, ...] = ()
    # A plugin's bundled server (`scan PLUGIN`): the plugin's envelope listed the hooks and servers a client runs beside
    # it, so the package's scan does not list them again (scanner/plugins/package_parts.py).
    plugin_listed: bool = False

    def relisting_off(self) -> str | None:
        """Why P10's second listing is not made (None: it is): a config given with --config disables P10, so no
        finding would come of it. A config found in the working directory cannot: it cannot suppress P10's errors."""
        if self.config.explicit and "P10" in self.config.disabled:
            return f"turned off: P10 is disabled by {self.config.source or 'the config'}"
        return None

    def registry_endpoints(self) -> RegistryEndpoints:
        """The endpoints given, else those of the environment. The head start's thread calls this once the main
        thread imported scanner/pipeline/early_resolve.py, which imports the endpoints' module (and httpx)."""
        from scanner.registry.endpoints import RegistryEndpoints

        return self.endpoints or RegistryEndpoints.from_environment(
            ca_bundle=self.ca_bundle, upstream_proxy=self.upstream_proxy, advisories=self.advisories)
