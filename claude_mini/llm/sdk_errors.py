"""Mapping the anthropic SDK's errors to ours: a `StreamFailure` another attempt may fix, or a final `ModelError`.

The SDK is imported inside `classify` only, when an error has already happened: importing
it costs over a second (see anthropic_client.py).
"""

from __future__ import annotations

import re
from typing import Any

from claude_mini.llm.protocol import (
    AuthError,
    ContextTooLong,
    InvalidRequest,
    ModelError,
    ModelOverloaded,
    ModelUnavailable,
)
from claude_mini.llm.retry import StreamFailure

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


def classify(err: Exception, endpoint: str, *, opened: bool) -> Exception | None:
    """Our exception for an SDK/transport error: `StreamFailure` to retry, `ModelError` to stop.

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
            return StreamFailure(_status_detail(err), kind, _retry_after(err))
        return _status_error(err)
    if isinstance(err, anthropic.APIConnectionError | httpx2.TransportError):
        if opened:
            return StreamFailure(f"connection lost mid-response ({describe(err)})", "connection")
        return StreamFailure(f"could not connect ({describe(err)})", "unreachable")
    if opened and isinstance(err, ValueError):  # JSONDecodeError, UnicodeDecodeError in the SSE
        return StreamFailure(f"malformed stream ({describe(err)})", "malformed")
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
    kind = error_field(err.body, "type") or "api_error"
    message = error_field(err.body, "message") or kind
    if kind in RETRYABLE_STREAM_ERRORS:
        failure_kind = "overloaded" if kind in OVERLOADED_TYPES else "connection"
        return StreamFailure(f"{kind}: {message}", failure_kind, _retry_after(err))
    return _status_error(err)


def _status_detail(err: Any) -> str:
    """`429 rate_limit_error: Number of request tokens...` (at most 300 characters)."""
    kind = error_field(err.body, "type") or ""
    message = error_field(err.body, "message") or err.message
    return f"{err.status_code} {kind}: {message}"[:300]


def _status_error(err: Any) -> ModelError:
    """One-line user message for an HTTP error status that is not retried (or a final in-stream error)."""
    kind = error_field(err.body, "type") or ""
    message = error_field(err.body, "message") or err.message
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


def rejects_output_config(err: Exception) -> bool:
    """True for a 400/422 that complains about a field it does not know."""
    if getattr(err, "status_code", None) not in (400, 422):
        return False
    body = getattr(err, "body", None)
    text = f"{error_field(body, 'message') or ''} {getattr(err, 'message', '')}"
    return bool(REJECTED_FIELD.search(text))


def error_field(body: Any, name: str) -> str | None:
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


def describe(err: BaseException) -> str:
    """`ConnectError: [Errno 111] Connection refused`: the root cause of an SDK error, which
    itself says only "Connection error."."""
    while err.__cause__ is not None and type(err).__module__.startswith("anthropic"):
        err = err.__cause__
    text = str(err).strip()
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
