"""A loopback fake of the Anthropic Messages API: real HTTP, real SSE, scripted replies.

Tests drive the real anthropic SDK against it (DESIGN.md section 7); developers run
it by hand to try the CLI without a key:

    python tests/fake_anthropic.py --port 8765 [--script replies.json]
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=x claude-mini -p hi

In a test:

    with FakeAnthropic([Reply.text("hi").stream_error(), Reply.text("hi")]) as server:
        client = AsyncAnthropic(base_url=server.base_url, api_key="test")
        ...
        assert server.requests_for("main")[0].body["model"] == "claude-sonnet-4-6"

What it serves:
- `POST /v1/messages`: SSE when `"stream": true` (message_start, content blocks with
  several deltas each, ping, message_delta, message_stop), a JSON message otherwise;
- `POST /v1/messages/count_tokens`: `{"input_tokens": N}` (404 when `ollama_like`).

Which reply: the first matching `Rule` (by purpose header, substring, regex or
predicate; its reply may be a function of the request), else the next queued `Reply`,
else a default text that quotes the last user message (or a minimal JSON instance when
the request asks for structured output).

Usage numbers come from a deterministic prompt-cache simulation (`PromptCache`).
Nothing is random: message and tool ids come from counters.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import re
import signal
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PURPOSE_HEADER = "x-claude-mini-purpose"
DEFAULT_MODEL = "claude-sonnet-4-6"

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
# The broken event each `Reply.malformed_event` kind sends.
MALFORMED = {
    "not_json": b"event: content_block_delta\ndata: {this is not json\n\n",
    "binary": bytes(range(256)) * 4,
    "null_text": b'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
    b'"delta": {"type": "text_delta", "text": null}}\n\n',
}
ERROR_MESSAGES = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
    "overloaded_error": "Overloaded",
}


# ---------------------------------------------------------------------------
# Replies and rules


@dataclass(frozen=True)
class Reply:
    """One scripted answer: content blocks plus optional faults. Builders return copies."""

    blocks: tuple[dict[str, Any], ...] = ()
    stop_reason: str | None = None
    status: int = 200
    error_type: str | None = None
    error_message: str | None = None
    retry_after: float | None = None
    stream_error_type: str | None = None
    reset: bool = False
    cut: bool = False
    fault_after: int | None = None
    first_byte_delay: float = 0.0
    event_delay: float = 0.0
    hang_at: str | None = None  # "start" (no byte ever) or "mid" (stalls mid-stream)
    malformed: str | None = None  # "not_json", "binary" or "null_text" (see `malformed_event`)

    # -- builders ----------------------------------------------------------

    @classmethod
    def text(cls, text: str) -> Reply:
        """A plain text answer (stop_reason end_turn)."""
        return cls(blocks=({"type": "text", "text": text},))

    @classmethod
    def tool(cls, name: str, input: dict[str, Any], id: str | None = None, *, text: str | None = None) -> Reply:
        """One tool_use block, optionally preceded by text (stop_reason tool_use)."""
        return cls.tools([(name, input, id)], text=text)

    @classmethod
    def tools(cls, calls: Iterable[tuple], *, text: str | None = None) -> Reply:
        """Several tool_use blocks: `calls` holds `(name, input)` or `(name, input, id)`."""
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        for call in calls:
            name, input_, id_ = (*call, None)[:3]
            blocks.append({"type": "tool_use", "id": id_, "name": name, "input": dict(input_)})
        return cls(blocks=tuple(blocks))

    @classmethod
    def json(cls, obj: Any) -> Reply:
        """A structured-output answer: the JSON text of `obj`."""
        return cls.text(json.dumps(obj))

    @classmethod
    def error(
        cls,
        status: int,
        message: str | None = None,
        *,
        retry_after: float | None = None,
        error_type: str | None = None,
    ) -> Reply:
        """An HTTP error answer with no content (e.g. 400 'prompt is too long')."""
        return cls().http_error(status, retry_after=retry_after, error_type=error_type, message=message)

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> Reply:
        """A reply from a script entry, e.g. `{"text": "hi", "stream_error": "overloaded_error"}`."""
        reply = _content_from_dict(spec)
        if "http_error" in spec:
            reply = reply.http_error(
                int(spec["http_error"]),
                retry_after=spec.get("retry_after"),
                error_type=spec.get("error_type"),
                message=spec.get("message"),
            )
        return _faults_from_dict(reply, spec)

    # -- modifiers ---------------------------------------------------------

    def and_tool(self, name: str, input: dict[str, Any], id: str | None = None) -> Reply:
        """This reply plus one more tool_use block."""
        block = {"type": "tool_use", "id": id, "name": name, "input": dict(input)}
        return replace(self, blocks=(*self.blocks, block))

    @classmethod
    def web_search(
        cls, query: str, results: Iterable[tuple[str, str]], answer: str, cited: int | None = 0, id: str = "srvtoolu_1"
    ) -> Reply:
        """The server's web search as the API returns it: a `server_tool_use` for `query`, its
        `web_search_tool_result` (`results`: (title, url) pairs), then `answer` citing result `cited`."""
        found = [
            {"type": "web_search_result", "title": t, "url": u, "encrypted_content": f"enc-{n}", "page_age": None}
            for n, (t, u) in enumerate(results)
        ]
        text: dict[str, Any] = {"type": "text", "text": answer}
        if cited is not None and found:
            hit = found[cited]
            text["citations"] = [
                {
                    "type": "web_search_result_location",
                    "url": hit["url"],
                    "title": hit["title"],
                    "encrypted_index": f"idx-{cited}",
                    "cited_text": answer[:60],
                }
            ]
        blocks = (
            {"type": "server_tool_use", "id": id, "name": "web_search", "input": {"query": query}},
            {"type": "web_search_tool_result", "tool_use_id": id, "content": found},
            text,
        )
        return cls(blocks=blocks)

    def with_thinking(self, thinking: str, signature: str = "sig-fake") -> Reply:
        """This reply preceded by an extended-thinking block."""
        block = {"type": "thinking", "thinking": thinking, "signature": signature}
        return replace(self, blocks=(block, *self.blocks))

    def with_stop_reason(self, stop_reason: str) -> Reply:
        """Override the inferred stop_reason (e.g. `max_tokens`)."""
        return replace(self, stop_reason=stop_reason)

    def http_error(
        self,
        status: int,
        retry_after: float | None = None,
        error_type: str | None = None,
        message: str | None = None,
    ) -> Reply:
        """Answer with an HTTP error status and the API's error JSON instead of content."""
        kind = error_type or ERROR_TYPES.get(status, "api_error")
        return replace(
            self,
            status=status,
            error_type=kind,
            error_message=message or ERROR_MESSAGES.get(kind, kind),
            retry_after=retry_after,
        )

    def stream_error(
        self, error_type: str = "overloaded_error", message: str | None = None, after: int | None = None
    ) -> Reply:
        """Stream some content, then an in-stream `event: error` (status stays 200)."""
        return replace(
            self,
            stream_error_type=error_type,
            error_message=message or ERROR_MESSAGES.get(error_type, error_type),
            fault_after=after,
        )

    def reset_mid_stream(self, after: int | None = None) -> Reply:
        """Stream some content, then reset the TCP connection (RST, not FIN)."""
        return replace(self, reset=True, fault_after=after)

    def cut_before_stop(self) -> Reply:
        """End the stream cleanly but without message_delta and message_stop."""
        return replace(self, cut=True)

    def slow_first_byte(self, seconds: float) -> Reply:
        """Wait before sending the status line."""
        return replace(self, first_byte_delay=seconds)

    def delay_between_events(self, seconds: float) -> Reply:
        """Wait between SSE events (a slow model)."""
        return replace(self, event_delay=seconds)

    def hang(self, mid_stream: bool = False, after: int | None = None) -> Reply:
        """Never answer (or stall mid-stream) until the server stops or the client gives up."""
        return replace(self, hang_at="mid" if mid_stream else "start", fault_after=after)

    def malformed_event(self, kind: str = "not_json", after: int | None = None) -> Reply:
        """Stream some content, then one broken event, then end the body: a `data:` line that
        is not JSON (`not_json`), raw bytes that are not UTF-8 text (`binary`; `after=0`: the
        whole body), or a text delta whose `text` is null (`null_text`)."""
        if kind not in MALFORMED:
            raise ValueError(f"malformed kind {kind!r}: expected one of {', '.join(MALFORMED)}")
        return replace(self, malformed=kind, fault_after=after)

    # -- derived -----------------------------------------------------------

    @property
    def kind(self) -> str:
        """A short label for logs."""
        if self.status != 200:
            return f"http {self.status}"
        parts = [f"tool_use:{b['name']}" if b["type"] == "tool_use" else b["type"] for b in self.blocks]
        if self.stream_error_type:
            parts.append(f"stream_error:{self.stream_error_type}")
        parts += [name for name, on in (("reset", self.reset), ("cut", self.cut)) if on]
        if self.malformed:
            parts.append(f"malformed:{self.malformed}")
        if self.hang_at:
            parts.append(f"hang:{self.hang_at}")
        return "+".join(parts) or "empty"

    def resolved_stop_reason(self) -> str:
        """The explicit stop_reason, else tool_use when tool blocks exist, else end_turn."""
        if self.stop_reason:
            return self.stop_reason
        return "tool_use" if any(b["type"] == "tool_use" for b in self.blocks) else "end_turn"


