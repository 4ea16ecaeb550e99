"""ServerConnection and McpManager against the demo server (tests/mcp_servers/demo_server.py),
over stdio and streamable HTTP: connect, list, call, errors, timeouts, cancellation, crashes,
reconnect, close."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from claude_mini.base.notices import NoticeChannel
from claude_mini.mcp_servers.client import MAX_RESULT_CHARS, McpError, McpManager, ServerConnection
from claude_mini.mcp_servers.config import ServerSpec
from tests.processes import alive

DEMO = str(Path(__file__).with_name("demo_server.py"))
T = TypeVar("T")


def Spec(name: str, transport: str = "stdio", **fields: Any) -> ServerSpec:  # noqa: N802
    return ServerSpec(name, transport, **fields)


def stdio_spec(name: str = "demo", **env: str) -> ServerSpec:
    return Spec(name, command=sys.executable, args=(DEMO,), env=env)


def run(coro: Awaitable[T]) -> T:
    return asyncio.run(coro)  # type: ignore[arg-type]


async def until(check: Callable[[], bool], seconds: float = 15.0) -> None:
    """Wait (polling) until `check()` holds; fail after `seconds`."""
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out waiting"
        await asyncio.sleep(0.02)


async def connected(spec: ServerSpec, notices: NoticeChannel | None = None, **kw: Any) -> ServerConnection:
    connection = ServerConnection(spec, notices=notices or NoticeChannel(), **kw)
    connection.start()
    await connection.wait_ready()
    return connection


@contextlib.asynccontextmanager
async def opened(spec: ServerSpec, notices: NoticeChannel | None = None, **kw: Any) -> AsyncIterator[ServerConnection]:
    """`connected`, closed when the block ends however it ends."""
    connection = await connected(spec, notices, **kw)
    try:
        yield connection
    finally:
        await connection.close()


async def number(connection: ServerConnection, tool: str) -> int:
    """What `pid` or `spawn` answered."""
    structured = (await connection.call(tool, {}, timeout=10)).structured
    assert isinstance(structured, dict)
    return int(structured["result"])


def failures(notices: NoticeChannel) -> list[str]:
    return [n.text for n in notices.said() if " failed: " in n.text]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_http_server(flag: str = "--http") -> tuple[subprocess.Popen[bytes], str]:
    """The demo server over streamable HTTP (or SSE, `--sse`) on a free port, and its URL."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, DEMO, flag, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc, f"http://127.0.0.1:{port}/{'sse' if flag == '--sse' else 'mcp'}"
        except OSError:
            assert proc.poll() is None and time.monotonic() < deadline, "the HTTP demo server did not start"
            time.sleep(0.05)


@pytest.fixture
def http_url() -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    proc, url = start_http_server()
    yield proc, url
    proc.kill()
    proc.wait()


def test_a_stdio_server_connects_lists_its_tools_and_answers_calls() -> None:
    async def go() -> None:
        async with opened(stdio_spec()) as connection:
            assert connection.status == "connected" and connection.error == ""
            tools = {t.name: t for t in connection.tools}
            assert {"echo", "add", "fail", "slow", "big", "pid", "spawn"} <= set(tools)
            assert tools["echo"].annotations == {"readOnlyHint": True}
            assert tools["echo"].input_schema["properties"]["text"]["type"] == "string"
            assert tools["echo"].description == "Say the text back."
            echo = await connection.call("echo", {"text": "hi"}, timeout=10)
            assert echo.content == [{"type": "text", "text": "hi"}] and not echo.is_error
            added = await connection.call("add", {"a": 1, "b": 2}, timeout=10)
            assert added.structured == {"sum": 3.0}
        assert connection.status == "closed"

    run(go())


