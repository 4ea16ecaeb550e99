"""`AnthropicClient`: the `ModelClient` (protocol.py) over the anthropic SDK, the real API or any compatible server.

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

Every failure ends as one of protocol.py's `ModelError`s: sdk_errors.py maps the SDK's errors
(retry or stop), retry.py holds the policy, and stream_assembly.py builds each attempt's message.

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
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from claude_mini.llm.events import ResponseDone, Retrying, StreamEvent, seconds
from claude_mini.llm.messages import ModelRequest, Usage, build_request_body
from claude_mini.llm.protocol import ModelError, ModelOverloaded, ModelUnavailable, drain
from claude_mini.llm.retry import IDLE_ENV, RetryPolicy, StreamFailure
from claude_mini.llm.sdk_errors import classify, describe, error_field, rejects_output_config
from claude_mini.llm.stream_assembly import Assembler

log = logging.getLogger(__name__)

PURPOSE_HEADER = "X-Claude-Mini-Purpose"
DEFAULT_BASE_URL = "https://api.anthropic.com"
CREDENTIAL_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
# Local servers behind ANTHROPIC_BASE_URL ignore the key, but the SDK refuses to send
# a request without one.
PLACEHOLDER_KEY = "no-key-needed"


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
            assembler = Assembler(request.model)
            try:
                # aclosing: a consumer that stops early closes the HTTP stream now, not at GC.
                async with contextlib.aclosing(self._attempt(request, assembler, attempt)) as events:
                    async for event in events:
                        if isinstance(event, ResponseDone):
                            event.retried = retried
                        yield event
                return
            except StreamFailure as err:
                failure = err
                retried += Usage.from_dict(assembler.usage)
            stalls += failure.kind == "idle"
            if attempt == policy.max_attempts or stalls > 1:  # a stall is retried once only
                raise self._gave_up(failure, attempt) from failure
            delay = policy.delay(attempt, failure.retry_after)
            yield Retrying(attempt + 1, policy.max_attempts, delay, failure.reason, failure.retry_after)
            await policy.sleep(delay)

    async def _attempt(
        self, request: ModelRequest, assembler: Assembler, attempt: int
    ) -> AsyncGenerator[StreamEvent, None]:
        """One HTTP request and its stream; every failure leaves as `StreamFailure` or `ModelError`."""
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
            failure: Exception = StreamFailure(f"no data from the server for {seconds(idle)}", "idle")
            log_entry.failed(failure)
            raise failure from err
        except (StreamFailure, ModelError) as err:
            log_entry.failed(err)
            raise
        except Exception as err:
            mapped = classify(err, self.endpoint, opened=stream is not None)
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
            if "output_config" in body and rejects_output_config(err):
                self.structured_output = False
                body.pop("output_config")
                return await self._open(request, body)
            raise
        if "output_config" in body:
            self.structured_output = True
        return stream

    def _gave_up(self, failure: StreamFailure, attempts: int) -> ModelError:
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
        reason = err.reason if isinstance(err, StreamFailure) else describe(err)
        if status is not None and status != 200:
            kind = error_field(getattr(raw or err, "body", None), "type") or ""
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
