"""The fake Anthropic server speaks the real wire format and injects faults faithfully.

Wire-level checks use httpx2 directly; behaviour checks drive the real anthropic SDK
(the synchronous client: it shares the SSE decoder and error mapping with the async
one, and keeps these tests free of event-loop plumbing).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anthropic
import httpx2
import pytest

from tests.fake_anthropic import FakeAnthropic, PromptCache, Reply, estimate_tokens, minimal_instance

MODEL = "claude-sonnet-4-6"
EPHEMERAL = {"type": "ephemeral"}


def sdk(server: FakeAnthropic, **kwargs) -> anthropic.Anthropic:
    kwargs.setdefault("max_retries", 0)
    return anthropic.Anthropic(base_url=server.base_url, api_key="test", **kwargs)


def body(text: str = "hi", *, system: str = "You are terse. " * 20, **extra) -> dict:
    """A request with breakpoints where claude_mini puts them (last system block, last message)."""
    return {
        "model": MODEL,
        "max_tokens": 100,
        "system": [{"type": "text", "text": system, "cache_control": EPHEMERAL}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": text, "cache_control": EPHEMERAL}]}],
        **extra,
    }


def raw_events(server: FakeAnthropic, payload: dict) -> tuple[httpx2.Response, list[tuple[str, dict]]]:
    """POST a streaming request and parse the SSE by hand (no SDK in between)."""
    with httpx2.Client(timeout=10) as client:
        response = client.post(f"{server.base_url}/v1/messages", json={**payload, "stream": True})
    events = []
    for chunk in response.text.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines() if ": " in line)
        if "event" in lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return response, events


# -- wire format -------------------------------------------------------------


def test_stream_has_the_api_event_sequence_and_headers(fake_server):
    fake_server.queue(Reply.text("Hello there, this is streamed in pieces."))
    response, events = raw_events(fake_server, body())
    names = [name for name, _ in events]
    assert response.headers["content-type"].startswith("text/event-stream")
    assert names[:3] == ["message_start", "content_block_start", "ping"]
    assert names[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    start = events[0][1]["message"]
    assert start["id"].startswith("msg_") and start["model"] == MODEL and start["content"] == []
    assert start["usage"]["output_tokens"] == 1
    deltas = [d["delta"]["text"] for n, d in events if n == "content_block_delta"]
    assert len(deltas) >= 3 and "".join(deltas) == "Hello there, this is streamed in pieces."
    final = events[-2][1]
    assert final["delta"] == {"stop_reason": "end_turn", "stop_sequence": None}
    assert final["usage"]["output_tokens"] > 1


def test_tool_input_json_is_split_over_several_chunks(fake_server):
    fake_server.queue(Reply.tool("Read", {"file_path": "a.py"}))
    _, events = raw_events(fake_server, body())
    pieces = [d["delta"]["partial_json"] for n, d in events if n == "content_block_delta"]
    assert len([p for p in pieces if p]) >= 3
    assert json.loads("".join(pieces)) == {"file_path": "a.py"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_ids_are_deterministic(fake_server):
    fake_server.queue(Reply.tool("Read", {"file_path": "a.py"}), Reply.tool("Bash", {"command": "ls"}))
    first = sdk(fake_server).messages.create(**body())
    second = sdk(fake_server).messages.create(**body())
    assert (first.id, second.id) == ("msg_fake_000001", "msg_fake_000002")
    assert [first.content[0].id, second.content[0].id] == ["toolu_fake_000001", "toolu_fake_000002"]


# -- the SDK against the fake ---------------------------------------------------


def test_sdk_streams_text_and_tools(fake_server):
    fake_server.queue(
        Reply.tool("Read", {"file_path": "a.py", "limit": 5}, text="Let me look.").and_tool("Bash", {"command": "ls"})
    )
    with sdk(fake_server).messages.stream(**body()) as stream:
        texts = list(stream.text_stream)
        message = stream.get_final_message()
    assert "".join(texts) == "Let me look." and len(texts) >= 2
    assert [b.type for b in message.content] == ["text", "tool_use", "tool_use"]
    assert message.content[1].input == {"file_path": "a.py", "limit": 5}
    assert message.content[2].name == "Bash" and message.stop_reason == "tool_use"


def test_non_stream_request_gets_a_json_message(fake_server):
    fake_server.queue(Reply.text("plain").with_stop_reason("max_tokens"))
    message = sdk(fake_server).messages.create(**body())
    assert message.content[0].text == "plain" and message.stop_reason == "max_tokens"


def test_thinking_block_streams_with_signature(fake_server):
    fake_server.queue(Reply.text("answer").with_thinking("let me think"))
    with sdk(fake_server).messages.stream(**body()) as stream:
        message = stream.get_final_message()
    assert message.content[0].type == "thinking" and message.content[0].thinking == "let me think"
    assert message.content[0].signature == "sig-fake"


def test_requests_are_recorded_with_purpose_header(fake_server):
    client = sdk(fake_server)
    client.messages.create(**body("first"), extra_headers={"X-Claude-Mini-Purpose": "main"})
    client.messages.create(**body("second"), extra_headers={"X-Claude-Mini-Purpose": "extract"})
    (extract,) = fake_server.requests_for("extract")
    assert extract.method == "POST" and extract.path == "/v1/messages"
    assert extract.headers["x-claude-mini-purpose"] == "extract"
    # SDK 2.14 sends the key as a bearer token; older ones used x-api-key.
    assert "test" in (extract.headers.get("x-api-key"), extract.headers.get("authorization", "")[7:])
    assert extract.body["messages"][0]["content"][0]["text"] == "second"
    assert extract.timestamp <= time.time()
    assert [r.purpose for r in fake_server.requests] == ["main", "extract"]


def test_count_tokens(fake_server):
    count = sdk(fake_server).messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hello"}])
    assert count.input_tokens > 0
    assert fake_server.requests[0].path == "/v1/messages/count_tokens"


def test_api_key_is_checked_when_configured():
    with FakeAnthropic(api_key="right") as server, pytest.raises(anthropic.AuthenticationError):
        sdk(server).messages.create(**body())


# -- prompt-cache simulation ------------------------------------------------------


def test_second_identical_request_reads_what_the_first_wrote(fake_server):
    client = sdk(fake_server)
    first = client.messages.create(**body()).usage
    second = client.messages.create(**body()).usage
    assert first.cache_creation_input_tokens > 0 and first.cache_read_input_tokens == 0
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens == 0 and second.input_tokens == 0


def test_growing_conversation_reads_the_previous_prefix(fake_server):
    client = sdk(fake_server)
    client.messages.create(**body("question one"))
    turn2 = body("question one")
    turn2["messages"][0]["content"][0].pop("cache_control")  # only the last message is a breakpoint
    turn2["messages"] += [
        {"role": "assistant", "content": [{"type": "text", "text": "answer one"}]},
        {"role": "user", "content": [{"type": "text", "text": "question two", "cache_control": EPHEMERAL}]},
    ]
    usage = client.messages.create(**turn2).usage
    first_total = fake_server.requests[0].usage["cache_creation_input_tokens"]
    assert usage.cache_read_input_tokens == first_total  # found by lookback from the new breakpoint
    assert usage.cache_creation_input_tokens > 0


def test_changed_system_prompt_misses_and_reset_forgets(fake_server):
    client = sdk(fake_server)
    client.messages.create(**body())
    changed = client.messages.create(**body(system="Different. " * 20)).usage
    assert changed.cache_read_input_tokens == 0
    fake_server.reset_cache()
    assert client.messages.create(**body()).usage.cache_read_input_tokens == 0


def test_cache_arithmetic_and_minimum_length():
    request = body()
    cache = PromptCache()
    first = cache.account(request)
    assert first["input_tokens"] == 0 and first["cache_read_input_tokens"] == 0
    assert cache.account(request)["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    small = PromptCache(min_tokens=10_000)
    assert small.account(request)["cache_creation_input_tokens"] == 0
    assert small.account(request)["cache_read_input_tokens"] == 0
    no_breakpoints = {"model": MODEL, "messages": [{"role": "user", "content": "x" * 40}]}
    tokens = estimate_tokens({"type": "text", "text": "x" * 40})  # ceil(65 chars / 4)
    assert PromptCache().account(no_breakpoints) == {
        "input_tokens": tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    assert tokens == 17


def test_lookback_zero_only_matches_at_breakpoints():
    cache = PromptCache(lookback=0)
    cache.account(body("q1"))
    grown = body("q1")
    grown["messages"][0]["content"][0].pop("cache_control")
    grown["messages"].append({"role": "user", "content": [{"type": "text", "text": "q2", "cache_control": EPHEMERAL}]})
    usage = cache.account(grown)
    system_only = PromptCache().account({"model": MODEL, "system": body()["system"], "messages": []})
    assert usage["cache_read_input_tokens"] == system_only["cache_creation_input_tokens"]


# -- scripting -----------------------------------------------------------------------


def test_rules_take_precedence_and_can_be_persistent(fake_server):
    fake_server.queue(Reply.text("from queue"))
    fake_server.on(Reply.json({"selected_memories": []}), purpose="recall", times=None)
    fake_server.on(Reply.text("matched"), contains="magic word")
    fake_server.on(Reply.text("regex"), regex=r"ticket-\d+")
    client = sdk(fake_server)

    def ask(text: str, purpose: str = "main") -> str:
        headers = {"X-Claude-Mini-Purpose": purpose}
        return client.messages.create(**body(text), extra_headers=headers).content[0].text

    assert ask("x", "recall") == ask("y", "recall") == '{"selected_memories": []}'
    assert ask("say the magic word") == "matched"
    assert ask("see ticket-42") == "regex"
    assert ask("the magic word again") == "from queue"  # one-shot rule used up
    assert fake_server.pending == 0


def test_a_rule_may_answer_with_a_function_of_the_request(fake_server):
    fake_server.on(lambda request: Reply.text(request.last_user_text.upper()), purpose="extract", times=None)
    client = sdk(fake_server)
    headers = {"X-Claude-Mini-Purpose": "extract"}
    assert client.messages.create(**body("shout"), extra_headers=headers).content[0].text == "SHOUT"
    assert client.messages.create(**body("again"), extra_headers=headers).content[0].text == "AGAIN"
    assert fake_server.requests_for("extract")[1].reply == Reply.text("AGAIN")


def test_default_reply_quotes_the_user_and_fills_schemas(fake_server):
    client = sdk(fake_server)
    echo = client.messages.create(**body("please   list the files")).content[0].text
    assert "please list the files" in echo
    schema = {
        "type": "object",
        "properties": {"selected_memories": {"type": "array"}},
        "required": ["selected_memories"],
    }
    structured = client.messages.create(
        **body("pick"), output_config={"format": {"type": "json_schema", "schema": schema}}
    )
    assert json.loads(structured.content[0].text) == {"selected_memories": []}
    assert minimal_instance({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}}}) == {
        "a": "",
        "b": False,
    }


def test_script_file_format(fake_server):
    fake_server.load_script(
        {
            "replies": [
                {"text": "one"},
                {"tool": "Read", "input": {"file_path": "x"}},
                {"http_error": 400, "message": "bad"},
            ],
            "rules": [{"purpose": "compact", "times": None, "reply": {"text": "summary"}}],
        }
    )
    client = sdk(fake_server)
    assert client.messages.create(**body()).content[0].text == "one"
    compact = client.messages.create(**body(), extra_headers={"X-Claude-Mini-Purpose": "compact"})
    assert compact.content[0].text == "summary"
    assert client.messages.create(**body()).content[0].name == "Read"
    with pytest.raises(anthropic.BadRequestError, match="bad"):
        client.messages.create(**body())


# -- faults ----------------------------------------------------------------------------


def test_http_error_has_retry_after_and_error_body(fake_server):
    fake_server.queue(Reply.error(429, retry_after=3))
    with httpx2.Client(timeout=10) as client:
        response = client.post(f"{fake_server.base_url}/v1/messages", json=body())
    assert response.status_code == 429 and response.headers["retry-after"] == "3"
    assert response.json()["error"]["type"] == "rate_limit_error"


def test_sdk_retries_429_with_retry_after(fake_server):
    fake_server.queue(Reply.error(429, retry_after=0.01), Reply.text("after the wait"))
    message = sdk(fake_server, max_retries=2).messages.create(**body())
    assert message.content[0].text == "after the wait"
    assert len(fake_server.requests) == 2


def test_stream_error_sends_content_then_error_event(fake_server):
    fake_server.queue(Reply.text("Partial answer that breaks off").stream_error("overloaded_error"))
    _, events = raw_events(fake_server, body())
    names = [n for n, _ in events]
    assert "content_block_delta" in names and names[-1] == "error"
    assert events[-1][1] == {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert "message_stop" not in names
    with pytest.raises(anthropic.APIStatusError) as caught:  # what the SDK makes of it: status 200
        fake_server.queue(Reply.text("again").stream_error())
        with sdk(fake_server).messages.stream(**body()) as stream:
            stream.get_final_message()
    assert caught.value.status_code == 200


def test_fault_reply_is_consumed_so_the_next_one_recovers(fake_server):
    fake_server.queue(Reply.text("x").stream_error(), Reply.text("x"))
    with pytest.raises(anthropic.APIStatusError), sdk(fake_server).messages.stream(**body()) as stream:
        stream.get_final_message()
    with sdk(fake_server).messages.stream(**body()) as stream:
        assert stream.get_final_message().content[0].text == "x"


def test_reset_mid_stream_is_a_transport_error_after_some_content(fake_server):
    fake_server.queue(Reply.text("This text is cut by a reset").reset_mid_stream())
    seen = []
    with pytest.raises(httpx2.TransportError), sdk(fake_server).messages.stream(**body()) as stream:
        for text in stream.text_stream:
            seen.append(text)
    assert seen  # part of the answer arrived before the RST


def test_cut_before_stop_ends_cleanly_without_stop_reason(fake_server):
    fake_server.queue(Reply.tool("Read", {"file_path": "a.py"}).cut_before_stop())
    _, events = raw_events(fake_server, body())
    names = [n for n, _ in events]
    assert "message_delta" not in names and "message_stop" not in names
    assert names[-1] == "content_block_stop"


def test_slow_first_byte_and_event_delay(fake_server):
    fake_server.queue(Reply.text("slow").slow_first_byte(0.2), Reply.text("abcdefgh").delay_between_events(0.05))
    started = time.monotonic()
    raw_events(fake_server, body())
    assert time.monotonic() - started >= 0.2
    started = time.monotonic()
    raw_events(fake_server, body())
    assert time.monotonic() - started >= 0.05 * 6  # at least 7 events, 6 gaps


def test_hang_times_out_the_client(fake_server):
    fake_server.queue(Reply.text("never").hang())
    with pytest.raises(anthropic.APITimeoutError):
        sdk(fake_server, timeout=0.3).messages.create(**body())


def test_hang_mid_stream_stalls_after_some_content(fake_server):
    fake_server.queue(Reply.text("stalls halfway through").hang(mid_stream=True))
    seen = []
    with pytest.raises(httpx2.ReadTimeout), sdk(fake_server, timeout=0.3).messages.stream(**body()) as stream:
        for text in stream.text_stream:
            seen.append(text)
    assert seen


@pytest.mark.parametrize(("kind", "raised"), [("not_json", json.JSONDecodeError), ("binary", UnicodeDecodeError)])
def test_malformed_event_breaks_the_sdks_decoder_after_some_content(fake_server, kind, raised):
    fake_server.queue(Reply.text("Some text, then garbage").malformed_event(kind))
    seen = []
    with pytest.raises(raised), sdk(fake_server).messages.stream(**body()) as stream:
        for text in stream.text_stream:
            seen.append(text)
    assert seen


def test_malformed_null_text_reaches_the_sdk_as_none(fake_server):
    fake_server.queue(Reply.from_dict({"text": "Some text", "malformed": "null_text", "after": 3}))
    _, events = raw_events(fake_server, body())
    assert events[-1] == (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": None}},
    )
    with pytest.raises(ValueError, match="malformed kind 'nope'"):
        Reply.text("x").malformed_event("nope")


def wait_for(condition, ceiling: float = 60) -> None:
    """Poll `condition` until it holds; the ceiling is only for a broken test."""
    deadline = time.monotonic() + ceiling
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def test_stop_releases_hung_requests():
    server = FakeAnthropic([Reply.text("never").hang()]).start()
    with socket.create_connection(("127.0.0.1", server.port)) as conn:
        payload = json.dumps(body()).encode()
        head = f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: {len(payload)}\r\n\r\n"
        conn.sendall(head.encode() + payload)
        wait_for(lambda: len(server.requests) == 1)  # the request hangs in the server now
        stopping = threading.Thread(target=server.stop)
        stopping.start()
        stopping.join(timeout=60)  # a hung request that were not released would hold it for ever
        assert not stopping.is_alive()


# -- local-server imitation --------------------------------------------------------------


def test_ollama_like_rejects_output_config_and_has_no_cache_fields():
    with FakeAnthropic(ollama_like=True) as server:
        client = sdk(server)
        with pytest.raises(anthropic.BadRequestError, match="output_config"):
            client.messages.create(**body(), output_config={"format": {"type": "json_schema", "schema": {}}})
        usage = client.messages.create(**body()).usage
        assert usage.cache_read_input_tokens is None and usage.cache_creation_input_tokens is None
        assert usage.input_tokens > 0
        with pytest.raises(anthropic.NotFoundError):
            client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "x"}])


def test_ollama_like_can_ignore_output_config_and_has_no_error_events():
    with FakeAnthropic(
        [Reply.text("not json"), Reply.text("cut short").stream_error()], ollama_like=True, structured_output="ignore"
    ) as server:
        reply = sdk(server).messages.create(**body(), output_config={"format": {"type": "json_schema", "schema": {}}})
        assert reply.content[0].text == "not json"
        _, events = raw_events(server, body())
        names = [n for n, _ in events]
        assert "error" not in names and "message_stop" not in names


# -- standalone --------------------------------------------------------------------------


def test_standalone_process_prints_its_url_and_serves_a_script(tmp_path: Path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"text": "scripted hello"}]))
    path = Path(__file__).with_name("fake_anthropic.py")
    proc = subprocess.Popen(
        [sys.executable, str(path), "--port", "0", "--script", str(script), "--quiet"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        client = anthropic.Anthropic(base_url=url, api_key="x", max_retries=0)
        assert client.messages.create(**body()).content[0].text == "scripted hello"
        assert "You said: again" in client.messages.create(**body("again")).content[0].text
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_rule_predicate_may_inspect_the_server(fake_server):
    fake_server.on(Reply.text("third call"), match=lambda r: len(fake_server.requests) == 3)
    client = sdk(fake_server)
    texts = [client.messages.create(**body()).content[0].text for _ in range(3)]
    assert texts[2] == "third call" and "third call" not in texts[:2]
