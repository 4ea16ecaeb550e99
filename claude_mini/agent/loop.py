"""The agent loop: one user turn = stream a response, run its tools, repeat until done.

Control flow that leaves the loop is an exception carrying a user-facing message:

    AgentStop
     ├── TurnCancelled      the user pressed Esc or Ctrl-C; the conversation says so
     │    └── PromptWithdrawn   ... before the prompt joined the conversation: nothing was added
     ├── TurnDeclined       the user answered a permission prompt "No": the refusal is answered,
     │                      the turn ends and waits for the user (in -p: a plan awaiting approval)
     ├── MaxTurnsReached    --max-turns requests were made and the model still wants tools
     ├── PromptBlocked      a lifecycle part (the user's UserPromptSubmit hook) refused the prompt
     └── StoppedByHook      a lifecycle part (a hook's `"continue": false`) ended the turn

However a turn ends, the conversation stays valid for the next request: a cancelled
turn ends with Claude Code's marker (`[Request interrupted by user]`, or `... for tool
use` after the cancelled calls' results), and a turn that failed anywhere has every
tool_use answered (`Session.repair`).

Model failures surface as `llm.protocol.ModelError` (and its `ContextTooLong`).
Memory layers and the other parts plug in through `agent/lifecycle.py` (DESIGN.md section 3): the loop
calls its `Lifecycle`, never the parts one by one.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from claude_mini.agent.events import AgentEvent, MessageAdded, ToolFinished, ToolStarted, TurnDone
from claude_mini.agent.lifecycle import ForkToolCheck, InstructionLoad, Lifecycle, system_reminder
from claude_mini.llm.events import ResponseDone
from claude_mini.llm.messages import (
    MediaBlock,
    Message,
    ModelRequest,
    Purpose,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from claude_mini.llm.protocol import ContextTooLong, ModelClient
from claude_mini.permissions import Allow, Ask, Decision, Deny, PolicyChain, ToolPolicy
from claude_mini.permissions.decisions import EXIT_PLAN_TOOL
from claude_mini.session import UNFINISHED_TOOL, Session
from claude_mini.tools.base import DiskError, Tool, ToolContext, ToolError, ToolResult, tool_spec

# What the model reads after the user cancels (the markers are Claude Code's own words); a call
# that did not finish for any other reason gets session.UNFINISHED_TOOL.
INTERRUPTED = "[Request interrupted by user]"
INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"
CANCELLED = (
    "The user interrupted this call before it finished: it may not have run, or run only "
    "in part. Check before relying on its effect."
)
DECLINED = "The user declined this {tool} call; it did not run. Stop here and wait: the user will say how to go on."
NOT_RUN_AFTER_DECLINE = "Not run (or stopped unfinished): the user declined a call of this response and ended the turn."
PLAN_UNATTENDED = (
    "Nobody can approve the plan in this non-interactive run: it is the run's result. Stop here; "
    "the user will approve it or ask for changes in a later run."
)


class AgentStop(Exception):
    """The turn ended early; the message says why and what to do."""


class TurnCancelled(AgentStop):
    """The user cancelled the turn."""


class PromptWithdrawn(TurnCancelled):
    """The user cancelled while the lifecycle still vetted the prompt: it was never added."""


class TurnDeclined(AgentStop):
    """The user said No to a tool call (or, in -p, a plan awaits an approval nobody can give):
    every call of the response is answered and the turn ends, waiting for the user."""


class MaxTurnsReached(AgentStop):
    """The turn hit --max-turns."""


class PromptBlocked(AgentStop):
    """The prompt was refused before it joined the conversation; the message says why."""


class StoppedByHook(AgentStop):
    """A hook ended the turn; the message says why. Every tool call made so far is answered."""


@dataclass
class PermissionAnswer:
    """The user's answer to a permission prompt: a No with no message stops the turn; a No
    with a message (what to do instead) gives it to the model and the turn goes on."""

    allow: bool
    message: str = ""

    @property
    def stops_turn(self) -> bool:
        """Whether the turn ends here, waiting for the user."""
        return not self.allow and not self.message


AskUser = Callable[[ToolUseBlock, str], Awaitable[PermissionAnswer]]


class Agent:
    """Runs user turns of one session against one model client."""

    def __init__(
        self,
        *,
        client: ModelClient,
        session: Session,
        tools: Sequence[Tool],
        policy: PolicyChain,
        system: list[str],
        model: str,
        ctx: ToolContext,
        max_tokens: int = 32000,
        max_turns: int | None = None,
        ask_user: AskUser | None = None,
        lifecycle: Lifecycle | None = None,
    ):
        self.client = client
        self.session = session
        # The tools that are not an MCP server's (the built-ins and Skill), in order; the MCP part
        # appends its servers' tools to these (mcp_servers/lifecycle.py).
        self.builtin_tools = list(tools)
        self.tools = {t.name: t for t in tools}
        self.tool_specs = [tool_spec(t) for t in tools]
        self.policy = policy
        self.system = system
        self.model = model
        self.ctx = ctx
        self.max_tokens = max_tokens
        self.thinking: dict[str, Any] | None = None  # extended thinking for its requests (MAX_THINKING_TOKENS)
        self.max_turns = max_turns
        self.ask_user = ask_user
        self.lifecycle = lifecycle or Lifecycle()
        self.last_usage = Usage()
        self.last_request: ModelRequest | None = None  # what was really sent (fork cache guard)
        self.fork_tool_check: ForkToolCheck | None = None  # forks' extra vetting (memory.hooksInForks)
        self.purpose: Purpose = "main"  # a subagent's requests and costs are "subagent"
        # One-shot reminders a command queued for the next user message (/add-dir's new folder):
        # the system prompt stays as it is (DESIGN.md section 6).
        self.notes_for_model: list[str] = []

    def set_tools(self, tools: Sequence[Tool]) -> None:
        """Replace the tool list (MCP servers' tools joining). Only where the prefix is rebuilt
        anyway: a conversation's first request, after /clear or a compaction (mcp_servers)."""
        self.tools = {t.name: t for t in tools}
        self.tool_specs = [tool_spec(t) for t in tools]

    def announce_instructions(self, loads: Sequence[InstructionLoad]) -> None:
        """Tell every lifecycle part that instruction files entered the context."""
        self.lifecycle.on_instructions_loaded(self, loads)

    def request(self, purpose: Purpose = "main") -> ModelRequest:
        """The request the loop would send now; forked agents copy its prefix."""
        return ModelRequest(
            model=self.model,
            system=list(self.system),
            messages=list(self.session.messages),
            tools=self.tool_specs,
            max_tokens=self.max_tokens,
            purpose=purpose,
            thinking=self.thinking,
        )

    async def run(self, text: str, media: Sequence[MediaBlock] = ()) -> AsyncIterator[AgentEvent]:
        """Run one user turn, yielding events for the UI; ends with `TurnDone`. `media`: images and
        PDFs the user attached, sent beside the text.

        Cancelled before `TurnDone`, it records the interruption marker and raises TurnCancelled
        (after it, only a hook's `on_turn_end` was cut: the answer is complete, nothing is marked);
        failed anywhere, it answers every tool_use before the error goes on.
        """
        user: Message | None = None
        finished = False
        try:
            await self.lifecycle.on_turn_start(self, text)
            user = Message("user", [TextBlock(text), *media, *self._attachments()])
            self.session.add_message(user, prompt=True)
            yield MessageAdded(user)
            async for event in self._requests():
                finished = isinstance(event, TurnDone)
                yield event
        except TurnCancelled:
            raise
        except asyncio.CancelledError:
            if finished:
                raise
            if user is None:  # cancelled while the parts still vetted it (a UserPromptSubmit hook)
                raise PromptWithdrawn(
                    "Interrupted before the prompt was sent; it was not added to the conversation."
                ) from None
            self.session.repair()
            self.session.add_message(Message("user", [TextBlock(INTERRUPTED)]))
            raise TurnCancelled("Interrupted; the request was marked as interrupted.") from None
        except BaseException:
            with contextlib.suppress(Exception):  # a transcript that cannot be written must not hide the error
                self.session.repair()
            raise
        finally:
            self.lifecycle.after_turn(self)

    async def _requests(self) -> AsyncIterator[AgentEvent]:
        """Ask the model, run its tools, repeat until it stops asking for tools."""
        usage, requests, shrunk, continued = Usage(), 0, False, 0
        while True:
            if self.max_turns is not None and requests >= self.max_turns:
                noun = "model request" if requests == 1 else "model requests"
                raise MaxTurnsReached(f"Stopped after {requests} {noun} (--max-turns {self.max_turns}).")
            await self.lifecycle.before_request(self)
            done: ResponseDone | None = None
            try:
                self.last_request = self.request(self.purpose)
                async for event in self.client.stream(self.last_request):
                    if isinstance(event, ResponseDone):
                        done = event
                    else:
                        yield event
            except ContextTooLong as exc:
                if shrunk or not await self.lifecycle.on_context_too_long(self):
                    raise ContextTooLong(
                        f"{exc} The conversation no longer fits the model's context window and "
                        "could not be compacted; run /compact, or /clear to start fresh."
                    ) from None
                shrunk = True
                continue
            assert done is not None, "a model stream must end with ResponseDone"
            requests += 1
            usage = usage + done.billed
            self.last_usage = done.usage
            self.session.costs.add(self.purpose, done.model or self.model, done.billed)
            self.session.add_message(done.message)
            yield MessageAdded(done.message)
            calls = done.message.tool_uses
            if done.stop_reason != "tool_use" or not calls:
                if await self._goes_on(continued, requests):
                    continued += 1
                    continue
                finished = TurnDone(done.stop_reason, requests, usage)
                yield finished
                await self.lifecycle.on_turn_end(self, finished)
                return
            async for tool_event in self._tool_round(calls):
                yield tool_event

    async def _goes_on(self, continued: int, requests: int) -> bool:
        """Whether a part (a Stop hook) sends the model back to work: its reasons become the next
        user message. Not asked when --max-turns leaves no request to go on with."""
        if self.max_turns is not None and requests >= self.max_turns:
            return False
        reasons = await self.lifecycle.before_turn_end(self, continued)
        if reasons is None:
            return False
        self.session.add_message(Message("user", [system_reminder(reasons), *self._attachments()]))
        return True

    async def _tool_round(self, calls: list[ToolUseBlock]) -> AsyncIterator[AgentEvent]:
        """Run one response's tool calls and answer every one of them, whatever happens."""
        results: dict[str, ToolResultBlock] = {}
        attachments: list[str] = []
        try:
            async for tool_event in self._run_tools(calls, results, attachments):
                yield tool_event
        except (_Declined, TurnDeclined):  # here, or in a subagent this round started
            # The user's No is marked as Claude Code marks it; a plan nobody can approve (-p) is not.
            marker = [TextBlock(INTERRUPTED_FOR_TOOL_USE)] if self.ask_user is not None else []
            message = self._answer_all(calls, results, attachments, NOT_RUN_AFTER_DECLINE, *marker)
            yield MessageAdded(message)
            raise TurnDeclined("Declined: the turn stopped. Say what to do instead.") from None
        except asyncio.CancelledError:
            self._answer_all(calls, results, attachments, CANCELLED, TextBlock(INTERRUPTED_FOR_TOOL_USE))
            raise TurnCancelled("Interrupted; unfinished tool calls were marked as interrupted.") from None
        except BaseException:
            self._answer_all(calls, results, attachments, UNFINISHED_TOOL)
            raise
        message = self._answer_all(calls, results, attachments)
        yield MessageAdded(message)

    def _answer_all(
        self,
        calls: list[ToolUseBlock],
        results: dict[str, ToolResultBlock],
        attachments: list[str],
        missing: str = UNFINISHED_TOOL,
        *marker: TextBlock,
    ) -> Message:
        """Add the tool_result message, so every tool_use has an answer whatever happened
        (`missing` for the calls without a result, then `marker` after the results)."""
        blocks: list[Any] = [results.get(c.id) or ToolResultBlock(c.id, missing, is_error=True) for c in calls]
        blocks += marker
        blocks += [system_reminder(a) for a in attachments]
        blocks += self._attachments()
        message = Message("user", blocks)
        self.session.add_message(message)
        return message

    def _attachments(self) -> list[TextBlock]:
        notes, self.notes_for_model = self.notes_for_model, []
        return [system_reminder(a) for a in [*notes, *self.lifecycle.attachments()]]

    async def _run_tools(
        self, calls: list[ToolUseBlock], results: dict[str, ToolResultBlock], attachments: list[str]
    ) -> AsyncIterator[AgentEvent]:
        """Run the calls of one response: consecutive read-only ones together, others in order."""
        for batch in batch_calls(calls, self.tools):
            allowed: list[ToolUseBlock] = []
            for proposed in batch:
                call, denial = await self._check_permission(proposed)
                if denial is None:
                    allowed.append(call)
                    yield ToolStarted(call)
                else:
                    results[call.id] = ToolResultBlock(call.id, denial.content, is_error=True)
                    yield ToolFinished(call, denial, denied=True)
                    if denial.metadata.get("stops_turn"):
                        for started in allowed:  # started beside it, never run
                            yield ToolFinished(started, ToolResult(NOT_RUN_AFTER_DECLINE, True), denied=True)
                        raise _Declined  # the calls after it, and those allowed beside it, do not run
            outcomes = await asyncio.gather(*(self._call_tool(c) for c in allowed))
            # All ran: all are answered, whatever a hook does.
            for call, result in zip(allowed, outcomes, strict=True):
                results[call.id] = ToolResultBlock(call.id, result.content, result.is_error, media=result.media)
            for call, result in zip(allowed, outcomes, strict=True):
                attachments.extend(await self.lifecycle.after_tool(self, call, result))
                yield ToolFinished(call, result)

    async def _check_permission(self, call: ToolUseBlock) -> tuple[ToolUseBlock, ToolResult | None]:
        """The call as it will run (a hook may rewrite its input) and None when it may run, else
        the error result that tells the model why not."""
        if not isinstance(call.name, str) or call.name not in self.tools:
            return call, ToolResult(f"Unknown tool {call.name!r}. Available: {', '.join(self.tools)}.", True)
        problem = unusable_input(call.input)
        if problem is not None:
            return call, ToolResult(problem, True)
        call, decision = await self.vet(call)
        if isinstance(decision, ToolResult):
            return call, decision
        return call, await self._settle(call, decision)

    async def vet(self, call: ToolUseBlock) -> tuple[ToolUseBlock, Decision | ToolResult]:
        """The call as it would run (a hook may rewrite its input) and what the hooks and the rules
        say of it together, before anyone is asked; or the error result of a rewritten input that
        cannot be used. Also for commands the harness runs itself (a custom command's `!` lines)."""
        verdict, updated = await self.lifecycle.before_tool(self, call)
        if updated is not None:
            call = ToolUseBlock(call.id, call.name, updated)
            problem = unusable_input(updated)
            if problem is not None:
                return call, ToolResult(problem, True)
        if isinstance(verdict, Deny):
            return call, verdict
        return call, with_hooks_verdict(verdict, await decide(self.policy, call))

    async def permit(self, call: ToolUseBlock, decision: Decision) -> ToolResult | None:
        """For a call the harness runs itself (a user's `!` line): None when it may run, else the
        result saying why not, the user asked first as for the model's own calls."""
        return await self._settle(call, decision)

    async def _settle(self, call: ToolUseBlock, decision: Decision) -> ToolResult | None:
        """None when the call may run; else the error result that tells the model why not (asking
        the user first where the decision is Ask and someone can be asked)."""
        if isinstance(decision, Allow):
            return None
        if isinstance(decision, Deny):
            return ToolResult(f"Permission denied: {decision.reason}", True)
        assert isinstance(decision, Ask)
        failure = None if decision.by_rule else await self._would_fail(call)
        if failure is not None:
            return failure  # nobody is asked to approve a call that cannot succeed
        if self.ask_user is None and call.name == EXIT_PLAN_TOOL:  # -p: the plan is the run's result
            return ToolResult(PLAN_UNATTENDED, True, metadata={"stops_turn": True})
        if self.ask_user is None:
            why = f" ({decision.reason})" if decision.reason else ""
            return ToolResult(
                f"Permission needed to run {call.name}{why}, and this session cannot ask the user "
                "(non-interactive). Do not retry it; say what you would have done instead. "
                "The user can allow it with --allowedTools or --permission-mode.",
                True,
            )
        answer = await self.ask_user(call, decision.reason)
        if answer.allow:  # "don't ask again" is the UI's to carry out: it knows where the rule is saved
            return None
        if answer.stops_turn:
            return ToolResult(DECLINED.format(tool=call.name), True, metadata={"stops_turn": True})
        return ToolResult(f"The user declined this {call.name} call. The user said: {answer.message}", True)

    async def _would_fail(self, call: ToolUseBlock) -> ToolResult | None:
        """The error a call would end with, if its tool can tell without acting (`Tool.validate`)."""
        try:
            await asyncio.to_thread(self.tools[call.name].validate, call.input, self.ctx)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True)
        except Exception as exc:  # as in run_tool: a tool bug is the model's error result
            return ToolResult(f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True)
        return None

    async def _call_tool(self, call: ToolUseBlock) -> ToolResult:
        RUNNING_CALL.set((self, call))  # this call's own task: concurrent calls each see theirs
        return await run_tool(self.tools[call.name], call, self.ctx)