def _content_from_dict(spec: dict[str, Any]) -> Reply:
    if "json" in spec:
        reply = Reply.json(spec["json"])
    elif "tool" in spec:
        reply = Reply.tool(spec["tool"], spec.get("input", {}), spec.get("id"), text=spec.get("text"))
    elif "tools" in spec:
        calls = [(t["name"], t.get("input", {}), t.get("id")) for t in spec["tools"]]
        reply = Reply.tools(calls, text=spec.get("text"))
    elif "text" in spec:
        reply = Reply.text(spec["text"])
    else:
        reply = Reply()
    if spec.get("thinking"):
        reply = reply.with_thinking(spec["thinking"])
    if spec.get("stop_reason"):
        reply = reply.with_stop_reason(spec["stop_reason"])
    return reply


def _faults_from_dict(reply: Reply, spec: dict[str, Any]) -> Reply:
    after = spec.get("after")
    if spec.get("stream_error"):
        reply = reply.stream_error(spec["stream_error"], spec.get("message"), after)
    if spec.get("reset_mid_stream"):
        reply = reply.reset_mid_stream(after)
    if spec.get("cut_before_stop"):
        reply = reply.cut_before_stop()
    if spec.get("slow_first_byte"):
        reply = reply.slow_first_byte(float(spec["slow_first_byte"]))
    if spec.get("delay_between_events"):
        reply = reply.delay_between_events(float(spec["delay_between_events"]))
    if spec.get("hang"):
        reply = reply.hang(mid_stream=spec["hang"] == "mid", after=after)
    if spec.get("malformed"):
        reply = reply.malformed_event(spec["malformed"], after)
    return reply