def test_an_http_server_connects_and_answers_calls(http_url: tuple[subprocess.Popen[bytes], str]) -> None:
    async def go() -> None:
        async with opened(Spec("web", "http", url=http_url[1], headers={"X-Token": "t"})) as connection:
            assert connection.status == "connected", connection.error
            assert "echo" in {t.name for t in connection.tools}
            assert (await connection.call("add", {"a": 2, "b": 3}, timeout=10)).structured == {"sum": 5.0}
            failed = await connection.call("fail", {}, timeout=10)
            assert failed.is_error

    run(go())


def test_an_sse_server_connects_and_answers_calls() -> None:
    proc, url = start_http_server("--sse")

    async def go() -> None:
        async with opened(Spec("old", "sse", url=url)) as connection:
            assert connection.status == "connected", connection.error
            assert (await connection.call("echo", {"text": "sse"}, timeout=10)).content[0]["text"] == "sse"

    try:
        run(go())
    finally:
        proc.kill()
        proc.wait()


def test_an_http_server_that_cannot_be_reached_fails_in_one_line() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp?token=secret"

    async def go() -> None:
        notices = NoticeChannel()
        connection = await connected(Spec("web", "http", url=url), notices)
        assert connection.status == "failed"
        assert connection.error.startswith(f"cannot reach {url.split('?')[0]}: ")
        assert "secret" not in connection.error and len(failures(notices)) == 1
        await connection.close()

    run(go())


def test_calls_from_several_tasks_run_at_once_on_one_connection(tmp_path: Path) -> None:
    markers = [tmp_path / "one", tmp_path / "two"]

    async def go() -> None:
        async with opened(stdio_spec()) as connection:
            calls = [
                asyncio.create_task(connection.call("slow", {"seconds": 60, "marker": str(m)}, timeout=120))
                for m in markers
            ]
            await until(lambda: all(m.exists() for m in markers))  # both running on the server
            assert (await connection.call("echo", {"text": "meanwhile"}, timeout=10)).content[0]["text"] == "meanwhile"
            for call in calls:
                call.cancel()
            await asyncio.gather(*calls, return_exceptions=True)

    run(go())


def test_an_is_error_result_is_an_error_outcome_not_an_exception() -> None:
    async def go() -> None:
        async with opened(stdio_spec()) as connection:
            outcome = await connection.call("fail", {}, timeout=10)
            assert outcome.is_error
            assert "the demo tool failed on purpose" in outcome.content[0]["text"]
            assert connection.status == "connected"

    run(go())


def test_a_call_that_times_out_is_one_line_and_is_cancelled_on_the_server(tmp_path: Path) -> None:
    marker = tmp_path / "marker"

    async def go() -> None:
        async with opened(stdio_spec()) as connection:
            with pytest.raises(McpError) as caught:
                await connection.call("slow", {"seconds": 60, "marker": str(marker)}, timeout=0.5)
            assert str(caught.value) == "MCP server demo tool slow timed out after 0.5 s"
            await until(lambda: marker.exists() and marker.read_text() == "cancelled")
            assert (await connection.call("echo", {"text": "still here"}, timeout=10)).content[0][
                "text"
            ] == "still here"

    run(go())


def test_cancelling_the_caller_cancels_the_call_and_the_session_stays_usable(tmp_path: Path) -> None:
    marker = tmp_path / "marker"

    async def go() -> None:
        async with opened(stdio_spec()) as connection:
            call = asyncio.create_task(connection.call("slow", {"seconds": 60, "marker": str(marker)}, timeout=120))
            await until(lambda: marker.exists())  # the server is running it
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call
            await until(lambda: marker.read_text() == "cancelled")
            assert connection.status == "connected"
            assert (await connection.call("echo", {"text": "next"}, timeout=10)).content[0]["text"] == "next"

    run(go())


