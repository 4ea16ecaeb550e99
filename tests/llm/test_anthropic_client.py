"""AnthropicClient drives the real anthropic SDK against the loopback fake and survives its faults."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import subprocess
import sys

import pytest

from claude_mini.llm.anthropic_client import AnthropicClient, missing_credentials
from claude_mini.llm.events import (
    BlockDone,
    ResponseDone,
    Retrying,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from claude_mini.llm.messages import (
    Message,
    ModelRequest,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from claude_mini.llm.pricing import cost_usd, price_for
from claude_mini.llm.protocol import (
    AuthError,
    ContextTooLong,
    InvalidRequest,
    ModelError,
    ModelOverloaded,
    ModelUnavailable,
)
from claude_mini.llm.retry import RetryPolicy
from tests.fake_anthropic import FakeAnthropic, Reply

MODEL = "claude-sonnet-4-6"
TOOLS = [
    {"name": "Read", "description": "Read a file", "input_schema": {"type": "object", "properties": {}}},
    {"name": "Bash", "description": "Run a command", "input_schema": {"type": "object", "properties": {}}},
]
LONG_TEXT = "The quick brown fox jumps over the lazy dog, then naps in the sun."


def request(text: str = "hi", **kwargs) -> ModelRequest:
    kwargs.setdefault("system", ["You are a coding assistant.", "Project notes."])
    kwargs.setdefault("tools", TOOLS)
    return ModelRequest(model=MODEL, messages=[Message.user(text)], **kwargs)


class Harness:
    """A client on the fake with recorded, instant retry sleeps."""

    def __init__(self, server: FakeAnthropic, idle_timeout: float = 90.0, **sdk_kwargs) -> None:
        self.slept: list[float] = []
        policy = RetryPolicy(sleep=self._sleep, rand=lambda: 0.0, idle_timeout=idle_timeout)
        self.client = AnthropicClient(base_url=server.base_url, api_key="test", retry=policy, **sdk_kwargs)

    async def _sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    async def events(self, req: ModelRequest) -> list:
        try:
            return [event async for event in self.client.stream(req)]
        finally:
            await self.client.aclose()


def run(coro, timeout: float = 20):
    """Run a coroutine with a hard deadline so a bug cannot hang the suite."""
    return asyncio.run(asyncio.wait_for(coro, timeout))


def collect(server: FakeAnthropic, req: ModelRequest | None = None, **sdk_kwargs) -> tuple[list, Harness]:
    harness = Harness(server, **sdk_kwargs)
    return run(harness.events(req or request())), harness


def streamed_text(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def done(events: list) -> ResponseDone:
    assert isinstance(events[-1], ResponseDone)
    return events[-1]


# -- happy path ----------------------------------------------------------------------


def test_text_streams_in_pieces_and_ends_with_response_done(fake_server):
    fake_server.queue(Reply.text(LONG_TEXT))
    events, _ = collect(fake_server)
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 3 and streamed_text(events) == LONG_TEXT
    assert BlockDone(TextBlock(LONG_TEXT), 0) in events
    final = done(events)
    assert final.message == Message("assistant", [TextBlock(LONG_TEXT)])
    assert final.stop_reason == "end_turn" and final.model == MODEL
    assert final.usage.output_tokens > 1


def test_tool_use_input_is_reassembled(fake_server):
    fake_server.queue(Reply.tool("Read", {"file_path": "src/app.py", "offset": 10}, text="Reading."))
    events, _ = collect(fake_server)
    (start,) = [e for e in events if isinstance(e, ToolUseStart)]
    pieces = [e.partial_json for e in events if isinstance(e, ToolInputDelta)]
    assert (start.name, start.index) == ("Read", 1) and len(pieces) >= 3
    assert json.loads("".join(pieces)) == {"file_path": "src/app.py", "offset": 10}
    final = done(events)
    assert final.stop_reason == "tool_use"
    assert final.message.tool_uses == [ToolUseBlock(start.id, "Read", {"file_path": "src/app.py", "offset": 10})]


def test_thinking_is_kept_for_the_next_request(fake_server):
    fake_server.queue(Reply.text("answer").with_thinking("pondering"))
    events, _ = collect(fake_server)
    assert done(events).message.content == [ThinkingBlock("pondering", "sig-fake"), TextBlock("answer")]
    assert streamed_text(events) == "answer"  # thinking is not streamed as answer text


def test_purpose_header_and_cache_breakpoints_are_sent(fake_server):
    collect(fake_server, request(purpose="recall"))
    (sent,) = fake_server.requests_for("recall")
    body = sent.body
    assert sent.headers["x-claude-mini-purpose"] == "recall" and body["stream"] is True
    assert [t.get("cache_control") for t in body["tools"]] == [None, {"type": "ephemeral"}]
    assert [s.get("cache_control") for s in body["system"]] == [None, {"type": "ephemeral"}]
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_usage_reports_cache_writes_then_reads(fake_server):
    first, _ = collect(fake_server)
    second, _ = collect(fake_server)
    written = done(first).usage
    read = done(second).usage
    assert written.cache_creation_input_tokens > 0 and written.cache_read_input_tokens == 0
    assert read.cache_read_input_tokens == written.cache_creation_input_tokens
    assert read.cache_creation_input_tokens == 0


def test_complete_and_count_tokens(fake_server):
    fake_server.queue(Reply.text("done"))

    async def scenario():
        client = Harness(fake_server).client
        try:
            return await client.complete(request()), await client.count_tokens(request())
        finally:
            await client.aclose()

    response, tokens = run(scenario())
    assert response.message.text == "done"
    assert tokens == response.usage.total_input  # the fake counts the same prefix
    assert fake_server.requests[-1].path == "/v1/messages/count_tokens"
    assert "max_tokens" not in fake_server.requests[-1].body


def test_consumer_may_stop_early(fake_server):
    fake_server.queue(Reply.text(LONG_TEXT).delay_between_events(0.05), Reply.text("next"))

    async def scenario():
        client = Harness(fake_server).client
        try:
            async with contextlib.aclosing(client.stream(request())) as events:
                async for event in events:
                    first = event
                    break
            return first, await client.complete(request())
        finally:
            await client.aclose()

    first, response = run(scenario())
    assert isinstance(first, TextDelta) and response.message.text == "next"


# -- recovery ------------------------------------------------------------------------------


def after_retry(events: list) -> list:
    """The events of the last attempt (after the last `Retrying`)."""
    marks = [i for i, e in enumerate(events) if isinstance(e, Retrying)]
    return events[marks[-1] + 1 :] if marks else events


def test_429_is_retried_by_the_client_not_silently_by_the_sdk(fake_server):
    fake_server.queue(Reply.error(429, retry_after=0.01), Reply.text("ok"))
    events, harness = collect(fake_server)
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert retry.reason.startswith("429 rate_limit_error") and harness.slept == [0.01]
    assert retry.describe() == f"retrying in 0.01 s (attempt 2 of 4): {retry.reason}"
    assert done(events).message.text == "ok" and len(fake_server.requests) == 2


def test_an_hour_of_retry_after_waits_a_minute_and_says_so(fake_server):
    fake_server.queue(Reply.error(429, retry_after=3600), Reply.text("ok"))
    events, harness = collect(fake_server)
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert harness.slept == [60] and (retry.delay, retry.asked) == (60, 3600)
    assert retry.describe() == (
        f"retrying in 60 s, not the 3600 s the server asked for (attempt 2 of 4): {retry.reason}"
    )
    assert done(events).message.text == "ok"


def test_in_stream_overload_is_retried_and_the_retry_starts_from_its_start(fake_server):
    fake_server.queue(Reply.text(LONG_TEXT).stream_error("overloaded_error"), Reply.text(LONG_TEXT))
    events, harness = collect(fake_server)
    retries = [e for e in events if isinstance(e, Retrying)]
    assert len(retries) == 1
    assert (retries[0].attempt, retries[0].max_attempts) == (2, 4)
    assert "overloaded" in retries[0].reason
    first_part = streamed_text(events[: events.index(retries[0])])
    assert first_part and LONG_TEXT.startswith(first_part)  # something was shown before the error
    assert streamed_text(after_retry(events)) == LONG_TEXT  # the retry is whole, not glued to the part
    assert [e for e in events if isinstance(e, BlockDone)] == [BlockDone(TextBlock(LONG_TEXT), 0)]
    assert harness.slept == [retries[0].delay] == [0.5]  # base delay, jitter from rand()=0


def test_a_broken_attempt_is_billed_but_not_counted_as_context(fake_server):
    fake_server.queue(Reply.text(LONG_TEXT).stream_error("overloaded_error"), Reply.text(LONG_TEXT))
    events, _ = collect(fake_server)
    first, second = fake_server.requests
    finished = done(events)
    assert finished.usage.total_input == sum(second.usage[k] for k in second.usage if "input" in k)
    assert finished.retried.total_input == sum(first.usage[k] for k in first.usage if "input" in k) > 0
    assert finished.billed.total_input == finished.usage.total_input + finished.retried.total_input


def test_connection_reset_mid_stream_is_retried(fake_server):
    reply = Reply.tool("Bash", {"command": "pytest -q tests/"}, text=LONG_TEXT)
    fake_server.queue(reply.reset_mid_stream(after=12), reply)
    events, _ = collect(fake_server)
    assert len([e for e in events if isinstance(e, Retrying)]) == 1
    last = after_retry(events)
    assert streamed_text(last) == LONG_TEXT
    starts = [e for e in last if isinstance(e, ToolUseStart)]
    assert len(starts) == 1 and done(events).message.tool_uses[0].id == starts[0].id
    assert "".join(e.partial_json for e in last if isinstance(e, ToolInputDelta)) == '{"command": "pytest -q tests/"}'


def test_stream_cut_before_message_stop_is_retried(fake_server):
    fake_server.queue(
        Reply.tool("Read", {"file_path": "a.py"}).cut_before_stop(), Reply.tool("Read", {"file_path": "a.py"})
    )
    events, _ = collect(fake_server)
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert "ended early" in retry.reason
    assert done(events).message.tool_uses[0].input == {"file_path": "a.py"}
    assert len([e for e in after_retry(events) if isinstance(e, BlockDone)]) == 1


def test_a_different_retry_is_streamed_whole_and_only_it_is_kept(fake_server):
    fake_server.queue(Reply.text("First attempt says this.").stream_error(), Reply.text("Second attempt differs."))
    events, _ = collect(fake_server)
    assert streamed_text(events).startswith("First")
    assert streamed_text(after_retry(events)) == "Second attempt differs."
    assert done(events).message.text == "Second attempt differs."


def test_exhausted_retries_raise_a_clear_error(fake_server):
    fake_server.on(Reply.text(LONG_TEXT).stream_error("overloaded_error"), times=None)
    harness = Harness(fake_server)
    seen: list = []

    async def scenario():
        async for event in harness.client.stream(request()):
            seen.append(event)

    with pytest.raises(ModelOverloaded) as caught:
        run(scenario())
    assert len(fake_server.requests) == 4
    assert [e.attempt for e in seen if isinstance(e, Retrying)] == [2, 3, 4]
    assert harness.slept == [0.5, 1.0, 2.0]  # exponential backoff
    message = str(caught.value)
    assert "overloaded" in message and "tried 4 times" in message and "try again" in message
    assert streamed_text(after_retry(seen)) and LONG_TEXT.startswith(streamed_text(after_retry(seen)))


def test_retry_delay_jitter_and_retry_after():
    policy = RetryPolicy(rand=lambda: 1.0)
    assert policy.delay(1) == 0.375 and policy.delay(10) == 6.0  # capped at 8 s, minus 25 %
    assert policy.delay(1, retry_after=3) == 3 and policy.delay(1, retry_after=999) == 60


def test_a_stream_that_stalls_mid_way_is_retried_once(fake_server):
    fake_server.queue(Reply.text(LONG_TEXT).hang(mid_stream=True), Reply.text(LONG_TEXT))
    events, _ = collect(fake_server, idle_timeout=0.2)
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert retry.reason == "no data from the server for 0.2 s"
    assert streamed_text(events[: events.index(retry)])  # it stalled after some text
    assert done(events).message.text == LONG_TEXT


@pytest.mark.parametrize("mid_stream", [True, False], ids=["mid-stream", "before-the-status-line"])
def test_a_second_stall_is_a_clear_error_without_more_retries(fake_server, mid_stream):
    fake_server.on(Reply.text(LONG_TEXT).hang(mid_stream=mid_stream), times=None)
    with pytest.raises(ModelUnavailable) as caught:
        collect(fake_server, idle_timeout=0.2)
    assert len(fake_server.requests) == 2  # one retry, although the policy allows 4 attempts
    message = str(caught.value)
    assert message.startswith(
        f"{fake_server.base_url}/v1/messages stopped sending (no data from the server for 0.2 s; tried twice)"
    )
    assert "CLAUDE_MINI_STREAM_IDLE_SECONDS" in message


@pytest.mark.parametrize("kind", ["not_json", "binary", "null_text"])
def test_a_malformed_stream_is_a_failed_attempt(fake_server, kind):
    fake_server.queue(Reply.text(LONG_TEXT).malformed_event(kind), Reply.text(LONG_TEXT))
    events, _ = collect(fake_server)
    (retry,) = [e for e in events if isinstance(e, Retrying)]
    assert "malformed" in retry.reason
    assert done(events).message.text == LONG_TEXT


def test_a_server_that_keeps_sending_garbage_is_named(fake_server):
    fake_server.on(Reply.text(LONG_TEXT).malformed_event("binary", after=0), times=None)
    with pytest.raises(ModelUnavailable) as caught:
        collect(fake_server)
    message = str(caught.value)
    assert message.startswith(
        f"{fake_server.base_url}/v1/messages sent a response that is not the Anthropic "
        "Messages stream (malformed stream (UnicodeDecodeError"
    )
    assert "tried 4 times" in message and "ANTHROPIC_BASE_URL" in message


def test_waits_and_the_idle_limit_come_from_the_environment():
    policy, fine = RetryPolicy.from_env(
        {"CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS": "0", "CLAUDE_MINI_STREAM_IDLE_SECONDS": "2.5"}
    )
    assert (policy.max_wait, policy.idle_timeout) == (0, 2.5) and fine == []
    assert policy.delay(3) == 0 and policy.delay(1, retry_after=3600) == 0
    default, problems = RetryPolicy.from_env(
        {"CLAUDE_MINI_STREAM_IDLE_SECONDS": "0", "CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS": "soon"}
    )
    assert (default.max_wait, default.idle_timeout) == (60, 90)  # no idle limit of 0, no word for a number
    assert [p.split("=")[0] for p in problems] == [
        "CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS",
        "CLAUDE_MINI_STREAM_IDLE_SECONDS",
    ]


def test_each_request_is_one_debug_line_without_the_key(fake_server, caplog):
    fake_server.queue(Reply.error(529), Reply.text("ok"))
    with caplog.at_level(logging.DEBUG, logger="claude_mini.llm.anthropic_client"):
        collect(fake_server, request(purpose="recall"))
    failed, answered = [r.getMessage() for r in caplog.records]
    url = f"{fake_server.base_url}/v1/messages"
    assert failed.startswith(
        f"POST {url} model={MODEL} purpose=recall -> 529 overloaded_error request-id=req_fake_000001 time="
    )
    assert answered.startswith(f"POST {url} model={MODEL} purpose=recall -> 200 request-id=req_fake_000002 time=")
    assert answered.endswith("s attempt=2")
    assert "test" not in failed + answered  # the key ("test") is never logged


def test_non_retryable_stream_error_is_not_retried(fake_server):
    fake_server.queue(Reply.text(LONG_TEXT).stream_error("invalid_request_error", "bad thing"))
    with pytest.raises(InvalidRequest, match="bad thing"):
        collect(fake_server)
    assert len(fake_server.requests) == 1


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "error", "words"),
    [
        (Reply.error(401), AuthError, "ANTHROPIC_API_KEY"),
        (Reply.error(400, "prompt is too long: 210000 tokens > 200000 maximum"), ContextTooLong, "/compact"),
        (Reply.error(404, "model: claude-nope"), InvalidRequest, "model name"),
        (Reply.error(400, "messages: roles must alternate"), InvalidRequest, "roles must alternate"),
    ],
)
def test_http_errors_map_to_model_errors(fake_server, reply, error, words):
    fake_server.queue(reply)
    with pytest.raises(error, match=words):
        collect(fake_server)


def test_persistent_529_is_model_overloaded_after_the_clients_retries_only(fake_server):
    fake_server.on(Reply.error(529, retry_after=0.001), times=None)
    harness = Harness(fake_server)
    with pytest.raises(ModelOverloaded, match="try again"):
        run(harness.events(request()))
    assert len(fake_server.requests) == 4 and harness.slept == [0.001] * 3  # ours; the SDK's are off


def test_unreachable_server_is_retried_then_named():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    client = AnthropicClient(base_url=f"http://127.0.0.1:{port}", api_key="x", retry=RetryPolicy(sleep=sleep))
    with pytest.raises(ModelUnavailable) as caught:
        run(drain_and_close(client))
    message = str(caught.value)
    assert message.startswith(f"Could not reach the model server at http://127.0.0.1:{port}/v1/messages (")
    assert "Connect" in message and "APIConnectionError" not in message  # the cause, not the SDK's wrapper
    assert len(slept) == 3


def test_missing_credentials_is_an_auth_error():
    assert missing_credentials()
    client = AnthropicClient()  # default base URL, no key: the SDK refuses before any network use
    with pytest.raises(AuthError, match="ANTHROPIC_API_KEY"):
        run(drain_and_close(client))


def test_missing_credentials_checks_each_variable(monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.setenv(name, "x")
        assert not missing_credentials()
        monkeypatch.delenv(name)


def test_base_url_alone_works_for_local_servers(fake_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_server.base_url)
    fake_server.queue(Reply.text("local"))
    client = AnthropicClient(max_retries=0)
    assert client.name == f"Anthropic-compatible server at {fake_server.base_url}"
    assert run(complete_and_close(client)).message.text == "local"


def test_model_errors_share_a_base():
    assert all(
        issubclass(e, ModelError)
        for e in (AuthError, ContextTooLong, ModelOverloaded, ModelUnavailable, InvalidRequest)
    )


async def drain_and_close(client: AnthropicClient) -> list:
    try:
        return [e async for e in client.stream(request())]
    finally:
        await client.aclose()


async def complete_and_close(client: AnthropicClient) -> ResponseDone:
    try:
        return await client.complete(request())
    finally:
        await client.aclose()


# -- structured output and local servers -------------------------------------------------------


SCHEMA = {"type": "object", "properties": {"selected_memories": {"type": "array"}}, "required": ["selected_memories"]}


def test_structured_output_is_sent_when_supported(fake_server):
    fake_server.queue(Reply.json({"selected_memories": ["a.md"]}))
    events, harness = collect(fake_server, request(output_schema=SCHEMA, purpose="recall"))
    assert json.loads(done(events).message.text) == {"selected_memories": ["a.md"]}
    assert fake_server.requests[0].body["output_config"]["format"]["schema"] == SCHEMA
    assert harness.client.structured_output is True


def test_rejected_output_config_is_dropped_and_remembered():
    with FakeAnthropic([Reply.json({"selected_memories": []}), Reply.text("{}")], ollama_like=True) as server:

        async def scenario():
            client = Harness(server).client
            try:
                first = await client.complete(request(output_schema=SCHEMA))
                second = await client.complete(request(output_schema=SCHEMA))
                return client, first, second
            finally:
                await client.aclose()

        client, first, second = run(scenario())
        bodies = [r.body for r in server.requests]
        assert ["output_config" in b for b in bodies] == [True, False, False]
        assert client.structured_output is False
        assert json.loads(first.message.text) == {"selected_memories": []}
        assert first.usage.cache_read_input_tokens == 0  # a local server reports no cache fields


def test_count_tokens_is_none_when_unsupported_and_asked_only_once():
    with FakeAnthropic(ollama_like=True) as server:

        async def scenario():
            client = Harness(server).client
            try:
                return [await client.count_tokens(request()) for _ in range(2)]
            finally:
                await client.aclose()

        assert run(scenario()) == [None, None]
        assert len(server.requests) == 1


def test_local_server_that_just_stops_is_retried():
    reply = Reply.text(LONG_TEXT)
    with FakeAnthropic([reply.stream_error(), reply], ollama_like=True) as server:
        events, _ = collect(server)
    assert len([e for e in events if isinstance(e, Retrying)]) == 1
    assert streamed_text(after_retry(events)) == LONG_TEXT


# -- import cost and pricing -------------------------------------------------------------------------


def test_importing_and_building_the_client_does_not_import_anthropic():
    code = (
        "import sys; from claude_mini.llm.anthropic_client import AnthropicClient; AnthropicClient();"
        "import claude_mini.llm.pricing; print('anthropic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


PRELOAD = (
    "import sys, threading; from claude_mini.llm.anthropic_client import preload_sdk; preload_sdk(); preload_sdk();"
    "threads = [t for t in threading.enumerate() if t.name == 'import-anthropic'];"
    "[t.join() for t in threads]; print(len(threads), 'anthropic' in sys.modules)"
)


@pytest.mark.parametrize(("key", "expected"), [("test", "1 True"), ("", "0 False")])
def test_preload_imports_the_sdk_in_one_thread_only_when_a_request_can_follow(key, expected):
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["ANTHROPIC_API_KEY"] = key
    out = subprocess.run([sys.executable, "-c", PRELOAD], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == expected


def test_prices_by_family_and_cache_multipliers():
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_usd("claude-sonnet-4-6", usage) == 18.0
    assert cost_usd("claude-sonnet-4-5-20250929", usage) == 18.0
    assert cost_usd("claude-opus-4-1-20250805", usage) == 90.0
    assert cost_usd("claude-opus-4-5", usage) == 30.0
    assert cost_usd("claude-haiku-4-5", usage) == 6.0
    assert cost_usd("claude-3-5-haiku-latest", usage) == pytest.approx(4.8)
    assert cost_usd("us.anthropic.claude-haiku-4-5-v1:0", usage) == 6.0
    cached = Usage(cache_creation_input_tokens=1_000_000, cache_read_input_tokens=1_000_000)
    assert cost_usd("claude-sonnet-4-6", cached) == pytest.approx(3 * 1.25 + 3 * 0.1)


def test_unknown_models_are_free():
    assert price_for("qwen2.5-coder:7b") is None
    assert cost_usd("smollm2-135m", Usage(input_tokens=10**6, output_tokens=10**6)) == 0.0
