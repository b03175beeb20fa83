"""Connecting to the Docker engine, with every API call bounded.

Every call the client makes has a timeout (docker-py's per-request read timeout); when the engine does not answer in
time (an engine kept busy by a hostile server), the call raises EngineTimeout, an APIError, so the handlers that
already turn an engine refusal into a recorded error handle it too, instead of a raw `requests` exception reaching
the user as a traceback.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

import docker
import requests
from docker.api.client import APIClient
from docker.errors import APIError, DockerException

from sandbox.core.errors import EngineUnavailable

ENGINE_TIMEOUT_SECONDS = 120
_VERSION_PREFIX = re.compile(r"^/v\d+\.\d+")
_OBJECT_ID = re.compile(r"/[0-9a-f]{64}")


class EngineTimeout(APIError):
    """The engine did not answer one API call within the client's timeout."""


class BoundedAPIClient(APIClient):
    """docker-py's low-level client, raising EngineTimeout when a call's timeout expires."""

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        try:
            return super().request(method, url, *args, **kwargs)
        except requests.exceptions.Timeout as exc:
            waited = kwargs.get("timeout") or self.timeout
            raise EngineTimeout(f"the engine did not answer {describe_call(method, url)} within {waited:g} s") from exc


def describe_call(method: str | bytes, url: str | bytes) -> str:
    """`GET /containers/{id}/top`: the call, without the API version and object ids."""
    verb = method.decode() if isinstance(method, bytes) else method
    path = urlsplit(url.decode() if isinstance(url, bytes) else url).path
    return f"{verb.upper()} {_OBJECT_ID.sub('/{id}', _VERSION_PREFIX.sub('', path))}"


def connect(timeout: int = ENGINE_TIMEOUT_SECONDS) -> docker.DockerClient:
    """Return a client for the engine named by DOCKER_HOST (or the default socket), after checking it answers."""
    try:
        client = docker.from_env(timeout=timeout)
        bound(client)
        client.ping()
    except DockerException as exc:
        raise EngineUnavailable(
            "no Docker engine answers (" + _first_line(str(exc)) + "); start Docker, or run `make engine` on a "
            "Debian/Ubuntu host as root to install and start one"
        ) from exc
    return client


def bound(client: docker.DockerClient) -> docker.DockerClient:
    """Make the client's low-level API raise EngineTimeout on timeouts. docker.from_env builds a plain APIClient
    (with the environment's TLS and context settings); BoundedAPIClient adds no state, so the instance is re-classed
    rather than rebuilt. An engine reached through a local socket or SSH (not over TCP) is asked without `requests`'
    environment lookups (`trust_env`): its proxies and netrc cannot apply to that transport, and reading them again
    for every call cost a probing scan's 110 engine calls about 0.3 ms of CPU each."""
    if type(client.api) is APIClient:
        client.api.__class__ = BoundedAPIClient
    if not_over_tcp(client.api.base_url):
        client.api.trust_env = False
    return client


def not_over_tcp(base_url: str) -> bool:
    """Whether docker-py reaches the engine at `base_url` through its own socket adapter (a unix socket, a Windows
    named pipe or SSH: `http+docker://...`), where no HTTP proxy or netrc entry is ever used."""
    return base_url.startswith("http+docker://")


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0][:200] if text.strip() else "no detail"
