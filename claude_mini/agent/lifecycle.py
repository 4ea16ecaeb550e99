"""The session lifecycle: every point where a part of claude_mini observes or steers a session,
and the one place each of them is dispatched.

`Part` declares the extension points once (DESIGN.md sections 3 and 8), as simonw/llm's
hookspecs do: every method has a default that does nothing, so a part overrides only the points
it cares about. The memory layers, the user's hooks from settings, MCP servers, skills, subagents,
the todo list and file checkpoints are parts; each feature builds its own from one `PartContext`
(`part(ctx)`), and the runtime lists them, in lifecycle order, in `runtime.PARTS`.

`Lifecycle` holds one agent's parts in that order and has one method per event, which owns how
the parts' answers combine (httpx's named event hooks: one dispatch site each). Nobody else loops
over parts. In the order a session meets them, with each event's rule:

    on_session_start      the runtime is ready (startup | resume)            each, in order
    on_session_change     /clear or /resume put another conversation in place  each, in order
    on_instructions_loaded  instruction files entered the context              each, in order (none: no call)
    on_turn_start         a user message arrives, before it is added          each, in order; a raise refuses it
    attachments           text to append to the next user-role message        collected, in order
    before_request        a model request is about to be built                each, in order
    on_context_too_long   the API refused the request as too long             first that shrank it wins
    before_tool           a tool call is about to be checked and run          Deny > Ask > Allow; last rewrite runs
    after_tool            a tool call finished                                attachments collected, in order
    before_turn_end       the model stopped asking for tools                  reasons collected, joined
    on_turn_end           the turn ended                                      each, in order
    after_turn            the turn is over, however it ended                  each, in order
    before_compact        a compaction is about to summarise (may refuse)     each, in order
    compact_attachments   what goes back beside the summary                   collected, in order
    after_compact         the conversation was replaced by its summary        each, in REVERSE order
    on_rewind             /rewind put the conversation back                   each, in order (after reset_conversation)
    on_subagent_start     the Agent tool starts a child                       context collected, in order
    for_subagent          a part that also watches a child's own lifecycle    collected, in order
    before_subagent_stop  a child stopped asking for tools                    reasons collected, joined
    on_notification       the user is being waited for                        each, in order
    on_session_end        the session is closing                              each, in order; errors suppressed
    context_report        lines for /context (not an event: read on demand)   collected, in order

A part refuses what is about to happen by raising: `agent.loop.PromptBlocked` (a prompt),
`agent.loop.StoppedByHook` (the rest of the turn), `memory.compact.CompactionRefused` (a
compaction). Parts tell the user things through the `NoticeChannel` they were built with
(`claude_mini.base.notices`), never through attributes a UI polls.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeVar

from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock, Usage
from claude_mini.permissions import Allow, Ask, Decision, Deny
from claude_mini.tools.base import ToolResult

if TYPE_CHECKING:
    from pathlib import Path

    from claude_mini.agent.events import TurnDone
    from claude_mini.agent.loop import Agent
    from claude_mini.agent.subagent_run import SubagentRun
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.config import Config
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.permissions import PermissionPolicy, PolicyChain
    from claude_mini.session import Session

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
# when `memory.hooksInForks` asks for them): the same verdict as `Part.before_tool`.
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


class Part:
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

    def for_subagent(self, agent: Agent, run: SubagentRun) -> Part | None:
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


P = TypeVar("P", bound=Part)


class Lifecycle:
    """One agent's parts in lifecycle order, and the one dispatch site of each event: every method
    calls the parts' method of the same name and combines their answers by the rule it states."""

    def __init__(self, parts: Iterable[Part] = ()) -> None:
        self.parts: tuple[Part, ...] = tuple(parts)

    def find(self, kind: type[P]) -> P | None:
        """The first part of type `kind` (the UI's way to a part's commands), None if there is none."""
        return next((part for part in self.parts if isinstance(part, kind)), None)

    def reset_conversation(self, agent: Agent) -> None:
        """Another conversation is in place (/clear, /resume, /rewind): what the model read and the last
        request's size belong to the old one. The parts are told next (`on_session_change`, `on_rewind`)."""
        agent.ctx.read_files.clear()
        agent.last_usage = Usage()

    # -- the session

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        """Each part, in order."""
        for part in self.parts:
            await part.on_session_start(agent, source)

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """Each part, in order."""
        for part in self.parts:
            part.on_session_change(session, source)

    def on_instructions_loaded(self, agent: Agent, loads: Sequence[InstructionLoad]) -> None:
        """Each part, in order; nothing loaded, nobody is called."""
        if loads:
            for part in self.parts:
                part.on_instructions_loaded(agent, loads)

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        """Each part, in order; one that fails does not keep the others from stopping their work."""
        for part in self.parts:
            with contextlib.suppress(Exception):
                await part.on_session_end(agent, reason)

    def on_notification(self, agent: Agent, kind: NotificationKind, message: str) -> None:
        """Each part, in order."""
        for part in self.parts:
            part.on_notification(agent, kind, message)

    # -- one user turn

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        """Each part, in order; the first to raise (`PromptBlocked`) refuses the prompt for all after it."""
        for part in self.parts:
            await part.on_turn_start(agent, text)

    def attachments(self) -> list[str]:
        """Every part's attachments, in part order."""
        return [text for part in self.parts for text in part.attachments()]

    async def before_request(self, agent: Agent) -> None:
        """Each part, in order."""
        for part in self.parts:
            await part.before_request(agent)

    async def on_context_too_long(self, agent: Agent) -> bool:
        """First true wins: the parts after the one that shrank the context are not asked."""
        for part in self.parts:
            if await part.on_context_too_long(agent):
                return True
        return False

    async def before_tool(self, agent: Agent, call: ToolUseBlock) -> tuple[Decision | None, dict[str, Any] | None]:
        """What the parts say of a call: a Deny wins, then an Ask, then an Allow (None if none has an
        opinion); and the input to run it with, if one rewrote it (each part sees the last rewrite)."""
        decisions: list[Decision] = []
        updated: dict[str, Any] | None = None
        for part in self.parts:
            verdict = await part.before_tool(agent, call)
            if verdict is None:
                continue
            if verdict.decision is not None:
                decisions.append(verdict.decision)
            if verdict.updated_input is not None:
                updated = verdict.updated_input
                call = ToolUseBlock(call.id, call.name, updated)
        for kind in (Deny, Ask, Allow):
            found = next((d for d in decisions if isinstance(d, kind)), None)
            if found is not None:
                return found, updated
        return None, updated

    async def after_tool(self, agent: Agent, call: ToolUseBlock, result: ToolResult) -> list[str]:
        """Every part's attachments for the finished call, in part order."""
        return [text for part in self.parts for text in await part.after_tool(agent, call, result)]

    async def before_turn_end(self, agent: Agent, continued: int) -> str | None:
        """Every part is asked; their reasons to go on, joined by a blank line (None: none has one)."""
        reasons = [r for part in self.parts if (r := await part.before_turn_end(agent, continued))]
        return "\n\n".join(reasons) or None

    async def on_turn_end(self, agent: Agent, done: TurnDone) -> None:
        """Each part, in order."""
        for part in self.parts:
            await part.on_turn_end(agent, done)

    def after_turn(self, agent: Agent) -> None:
        """Each part, in order (parts must not raise here: the turn's own exception is going on)."""
        for part in self.parts:
            part.after_turn(agent)

    # -- subagents

    async def on_subagent_start(self, agent: Agent, run: SubagentRun) -> list[str]:
        """Every part's context for the child's first message, in part order."""
        return [text for part in self.parts for text in await part.on_subagent_start(agent, run)]

    async def before_subagent_stop(self, agent: Agent, run: SubagentRun, continued: int) -> str | None:
        """Every part is asked; their reasons for the child to go on, joined by a blank line."""
        reasons = [r for part in self.parts if (r := await part.before_subagent_stop(agent, run, continued))]
        return "\n\n".join(reasons) or None

    def for_subagent(self, agent: Agent, run: SubagentRun) -> list[Part]:
        """The parts that also watch the child's own lifecycle, in part order."""
        return [child for part in self.parts if (child := part.for_subagent(agent, run))]

    # -- compaction

    async def before_compact(self, agent: Agent, request: CompactRequest) -> None:
        """Each part, in order: the user's hooks may refuse first, then extraction flushes."""
        for part in self.parts:
            await part.before_compact(agent, request)

    def compact_attachments(self, agent: Agent) -> list[str]:
        """Every part's attachments for the compacted conversation, in part order."""
        return [text for part in self.parts for text in part.compact_attachments(agent)]

    async def after_compact(self, agent: Agent) -> None:
        """Each part in REVERSE order, as a stack unwinds: the memory layers' bookkeeping first, the
        user's hooks (slow, cancellable) last, when the compaction is already complete."""
        for part in reversed(self.parts):
            await part.after_compact(agent)

    # -- rewind and reports

    async def on_rewind(self, agent: Agent, rewind: ConversationRewind) -> None:
        """Each part, in order."""
        for part in self.parts:
            await part.on_rewind(agent, rewind)

    def context_report(self) -> list[str]:
        """Every part's /context lines, in part order."""
        return [line for part in self.parts for line in part.context_report()]


