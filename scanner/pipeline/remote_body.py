"""A bound on every response body a remote server sends (`scan --url`): the SDK's transport reads a JSON answer whole
(`aread`) and an SSE stream line by line, so a hostile server's endless body or endless SSE line would grow in memory
until the request's timeout, gigabytes on a fast link. Each response's stream is cut at MAX_RESPONSE_BYTES with a
ReadError (an HTTP error: the request fails as a closed connection does). Bodies are asked for uncompressed and a
Content-Encoding is not decoded (a server compressing against `Accept-Encoding: identity` is unreadable), so a
compressed bomb cannot expand past the bound either."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import httpx2

MAX_RESPONSE_BYTES = 32 * 1024 * 1024
IDENTITY = {"Accept-Encoding": "identity"}


class CappedStream(httpx2.AsyncByteStream):
    """A response body that ends in a ReadError once it passed `limit` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self.inner = inner
        self.limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        read = 0
        async for chunk in self.inner:
            read += len(chunk)
            if read > self.limit:
                raise httpx2.ReadError(f"the response body passed {self.limit} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


def capper(limit: int = MAX_RESPONSE_BYTES) -> Callable[[httpx2.Response], Awaitable[None]]:
    """A response event hook that bounds the body (and leaves it undecoded)."""
    async def cap(response: httpx2.Response) -> None:
        response.headers.pop("content-encoding", None)
        response.stream = CappedStream(response.stream, limit)  # type: ignore[arg-type]

    return cap
