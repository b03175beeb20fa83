"""Where a target came from, when not a package spec: the launch command it was mapped from, or the remote server
(`scan --url`) it is. Part of the report's target record (scanner/report/model.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scanner.report.base import ReportModel as _Model


class LaunchOrigin(_Model):
    """The launch command a target was mapped from (`scan -- npx -y PKG`, a pasted command, a client config entry)."""

    runner: str = Field(description="The runner the command used: npx, uvx, pipx run, python -m, …")
    package: str = Field(description="The package (or module) the command named, as it named it (redacted).")
    config_server: str | None = Field(default=None, description="The client config entry it came from "
                                      "(scan --config-file), by name.")
    notes: list[str] = Field(default_factory=list, description="What the mapping did not carry over.")


class RemoteInfo(_Model):
    """A remote Streamable HTTP server (`scan --url`): NOT sandboxed. The URL is never stored."""

    transport: Literal["streamable-http"] = "streamable-http"
    sandboxed: Literal[False] = Field(default=False, description="Always false: a remote server runs on someone "
                                      "else's machine; nothing contained or observed it.")
    scheme: Literal["http", "https"]
    host: str
    endpoint_sha256: str = Field(description="sha256 of scheme, host, port and path (newline-separated).")
    headers: list[str] = Field(default_factory=list, description="Names of the non-secret headers sent (--header).")
    secret_headers: list[str] = Field(default_factory=list, description="Names of the secret headers sent "
                                      "(--header-env); values are never stored.")
    allow_writes: bool = Field(default=False, description="Tools not annotated read-only were called too.")
    secrets_echoed: int = Field(default=0, description="Places a secret came back from the server; each was "
                                "replaced with [redacted].")
    secrets_in_definitions: bool = Field(default=False, description="A secret came back inside the served "
                                         "definitions: no lock is written from such a scan.")


class ImageInfo(_Model):
    """A container image (`scan docker:IMAGE`), run as shipped under the run policy: nothing was installed."""

    reference: str = Field(description="The image as the engine was asked for it (name:tag or name@sha256:…).")
    repository: str
    tag: str | None = None
    digest: str = Field(description="The content digest the image is pinned by: its registry digest when the engine "
                        "recorded one, else its image ID (sha256 of its configuration, naming every layer).")
    pinned: bool = Field(description="The target named an @sha256: digest; a tag alone is I1 (no digest).")
    image_id: str
    repo_digests: list[str] = Field(default_factory=list)
    pulled: bool = Field(default=False, description="Pulled for this scan (else it was on the engine already).")
    configured_user: str = Field(description="The image's USER (empty: root). Never used: the run uid replaces it.")
    working_dir: str = Field(default="", description="The image's WORKDIR, the server's working directory (empty: "
                             "the sandbox workspace).")
    env_names: list[str] = Field(default_factory=list, description="The image's own environment variables, passed "
                                 "by name (values are not recorded); HOME stays the sandbox's.")
    command: list[str] = Field(description="The server command: ENTRYPOINT, then the arguments given (else CMD).")
    needs_root: str | None = Field(default=None, description="Set when the image runs as root by default and its "
                                   "server ended before answering as the run uid: it appears to need root.")
    unavailable: list[str] = Field(default_factory=list, description="Observations this image cannot support: the "
                                   "programs the sandbox's looks run inside it (sh, tar, GNU find) that it lacks, and "
                                   "the paths where the sandbox mounts its tmpfs that it has as a link or a file.")
    looks_trusted: Literal[False] = Field(default=False, description="Always false: the file, canary-read and process "
                                          "looks into the sandbox run the image's own sh, tar, find and python3 (under "
                                          "its environment), so an image built to deceive can hide from them what its "
                                          "server wrote, read or started. The egress sink and the canary search of "
                                          "every response run outside the image and still hold.")
