"""I1 (with I8 and I9): lint the command an MCP client would run to launch a server.

Understands npx / pnpx / bunx / npm exec / pnpm dlx / yarn dlx, uvx / uv run / uv tool run / pipx run, pip /
python -m pip, docker run / podman run, and the `env …` and `sh -c "…"` wrappers around them. Arguments may carry
secrets, so findings quote only the package spec or image, never the whole command line.
"""

from __future__ import annotations

from typing import Literal

from scanner.provenance.known_bad import known_bad_finding
from scanner.provenance.launch_runners import LaunchAnalysis, dispatch
from scanner.provenance.package_specs import PackageRef
from scanner.provenance.shell_words import Unparseable, command_segments
from scanner.provenance.typosquat import typosquat_finding
from scanner.report.model import Finding
from scanner.rules.provenance import finding


def analyse_launch(command: str, args: list[str] | None = None) -> LaunchAnalysis:
    """Lint a launch command (command plus args as a client config holds them): I1, then I8/I9 per package."""
    result = LaunchAnalysis()
    try:
        for segment in command_segments(command, args):
            dispatch(segment, result)
    except Unparseable as exc:
        result.findings.append(finding("I1", f"The launch command cannot be parsed as shell words: {exc}.",
                                       evidence="unparseable shell string"))
        return result
    for ref in result.packages:
        result.findings.extend(_package_findings(ref))
    return result


def package_findings(ecosystem: Literal["npm", "pypi"], name: str, spec: str) -> list[Finding]:
    """I8 and I9 for one registry package (the checks that run before anything is installed)."""
    found = [known_bad_finding(ecosystem, name, spec), typosquat_finding(ecosystem, name)]
    return [f for f in found if f is not None]


def _package_findings(ref: PackageRef) -> list[Finding]:
    out: list[Finding] = []
    if not ref.pinned:
        out.append(unpinned_finding(ref))
    if ref.ecosystem in ("npm", "pypi") and ref.source == "registry":
        out.extend(package_findings(ref.ecosystem, ref.name, ref.spec))
    return out


def unpinned_finding(ref: PackageRef) -> Finding:
    """I1 for one thing a launch fetches unpinned (also the container-image door's no-digest case)."""
    what = {
        "registry": f"{ref.ecosystem} package {ref.display} has no exact version "
                    f"({'a range or tag: ' + repr(ref.spec) if ref.spec else 'none given'})",
        "git": f"git source {ref.display} is not pinned to a full 40-character commit SHA",
        "url": f"URL source {ref.display} is fetched without a pinned digest",
        "image": f"container image {ref.display} has no @sha256: digest",
        "file": f"{ref.display} is not pinned",
    }[ref.source]
    return finding("I1", f"Unpinned launch: {what}.", evidence=ref.display)
