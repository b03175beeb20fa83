"""What a Sigstore (Fulcio) signing certificate says about who built an artifact, and the policy that holds it to the
package's declared source repository.

Fulcio writes the CI identity into X.509 extensions under 1.3.6.1.4.1.57264.1 (DER UTF8Strings): the OIDC issuer,
the source repository URI, the commit and the build configuration (workflow file @ ref). `sigstore` verifies the
certificate chain, the transparency log entry and the signature; this module adds the question that matters before
an install: was it built from the repository the package names?
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from cryptography.hazmat import asn1
from cryptography.x509 import Certificate, ExtensionNotFound, ObjectIdentifier, UnrecognizedExtension
from sigstore.errors import VerificationError

OID_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")
OID_SOURCE_REPOSITORY_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.12")
OID_SOURCE_REPOSITORY_DIGEST = ObjectIdentifier("1.3.6.1.4.1.57264.1.13")
OID_BUILD_CONFIG_URI = ObjectIdentifier("1.3.6.1.4.1.57264.1.18")
# The CI providers whose OIDC tokens npm accepts for provenance (GitHub Actions, GitLab CI/CD).
CI_ISSUERS = {"https://token.actions.githubusercontent.com": "GitHub Actions", "https://gitlab.com": "GitLab CI"}
MAX_VALUE_CHARS = 400

_SCP_LIKE = re.compile(r"^(?:[\w.-]+@)?(?P<host>[\w.-]+):(?P<path>(?!//)[^\s]+)$")
_SHORTHAND = re.compile(r"^(?:(?P<provider>github|gitlab|bitbucket):)?(?P<path>[\w.-]+/[\w.-]+)$")
_SHORTHAND_HOSTS = {"github": "github.com", "gitlab": "gitlab.com", "bitbucket": "bitbucket.org"}


@dataclass(frozen=True)
class BuildIdentity:
    """The CI identity in a verified signing certificate (each value capped; None when the extension is absent)."""

    issuer: str | None
    source_repository: str | None
    commit: str | None
    workflow: str | None

    @property
    def provider(self) -> str:
        return CI_ISSUERS.get(self.issuer or "", self.issuer or "unknown issuer")


def extension_text(cert: Certificate, oid: ObjectIdentifier) -> str | None:
    """A Fulcio v2 extension's UTF8String value, or None when the certificate lacks it."""
    try:
        value = cert.extensions.get_extension_for_oid(oid).value
    except ExtensionNotFound:
        return None
    if not isinstance(value, UnrecognizedExtension):
        return None
    try:
        text = asn1.decode_der(str, value.value)
    except ValueError:
        return None
    return text[:MAX_VALUE_CHARS]


def build_identity(cert: Certificate) -> BuildIdentity:
    return BuildIdentity(issuer=extension_text(cert, OID_ISSUER_V2),
                         source_repository=extension_text(cert, OID_SOURCE_REPOSITORY_URI),
                         commit=extension_text(cert, OID_SOURCE_REPOSITORY_DIGEST),
                         workflow=extension_text(cert, OID_BUILD_CONFIG_URI))


def normalise_repository(declared: str) -> str | None:
    """A package's repository field as `https://host/owner/name` (lower-case, no `git+`, `.git` or trailing slash),
    or None when it is not a recognisable repository URL. Accepts npm's shorthands (`owner/name`, `github:owner/name`)
    and scp-like `git@host:owner/name`."""
    text = declared.strip()
    shorthand = _SHORTHAND.match(text)
    if shorthand:
        host = _SHORTHAND_HOSTS[shorthand["provider"] or "github"]
        return _joined(host, shorthand["path"])
    scp = _SCP_LIKE.match(text)
    if scp and "://" not in text:
        return _joined(scp["host"], scp["path"])
    text = text.removeprefix("git+")
    parts = urlsplit(text)
    if parts.scheme not in ("https", "http", "git", "ssh") or not parts.hostname:
        return None
    return _joined(parts.hostname, parts.path)


def _joined(host: str, path: str) -> str | None:
    path = path.strip("/").removesuffix(".git").strip("/")
    if not path:
        return None
    return f"https://{host.lower()}/{path.lower()}"


class SourceRepositoryPolicy:
    """A sigstore VerificationPolicy: the certificate was issued to a CI workflow (GitHub Actions or GitLab CI) of
    the package's declared source repository."""

    def __init__(self, declared_repository: str) -> None:
        self.declared = declared_repository
        self.expected = normalise_repository(declared_repository)

    def verify(self, cert: Certificate) -> None:
        identity = build_identity(cert)
        if identity.issuer not in CI_ISSUERS:
            raise VerificationError(f"the signing certificate was issued to {identity.issuer or 'no OIDC issuer'}, "
                                    "not to a CI provider npm accepts for provenance")
        built_from = normalise_repository(identity.source_repository or "")
        if self.expected is None:
            raise VerificationError(f"the package's repository {self.declared[:200]!r} is not a repository URL, so "
                                    f"the build in {identity.source_repository} cannot be tied to it")
        if built_from != self.expected:
            raise VerificationError(f"built from {identity.source_repository}, but the package declares its "
                                    f"repository as {self.declared[:200]}")