class _Declined(Exception):
    """Inside a tool round: the user declined a call and the turn stops after its answers."""


# The agent and the call a tool runs for, while it runs: the Agent tool starts its child for that
# agent (the main one, or a subagent) and answers that call.
RUNNING_CALL: contextvars.ContextVar[tuple[Agent, ToolUseBlock]] = contextvars.ContextVar("running_call")

_UNUSABLE = re.compile("[\x00\ud800-\udfff]")


def with_hooks_verdict(verdict: Decision | None, decision: Decision) -> Decision:
    """The rules' decision with a hook's: a deny rule always binds and an ask rule still asks (a
    hook's Allow spares only the question the mode would ask); a hook's Ask asks even where the
    rules allow. (A hook's Deny never gets here: it refuses the call before the rules are asked.)"""
    asks_more = isinstance(verdict, Ask) and isinstance(decision, Allow)
    spares_question = isinstance(verdict, Allow) and isinstance(decision, Ask) and not decision.user_only
    return verdict if verdict is not None and (asks_more or spares_question) else decision


def unusable_input(input: Any) -> str | None:
    """Why a tool input cannot be used (a NUL byte or a lone surrogate in it), or None.

    No path, command or file text can hold either (the OS refuses NUL, UTF-8 cannot
    encode a surrogate), so the call is refused before any rule or tool trips over one.
    """
    for where, text in _strings(input, "the input"):
        found = _UNUSABLE.search(text)
        if found is not None:
            char = found.group()
            what = "a NUL byte" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"
            return (
                f"Not run: {where} contains {what} at position {found.start()}, which no path, "
                "command or file can hold. Send the call again without it."
            )
    return None


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string of a JSON value (keys too), with where it is."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield "a parameter name", str(key)
            yield from _strings(item, f"`{key}`")
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item, where)


