"""The model seam: the `ModelClient` protocol every model implements, and the errors it raises.

Errors, each with a one-line message saying what happened and what to do:

    ModelError
     ├── AuthError          no credentials, or the key was refused (401/403)
     ├── ContextTooLong     the prompt does not fit the model's context window
     ├── ModelOverloaded    rate-limited or overloaded after every retry
     ├── ModelUnavailable   server errors, unreachable server, broken, stalled or malformed streams
     └── InvalidRequest     any other 4xx (unknown model, unsupported option, a bug)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from claude_mini.llm.events import ResponseDone, StreamEvent
from claude_mini.llm.messages import ModelRequest


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
