"""The model seam: the `ModelClient` protocol and `AnthropicClient` over the anthropic SDK.

All retrying is `AnthropicClient.stream`'s own (`RetryPolicy`); the SDK's is turned off
(`max_retries=0`) so that no wait hides from the user. A failed attempt is retried
and announced by one `Retrying` event: HTTP 408, 409, 429, 5xx and 529 (as the SDK
would: honouring `x-should-retry` and retry-after, but waiting at most `max_wait`),
an unreachable server, and what goes wrong after the stream opened, which the SDK
never retried: an in-stream `event: error` (overloaded), a connection dropped
mid-stream, a stream that ends without `message_stop`, a stream with no event for
`idle_timeout` (retried once), and bytes that are not the API's SSE (a `data:` line
that is not JSON, binary, `"text": null`). The next attempt streams from its start
(llm/events.py says what a UI does with that).

Structured output: a request with `output_schema` carries `output_config`. A server
that rejects the field (400/422 naming it, as local Anthropic-compatible servers do)
gets the request again without it, and `structured_output` becomes False so later
requests skip it; callers then parse JSON from the text.

Errors, each with a one-line message saying what happened and what to do:

    ModelError
     ├── AuthError          no credentials, or the key was refused (401/403)
     ├── ContextTooLong     the prompt does not fit the model's context window
     ├── ModelOverloaded    rate-limited or overloaded after every retry
     ├── ModelUnavailable   server errors, unreachable server, broken, stalled or malformed streams
     └── InvalidRequest     any other 4xx (unknown model, unsupported option, a bug)

`import anthropic` costs over a second, so it happens on the first request, never
at import time (`claude-mini --version` must stay instant). A caller that knows a
request is coming may start it earlier with `preload_sdk()`. The import is CPU work
and holds the GIL, so it only overlaps what leaves the main thread waiting (a prompt
still arriving on stdin, git, the disk), not claude_mini's own Python work.

Each HTTP request is one line of the debug log (`_RequestLog`), which `--debug` shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import random
import re
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from claude_mini.llm.events import (
    BlockDone,
    ResponseDone,
    Retrying,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
    seconds,
)
from claude_mini.llm.messages import (
    Block,
    Message,
    ModelRequest,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
    build_request_body,
)

log = logging.getLogger(__name__)

PURPOSE_HEADER = "X-Claude-Mini-Purpose"
DEFAULT_BASE_URL = "https://api.anthropic.com"
CREDENTIAL_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
# Local servers behind ANTHROPIC_BASE_URL ignore the key, but the SDK refuses to send
# a request without one.
PLACEHOLDER_KEY = "no-key-needed"
# Shorter waits for tests and impatient users (RetryPolicy.from_env).
MAX_WAIT_ENV = "CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS"
IDLE_ENV = "CLAUDE_MINI_STREAM_IDLE_SECONDS"

# In-stream error types worth another attempt; others (invalid_request_error...) are final.
RETRYABLE_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
OVERLOADED_TYPES = {"overloaded_error", "rate_limit_error"}
STATUS_OF_ERROR_TYPE = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
CONTEXT_TOO_LONG = re.compile(
    r"prompt is too long|context (length|window)|maximum context|too many tokens"
    r"|exceeds the available context",
    re.IGNORECASE,
)
# How servers that do not know `output_config` say so (Anthropic-compatible proxies,
# pydantic-based servers such as LiteLLM, strict JSON validators).
REJECTED_FIELD = re.compile(
    r"output_config|extra inputs|unknown field|unrecognized|not permitted|additional propert",
    re.IGNORECASE,
)


# ---------------------------------------------------------------------------
# Errors


class ModelError(Exception):
    """A model call failed; `str(err)` says what happened and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AuthError(ModelError):
    """No credentials, or the server refused them."""


class ContextTooLong(ModelError):
    """The request does not fit the model's context window; compacting helps."""


