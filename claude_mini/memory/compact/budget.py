"""Layer 5's budget: how big the context window is, how full it is, and where auto-compact starts.

ContextMeter          how full the context is: last response's input + cache + output,
                      plus an estimate of what was added since
compact_threshold()   window - min(max output, 20,000) - 13,000, at most 3/8 of the
                      window (monotonic, >= half of it), or a configured fraction
budget_line()         past half the threshold, the line on the context used that joins the
                      next user message"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from claude_mini.base.text import estimate_tokens
from claude_mini.llm.messages import (
    Message,
    Usage,
    media_tokens,
    message_to_api,
)

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.config import Config
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.memory.compact.compactor import Compactor


DEFAULT_CONTEXT_WINDOW = 200_000


# Longest matching prefix wins; unknown models get the default.
CONTEXT_WINDOWS: dict[str, int] = {
    "claude-": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3": 200_000,
}


OUTPUT_RESERVE_CAP = 20_000
SAFETY_MARGIN = 13_000
WARNING_MARGIN = 20_000


@runtime_checkable
class KnowsContextWindow(Protocol):
    """A client that knows its context window (the local model: what it allocated)."""

    context_window: int


def context_window(config: Config, model: str, client: ModelClient | None = None) -> int:
    """The model's context window in tokens: the `contextWindow` setting, else what the client
    knows (the local model's allocated context), else the per-model table."""
    configured = config.memory.compact.context_window
    if configured is not None:
        return configured
    if isinstance(client, KnowsContextWindow):
        known = client.context_window
        if isinstance(known, int) and not isinstance(known, bool) and known > 0:
            return known
    name = model.lower()
    matches = [prefix for prefix in CONTEXT_WINDOWS if name.startswith(prefix)]
    return CONTEXT_WINDOWS[max(matches, key=len)] if matches else DEFAULT_CONTEXT_WINDOW


def compact_threshold(config: Config, window: int, max_tokens: int) -> int:
    """Tokens above which a request triggers auto-compaction.

    The default leaves room for the answer and a margin: min(max output, 20,000) +
    13,000, but never more than 3/8 of the window (a quarter for the answer, an eighth
    as margin), so a small window compacts at 5/8 of it rather than before every
    request. Either way the threshold never falls as the window grows, and never below
    half of it. `autoCompactThreshold` (or CLAUDE_MINI_AUTOCOMPACT_PCT) moves it down or
    up as a fraction of the window, but never above what still leaves room for the answer.
    """
    fraction = config.memory.compact.threshold
    if fraction is None:
        reserves = min(max_tokens, OUTPUT_RESERVE_CAP) + SAFETY_MARGIN
        return max(window - min(reserves, window * 3 // 8), 1)
    answer = min(max_tokens, OUTPUT_RESERVE_CAP, window // 4)
    return max(min(int(window * fraction), window - answer), 1)


def warning_margin(window: int) -> int:
    """How close to the threshold the status line starts warning: 20,000 tokens, or a tenth
    of a smaller window (a 16k window is not "nearly full" as soon as it starts)."""
    return min(WARNING_MARGIN, window // 10)


@dataclass
class ContextMeter:
    """How full the context is: the API's usage of the last response plus an estimate of what is new.

    `sent_messages` is len(messages) when the last request was sent; the response
    to it is counted as output, so only messages after it are estimated.
    """

    sent_messages: int = 0

    def estimate(self, agent: Agent) -> int:
        """Tokens the next request would carry."""
        messages = agent.session.messages
        usage = agent.last_usage
        if not usage.total_input:  # nothing measured yet (new or resumed session, just compacted)
            return estimate_request(agent.system, agent.tool_specs, messages)
        new = messages[self.sent_messages + 1 :]
        return usage.total_input + usage.output_tokens + sum(_estimate_message(m) for m in new)

    def mark_sent(self, agent: Agent) -> None:
        self.sent_messages = len(agent.session.messages)

    def reset(self, agent: Agent) -> None:
        agent.last_usage = Usage()
        self.mark_sent(agent)


def _estimate_message(message: Message) -> int:
    # Images and PDFs count what the API charges for them, not their base64's length.
    return estimate_tokens(str(message_to_api(message, media=False)["content"])) + media_tokens(message)


def estimate_request(system: list[str], tools: list[dict[str, Any]], messages: list[Message]) -> int:
    return (
        sum(estimate_tokens(s) for s in system)
        + estimate_tokens(str(tools))
        + sum(_estimate_message(m) for m in messages)
    )


BUDGET_SHARE = 0.5  # the budget line appears once the context passes this share of the threshold


def budget_line(compactor: Compactor) -> str | None:
    """The context used against the auto-compact threshold (or the window when auto-compact is
    off), once past half of it; None below."""
    used = compactor.used()
    limit = compactor.threshold if compactor.auto_enabled else compactor.window
    if used <= limit * BUDGET_SHARE:
        return None
    used = round(used, -2)
    against = "before auto-compaction" if compactor.auto_enabled else "of the context window (auto-compact is off)"
    return (
        f"Context: {used:,} of {limit:,} tokens used {against} ({used * 100 // limit}%). "
        "Wrap up or save what matters if the work is long."
    )
