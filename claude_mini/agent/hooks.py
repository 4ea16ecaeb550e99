"""The session lifecycle: every point where a part of claude_mini observes or steers a session.

This is the one declaration of the extension points (DESIGN.md sections 3 and 8).
The memory layers implement it today (instructions, recall, extraction,
compaction); the user's hooks from settings are one more implementation of the
same interface. Every method has a default that does nothing, so a part
overrides only the points it cares about. In the order a session meets them:

    on_session_start      the runtime is ready (source: startup | resume)
    on_session_change     /clear or /resume put another conversation in place
    on_instructions_loaded  instruction files entered the context (prompt, attachment, compaction)
    on_turn_start         a user message arrives, before it is added (may refuse it)
    attachments           text to append to the next user-role message
    before_request        a model request is about to be built
    on_context_too_long   the API refused the request as too long
    before_tool           a tool call is about to be checked and run (may rewrite its input)
    after_tool            a tool call finished
    before_turn_end       the model stopped asking for tools (may make it go on)
    on_turn_end           the turn ended
    after_turn            the turn is over, however it ended (done, failed, cancelled, refused)
    before_compact        a compaction is about to summarise the conversation (may refuse it)
    compact_attachments   what goes back beside the summary (the skills invoked so far)
    after_compact         the conversation was replaced by its summary
    on_rewind             /rewind put the conversation back to before one of the user's messages
    on_subagent_start     the Agent tool starts a child (its context may be added to)
    for_subagent          a part that also watches a child's own lifecycle (file checkpoints)
    before_subagent_stop  a child stopped asking for tools (may make it go on)
    on_notification       the user is being waited for (a permission question, an idle prompt)
    on_session_end        the session is closing
    context_report        lines for /context (not an event: read on demand)

A part refuses what is about to happen by raising: `agent.loop.PromptBlocked` (a prompt),
`agent.loop.StoppedByHook` (the rest of the turn), `memory.compact.CompactionRefused` (a
compaction). Parts tell the user things through the `NoticeChannel` they were built with
(`claude_mini.base.notices`), never through attributes a UI polls.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock
from claude_mini.tools.base import ToolResult

if TYPE_CHECKING:
    from claude_mini.agent.events import TurnDone
    from claude_mini.agent.loop import Agent
    from claude_mini.permissions import Decision
    from claude_mini.session import Session
    from claude_mini.subagents.runner import SubagentRun

SessionSource = Literal["startup", "resume", "clear"]
CompactTrigger = Literal["auto", "manual"]
# Why a session ends, in Claude Code's words: /exit or Ctrl-D in the REPL, /clear, anything else.
EndReason = Literal["prompt_input_exit", "clear", "other"]
# Why an instruction file entered the context, in Claude Code's words (its InstructionsLoaded hook).
LoadReason = Literal["session_start", "nested_traversal", "path_glob_match", "include", "compact"]
NotificationKind = Literal["permission_prompt", "idle_prompt"]


@dataclass(frozen=True)
class ToolVerdict:
    """What a part says of a tool call before it runs: a permission opinion, a new input, or both."""

    decision: Decision | None = None  # None: no opinion; the rules decide
    updated_input: dict[str, Any] | None = None  # run the call with this input instead


# What a forked agent runs before a tool call its policy allowed (the user's PreToolUse hooks,
# when `memory.hooksInForks` asks for them): the same verdict as `AgentHooks.before_tool`.
ForkToolCheck = Callable[[ToolUseBlock], Awaitable["ToolVerdict | None"]]


@dataclass(frozen=True)
class InstructionLoad:
    """One instruction file that entered the context, and why (for the InstructionsLoaded hook)."""

    path: str
    memory_type: str  # Claude Code's words: User | Project | Local | Managed
    reason: LoadReason
    globs: tuple[str, ...] = ()  # a path-scoped rule's `paths:`
    trigger_file_path: str | None = None  # the file whose touch attached it
    parent_file_path: str | None = None  # the file that imported it


@dataclass
class CompactRequest:
    """A compaction about to run; `before_compact` may add to its instructions."""

    trigger: CompactTrigger
    instructions: str = ""  # what the summary must pay attention to (/compact's argument)


@dataclass(frozen=True)
class ConversationRewind:
    """The conversation went back to before one of the user's messages (/rewind, `claude-mini
    checkpoints restore`); the session's messages are now what they were then."""

    message_id: str  # the transcript uuid of the user's message rewound to
    old: list[Message]  # the conversation before the rewind
    kept: int  # how many of `old`'s first messages are still there, unchanged
    rebuilt: bool  # the message lay before a compaction: the conversation was rebuilt from the transcript


# `</system-reminder>` (any case, spaces inside the brackets) in an attachment's own text would end
# the block early and put what follows outside it, as if the user wrote it; `<system-reminder>` would
# open a block of its own. Both are written with `&lt;`/`&gt;` inside the block.
_REMINDER_TAG = re.compile(r"<(\s*/?\s*system-reminder\s*)>", re.IGNORECASE)


def system_reminder(text: str) -> TextBlock:
    """Wrap an attachment so the model knows it came from the harness, not the user; the tag
    inside the text (hook output, a memory, a rule file) is escaped so it cannot close the block."""
    inner = _REMINDER_TAG.sub(r"&lt;\1&gt;", text)
    return TextBlock(f"<system-reminder>\n{inner}\n</system-reminder>")


class AgentHooks:
    """One part's view of the session lifecycle; every method is a no-op by default."""

    # -- the session

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        """The runtime is ready and no turn has run yet (`resume`: it holds an earlier conversation)."""

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear (`clear`) or /resume (`resume`) replaced the conversation; per-conversation
        state starts again from `session`. A part with slow work to do here (the user's hooks)
        starts it and finishes it by the next `on_turn_start`."""

    def on_instructions_loaded(self, agent: Agent, loads: Sequence[InstructionLoad]) -> None:
        """Instruction files entered the context: the system prompt was built (session start,
        /clear, after a compaction), or a nested file or path rule was attached. Only observes:
        a part that needs to do slow work starts it in the background."""

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        """The session is closing: stop background work (the UI has already waited for it)."""

    def on_notification(self, agent: Agent, kind: NotificationKind, message: str) -> None:
        """The session is waiting for the user (`message` says for what). Only observes: it must
        not delay the question it announces."""

    # -- one user turn

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        """A user turn begins, before its message joins the conversation (recall's prefetch).
        Raising `PromptBlocked` refuses the prompt: it never joins the conversation."""

    def attachments(self) -> list[str]:
        """Attachments ready to go with the next user-role message (recalled memories)."""
        return []

    async def before_request(self, agent: Agent) -> None:
        """A request is about to be built (compaction checks the context size here)."""

    async def on_context_too_long(self, agent: Agent) -> bool:
        """The API rejected the request as too long; return True if the context was shrunk."""
        return False

    async def before_tool(self, agent: Agent, call: ToolUseBlock) -> ToolVerdict | None:
        """A tool call is about to run: None has no opinion. A verdict's Deny refuses it (its
        reason goes to the model), Ask makes the user confirm it, Allow spares the user the
        question the mode would ask; `updated_input` replaces what the call runs with, and the
        rules judge the new input. Deny and ask rules still bind: code decides what is safe."""
        return None

    async def after_tool(self, agent: Agent, call: ToolUseBlock, result: ToolResult) -> list[str]:
        """A tool finished; return attachments it makes due (path-scoped rules, a hook's context)."""
        return []

    async def before_turn_end(self, agent: Agent, continued: int) -> str | None:
        """The model stopped asking for tools; return a reason to make it go on (sent to it as
        the user's next message), None to let the turn end. `continued`: how many times this
        turn was already made to go on, so a part can stop a loop."""
        return None

    async def on_turn_end(self, agent: Agent, done: TurnDone) -> None:
        """The turn ended normally (extraction is scheduled here)."""

    def after_turn(self, agent: Agent) -> None:
        """The turn is over, however it ended: after `on_turn_end`, or after an error, a cancel or a
        refused prompt. State that lives for one turn ends here (a skill's allowed-tools). Must not
        block or raise: it runs while the turn's exception, if any, goes on."""

    # -- subagents (the Agent tool)

    async def on_subagent_start(self, agent: Agent, run: SubagentRun) -> list[str]:
        """The Agent tool is about to run a child for `agent` (the parent); return context for the
        child's first message (the user's SubagentStart hooks)."""
        return []

    async def before_subagent_stop(self, agent: Agent, run: SubagentRun, continued: int) -> str | None:
        """A child of `agent` stopped asking for tools; a reason makes it go on (SubagentStop), as
        `before_turn_end` does for the parent."""
        return None

    def for_subagent(self, agent: Agent, run: SubagentRun) -> AgentHooks | None:
        """A part to put in the lifecycle of `agent`'s child too, after the child's own limits
        (None: this part only watches `agent`). A child's tool calls meet the parent's
        `before_tool` anyway, but only a part of the child's own sees them with the child's
        working folder, and their results (file checkpoints keep what a subagent's Edit replaced)."""
        return None

    # -- compaction

    async def before_compact(self, agent: Agent, request: CompactRequest) -> None:
        """A compaction is about to summarise the conversation (extraction flushes first); may add
        to `request.instructions`, or raise CompactionRefused to refuse it."""

    def compact_attachments(self, agent: Agent) -> list[str]:
        """Attachments to put beside the summary in the compacted conversation (the names of the
        skills invoked so far); called once per compaction, before `after_compact`."""
        return []

    async def after_compact(self, agent: Agent) -> None:
        """The conversation was replaced by its summary (per-conversation counters restart)."""

    # -- rewind

    async def on_rewind(self, agent: Agent, rewind: ConversationRewind) -> None:
        """The conversation was put back to before one of the user's messages: what a part knows
        of the part rewound away no longer holds (extraction's cursor, attached rules, the todo
        list). Nothing is asked to undo files here: that is the checkpoints' own business."""

    # -- reports

    def context_report(self) -> list[str]:
        """Lines about what this part put in the context, for /context."""
        return []