def test_a_killed_server_gives_one_notice_fails_later_calls_and_reconnects() -> None:
    async def go() -> None:
        notices = NoticeChannel()
        async with opened(stdio_spec(), notices) as connection:
            pid = await number(connection, "pid")
            os.kill(pid, signal.SIGKILL)
            await until(lambda: connection.status == "failed")
            assert connection.error == "the server closed the connection"
            with pytest.raises(McpError) as caught:
                await connection.call("echo", {"text": "x"}, timeout=10)
            assert "/mcp reconnect demo" in str(caught.value)
            assert failures(notices) == [
                "MCP server demo failed: the server closed the connection; the session "
                "goes on without its tools (/mcp shows it)"
            ]
            await connection.reconnect()
            assert connection.status == "connected" and connection.error == ""
            assert (await connection.call("echo", {"text": "back"}, timeout=10)).content[0]["text"] == "back"
            assert len(failures(notices)) == 1

    run(go())


def test_a_call_in_flight_when_the_server_dies_fails_with_one_notice() -> None:
    async def go() -> None:
        notices = NoticeChannel()
        async with opened(stdio_spec(), notices) as connection:
            pid = await number(connection, "pid")
            calls = [asyncio.create_task(connection.call("slow", {"seconds": 60}, timeout=120)) for _ in range(3)]
            await asyncio.sleep(0.2)  # the requests are written
            os.kill(pid, signal.SIGKILL)
            results = await asyncio.gather(*calls, return_exceptions=True)
            assert all(isinstance(r, McpError) and "/mcp reconnect demo" in str(r) for r in results), results
            assert connection.status == "failed"
            assert len(failures(notices)) == 1

    run(go())


def test_an_http_server_that_goes_away_fails_with_one_notice(http_url: tuple[subprocess.Popen[bytes], str]) -> None:
    proc, url = http_url

    async def go() -> None:
        notices = NoticeChannel()
        async with opened(Spec("web", "http", url=url), notices) as connection:
            proc.kill()
            proc.wait()
            with pytest.raises(McpError):
                await connection.call("echo", {"text": "x"}, timeout=10)
            await until(lambda: connection.status == "failed")
            assert len(failures(notices)) == 1 and "Traceback" not in failures(notices)[0]

    run(go())


def test_a_command_that_does_not_exist_fails_with_one_notice() -> None:
    async def go() -> None:
        notices = NoticeChannel()
        manager = McpManager([Spec("ghost", command="no-such-command-for-mcp")], notices)
        manager.start()
        await manager.wait_ready(30)
        connection = manager.connections["ghost"]
        assert connection.status == "failed"
        assert connection.error == "cannot start 'no-such-command-for-mcp': no such command"
        assert failures(notices) == [
            "MCP server ghost failed: cannot start 'no-such-command-for-mcp': no such "
            "command; the session goes on without its tools (/mcp shows it)"
        ]
        await manager.close()

    run(go())


def test_a_server_that_exits_at_start_fails_with_its_last_stderr_line() -> None:
    async def go() -> None:
        notices = NoticeChannel()
        spec = Spec("broken", command=sys.executable, args=("-c", "import sys; sys.exit('no token given')"))
        connection = await connected(spec, notices)
        assert connection.status == "failed"
        assert connection.error == "the server closed the connection before it was ready (its stderr: no token given)"
        assert len(failures(notices)) == 1
        await connection.close()

    run(go())


def test_a_server_that_never_answers_fails_after_the_connect_timeout() -> None:
    async def go() -> None:
        connection = await connected(Spec("mute", command="sleep", args=("300",)), connect_timeout=0.5)
        assert connection.status == "failed" and connection.error == "no answer within 0.5 s"
        await connection.close()

    run(go())


def test_closing_a_server_still_connecting_is_no_failure() -> None:
    async def go() -> None:
        notices = NoticeChannel()
        manager = McpManager([Spec("mute", command="sleep", args=("300",))], notices)
        manager.start()
        await manager.close()  # before the SDK is even imported in a fresh process
        manager = McpManager([Spec("mute", command="sleep", args=("300",))], notices)
        manager.start()
        await until(lambda: manager.connections["mute"]._life is not None)  # in the handshake
        await manager.close()
        assert manager.connections["mute"].status == "closed" and failures(notices) == []

    run(go())


