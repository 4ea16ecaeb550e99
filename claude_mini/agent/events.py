"""Typed events the agent loop yields to the UI (REPL renderer, print mode).

Model stream events (`TextDelta`, `ToolUseStart`, `ToolInputDelta`,
`Retrying`) pass through from `llm/`; the loop adds the rest. A `Notice`
(claude_mini.base.notices) renders like one of the session's notices.
"""

from __future__ import annotations

from dataclasses import dataclass

from claude_mini.base.notices import Notice
from claude_mini.llm.events import BlockDone, Retrying, TextDelta, ToolInputDelta, ToolUseStart
from claude_mini.llm.messages import Message, ToolUseBlock, Usage
from claude_mini.tools.base import ToolResult


@dataclass
class MessageAdded:
    """A complete message joined the conversation (stream-json prints these)."""

    message: Message


@dataclass
class ToolStarted:
    """A tool call was allowed and begins to run."""

    call: ToolUseBlock


@dataclass
class ToolFinished:
    """A tool call ended (or was denied); `result.is_error` says which way."""

    call: ToolUseBlock
    result: ToolResult
    denied: bool = False


@dataclass
class TurnDone:
    """The user turn is over: the model stopped asking for tools."""

    stop_reason: str
    requests: int
    usage: Usage


# What `Agent.run` yields: the model's stream (without its final `ResponseDone`, which the
# loop turns into `MessageAdded`), then the loop's own events.
AgentEvent = (
    TextDelta
    | ToolUseStart
    | ToolInputDelta
    | BlockDone
    | Retrying
    | MessageAdded
    | ToolStarted
    | ToolFinished
    | Notice
    | TurnDone
)