async def decide(policy: ToolPolicy, call: ToolUseBlock) -> Decision:
    """The policy's decision, taken in a worker thread: checking a long command line or a path
    on a slow disk must not stall the event loop (the REPL keeps drawing, Esc still cancels)."""
    return await asyncio.to_thread(policy.can_use_tool, call.name, call.input)


async def run_tool(tool: Tool, call: ToolUseBlock, ctx: ToolContext) -> ToolResult:
    """Run one tool call; every failure becomes an error result the model can act on.

    Shared by the main loop and forked agents: a tool bug must end neither.
    """
    try:
        return await tool.call(call.input, ctx)
    except TurnDeclined:  # the user declined a subagent's call: the whole turn stops
        raise
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True, metadata={"disk_error": isinstance(exc, DiskError)})
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return ToolResult(f"{call.name} failed: {type(exc).__name__}: {exc}", is_error=True)


def batch_calls(calls: list[ToolUseBlock], tools: dict[str, Tool]) -> list[list[ToolUseBlock]]:
    """Group consecutive read-only calls so they run concurrently; others run alone."""

    def read_only(call: ToolUseBlock) -> bool:
        tool = tools.get(call.name)
        return bool(tool and tool.read_only)

    batches: list[list[ToolUseBlock]] = []
    for call in calls:
        if batches and read_only(call) and read_only(batches[-1][0]):
            batches[-1].append(call)
        else:
            batches.append([call])
    return batches
