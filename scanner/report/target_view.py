"""The terminal's rows for where a target came from: the launch command it was mapped from, the remote server it
is (NOT sandboxed), or the container image it is (its digest, the user it was configured for, whether it appears to
need root, the observations it could not support)."""

from __future__ import annotations

from scanner.report.model import TargetInfo
from scanner.report.target_origin import ImageInfo


# ImageInfo.looks_trusted, said where a finding's absence would be read.
LOOKS = ("run by the image's own sh, tar, find and python3: an image built to deceive can hide its server's writes, "
         "canary reads and processes from them (the egress sink and the canary search of responses are the "
         "sandbox's own)")


def origin_rows(target: TargetInfo) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    if target.launch is not None:
        rows.append(("mapped from", f"{target.launch.runner} {target.launch.package}"
                     + "".join(f"\n{note}" for note in target.launch.notes)))
    if target.remote is not None:
        rows.append(("sandboxed", "NO: a remote server, nothing contained or observed it"))
        rows.append(("endpoint", f"sha256 {target.remote.endpoint_sha256[:16]}… (the URL is not shown)"))
    if target.image is not None:
        rows += image_rows(target.image)
    return rows


def image_rows(image: ImageInfo) -> list[tuple[str, str]]:
    rows = [("digest", image.digest + ("" if image.pinned else " (not pinned: the target names a tag)")),
            ("image user", f"{image.configured_user or 'root (no USER)'}; run as the sandbox's user instead")]
    rows += [("needs root", image.needs_root)] if image.needs_root else []
    rows.append(("looks", LOOKS))
    rows += [("not observed" if at == 0 else "", line) for at, line in enumerate(image.unavailable)]
    return rows
