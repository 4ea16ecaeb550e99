"""How `AnthropicClient` retries: the policy (attempts, backoff, capped waits) and the failure an attempt ends with."""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

# Shorter waits for tests and impatient users (RetryPolicy.from_env).
MAX_WAIT_ENV = "CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS"
IDLE_ENV = "CLAUDE_MINI_STREAM_IDLE_SECONDS"


class StreamFailure(Exception):
    """A failure after the stream opened that another attempt may fix."""

    def __init__(self, reason: str, kind: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        # "overloaded" | "server" | "unreachable" | "connection" | "incomplete" | "idle" | "malformed"
        self.kind = kind
        self.retry_after = retry_after


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
