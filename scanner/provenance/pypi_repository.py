"""PyPI (I4): the repository of the Trusted Publisher a verified PEP 740 attestation names, compared with the
repository the project declares in the release's metadata (the JSON API's `info.project_urls` and `info.home_page`).

A valid attestation says who published, not that it was the project's own repository: a project taken over and
published from the attacker's fork carries one as valid as the real one's. npm holds the build certificate to the
package's declared repository (sigstore_identity.SourceRepositoryPolicy); this asks the same of PyPI's publisher.

Which declared URLs count: the values of the project-URL labels that name the source — PyPI's label normalisation
(lower case, punctuation and spaces removed) equal to one of `SOURCE_LABELS` or starting with `source`/`repository`
— and the legacy Home-page field, when they point into a repository on github.com or gitlab.com (the hosts PyPI's
GitHub and GitLab Trusted Publishers publish from). The publisher matches when its repository is any one of them
(a project may name its source under several labels, and a homepage may be another repository of the same owner).
Issue trackers, documentation, changelogs and funding links are not read: they often point elsewhere, and a
mismatch with one of them says nothing. No declared github.com/gitlab.com repository is `unavailable`, never a pass.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import SplitResult, urlsplit

from scanner.provenance.model import Check, Outcome
from scanner.provenance.pep740 import Pep740Result

SOURCE_LABELS = frozenset({"source", "sources", "sourcecode", "repository", "repo", "code", "github", "gitlab", "git",
                           "homepage", "home", "scm", "vcs"})
HOSTS = ("github.com", "gitlab.com")
MAX_DECLARED = 50  # project URLs read per release
MAX_QUOTED = 3  # declared repositories named in the evidence
_NAME = re.compile(r"^[\w.-]{1,100}$", re.ASCII)
_SCP_LIKE = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>(?!//)\S+)$", re.ASCII)
# github.com/<first>/… that is no repository (sponsors/owner, orgs/name/…).
_GITHUB_NOT_OWNERS = frozenset({"sponsors", "orgs", "users", "apps", "marketplace", "topics", "features", "settings"})
# gitlab.com/group/project/<segment>/…: the project path ends before these (GitLab's own `/-/` and the older forms).
_GITLAB_SUBPAGES = frozenset({"-", "tree", "blob", "raw", "issues", "merge_requests", "wikis", "releases", "tags",
                              "commits", "pipelines"})


def repository_of(url: str) -> str | None:
    """`github.com/owner/repo` or `gitlab.com/group[/subgroup…]/project`, lower case, for a URL into a repository on
    github.com or gitlab.com (any scheme of http/https/git/ssh, `git+`, scp-like `git@host:path`, `www.`, a port,
    `.git`, a trailing `/`, tree/blob/issue paths, query and fragment ignored); None for anything else."""
    text = url.strip().removeprefix("git+")
    scp = _SCP_LIKE.match(text) if "://" not in text else None
    if scp:
        host, path = scp["host"], scp["path"]
    else:
        parts = _split(text)
        if parts is None or parts.scheme.lower() not in ("https", "http", "git", "ssh") or not parts.hostname:
            return None
        host, path = parts.hostname, parts.path
    host = host.lower().removeprefix("www.")
    segments = [s for s in path.split("/") if s]
    if host == "github.com":
        segments = segments[:2] if segments and segments[0].lower() not in _GITHUB_NOT_OWNERS else []
    elif host == "gitlab.com":
        end = next((i for i, s in enumerate(segments) if i >= 2 and s.lower() in _GITLAB_SUBPAGES), len(segments))
        segments = segments[:end]
    else:
        return None
    if segments:
        segments[-1] = segments[-1].removesuffix(".git")
    if len(segments) < 2 or not all(_NAME.match(s) and s.strip(".") for s in segments):
        return None
    return f"{host}/{'/'.join(segments)}".lower()


def source_label(label: str) -> bool:
    """Whether a project-URL label names the source (compared as PyPI normalises labels)."""
    normalised = "".join(c for c in label if c.isalnum()).lower()
    return normalised in SOURCE_LABELS or normalised.startswith(("source", "repository"))


def declared_urls(info: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(label, URL) of every source-like project URL and the Home-page field, in the metadata's order."""
    urls = info.get("project_urls")
    pairs = [(str(k), v) for k, v in urls.items() if isinstance(v, str)] if isinstance(urls, dict) else []
    home = info.get("home_page")
    if isinstance(home, str):
        pairs.append(("Home-page", home))
    return [(label, url) for label, url in pairs[:MAX_DECLARED] if source_label(label)]


def publisher_repository_check(info: Mapping[str, Any] | None, attested: Pep740Result) -> Check:
    """I4 `publisher-repository`: the verified Trusted Publisher's repository is one the project declares."""
    if attested.check.outcome == "absent":
        return _check("absent", "no PEP 740 provenance was published, so no Trusted Publisher repository to compare")
    publisher = attested.publisher if attested.check.outcome == "verified" else None
    if publisher is None:
        return _check("unavailable", f"the PEP 740 provenance was not verified ({attested.check.outcome}), so no "
                                     "Trusted Publisher repository was compared with the project's")
    published = [(url, repository_of(url)) for url in publisher.repositories]
    if not published:
        return _check("unavailable", f"the Trusted Publisher ({publisher.identity}) names no GitHub or GitLab "
                                     "repository to compare with the project's")
    if not info:
        return _check("unavailable", "the JSON API carries no metadata (project_urls) for this release")
    declared = {repo: label for label, url in declared_urls(info) if (repo := repository_of(url))}
    if not declared:
        return _check("unavailable", f"the project declares no github.com or gitlab.com source repository (project "
                                     f"URL Source, Repository, Code, Homepage… or Home-page), so the publisher's "
                                     f"{published[0][0]} cannot be tied to one{_other_hosts(info)}")
    named = ", ".join(f"{label[:60]}: {repo}" for repo, label in list(declared.items())[:MAX_QUOTED])
    stranger = next((url for url, repo in published if repo not in declared), None)
    if stranger is not None:
        return _check("failed", f"published by Trusted Publisher {publisher.identity} from {stranger}, but the "
                                f"project declares its repository as {named} (a fork or another project's "
                                "repository; a repository renamed or transferred since the metadata was written "
                                "reads the same)")
    return _check("verified", f"the Trusted Publisher's repository {', '.join(u for u, _ in published)} is the one "
                              f"the project declares ({named})")


def _other_hosts(info: Mapping[str, Any]) -> str:
    """`; it names <host>…` for declared source URLs on other hosts (a repository this check cannot compare)."""
    hosts = sorted({h for _, url in declared_urls(info) if (parts := _split(url.strip())) is not None
                    and (h := parts.hostname or "") and h.removeprefix("www.") not in HOSTS})
    return f"; its source URLs are on {', '.join(h[:80] for h in hosts[:MAX_QUOTED])}" if hosts else ""


def _split(url: str) -> SplitResult | None:
    try:
        return urlsplit(url)
    except ValueError:  # e.g. an unclosed `[` IPv6 literal
        return None


def _check(outcome: Outcome, evidence: str) -> Check:
    return Check(name="publisher-repository", outcome=outcome, rule_id="I4", evidence=evidence)