class ModelOverloaded(ModelError):
    """Rate limits or overload persisted through every retry."""


class ModelUnavailable(ModelError):
    """The server failed, could not be reached, or kept breaking the stream."""


class InvalidRequest(ModelError):
    """The server rejected the request itself (unknown model, unsupported option...)."""


class _StreamFailure(Exception):
    """A failure after the stream opened that another attempt may fix."""

    def __init__(self, reason: str, kind: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        # "overloaded" | "server" | "unreachable" | "connection" | "incomplete" | "idle" | "malformed"
        self.kind = kind
        self.retry_after = retry_after


def missing_credentials() -> bool:
    """True when nothing tells the SDK where or as whom to connect (no key, token or base URL)."""
    return not any(os.environ.get(name) for name in CREDENTIAL_ENV)


@functools.cache  # one thread per process, however often it is asked
def preload_sdk() -> None:
    """Start `import anthropic` in a background thread, for a run that will send a request.

    Without credentials no request goes to the SDK (a local model or a setup error
    follows), so nothing starts. The first request imports the SDK as usual; if the
    thread is still at it, that import waits for it (per-module import locks). Errors
    in the thread are dropped: a missing or broken SDK fails there, as without preloading.
    """
    if not missing_credentials():
        threading.Thread(target=_import_sdk, name="import-anthropic", daemon=True).start()


def _import_sdk() -> None:
    with contextlib.suppress(Exception):
        import anthropic  # noqa: F401


# ---------------------------------------------------------------------------
# The seam


class ModelClient(Protocol):
    """What the rest of claude_mini needs from a model (Anthropic API, local model, fake)."""

    name: str
    provider: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Events for one response, ending with `ResponseDone`; raises `ModelError`."""
        ...

    async def complete(self, request: ModelRequest) -> ResponseDone:
        """The finished response, for callers that do not show progress."""
        ...

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """Input tokens of `request`, or None when the server cannot count."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


async def drain(events: AsyncIterator[StreamEvent]) -> ResponseDone:
    """Consume a stream and return its `ResponseDone` (shared by `complete` implementations)."""
    done: ResponseDone | None = None
    async for event in events:
        if isinstance(event, ResponseDone):
            done = event
    if done is None:
        raise ModelUnavailable("The model stream ended without a response. Try again.")
    return done


@dataclass
class RetryPolicy:
    """How `AnthropicClient` retries: every retry is its own (the SDK's are off), each wait capped.

    `max_wait` caps every wait, a server's retry-after included: a 429 asking for an hour
    waits a minute, says so, and tries again. `idle_timeout`: a stream (or the wait for
    its first byte) with no event for that long is a failed attempt, retried once.
    `from_env` lets tests and impatient users shorten both.
    """

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_wait: float = 60.0
    idle_timeout: float = 90.0
    sleep: Callable[[float], Awaitable[Any]] = field(default=asyncio.sleep)
    rand: Callable[[], float] = field(default=random.random)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ) -> tuple[RetryPolicy, list[str]]:
        """The default policy, with `CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS` and
        `CLAUDE_MINI_STREAM_IDLE_SECONDS` applied, and what was wrong with either (a value that
        is not a number of seconds is ignored; the caller tells the user)."""
        policy, problems = cls(), []
        for name, attr, least in ((MAX_WAIT_ENV, "max_wait", "0 or more"), (IDLE_ENV, "idle_timeout", "more than 0")):
            raw = environ.get(name)
            if raw is None:
                continue
            try:
                value = float(raw)
            except ValueError:
                value = -1.0
            if value >= 0 and (value > 0 or attr == "max_wait"):
                setattr(policy, attr, value)
            else:
                problems.append(
                    f"{name}={raw!r} is not a number of seconds ({least}); using "
                    f"{getattr(policy, attr):g}. Unset it or give seconds, e.g. 30."
                )
        return policy, problems

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after failed `attempt` (1-based): the server's word, else backoff."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_wait)
        backoff: float = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return min(self.max_wait, backoff * (1 - 0.25 * self.rand()))  # jitter: parallel clients spread out