class RendersText(Protocol):
    """Something the system prompt holds as text (the project's CLAUDE.md files)."""

    def render(self) -> str:
        """The text as the model sees it."""
        ...


class RuntimeView(Protocol):
    """What the other features' parts read from the runtime after they are built: the pieces
    /clear, /resume and /compact replace, so a part reads them when it needs them, never once."""

    @property
    def session(self) -> Session:
        """The conversation in place now."""
        ...

    @property
    def policy(self) -> PolicyChain:
        """The session's permission chain (its mode changes with Shift-Tab)."""
        ...

    @property
    def instructions(self) -> RendersText:
        """The instruction files the system prompt holds now."""
        ...


# What a part reads from the runtime later: each factory names the smallest view it needs
# (`object`: nothing), declared beside the part, so no feature imports the runtime above it.
RuntimeT = TypeVar("RuntimeT", covariant=True)


@dataclass(frozen=True)
class PartContext(Generic[RuntimeT]):
    """What a feature's `part(ctx)` may build its part from: one session's shared pieces.

    `runtime` and `agent` exist already but are not finished: the lifecycle is installed after every
    part is built, so a factory keeps them for later and does not call into the lifecycle."""

    config: Config
    client: ModelClient
    session: Session  # the first conversation (the runtime's `session` follows /clear and /resume)
    notices: NoticeChannel
    memory_root: Path  # the project's auto-memory folder (Layer 2)
    rules: PermissionPolicy  # the permission rules themselves
    policy: PolicyChain  # the whole chain: guards, then the rules
    agent: Agent
    runtime: RuntimeT
    window: int  # the model's context window, in tokens (the skill listing's budget is a share of it)
    team_root: Path | None = None  # the repository's team memory folder, when the tier is on