def test_close_leaves_no_process_of_the_server_or_its_children() -> None:
    async def go() -> tuple[int, int]:
        manager = McpManager([stdio_spec()], NoticeChannel())
        manager.start()
        await manager.wait_ready(30)
        connection = manager.connections["demo"]
        child = await number(connection, "spawn")
        server = await number(connection, "pid")
        assert alive(child) and alive(server)
        await manager.close()
        assert connection.status == "closed"
        return server, child

    server, child = run(go())
    assert not alive(server) and not alive(child)


def test_the_manager_starts_servers_in_the_background_and_start_is_idempotent() -> None:
    async def go() -> None:
        manager = McpManager([stdio_spec("one"), stdio_spec("two")], NoticeChannel())
        manager.start()
        assert {c.status for c in manager.connections.values()} == {"connecting"}  # start() did not wait
        manager.start()
        await manager.wait_ready(30)
        assert {c.status for c in manager.connections.values()} == {"connected"}
        await manager.close()

    run(go())


def test_tools_the_api_would_refuse_are_skipped_with_one_problem_line_each() -> None:
    async def go() -> None:
        notices = NoticeChannel()
        async with opened(stdio_spec(DEMO_BAD_TOOLS="1"), notices) as connection:
            names = {t.name for t in connection.tools}
            assert "echo" in names and "has.dot" not in names and "t" * 70 not in names
            assert len(connection.problems) == 2
            assert any("has.dot" in p and "characters the API refuses" in p for p in connection.problems)
            assert any("longer than the API's 64 characters" in p for p in connection.problems)
            assert [n.text for n in notices.said("warning")] == connection.problems

    run(go())


def test_a_huge_result_is_capped_with_a_note() -> None:
    async def go() -> None:
        async with opened(stdio_spec()) as connection:
            outcome = await connection.call("big", {"chars": 3 * MAX_RESULT_CHARS}, timeout=30)
            assert len(outcome.content[0]["text"]) == MAX_RESULT_CHARS
            assert "the rest was dropped" in outcome.content[-1]["text"]
            assert outcome.structured is None

    run(go())


def test_a_malformed_message_is_one_problem_and_no_traceback(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logging.root, "handlers", [])  # as in claude-mini: pytest's own would catch the SDK's log

    async def go() -> None:
        notices = NoticeChannel()
        async with opened(stdio_spec(DEMO_GARBAGE="1", DEMO_STDERR="server says hello"), notices) as connection:
            assert connection.status == "connected"
            await until(lambda: bool(connection.problems))
            assert "sent a message that is not valid MCP" in connection.problems[0]
            assert (await connection.call("echo", {"text": "ok"}, timeout=10)).content[0]["text"] == "ok"
            assert connection.stderr_tail() == ["server says hello"]

    run(go())
    out, err = capfd.readouterr()
    assert "Traceback" not in err and "server says hello" not in err and out == ""


RAW = str(Path(__file__).with_name("raw_server.py"))


def test_one_tool_the_sdk_cannot_read_skips_that_tool_only() -> None:
    """One tool with an unreadable input schema failed the whole listing, and the server
    with it. Now each bad tool is one problem line naming server, tool and problem."""

    async def go() -> None:
        notices = NoticeChannel()
        spec = Spec("raw", command=sys.executable, args=(RAW,), env={"RAW_BAD_TOOLS": "1"})
        async with opened(spec, notices) as connection:
            assert connection.status == "connected", connection.error
            assert [t.name for t in connection.tools] == ["good"]
            assert connection.problems == [
                "MCP server raw: tool 'listy' skipped: its input schema is not valid (type: Input should be 'object')",
                "MCP server raw: tool 'bare' skipped: it has no input schema",
                "MCP server raw: tool 'typo' skipped: its input schema is not valid JSON schema "
                "(5 is not valid under any of the given schemas)",
            ]
            assert [n.text for n in notices.said("warning")] == connection.problems
            outcome = await connection.call("good", {"x": "hi"}, timeout=30)
            assert outcome.content == [{"type": "text", "text": "good: hi"}]

    run(go())
