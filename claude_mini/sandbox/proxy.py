"""The domain proxy: the sandbox's only way to the network, one decision per host.

It listens on a Unix socket in the session's temp folder (bridge.py connects to it from inside
the sandbox) and speaks just enough HTTP proxy: `CONNECT host:port` for TLS and anything else,
and a plain request with an absolute URL (`GET http://host/path`). The host named there is
the one connected to, so what is allowed is what is reached; no DNS happens inside the sandbox.
A refused host gets `403` with a one-line reason the command prints (curl shows it).

A small asyncio proxy of our own rather than a library: it needs a Unix-socket listener, a
per-host callback that may ask the user, and nothing else (no caching, no rewriting), about
a hundred lines; the proxies on PyPI are TCP servers with their own configuration.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

log = logging.getLogger(__name__)

Decide = Callable[[str, int], Awaitable[str | None]]  # (host, port) -> None to allow, else why not
_HEAD_LIMIT = 64 * 1024
_HEAD_TIMEOUT_SECONDS = 30.0
_CONNECT_TIMEOUT_SECONDS = 15.0


class DomainProxy:
    """An HTTP proxy on a Unix socket that asks `decide` before connecting to any host."""

    def __init__(self, socket_path: str, decide: Decide) -> None:
        self.socket_path = socket_path
        self.decide = decide
        self._server: asyncio.AbstractServer | None = None
        self._relays: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Listen (once)."""
        if self._server is None:
            self._server = await asyncio.start_unix_server(self._serve, path=self.socket_path, limit=_HEAD_LIMIT)

    async def close(self) -> None:
        """Stop listening and cut the open connections."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._relays):
            task.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._relays.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            pass
        finally:
            if task is not None:
                self._relays.discard(task)
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT_SECONDS)
        method, target, rest = _request_line(head)
        tunnel = method == "CONNECT"
        host, port, head = (*_authority(target), b"") if tunnel else _absolute(method, target, rest)
        if not host:
            await _refuse(writer, 400, "claude-mini sandbox: the proxy needs CONNECT or an absolute URL")
            return
        refusal = await self.decide(host, port)
        if refusal is not None:
            log.debug("sandbox proxy refused %s:%s: %s", host, port, refusal)
            await _refuse(writer, 403, refusal)
            return
        try:
            up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), _CONNECT_TIMEOUT_SECONDS)
        except (OSError, TimeoutError) as exc:
            await _refuse(writer, 502, f"claude-mini sandbox: cannot connect to {host}:{port} ({exc})")
            return
        if tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            up_writer.write(head)
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))


def _request_line(head: bytes) -> tuple[str, str, bytes]:
    line, _, rest = head.partition(b"\r\n")
    parts = line.decode("latin-1").split()
    if len(parts) != 3:
        raise ValueError("not an HTTP request line")
    return parts[0].upper(), parts[1], rest


def _authority(target: str) -> tuple[str, int]:
    """`host:port` (or `[v6]:port`) -> (host, port); ("", 0) if it is not one."""
    host, sep, port = target.rpartition(":")
    if not sep or not port.isdigit():
        return "", 0
    return host.strip("[]").lower(), int(port)


def _absolute(method: str, target: str, rest: bytes) -> tuple[str, int, bytes]:
    """A plain request with an absolute URL -> (host, port, the request rewritten for the origin)."""
    url = urlsplit(target)
    if url.scheme != "http" or not url.hostname:
        return "", 0, b""
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    head = f"{method} {path} HTTP/1.1\r\n".encode("latin-1") + rest
    return url.hostname.lower(), url.port or 80, head


async def _refuse(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    body = (reason + "\n").encode("utf-8", "replace")
    title = {400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway"}[status]
    writer.write(
        f"HTTP/1.1 {status} {title}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1")
        + body
    )
    with contextlib.suppress(OSError):
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()
