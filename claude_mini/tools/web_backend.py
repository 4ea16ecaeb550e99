"""The network backend under WebFetch's HTTP client: every connection's address is checked.

Imported only when a fetch happens (it imports httpx2 and httpcore2); web_http.py says why the
check sits here, at connect time.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Callable, Iterable
from typing import Any

import certifi
import httpcore2
import httpx2

from claude_mini.tools.web_http import FetchError, refusal, resolve


class CheckedBackend(httpcore2.AsyncNetworkBackend):
    """Connects only to the addresses `refusal` lets through, to the very address it checked."""

    def __init__(self, reachable_private: Callable[[str], bool]) -> None:
        self._inner = httpcore2.AnyIOBackend()
        self._reachable_private = reachable_private

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        """Resolve `host`, refuse a special range no rule names, connect to a checked address."""
        try:
            addresses = await resolve(host, port)
        except FetchError as exc:
            raise httpcore2.ConnectError(str(exc)) from None
        why = refusal(host, addresses, self._reachable_private)
        if why is not None:
            raise httpcore2.ConnectError(why)
        last: Exception = httpcore2.ConnectError(f"{host} has no address")
        for address in addresses:  # the checked addresses themselves: no second lookup
            try:
                return await self._inner.connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                last = exc
        raise last

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.AsyncNetworkStream:
        """Never: a URL names a host."""
        raise httpcore2.ConnectError("WebFetch does not use Unix sockets")

    async def sleep(self, seconds: float) -> None:
        """As the default backend sleeps."""
        await self._inner.sleep(seconds)


@functools.cache
def _tls() -> ssl.SSLContext:
    """certifi's roots, loaded once per process (about 0.15 s each time otherwise)."""
    return ssl.create_default_context(cafile=certifi.where())


def checked_transport(reachable_private: Callable[[str], bool]) -> httpx2.AsyncHTTPTransport:
    """An httpx2 transport whose connections go through `CheckedBackend`, proxies ignored."""
    transport = httpx2.AsyncHTTPTransport(verify=_tls(), trust_env=False)
    # The transport takes no network backend; its pool does. It is built the way the transport builds
    # it (the same TLS context, HTTP/1.1), with the checked backend.
    transport._pool = httpcore2.AsyncConnectionPool(
        ssl_context=_tls(), network_backend=CheckedBackend(reachable_private)
    )
    return transport
