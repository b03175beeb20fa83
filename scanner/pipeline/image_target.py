"""The container-image door's target: `docker:IMAGE[:TAG|@sha256:DIGEST]`, parsed and checked before the engine is
asked anything (a bad reference is exit 2, one line).

The grammar is the engine's reference grammar, narrowed to what a scan needs: an optional registry host (with a
port), lowercase path components, then a tag or an @sha256: digest (or both: the digest pins, the tag is a label).
No tag and no digest means `latest`, as for `docker run`, and is unpinned (I1's no-digest case).
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass

from scanner.errors import UsageError

IMAGE_PREFIX = "docker:"
IMAGE_HELP = "use docker:IMAGE[:TAG] or docker:IMAGE@sha256:DIGEST (e.g. docker:mcp/time:1.0)"
_HOST = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?)"
_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_NAME = re.compile(rf"^(?:{_HOST}/)?{_COMPONENT}(?:/{_COMPONENT})*$")
_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
MAX_NAME = 255


@dataclass(frozen=True)
class ImageTarget:
    """An image as the target named it: repository, tag (None: none given) and digest (None: not pinned)."""

    requested: str  # the target exactly as given (docker:…)
    repository: str
    tag: str | None = None
    digest: str | None = None

    @property
    def pinned(self) -> bool:
        return self.digest is not None

    @property
    def reference(self) -> str:
        """What the engine is asked for: name@digest when pinned, else name:tag (latest when none was given)."""
        if self.digest is not None:
            return f"{self.repository}@{self.digest}"
        return f"{self.repository}:{self.tag or 'latest'}"

    @property
    def display(self) -> str:
        """The image as named (tag and digest as given), for I1 and the report."""
        return self.requested[len(IMAGE_PREFIX):]


def is_image_target(text: str | None) -> bool:
    return text is not None and text.strip().startswith(IMAGE_PREFIX)


def parse_image_target(text: str) -> ImageTarget:
    """`docker:IMAGE[:TAG][@sha256:DIGEST]`; raises UsageError (exit 2) naming what is wrong."""
    text = text.strip()
    spec = text[len(IMAGE_PREFIX):]
    if not spec:
        raise UsageError(f"docker: names no image; {IMAGE_HELP}")
    if any(ch.isspace() for ch in spec) or spec.startswith("-"):
        raise UsageError(f"{text!r} is not an image reference; {IMAGE_HELP}")
    name, at, digest = spec.partition("@")
    if at and not _DIGEST.match(digest):
        raise UsageError(f"image digest {digest[:80]!r} must be sha256: and 64 lowercase hex digits; {IMAGE_HELP}")
    slash = name.rfind("/")
    colon = name.rfind(":")
    tag: str | None = None
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
        if not _TAG.match(tag):
            raise UsageError(f"image tag {tag[:80]!r} is not a valid tag (letters, digits, _ . -; at most 128); "
                             f"{IMAGE_HELP}")
    if len(name) > MAX_NAME or not _NAME.match(name):
        raise UsageError(f"{name[:80]!r} is not a valid image name (lowercase path components, an optional "
                         f"registry host first); {IMAGE_HELP}")
    return ImageTarget(requested=text, repository=name, tag=tag, digest=digest or None)


def registry_host(repository: str) -> str | None:
    """The registry host an image name begins with, as the engine reads it (a first component with a dot or a
    port, or `localhost`), without its port; None: Docker Hub."""
    first, slash, _ = repository.partition("/")
    if not slash or not ("." in first or ":" in first or first == "localhost"):
        return None
    return first.rsplit(":", 1)[0] if ":" in first else first


def names_a_local_registry(repository: str) -> bool:
    """Whether the image would be pulled from this machine or its private network (loopback, private, link-local
    addresses, `localhost`): a plugin naming one would have the engine send requests there."""
    host = registry_host(repository)
    return host is not None and names_a_local_host(host)


def names_a_local_host(host: str) -> bool:
    """`localhost`, or a loopback, private, link-local or unspecified address, also in the shorthand forms the
    resolver reads (`127.1`, `2130706433`). A host name that resolves there is not caught (nothing is resolved)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(host)
    except ValueError:
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return False
    return address.is_loopback or address.is_private or address.is_link_local or address.is_unspecified
