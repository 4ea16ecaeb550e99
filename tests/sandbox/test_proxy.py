"""The domain proxy over a Unix socket: CONNECT, absolute URLs, refusals (a real local server)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from claude_mini.sandbox.proxy import DomainProxy


async def _origin() -> tuple[asyncio.AbstractServer, int]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        body = b"origin saw: " + head.split(b"\r\n")[0]
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _through(path: str, request: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(request)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return data


def test_connect_plain_and_refused(tmp_path: Path):
    async def scenario() -> None:
        origin, port = await _origin()
        seen: list[tuple[str, int]] = []

        async def decide(host: str, p: int) -> str | None:
            seen.append((host, p))
            return None if host == "127.0.0.1" else f"{host} is not allowed"

        proxy = DomainProxy(str(tmp_path / "p.sock"), decide)
        await proxy.start()
        plain = await _through(
            proxy.socket_path, f"GET http://127.0.0.1:{port}/x?y=1 HTTP/1.1\r\nHost: a\r\n\r\n".encode()
        )
        assert plain.startswith(b"HTTP/1.1 200") and b"origin saw: GET /x?y=1 HTTP/1.1" in plain
        tunnel = await _through(
            proxy.socket_path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode() + b"GET /t HTTP/1.1\r\n\r\n"
        )
        assert tunnel.startswith(b"HTTP/1.1 200 Connection established") and b"origin saw: GET /t" in tunnel
        refused = await _through(proxy.socket_path, b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
        assert refused.startswith(b"HTTP/1.1 403") and b"evil.test is not allowed" in refused
        nonsense = await _through(proxy.socket_path, b"GET /relative HTTP/1.1\r\n\r\n")
        assert nonsense.startswith(b"HTTP/1.1 400")
        assert seen == [("127.0.0.1", port), ("127.0.0.1", port), ("evil.test", 443)]
        await proxy.close()
        origin.close()

    asyncio.run(scenario())