# ---------------------------------------------------------------------------
# Assembling one attempt


@dataclass
class _Part:
    """One content block while it streams. `text` holds text, thinking or tool input JSON."""

    kind: str
    text: str = ""
    id: str = ""
    name: str = ""
    signature: str = ""


class _Assembler:
    """Maps one attempt's raw SDK events to ours and builds its final message."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.parts: dict[int, _Part] = {}
        self.blocks: dict[int, Block] = {}
        self.usage: dict[str, int] = {}
        self.stop_reason: str | None = None

    def feed(self, event: Any) -> list[StreamEvent]:
        """Our events for one raw event; `_StreamFailure` when the event is malformed.

        The SDK builds events without validating them, so a server's `"text": null` or a
        missing field shows up here, as a TypeError or AttributeError of this pure code.
        """
        kind = getattr(event, "type", "")
        handler = getattr(self, f"_on_{kind}", None)
        try:
            return handler(event) if handler else []
        except (TypeError, AttributeError, KeyError, ValueError) as err:
            raise _StreamFailure(f"malformed {kind} event from the server ({_describe(err)})", "malformed") from err

    def _on_message_start(self, event: Any) -> list[StreamEvent]:
        self.usage.update(_usage_fields(event.message.usage))
        self.model = event.message.model or self.model
        return []

    def _on_content_block_start(self, event: Any) -> list[StreamEvent]:
        block, index = event.content_block, event.index
        if block.type == "text":
            part = self.parts[index] = _Part("text", text=encodable(block.text or ""))
            return [TextDelta(part.text, index)] if part.text else []
        if block.type == "tool_use":
            self.parts[index] = _Part("tool_use", id=block.id, name=block.name)
            return [ToolUseStart(block.id, block.name, index)]
        if block.type == "thinking":
            self.parts[index] = _Part("thinking", text=block.thinking or "", signature=block.signature or "")
        else:
            self.parts[index] = _Part(block.type)  # server tools etc.: not represented in Message
        return []

    def _on_content_block_delta(self, event: Any) -> list[StreamEvent]:
        part, delta, index = self.parts.get(event.index), event.delta, event.index
        if part is None:
            return []
        if delta.type == "text_delta":
            piece = encodable(delta.text)
            part.text += piece
            return [TextDelta(piece, index)] if piece else []
        if delta.type == "input_json_delta":
            part.text += delta.partial_json
            return [ToolInputDelta(part.id, delta.partial_json)] if delta.partial_json else []
        if delta.type == "thinking_delta":
            part.text += encodable(delta.thinking)
        elif delta.type == "signature_delta":
            part.signature = delta.signature
        return []

    def _on_content_block_stop(self, event: Any) -> list[StreamEvent]:
        part = self.parts.get(event.index)
        block = _to_block(part) if part else None
        if block is None:
            return []
        self.blocks[event.index] = block
        return [BlockDone(block, event.index)]

    def _on_message_delta(self, event: Any) -> list[StreamEvent]:
        self.stop_reason = getattr(event.delta, "stop_reason", None) or self.stop_reason
        self.usage.update(_usage_fields(getattr(event, "usage", None)))
        return []

    def finish(self) -> ResponseDone:
        """The attempt's response; a stream that never said why it stopped is a failure.

        `message_delta` (with stop_reason) follows the last content block, so once it
        arrived the message is complete even if `message_stop` was lost.
        """
        if self.stop_reason is None:
            raise _StreamFailure("the response stream ended early", "incomplete")
        for index, part in self.parts.items():  # blocks that never got content_block_stop
            if index not in self.blocks and (block := _to_block(part)) is not None:
                self.blocks[index] = block
        content = [self.blocks[i] for i in sorted(self.blocks)]
        message = Message("assistant", content)
        return ResponseDone(message, self.stop_reason, Usage.from_dict(self.usage), self.model)


def _to_block(part: _Part) -> Block | None:
    if part.kind == "text":
        return TextBlock(encodable(part.text))
    if part.kind == "thinking":
        return ThinkingBlock(encodable(part.text), part.signature)
    if part.kind == "tool_use":
        return ToolUseBlock(part.id, part.name, _parse_input(encodable(part.text)))
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def encodable(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD, as a UTF-8 decoder would.

    JSON can spell them (`"\\udc1b"`), so a reply can carry them, and no encoder takes
    them: the transcript, stdout and the next request would all fail.
    """
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _encodable_value(value: Any) -> Any:
    """A decoded JSON value with `encodable` applied to every string in it, keys too."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable(k): _encodable_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encodable_value(v) for v in value]
    return value


def _parse_input(raw: str) -> dict[str, Any]:
    """A tool call's input; broken JSON is kept visible so the tool's validation reports it."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
        if _SURROGATE_ESCAPE.search(raw):
            value = _encodable_value(value)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        return {"_invalid_json": raw}
    return value if isinstance(value, dict) else {"_invalid_json": raw}


