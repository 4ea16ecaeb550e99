"""What a model stream yields, in the order a consumer sees it.

    Retrying?  TextDelta* | ToolUseStart ToolInputDelta* | BlockDone ...  ResponseDone

Contract for consumers (the agent loop and the UI):
- `ResponseDone` is the only authority: tools run from `ResponseDone.message`.
- After a `Retrying`, the next attempt streams from its start: everything the failed
  attempt yielded (text, tool calls) is abandoned, never continued, so a UI must not
  glue the new text to the old (the render module says the answer starts again).
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
    """The stream failed and will be retried: `attempt` of `max_attempts` starts after `delay` s.

    `asked` is the server's retry-after when it asked for a longer wait than the client's cap.
    """

    attempt: int
    max_attempts: int
    delay: float
    reason: str
    asked: float | None = None

    def describe(self) -> str:
        """The retry line a UI shows: how long it waits for which attempt, then what failed
        (in that order, so a line cut at the terminal's width keeps the wait)."""
        wait = f"retrying in {seconds(self.delay)}"
        if self.asked is not None and self.asked > self.delay:
            wait += f", not the {seconds(self.asked)} the server asked for"
        return f"{wait} (attempt {self.attempt} of {self.max_attempts}): {self.reason}"


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


def seconds(value: float) -> str:
    """`0.01 s`, `0.5 s`, `2 s`, `3600 s`: a wait as a person reads it."""
    return f"{value:.2g} s" if value < 10 else f"{value:.0f} s"


StreamEvent = TextDelta | ToolUseStart | ToolInputDelta | BlockDone | Retrying | ResponseDone
