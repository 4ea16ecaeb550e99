"""WebFetch's HTTP: one GET in claude-mini's own process, with the checks a model-chosen URL needs.

    addresses      every address a host resolves to is checked; loopback, private, link-local and
                   other special ranges are refused unless a rule names the host (`reachable_private`).
                   The check runs again at connect time, on the address really connected to, so a
                   name that resolves differently the second time (DNS rebinding) gains nothing
    redirects      followed on the same host (`www.` added or dropped counts as the same); one to
                   another host is returned, not followed, so the model asks again and the
                   permission rules see the new host
    size           the body is read as a stream and cut at MAX_BYTES (after decompression)
    time           10 s to connect, 30 s between bytes, TOTAL_SECONDS for the whole fetch

httpx2 rather than `httpx`: it is the HTTP client the anthropic SDK already brings (a fork of httpx
with the same API), so the fetch adds no second HTTP stack; its transport takes httpcore2's network
backend, where the address check lives. Proxy variables are not honoured (`trust_env=False`): a
proxy would resolve the name itself, out of reach of the address check.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

MAX_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 10
TOTAL_SECONDS = 60.0
USER_AGENT = "claude-mini-WebFetch/1 (+https://github.com/anthropics/claude-code compatible)"


class FetchError(Exception):
    """The fetch failed; the message is one line saying what happened and what to do."""


@dataclass
class Page:
    """What one fetch brought back. `redirect`: another host's URL the server sent us to (not followed)."""

    url: str
    status: int = 0
    reason: str = ""
    content_type: str = ""
    charset: str | None = None
    body: bytes = b""
    truncated: bool = False
    redirect: str | None = None


def special_range(address: str) -> str | None:
    """Why `address` is not an ordinary public one ("loopback", "private", ...), else None."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "unparsable"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    for name, hit in (
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("private", ip.is_private),
        ("unspecified", ip.is_unspecified),
        ("multicast", ip.is_multicast),
        ("reserved", ip.is_reserved),
    ):
        if hit:
            return name
    return None


async def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to (an IP literal is itself); FetchError when it does not resolve."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FetchError(f"{host} does not resolve ({exc.strerror})") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def refusal(host: str, addresses: Iterable[str], reachable_private: Callable[[str], bool]) -> str | None:
    """Why a fetch of `host` at `addresses` is refused (a special range no rule names), else None."""
    for address in addresses:
        kind = special_range(address)
        if kind is not None and not reachable_private(host):
            return (
                f"{host} is a {kind} address ({address}); WebFetch reaches such an address only when a "
                f"rule names the host: add WebFetch(domain:{host}) to permissions.allow"
            )
    return None


def same_site(a: str, b: str) -> bool:
    """Whether two URLs are on one host (`www.` added or dropped counts as the same)."""
    first, second = (urlsplit(u).hostname or "" for u in (a, b))
    return first.removeprefix("www.") == second.removeprefix("www.")


async def fetch(url: str, reachable_private: Callable[[str], bool], *, max_bytes: int = MAX_BYTES) -> Page:
    """GET `url` (following same-host redirects), the body cut at `max_bytes`; FetchError on failure."""
    import httpx2  # lazy: only a session that fetches pays for it

    from claude_mini.tools.web_backend import checked_transport  # startup: imports httpx2 and httpcore2

    transport = checked_transport(reachable_private)
    timeout = httpx2.Timeout(30.0, connect=10.0)
    headers = {"User-Agent": USER_AGENT, "Accept": "text/html, text/markdown, text/plain, */*;q=0.5"}
    try:
        async with (
            asyncio.timeout(TOTAL_SECONDS),
            httpx2.AsyncClient(transport=transport, timeout=timeout, headers=headers, trust_env=False) as client,
        ):
            return await _follow(client, url, max_bytes)
    except TimeoutError:
        raise FetchError(f"no complete answer within {TOTAL_SECONDS:.0f} s") from None
    except httpx2.HTTPError as exc:
        raise FetchError(_describe(exc)) from None


async def _follow(client: Any, url: str, max_bytes: int) -> Page:
    for _ in range(MAX_REDIRECTS + 1):
        async with client.stream("GET", url) as response:
            if response.is_redirect and "location" in response.headers:
                target = urljoin(url, response.headers["location"])
                if urlsplit(target).scheme not in ("http", "https"):
                    raise FetchError(f"the server redirected to {target}, which is not a web address")
                if not same_site(url, target):
                    return Page(url, response.status_code, response.reason_phrase, redirect=target)
                url = target
                continue
            return await _read(response, url, max_bytes)
    raise FetchError(f"more than {MAX_REDIRECTS} redirects")


async def _read(response: Any, url: str, max_bytes: int) -> Page:
    page = Page(url, response.status_code, response.reason_phrase)
    page.content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    page.charset = response.charset_encoding
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            page.truncated = True
            break
    page.body = b"".join(chunks)[:max_bytes]
    return page


def _describe(exc: Exception) -> str:
    """An httpx2 error as the part of a line after "could not fetch URL: "."""
    import httpx2

    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx2.ConnectTimeout):
        return "the connection timed out"
    if isinstance(exc, httpx2.TimeoutException):
        return "the server stopped sending"
    if isinstance(exc, httpx2.ConnectError):
        return f"could not connect ({text})"
    return text