@dataclass
class RecordedRequest:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    purpose: str | None
    timestamp: float
    reply: Reply | None = None
    usage: dict[str, int] | None = None

    @property
    def text(self) -> str:
        """All human-readable text of system and messages, newline-joined (what rules search)."""
        if not isinstance(self.body, dict):
            return ""
        parts = _texts(self.body.get("system"))
        for message in self.body.get("messages") or []:
            parts += _texts(message.get("content"))
        return "\n".join(parts)

    @property
    def last_user_text(self) -> str:
        """The text blocks of the last user message."""
        body = self.body if isinstance(self.body, dict) else {}
        messages = body.get("messages") or []
        for message in reversed(messages):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, str):
                    return content
                return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
        return ""


def _texts(value: Any) -> list[str]:
    """Strings under text/content/thinking keys, plus tool inputs as JSON."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for item in value for t in _texts(item)]
    if not isinstance(value, dict):
        return []
    out: list[str] = []
    for key in ("text", "thinking", "content"):
        out += _texts(value.get(key))
    if value.get("type") == "tool_use":
        out.append(json.dumps(value.get("input", {})))
    return out


@dataclass
class Rule:
    """A reply served whenever a request matches; one-shot by default, persistent with times=None.

    `reply` may be a function of the request (a scripted model whose answer depends on what it
    is sent, e.g. an extraction that saves what the conversation stated)."""

    reply: Reply | Callable[[RecordedRequest], Reply]
    purpose: str | None = None
    contains: str | None = None
    regex: str | None = None
    match: Callable[[RecordedRequest], bool] | None = None
    times: int | None = 1
    hits: int = 0

    def matches(self, request: RecordedRequest) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.purpose is not None and request.purpose != self.purpose:
            return False
        if self.contains is not None and self.contains not in request.text:
            return False
        if self.regex is not None and not re.search(self.regex, request.text):
            return False
        return self.match is None or self.match(request)


# ---------------------------------------------------------------------------
# Prompt-cache simulation


def estimate_tokens(value: Any) -> int:
    """Deterministic token estimate: a quarter of the canonical JSON length, rounded up."""
    return math.ceil(len(_canonical(value)) / 4)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _strip_cache_control(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _content_list(content: Any) -> list[Any]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def prefix_blocks(body: dict[str, Any]) -> list[tuple[str, int, bool]]:
    """The request prefix, tools -> system -> messages, as (identity, tokens, is_breakpoint).

    A message block's identity also carries its role, message index and the settings
    (tool_choice, thinking) whose change invalidates the messages part of the cache.
    """
    out: list[tuple[str, int, bool]] = []
    for tool in body.get("tools") or []:
        out.append(_entry(tool, {}))
    for block in _content_list(body.get("system")):
        out.append(_entry(block, {}))
    settings = {k: body.get(k) for k in ("tool_choice", "thinking")}
    for index, message in enumerate(body.get("messages") or []):
        context = {"role": message.get("role"), "message": index, "settings": settings}
        out += [_entry(block, context) for block in _content_list(message.get("content"))]
    if body.get("cache_control") and out:  # top-level cache_control marks the last block
        identity, tokens, _ = out[-1]
        out[-1] = (identity, tokens, True)
    return out


def _entry(block: Any, context: dict[str, Any]) -> tuple[str, int, bool]:
    stripped = _strip_cache_control(block)
    is_breakpoint = isinstance(block, dict) and "cache_control" in block
    return _canonical({"block": stripped, **context}), estimate_tokens(stripped), is_breakpoint


class PromptCache:
    """Which prefix tokens a request reads from / writes to the cache (lifetimes ignored).

    Stored entries are hashes of prefixes that ended at a breakpoint of an earlier
    request. Each breakpoint of this request looks back `lookback` positions (the API
    documents about 20) for the longest stored prefix; `lookback=0` checks only the
    breakpoint itself.
    """

    def __init__(self, min_tokens: int = 0, lookback: int = 20) -> None:
        self.min_tokens = min_tokens
        self.lookback = lookback
        self._stored: set[str] = set()
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self._stored.clear()

    def account(self, body: dict[str, Any]) -> dict[str, int]:
        """Usage for `body` (input, cache_creation, cache_read) and store its breakpoints."""
        blocks = prefix_blocks(body)
        hashes, cumulative = self._prefixes(str(body.get("model")), blocks)
        breakpoints = [i for i, (_, _, bp) in enumerate(blocks) if bp]
        total = cumulative[-1] if cumulative else 0
        with self._lock:
            read = max((self._longest_hit(b, hashes, cumulative) for b in breakpoints), default=0)
            created = 0
            if breakpoints and cumulative[breakpoints[-1]] >= self.min_tokens:
                created = max(0, cumulative[breakpoints[-1]] - read)
            for b in breakpoints:
                if cumulative[b] >= self.min_tokens:
                    self._stored.add(hashes[b])
        return {
            "input_tokens": total - read - created,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": read,
        }

    def _longest_hit(self, breakpoint: int, hashes: list[str], cumulative: list[int]) -> int:
        for j in range(breakpoint, max(-1, breakpoint - self.lookback - 1), -1):
            if hashes[j] in self._stored:
                return cumulative[j]
        return 0

    @staticmethod
    def _prefixes(model: str, blocks: list[tuple[str, int, bool]]) -> tuple[list[str], list[int]]:
        digest = hashlib.sha256(model.encode()).hexdigest()
        hashes: list[str] = []
        cumulative: list[int] = []
        running = 0
        for identity, tokens, _ in blocks:
            digest = hashlib.sha256(f"{digest}\x00{identity}".encode()).hexdigest()
            running += tokens
            hashes.append(digest)
            cumulative.append(running)
        return hashes, cumulative


# ---------------------------------------------------------------------------
# SSE events


def _chunks(text: str, size: int, pieces: int) -> list[str]:
    """`text` split into chunks of at most `size` chars, and into at least `pieces` when possible."""
    if not text:
        return []
    step = max(1, min(size, math.ceil(len(text) / pieces)))
    return [text[i : i + step] for i in range(0, len(text), step)]


def block_events(index: int, block: dict[str, Any], chunk_chars: int) -> list[tuple[str, dict]]:
    """content_block_start, deltas, content_block_stop for one block."""
    kind = block["type"]
    if kind == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": c} for c in _chunks(block["text"], chunk_chars, 2)]
        if block.get("citations"):  # as the API streams a cited passage: its citations, then the text
            start["citations"] = []
            deltas = [{"type": "citations_delta", "citation": c} for c in block["citations"]] + deltas
    elif kind == "web_search_tool_result":  # a server tool's result arrives whole in its start event
        start, deltas = dict(block), []
    elif kind in ("tool_use", "server_tool_use"):
        start = {"type": kind, "id": block["id"], "name": block["name"], "input": {}}
        # Like the API: an empty first chunk, then the JSON in several pieces.
        pieces = _chunks(json.dumps(block["input"]), chunk_chars, 3)
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *pieces]]
    else:
        start = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": c} for c in _chunks(block["thinking"], chunk_chars, 2)]
        deltas.append({"type": "signature_delta", "signature": block["signature"]})
    events = [("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in deltas]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def message_events(message: dict[str, Any], chunk_chars: int) -> list[tuple[str, dict]]:
    """The full SSE event list for a finished message (as the API streams it)."""
    start = {**message, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**message["usage"], "output_tokens": 1}
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        events += block_events(index, block, chunk_chars)
    # The API sends its first ping right after the first content_block_start.
    events.insert(min(2, len(events)), ("ping", {"type": "ping"}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    usage = {"output_tokens": message["usage"]["output_tokens"]}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def default_fault_point(events: list[tuple[str, dict]]) -> int:
    """How many events go out before a fault: through the middle content delta."""
    deltas = [i for i, (name, _) in enumerate(events) if name == "content_block_delta"]
    return deltas[len(deltas) // 2] + 1 if deltas else 1


def minimal_instance(schema: dict[str, Any]) -> Any:
    """The smallest value of a JSON schema's type (for default structured-output replies)."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {name: minimal_instance(props.get(name, {})) for name in schema.get("required", props)}
    return {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}.get(kind)