def _usage_fields(usage: Any) -> dict[str, int]:
    """The usage counts an SDK object carries (None fields are absent, not zero)."""
    names = Usage().to_dict()
    return {n: int(v) for n in names if (v := getattr(usage, n, None)) is not None}


# ---------------------------------------------------------------------------
# The Anthropic client


class AnthropicClient:
    """`ModelClient` over `anthropic.AsyncAnthropic`: the real API or any compatible server."""

    provider = "anthropic"

    def __init__(self, *, retry: RetryPolicy | None = None, max_retries: int | None = None, **sdk_kwargs: Any) -> None:
        """`sdk_kwargs` (api_key, base_url, timeout, http_client...) build the AsyncAnthropic on
        the first request, always with the SDK's `max_retries=0`: `retry` does all the retrying,
        and `max_retries` here sets how often (0: one attempt only)."""
        self._sdk: Any = None
        self._sdk_kwargs = {**sdk_kwargs, "max_retries": 0}
        self.retry = retry or RetryPolicy.from_env()[0]
        if max_retries is not None:
            self.retry.max_attempts = max_retries + 1
        # None until a server tells us; False makes later requests skip output_config.
        self.structured_output: bool | None = None
        self.counts_tokens: bool | None = None
        self.base_url = str(sdk_kwargs.get("base_url") or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL)
        default = self.base_url.rstrip("/") == DEFAULT_BASE_URL
        self.name = "Anthropic API" if default else f"Anthropic-compatible server at {self.base_url}"
        self.endpoint = self.base_url.rstrip("/") + "/v1/messages"

    def _client(self) -> Any:
        if self._sdk is None:
            import anthropic  # lazy: see the module docstring

            kwargs = dict(self._sdk_kwargs)
            has_key = any(kwargs.get(k) for k in ("api_key", "auth_token", "credentials")) or any(
                os.environ.get(name) for name in CREDENTIAL_ENV[:2]
            )
            if not has_key and self.base_url.rstrip("/") != DEFAULT_BASE_URL:
                kwargs["api_key"] = PLACEHOLDER_KEY
            self._sdk = anthropic.AsyncAnthropic(**kwargs)
        return self._sdk

    async def aclose(self) -> None:
        """Close the SDK client (and its connections)."""
        if self._sdk is not None:
            await self._sdk.close()
            self._sdk = None

    # -- requests ----------------------------------------------------------

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body = build_request_body(request)
        if self.structured_output is False:
            body.pop("output_config", None)  # the caller parses JSON from the text instead
        return body

    @staticmethod
    def _headers(request: ModelRequest) -> dict[str, str]:
        return {PURPOSE_HEADER: request.purpose}

    async def complete(self, request: ModelRequest) -> ResponseDone:
        """The finished response (drains `stream`)."""
        return await drain(self.stream(request))

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """Input tokens as the server counts them; None if it cannot (404) or the call fails."""
        if self.counts_tokens is False:
            return None
        body = self._body(request)
        body.pop("max_tokens", None)
        log_entry = _RequestLog(self.endpoint + "/count_tokens", request)
        try:
            result = await self._client().messages.count_tokens(**body, extra_headers=self._headers(request))
        except Exception as err:  # advisory: any failure means "unknown"
            log_entry.failed(err)
            if getattr(err, "status_code", None) == 404:
                self.counts_tokens = False
            return None
        log_entry.answered(getattr(result, "_request_id", None), 200)
        self.counts_tokens = True
        return int(result.input_tokens)

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response, retrying failed attempts; see the module docstring."""
        policy = self.retry
        retried = Usage()  # input the server counted for attempts that then broke off
        stalls = 0
        for attempt in range(1, policy.max_attempts + 1):
            assembler = _Assembler(request.model)
            try:
                # aclosing: a consumer that stops early closes the HTTP stream now, not at GC.
                async with contextlib.aclosing(self._attempt(request, assembler, attempt)) as events:
                    async for event in events:
                        if isinstance(event, ResponseDone):
                            event.retried = retried
                        yield event
                return
            except _StreamFailure as err:
                failure = err
                retried += Usage.from_dict(assembler.usage)
            stalls += failure.kind == "idle"
            if attempt == policy.max_attempts or stalls > 1:  # a stall is retried once only
                raise self._gave_up(failure, attempt) from failure
            delay = policy.delay(attempt, failure.retry_after)
            yield Retrying(attempt + 1, policy.max_attempts, delay, failure.reason, failure.retry_after)
            await policy.sleep(delay)

    async def _attempt(
        self, request: ModelRequest, assembler: _Assembler, attempt: int
    ) -> AsyncGenerator[StreamEvent, None]:
        """One HTTP request and its stream; every failure leaves as `_StreamFailure` or `ModelError`."""
        idle = self.retry.idle_timeout
        log_entry = _RequestLog(self.endpoint, request, attempt)
        stream = None
        try:
            self._client()  # the first builds the SDK client: an import, no stall of the server's
            log_entry.started = time.monotonic()  # nor part of the request's time
            async with asyncio.timeout(idle):  # the wait for the status line counts as idle too
                stream = await self._open(request, self._body(request))
            log_entry.answered(stream.response.headers.get("request-id"), stream.response.status_code)
            async with stream:
                events = aiter(stream)
                while True:
                    try:
                        async with asyncio.timeout(idle):  # per event: a slow consumer is no stall
                            raw = await anext(events)
                    except StopAsyncIteration:
                        break
                    for event in assembler.feed(raw):
                        yield event
            done = assembler.finish()
        except TimeoutError as err:
            failure: Exception = _StreamFailure(f"no data from the server for {seconds(idle)}", "idle")
            log_entry.failed(failure)
            raise failure from err
        except (_StreamFailure, ModelError) as err:
            log_entry.failed(err)
            raise
        except Exception as err:
            mapped = _classify(err, self.endpoint, opened=stream is not None)
            log_entry.failed(mapped or err, err)
            if mapped is None:
                raise
            raise mapped from err
        finally:
            log_entry.close()
        yield done

    async def _open(self, request: ModelRequest, body: dict[str, Any]) -> Any:
        """Start the HTTP stream; a server that rejects `output_config` gets the request without it."""
        try:
            stream = await self._client().messages.create(**body, stream=True, extra_headers=self._headers(request))
        except Exception as err:
            if "output_config" in body and _rejects_output_config(err):
                self.structured_output = False
                body.pop("output_config")
                return await self._open(request, body)
            raise
        if "output_config" in body:
            self.structured_output = True
        return stream

    def _gave_up(self, failure: _StreamFailure, attempts: int) -> ModelError:
        tries = "twice" if attempts == 2 else f"{attempts} times"
        detail = f"{failure.reason}; tried {tries}"
        kept = "Your conversation is kept"
        if failure.kind == "overloaded":
            return ModelOverloaded(
                f"{self.name} is overloaded or rate-limited ({detail}). {kept}; try again in a minute."
            )
        if failure.kind == "idle":
            return ModelUnavailable(
                f"{self.endpoint} stopped sending ({detail}). {kept}; try again, or set {IDLE_ENV} for a slower server."
            )
        if failure.kind == "malformed":
            return ModelUnavailable(
                f"{self.endpoint} sent a response that is not the Anthropic Messages "
                f"stream ({detail}). {kept}; check ANTHROPIC_BASE_URL and the server."
            )
        if failure.kind == "unreachable":
            return ModelUnavailable(
                f"Could not reach the model server at {self.endpoint} ({detail}). "
                f"{kept}; check the network and ANTHROPIC_BASE_URL, then try again."
            )
        return ModelUnavailable(
            f"The model server at {self.endpoint} kept failing ({detail}). {kept}; try again later."
        )


class _RequestLog:
    """One debug-log line per HTTP request: method, URL, model, purpose, status, request id, time.

    Never headers or body: the key travels in the headers. `--debug` shows the log on stderr.
    """

    def __init__(self, url: str, request: ModelRequest, attempt: int = 1) -> None:
        self.url, self.request, self.attempt = url, request, attempt
        self.started = time.monotonic()
        self.outcome = "no answer"
        self.request_id: str | None = None
        self.done = False

    def answered(self, request_id: str | None, status: int) -> None:
        self.request_id, self.outcome = request_id, str(status)

    def failed(self, err: BaseException, raw: BaseException | None = None) -> None:
        """The attempt failed with `err` (`raw`: the SDK error it was mapped from)."""
        status = getattr(raw or err, "status_code", None)
        reason = err.reason if isinstance(err, _StreamFailure) else _describe(err)
        if status is not None and status != 200:
            kind = _error_field(getattr(raw or err, "body", None), "type") or ""
            self.outcome = f"{status} {kind}".rstrip()
            self.request_id = getattr(raw or err, "request_id", None)
        elif self.outcome == "no answer":
            self.outcome = f"no answer ({reason[:200]})"
        else:
            self.outcome = f"{self.outcome}, then {reason[:200]}"
        self.close()

    def close(self) -> None:
        if self.done:
            return
        self.done = True
        elapsed = time.monotonic() - self.started
        attempt = f" attempt={self.attempt}" if self.attempt > 1 else ""
        log.debug(
            "POST %s model=%s purpose=%s -> %s request-id=%s time=%.2fs%s",
            self.url,
            self.request.model,
            self.request.purpose,
            self.outcome,
            self.request_id or "-",
            elapsed,
            attempt,
        )


# ---------------------------------------------------------------------------
# Mapping SDK errors


def _classify(err: Exception, endpoint: str, *, opened: bool) -> Exception | None:
    """Our exception for an SDK/transport error: `_StreamFailure` to retry, `ModelError` to stop.

    `opened`: the stream had started (a ValueError then means the server sent bytes that
    are not SSE or JSON). None means "not a model error": let it propagate as the bug it is.
    """
    import anthropic
    import httpx2

    if isinstance(err, anthropic.APIStatusError):
        if err.status_code == 200:  # an `event: error` inside the stream
            return _stream_error(err)
        if _should_retry(err):
            kind = "overloaded" if err.status_code in (429, 529) else "server"
            return _StreamFailure(_status_detail(err), kind, _retry_after(err))
        return _status_error(err)
    if isinstance(err, anthropic.APIConnectionError | httpx2.TransportError):
        if opened:
            return _StreamFailure(f"connection lost mid-response ({_describe(err)})", "connection")
        return _StreamFailure(f"could not connect ({_describe(err)})", "unreachable")
    if opened and isinstance(err, ValueError):  # JSONDecodeError, UnicodeDecodeError in the SSE
        return _StreamFailure(f"malformed stream ({_describe(err)})", "malformed")
    if isinstance(err, TypeError) and "authentication" in str(err):
        return AuthError(
            "No API credentials. Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
            "or ANTHROPIC_BASE_URL for a local server."
        )
    return None


def _should_retry(err: Any) -> bool:
    """The SDK's rule, applied by us: the server's `x-should-retry`, else 408, 409, 429, 5xx."""
    headers = getattr(getattr(err, "response", None), "headers", None) or {}
    said = headers.get("x-should-retry")
    if said in ("true", "false"):
        return bool(said == "true")
    return bool(err.status_code in (408, 409, 429) or err.status_code >= 500)


def _stream_error(err: Any) -> Exception:
    kind = _error_field(err.body, "type") or "api_error"
    message = _error_field(err.body, "message") or kind
    if kind in RETRYABLE_STREAM_ERRORS:
        failure_kind = "overloaded" if kind in OVERLOADED_TYPES else "connection"
        return _StreamFailure(f"{kind}: {message}", failure_kind, _retry_after(err))
    return _status_error(err)


def _status_detail(err: Any) -> str:
    """`429 rate_limit_error: Number of request tokens...` (at most 300 characters)."""
    kind = _error_field(err.body, "type") or ""
    message = _error_field(err.body, "message") or err.message
    return f"{err.status_code} {kind}: {message}"[:300]


def _status_error(err: Any) -> ModelError:
    """One-line user message for an HTTP error status that is not retried (or a final in-stream error)."""
    kind = _error_field(err.body, "type") or ""
    message = _error_field(err.body, "message") or err.message
    if err.status_code == 200:  # in-stream: the HTTP status was fine, the error type tells
        status = STATUS_OF_ERROR_TYPE.get(kind, 500)
        detail = f"in-stream {kind}: {message}"[:300]
    else:
        status = err.status_code
        detail = _status_detail(err)
    if status in (401, 403) or kind in ("authentication_error", "permission_error"):
        return AuthError(
            f"The server refused the credentials ({detail}). Check ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN."
        )
    if status in (400, 413) and CONTEXT_TOO_LONG.search(detail):
        return ContextTooLong(
            f"The conversation is too long for the model ({detail}). Run /compact or /clear and retry."
        )
    if status == 429 or kind in OVERLOADED_TYPES or status == 529:
        return ModelOverloaded(f"The API is busy ({detail}). Your conversation is kept; try again in a minute.")
    if status >= 500:
        return ModelUnavailable(f"The model server failed ({detail}). Your conversation is kept; try again.")
    if status == 404:
        return InvalidRequest(f"Not found ({detail}). Check the model name and ANTHROPIC_BASE_URL.")
    return InvalidRequest(f"The model server rejected the request ({detail}).")


def _rejects_output_config(err: Exception) -> bool:
    """True for a 400/422 that complains about a field it does not know."""
    if getattr(err, "status_code", None) not in (400, 422):
        return False
    body = getattr(err, "body", None)
    text = f"{_error_field(body, 'message') or ''} {getattr(err, 'message', '')}"
    return bool(REJECTED_FIELD.search(text))


def _error_field(body: Any, name: str) -> str | None:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get(name), str):
            return str(error[name])
    return None


def _retry_after(err: Any) -> float | None:
    """Seconds from retry-after-ms / retry-after headers, when the error carries a response."""
    headers = getattr(getattr(err, "response", None), "headers", None) or {}
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return float(headers[name]) * scale
        except (KeyError, TypeError, ValueError):
            continue
    return None


def _describe(err: BaseException) -> str:
    """`ConnectError: [Errno 111] Connection refused`: the root cause of an SDK error, which
    itself says only "Connection error."."""
    while err.__cause__ is not None and type(err).__module__.startswith("anthropic"):
        err = err.__cause__
    text = str(err).strip()
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
