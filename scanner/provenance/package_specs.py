"""What a launch command would fetch: a package reference, parsed from an npm install spec, a PyPI requirement or a
container image, and whether it is pinned (exact version, full commit SHA, digest). Displays carry no secrets."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement

from scanner.provenance.redact import without_secrets
from scanner.ecosystems.registry import ecosystem as ecosystem_named

RefEcosystem = Literal["npm", "pypi", "oci"]
RefSource = Literal["registry", "git", "url", "file", "image"]

_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
_IMAGE_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


@dataclass(frozen=True)
class PackageRef:
    """One thing a launch command would fetch and run."""

    ecosystem: RefEcosystem
    name: str
    spec: str = ""  # version spec, git ref, or image tag/digest; "" when none was given
    source: RefSource = "registry"
    display: str = ""  # safe to print: no user info, no query string
    pinned: bool = False


def parse_npm_spec(text: str) -> PackageRef:
    """An npm install spec: name[@range|@tag], npm:name, an alias (alias@npm:name[@range]: the package is `name`),
    git (github:, git+…, user/repo), URL or local path."""
    text = text.strip()
    if text.startswith("npm:"):
        text = text[4:]
    if text.startswith(("file:", "./", "../", "/", "~/", "link:")) or text.endswith((".tgz", ".tar.gz")) \
            and not text.startswith(("http://", "https://")):
        return PackageRef("npm", text, source="file", display=text, pinned=True)
    if text.startswith(("git+", "git://", "github:", "gitlab:", "bitbucket:", "gist:")) or \
            re.fullmatch(r"[\w.-]+/[\w.-]+(#.*)?", text):
        ref = text.partition("#")[2]
        ref = ref.removeprefix("commit=")
        return PackageRef("npm", text.partition("#")[0], ref, "git", without_secrets(text),
                          bool(_FULL_SHA.match(ref.lower())))
    if text.startswith(("http://", "https://")):
        return PackageRef("npm", text, source="url", display=without_secrets(text), pinned=False)
    at = text.find("@", 1)
    name, spec = (text[:at], text[at + 1:]) if at > 0 else (text, "")
    if spec.startswith("npm:"):  # an alias, `name@npm:real[@version]`: npm installs (and npx runs) `real`
        real = parse_npm_spec(spec)
        return PackageRef("npm", real.name, real.spec, real.source, f"{name}@npm:{real.display}", real.pinned)
    return PackageRef("npm", name, spec, "registry", f"{name}@{spec}" if spec else name,
                      ecosystem_named("npm").exact_version(spec) is not None)


def parse_pypi_spec(text: str, *, uvx_style: bool = False) -> PackageRef:
    """A PyPI requirement: name[extras]<specifier>, uvx's name@version, git+URL@ref, URL or local path."""
    text = text.strip()
    direct = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*@\s*(\S+://\S+)$", text)
    if direct:  # PEP 508 direct reference: name @ url
        text = direct.group(3)
    if text.startswith("git+"):
        ref = re.sub(r"#.*$", "", text).rpartition("@")[2] if "@" in text.split("://", 1)[-1] else ""
        ref = "" if "/" in ref or ":" in ref else ref
        return PackageRef("pypi", re.sub(r"[@#].*$", "", without_secrets(text)), ref, "git", without_secrets(text),
                          bool(_FULL_SHA.match(ref.lower())))
    if re.match(r"^[a-z][a-z0-9+.-]*://", text, re.I):
        return PackageRef("pypi", without_secrets(text), "", "url", without_secrets(text),
                          "#sha256=" in text or "&sha256=" in text)
    if text.startswith(("./", "../", "/", "~/", ".")) or text.endswith((".whl", ".tar.gz", ".zip")):
        return PackageRef("pypi", text, source="file", display=text, pinned=True)
    if uvx_style and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?@[^@\s]+", text):
        name, _, version = text.partition("@")
        name = name.partition("[")[0]
        spec = "latest" if version == "latest" else f"=={version}"
        return PackageRef("pypi", name, spec, "registry", text, ecosystem_named("pypi").exact_version(spec) is not None)
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return PackageRef("pypi", text, "", "registry", text, False)
    if req.url:  # `name @ something` that is no URL (`pkg@1.0` to pip): a direct reference, not a registry release
        return PackageRef("pypi", req.name, "", "url", without_secrets(text), False)
    spec = str(req.specifier)
    return PackageRef("pypi", req.name, spec, "registry", text, ecosystem_named("pypi").exact_version(spec) is not None)


def image_ref(image: str) -> PackageRef:
    """A container image named on a `docker run` line: pinned only by an @sha256: digest."""
    return PackageRef("oci", image, image.partition("@")[2], "image", image, bool(_IMAGE_DIGEST.search(image)))