# ---------------------------------------------------------------------------
# The server


class FakeAnthropic:
    """The fake server: start it (or use `with`), point the SDK at `base_url`, script replies."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        ollama_like: bool = False,
        structured_output: str | None = None,
        min_cacheable_tokens: int = 0,
        cache_lookback: int = 20,
        chunk_chars: int = 12,
        api_key: str | None = None,
        reset_grace: float = 0.05,
        log: Callable[[str], None] | None = None,
        record_dir: str | None = None,
    ) -> None:
        """`structured_output`: "supported", "reject" (400 on output_config) or "ignore".

        Defaults to "reject" when `ollama_like`, else "supported". `api_key`, when set,
        makes requests with another key get a 401. `record_dir`: every request body is also
        written there as `NNN-<purpose>.json` (to read what a CLI run sent).
        """
        self.host, self.port = host, port
        self.ollama_like = ollama_like
        self.structured_output = structured_output or ("reject" if ollama_like else "supported")
        self.cache = PromptCache(min_cacheable_tokens, cache_lookback)
        self.chunk_chars = chunk_chars
        self.api_key = api_key
        self.reset_grace = reset_grace
        self.log = log
        self.record_dir = record_dir
        self._queue: deque[Reply] = deque(replies)
        self._rules: list[Rule] = []
        self._requests: list[RecordedRequest] = []
        self._lock = threading.RLock()  # re-entrant: a rule's `match` may read `requests`
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._counters = {"msg": 0, "toolu": 0, "req": 0}
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> FakeAnthropic:
        """Bind and serve in a daemon thread."""
        self._httpd = _Server((self.host, self.port), _Handler)
        self._httpd.fake = self
        self.port = self._httpd.server_address[1]
        # A short poll interval keeps stop() (and so every test teardown) fast.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; hung replies give up and open connections are closed."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            _quietly(conn.shutdown, socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The URL to give the SDK (no `/v1`)."""
        return f"http://{self.host}:{self.port}"

    # -- scripting ---------------------------------------------------------

    def queue(self, *replies: Reply) -> None:
        """Append replies to the queue (served in order when no rule matches)."""
        with self._lock:
            self._queue.extend(replies)

    def on(
        self,
        reply: Reply | Callable[[RecordedRequest], Reply],
        *,
        purpose: str | None = None,
        contains: str | None = None,
        regex: str | None = None,
        match: Callable[[RecordedRequest], bool] | None = None,
        times: int | None = 1,
    ) -> Rule:
        """Serve `reply` to matching requests, before the queue; `times=None` = every time."""
        rule = Rule(reply, purpose, contains, regex, match, times)
        with self._lock:
            self._rules.append(rule)
        return rule

    def load_script(self, script: Any) -> None:
        """Load a script: a list of reply specs, or `{"replies": [...], "rules": [...]}`."""
        if isinstance(script, list):
            script = {"replies": script}
        self.queue(*(Reply.from_dict(spec) for spec in script.get("replies", [])))
        for spec in script.get("rules", []):
            self.on(
                Reply.from_dict(spec["reply"]),
                purpose=spec.get("purpose"),
                contains=spec.get("contains"),
                regex=spec.get("regex"),
                times=spec.get("times", 1),
            )

    @property
    def pending(self) -> int:
        """How many queued replies are left."""
        with self._lock:
            return len(self._queue)

    # -- inspection --------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received, in order."""
        with self._lock:
            return list(self._requests)

    def requests_for(self, purpose: str, path: str | None = "/v1/messages") -> list[RecordedRequest]:
        """Requests with this purpose header (to `path`; `path=None` for any)."""
        return [r for r in self.requests if r.purpose == purpose and (path is None or r.path == path)]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def reset_cache(self) -> None:
        """Forget every cached prefix."""
        self.cache.reset()

    # -- internals used by the handler -------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)
            if self.record_dir is not None:
                name = f"{len(self._requests):03d}-{request.purpose}.json"
                with open(os.path.join(self.record_dir, name), "w", encoding="utf-8") as f:
                    json.dump(request.body, f, indent=1, ensure_ascii=False)

    def _log_exchange(self, request: RecordedRequest | None) -> None:
        if self.log and request is not None:
            reply = request.reply.kind if request.reply else "-"
            self.log(f"{request.method} {request.path} purpose={request.purpose} reply={reply} usage={request.usage}")

    def _next_id(self, kind: str) -> str:
        with self._lock:
            self._counters[kind] += 1
            return f"{kind}_fake_{self._counters[kind]:06d}"

    def _choose(self, request: RecordedRequest) -> Reply:
        with self._lock:
            for rule in self._rules:
                if rule.matches(request):
                    rule.hits += 1
                    return rule.reply(request) if callable(rule.reply) else rule.reply
            if self._queue:
                return self._queue.popleft()
        return self._default_reply(request)

    def _default_reply(self, request: RecordedRequest) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        fmt = (body.get("output_config") or {}).get("format") or {}
        if fmt.get("schema"):
            return Reply.json(minimal_instance(fmt["schema"]))
        said = " ".join(request.last_user_text.split())
        if not said:
            return Reply.text("Done.")
        return Reply.text(f"(fake model) You said: {said[:80]}")

    def _build_message(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """The finished message for `reply`, with ids assigned and usage accounted."""
        content = []
        for block in reply.blocks:
            if block["type"] == "tool_use" and not block.get("id"):
                block = {**block, "id": self._next_id("toolu")}
            content.append(dict(block))
        usage = self._input_usage(body)
        usage["output_tokens"] = max(1, sum(estimate_tokens(_texts(b)) for b in content))
        return {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or DEFAULT_MODEL,
            "content": content,
            "stop_reason": reply.resolved_stop_reason(),
            "stop_sequence": None,
            "usage": usage,
        }

    def _input_usage(self, body: dict[str, Any]) -> dict[str, int]:
        usage = self.cache.account(body)
        if self.ollama_like:  # local servers report no cache fields at all
            return {"input_tokens": sum(usage.values())}
        return usage

    def _wait(self, seconds: float | None) -> bool:
        """Sleep, waking early when the server stops; True when it is stopping."""
        return self._stopping.wait(seconds)


def _quietly(fn: Callable[..., Any], *args: Any) -> None:
    """Run a socket clean-up step whose failure (already closed, peer gone) does not matter."""
    with contextlib.suppress(OSError):
        fn(*args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeAnthropic

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client killed while its keep-alive connection idles resets it under the handler's
        # readline: it went away, as in `_Exchange.run`, which is no error of the server's.
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    """Routes one HTTP exchange to the fake; all behaviour lives in `_Exchange`."""

    protocol_version = "HTTP/1.1"  # keep-alive and chunked SSE, like the real API
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.fake._lock:
            self.server.fake._connections.add(self.connection)

    def finish(self) -> None:
        with self.server.fake._lock:
            self.server.fake._connections.discard(self.connection)
        _quietly(super().finish)

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        _Exchange(self, self.server.fake).run()

    def do_GET(self) -> None:  # noqa: N802
        _Exchange(self, self.server.fake).run()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are recorded instead of printed


class _Exchange:
    """One request and its reply, faults included."""

    def __init__(self, handler: _Handler, fake: FakeAnthropic) -> None:
        self.h = handler
        self.fake = fake
        self.request: RecordedRequest | None = None

    def run(self) -> None:
        try:
            self._run()
        except (BrokenPipeError, ConnectionResetError):
            self.h.close_connection = True  # the client went away; nothing to answer
        finally:
            self.fake._log_exchange(self.request)

    def _run(self) -> None:
        request = self.request = self._read_request()
        self.fake._record(request)
        if self.fake.api_key and not self._authorised():
            return self._send_error(401, "authentication_error", "invalid x-api-key")
        if request.method != "POST":
            return self._send_error(404, "not_found_error", f"Not found: {request.path}")
        if request.path == "/v1/messages/count_tokens":
            return self._count_tokens(request)
        if request.path == "/v1/messages":
            return self._messages(request)
        self._send_error(404, "not_found_error", f"Not found: {request.path}")

    def _read_request(self) -> RecordedRequest:
        length = int(self.h.headers.get("content-length") or 0)
        raw = self.h.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.h.headers.items()}
        return RecordedRequest(
            method=self.h.command,
            path=self.h.path.split("?", 1)[0],
            headers=headers,
            body=body,
            purpose=headers.get(PURPOSE_HEADER),
            timestamp=time.time(),
        )

    def _authorised(self) -> bool:
        key = self.h.headers.get("x-api-key") or ""
        bearer = (self.h.headers.get("authorization") or "").removeprefix("Bearer ")
        return self.fake.api_key in (key, bearer)

    def _count_tokens(self, request: RecordedRequest) -> None:
        if self.fake.ollama_like:
            return self._send_error(404, "not_found_error", "Not found")
        body = request.body if isinstance(request.body, dict) else {}
        tokens = sum(t for _, t, _ in prefix_blocks(body))
        self._send_json(200, {"input_tokens": tokens})

    def _messages(self, request: RecordedRequest) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        if "output_config" in body and self.fake.structured_output == "reject":
            message = "output_config: Extra inputs are not permitted"
            return self._send_error(400, "invalid_request_error", message)
        reply = self.fake._choose(request)
        request.reply = reply
        if reply.first_byte_delay and self.fake._wait(reply.first_byte_delay):
            return
        if reply.hang_at == "start":
            self.fake._wait(None)
            self.h.close_connection = True
            return
        if reply.status != 200:
            return self._send_error(reply.status, reply.error_type, reply.error_message, reply.retry_after)
        if reply.reset and reply.fault_after == 0:  # `after=0`: reset before any response byte
            return self._reset()
        message = self.fake._build_message(body, reply)
        request.usage = dict(message["usage"])
        if body.get("stream"):
            return self._stream(message, reply)
        if reply.reset:
            return self._reset()
        self._send_json(200, message)

    # -- responses ---------------------------------------------------------

    def _send_json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.h.send_response(status)
        self.h.send_header("content-type", "application/json")
        self.h.send_header("content-length", str(len(data)))
        self.h.send_header("request-id", self.fake._next_id("req"))
        for name, value in (extra or {}).items():
            self.h.send_header(name, value)
        self.h.end_headers()
        self.h.wfile.write(data)

    def _send_error(self, status: int, kind: str | None, message: str | None, retry_after: float | None = None) -> None:
        kind = kind or ERROR_TYPES.get(status, "api_error")
        payload = {"type": "error", "error": {"type": kind, "message": message or kind}}
        extra = {"retry-after": _format_seconds(retry_after)} if retry_after is not None else {}
        self._send_json(status, payload, extra)

    def _stream(self, message: dict[str, Any], reply: Reply) -> None:
        events = message_events(message, self.fake.chunk_chars)
        if reply.cut:
            events = [e for e in events if e[0] not in ("message_delta", "message_stop")]
        faulty = reply.stream_error_type or reply.reset or reply.hang_at == "mid" or reply.malformed
        cut_at = reply.fault_after if reply.fault_after is not None else default_fault_point(events)
        self._start_sse()
        for sent, (name, data) in enumerate(events):
            if faulty and sent == cut_at:
                return self._stream_fault(reply)
            self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            if reply.event_delay and self.fake._wait(reply.event_delay):
                return
        if faulty:  # a fault point past the last event still fires
            return self._stream_fault(reply)
        self._chunk(b"")

    def _start_sse(self) -> None:
        self.h.send_response(200)
        self.h.send_header("content-type", "text/event-stream; charset=utf-8")
        self.h.send_header("cache-control", "no-cache")
        self.h.send_header("transfer-encoding", "chunked")
        self.h.send_header("request-id", self.fake._next_id("req"))
        self.h.end_headers()

    def _chunk(self, data: bytes) -> None:
        """One HTTP/1.1 chunk; an empty one ends the body."""
        self.h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.h.wfile.flush()

    def _stream_fault(self, reply: Reply) -> None:
        if reply.reset:
            return self._reset(self.fake.reset_grace)
        if reply.hang_at == "mid":
            self.fake._wait(None)
            self.h.close_connection = True
            return
        if reply.malformed:
            self._chunk(MALFORMED[reply.malformed])
            return self._chunk(b"")
        if not self.fake.ollama_like:  # local servers just stop; they have no error event
            error = {"type": reply.stream_error_type, "message": reply.error_message}
            payload = {"type": "error", "error": error}
            self._chunk(f"event: error\ndata: {json.dumps(payload)}\n\n".encode())
        self._chunk(b"")

    def _reset(self, grace: float = 0.0) -> None:
        """Abort the connection with a TCP RST: SO_LINGER 0, then close every reference.

        `grace` lets the client read what was sent first: a kernel that receives a RST
        discards unread data, and the point of a mid-stream reset is a partial answer.
        """
        if grace:
            self.fake._wait(grace)
        conn = self.h.connection
        _quietly(conn.setsockopt, socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.h.close_connection = True
        _quietly(self.h.rfile.close)  # the makefile() reference would keep the socket open
        _quietly(conn.close)


def _format_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else str(seconds)


# ---------------------------------------------------------------------------
# Standalone use


def main(argv: list[str] | None = None) -> int:
    """Run the fake until interrupted; the first stdout line is its base URL."""
    args = _parse_args(argv)
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    server = FakeAnthropic(
        host=args.host,
        port=args.port,
        ollama_like=args.ollama_like,
        structured_output=args.structured_output,
        min_cacheable_tokens=args.min_cache_tokens,
        log=log,
        record_dir=args.record,
    )
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            server.load_script(json.load(f))
    server.start()
    print(server.base_url, flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Fake Anthropic Messages API on loopback.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765, help="0 picks a free port")
    parser.add_argument("--script", help="JSON file: a list of replies or {replies, rules}")
    parser.add_argument("--ollama-like", action="store_true", help="no cache fields, no count_tokens")
    parser.add_argument("--structured-output", choices=["supported", "reject", "ignore"])
    parser.add_argument("--min-cache-tokens", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="do not log requests to stderr")
    parser.add_argument("--record", metavar="DIR", help="also write every request body to DIR/NNN-<purpose>.json")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
