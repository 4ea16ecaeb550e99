"""What a model stream yields, in the order a consumer sees it.

    Retrying?  TextDelta* | ToolUseStart ToolInputDelta* | BlockDone ...  ResponseDone

Contract for consumers (the agent loop and the UI):
- `ResponseDone` is the only authority: tools run from `ResponseDone.message`.
- `TextDelta`s never repeat text already yielded, even across a retried stream.
- After a `Retrying`, a tool block that was started but never got its `BlockDone`
  may be continued under the same id by the next attempt, or abandoned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from claude_mini.llm.messages import Block, Message, Usage


@dataclass
class TextDelta:
    """A piece of assistant text for content block `index`."""

    text: str
    index: int


@dataclass
class ToolUseStart:
    """The model began a tool call; its input follows as `ToolInputDelta`s."""

    id: str
    name: str
    index: int


@dataclass
class ToolInputDelta:
    """A piece of a tool call's input JSON (not parseable on its own)."""

    id: str
    partial_json: str


@dataclass
class BlockDone:
    """One content block is complete (text, tool_use with parsed input, or thinking)."""

    block: Block
    index: int


@dataclass
class Retrying:
    """The stream failed and will be retried: `attempt` of `max_attempts` starts after `delay` s."""

    attempt: int
    max_attempts: int
    delay: float
    reason: str


@dataclass
class ResponseDone:
    """The finished response: the message to keep, why it stopped, what it cost."""

    message: Message
    stop_reason: str
    usage: Usage  # this response's (what the context meter reads)
    model: str
    retried: Usage = field(default_factory=Usage)  # failed attempts before it: billed, not kept

    @property
    def billed(self) -> Usage:
        """What the request cost in all: this response plus the attempts that broke off."""
        return self.usage + self.retried


StreamEvent = TextDelta | ToolUseStart | ToolInputDelta | BlockDone | Retrying | ResponseDone
