"""The user's hooks as one more part of the session lifecycle (agent/lifecycle.py).

Each lifecycle point raises Claude Code's event of the same meaning, runs the matching
commands (`runner.py`) and acts on what they said (`output.py`):

    on_session_start / on_session_change   SessionStart (startup | resume | clear), SessionEnd (clear)
    on_turn_start                          UserPromptSubmit: may refuse the prompt or add context
    before_tool                            PreToolUse: allow, deny, ask, rewrite the input
    after_tool                             PostToolUse (PostToolUseFailure for an error result)
    before_turn_end                        Stop: may make the model go on (at most MAX_STOP_CONTINUES)
    before_compact / after_compact         PreCompact (may refuse, may add instructions), PostCompact,
                                           then SessionStart (compact)
    on_instructions_loaded                 InstructionsLoaded, one per file, in the background
    on_notification                        Notification, in the background
    on_session_end                         SessionEnd

Context a hook adds goes into the conversation as a `<system-reminder>` attachment on the
next user-role message, never into the system prompt or the tool list, so the cached
prefix survives. Failures are one line each on the session's notice channel; a hook can
never end the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.lifecycle import (
    CompactRequest,
    EndReason,
    InstructionLoad,
    NotificationKind,
    Part,
    PartContext,
    RuntimeView,
    SessionSource,
    ToolVerdict,
)
from claude_mini.agent.loop import PromptBlocked, StoppedByHook
from claude_mini.base import paths
from claude_mini.hooks.config import HookCommand, HookSet, agent_hooks, load_hooks
from claude_mini.hooks.output import HookOutcome, interpret
from claude_mini.hooks.runner import HookRun, run_hook_commands
from claude_mini.llm.messages import ToolUseBlock
from claude_mini.memory.compact.compactor import CompactionRefused
from claude_mini.permissions import Allow, Ask, Deny
from claude_mini.tools.base import ToolResult
from claude_mini.tools.read import record_read

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.agent.subagent_run import SubagentRun
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.session import Session

log = logging.getLogger(__name__)

# A Stop hook that blocks every time would keep a turn going for ever: after this many
# continuations the turn ends anyway, with one line (Claude Code relies on `stop_hook_active`).
MAX_STOP_CONTINUES = 3
# How long the end of a session waits for background hooks (InstructionsLoaded, Notification)
# still running: they are audits, and the user is leaving.
BACKGROUND_WAIT_SECONDS = 5.0
# The events whose input carries `permission_mode` (Claude Code 2.1.332).
EDITING_TOOLS = frozenset({"Write", "Edit"})
WITH_PERMISSION_MODE = frozenset(
    {"UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop"}
)
# The events whose input carries `effort` (Claude Code 2.1.197 and 2.1.332): the model's reasoning
# effort. claude-mini has no effort control; it sends the setting `effortLevel`, else "high" (Claude
# Code's default for the models it names).
WITH_EFFORT = WITH_PERMISSION_MODE - {"UserPromptSubmit"}
# Stop and SubagentStop say what still runs in the background; claude-mini's background work (its
# memory layers) is not the user's, and it has no scheduled prompts: both lists are empty.
STOP_LISTS: dict[str, list[Any]] = {"background_tasks": [], "session_crons": []}


class UserHooksPart(Part):
    """Runs the commands of the user's `hooks` settings on the session's lifecycle events."""

    def __init__(
        self,
        hooks: HookSet,
        *,
        project_dir: Path,
        notices: NoticeChannel,
        mode: Callable[[], str],
        agent: Agent | None = None,
        effort: str = "high",
    ) -> None:
        self.hooks = hooks
        self.project_dir = project_dir
        self.notices = notices
        self.mode = mode  # the permission mode now (Shift-Tab changes it)
        self._pending: list[str] = []  # context for the next user-role message
        # SessionStart (and a /clear's SessionEnd) run one after another on this chain; a prompt
        # waits for it, so their context joins the message it belongs to.
        self._session_work: asyncio.Future[None] | None = None
        self._background: set[asyncio.Future[None]] = set()
        self._started = False  # SessionStart of the first conversation is scheduled
        self._session: Session | None = None  # the conversation hooks' context is for
        self._compact_trigger = "manual"
        self._ran_once: set[HookCommand] = set()  # `once: true` hooks that have run
        self.agent = agent  # the main agent: `on_session_change` gets only the session
        self.effort = effort
        self._prompt_id: str | None = None  # the prompt being answered (`prompt_id`), from the first one on
        self._tool_started: dict[str, float] = {}  # tool_use id -> when PreToolUse saw it (`duration_ms`)

    # -- running one event

    def _payload(self, agent: Agent, event: str, session: Session | None = None, **fields: Any) -> dict[str, Any]:
        """The stdin object: Claude Code's common fields (`permission_mode` only where it sends
        it), then the event's own."""
        session = session or agent.session
        common: dict[str, Any] = {
            "session_id": session.id,
            "transcript_path": str(session.transcript.path),
            "cwd": str(agent.ctx.cwd),
        }
        if self._prompt_id is not None:
            common["prompt_id"] = self._prompt_id
        if event in WITH_PERMISSION_MODE:
            common["permission_mode"] = self.mode()
        if event in WITH_EFFORT:
            common["effort"] = {"level": self.effort}
        return {**common, "hook_event_name": event, **fields}

    async def _run(
        self,
        event: str,
        value: str | None,
        payload: dict[str, Any],
        cwd: Path,
        env: dict[str, str] | None = None,
        *,
        for_fork: bool = False,
    ) -> HookOutcome | None:
        """Run the hooks of one event occurrence; None when no hook matches. `async` hooks start
        in the background; `for_fork` (a forked agent's call) runs only the others, quietly, and
        leaves `once` hooks to the user's session."""
        commands = [c for c in self.hooks.for_event(event, value) if c not in self._ran_once]
        if for_fork:
            commands = [c for c in commands if not c.run_async and not c.once]
        self._ran_once.update(c for c in commands if c.once)
        background = [c for c in commands if c.run_async]
        if background:
            self._in_background(self._run_in_background(event, background, payload, cwd, env))
            commands = [c for c in commands if not c.run_async]
        if not commands:
            return None
        status = next((c.status_message for c in commands if c.status_message), "") or f"running {event} hook"
        with contextlib.nullcontext() if for_fork else self.notices.busy(status):
            runs = await run_hook_commands(commands, payload, cwd=cwd, project_dir=self.project_dir, env=env)
        return self._report(event, runs)

    async def _run_in_background(
        self, event: str, commands: list[HookCommand], payload: dict[str, Any], cwd: Path, env: dict[str, str] | None
    ) -> None:
        """`async: true` hooks: nothing waits for them; their context joins the next message."""
        session = self._session
        try:
            runs = await run_hook_commands(commands, payload, cwd=cwd, project_dir=self.project_dir, env=env)
        except Exception as exc:  # background work: one line, never a traceback
            self.notices.say(f"{event} hooks could not be run ({type(exc).__name__}: {exc}).", "warning")
            return
        self._keep_context(event, self._report(event, runs), session)

    def _report(self, event: str, runs: list[HookRun]) -> HookOutcome:
        """The merged outcome; its errors and system messages said on the notice channel."""
        try:
            outcome = interpret(event, runs)
        except Exception as exc:  # output.py reads any output; this is the belt to its braces
            self.notices.say(
                f"{event} hook output could not be read ({type(exc).__name__}: {exc}); it was ignored.", "warning"
            )
            return HookOutcome()
        for error in outcome.errors:
            self.notices.say(error, "warning")
        for message in outcome.system_messages:
            self.notices.say(message, "info")
        return outcome

    async def _event(self, agent: Agent, event: str, value: str | None, **fields: Any) -> HookOutcome | None:
        return await self._run(event, value, self._payload(agent, event, **fields), agent.ctx.cwd)

    def _keep_context(self, label: str, outcome: HookOutcome | None, session: Session | None = None) -> None:
        """Keep context for the next user-role message, unless it is for a conversation that
        /clear or /resume has replaced since."""
        if outcome is not None and (session is None or self._session in (None, session)):
            self._pending += context_notes(label, outcome)

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _then(self, work: Callable[[], Awaitable[None]]) -> asyncio.Future[None]:
        """Run `work` after the session work scheduled before it (whatever became of that)."""
        previous = self._session_work

        async def chained() -> None:
            if previous is not None:
                await asyncio.wait({previous})
            await work()

        self._session_work = task = asyncio.ensure_future(chained())
        return task

    async def _session_ready(self) -> None:
        """Wait for SessionStart (and a /clear's SessionEnd) to finish. Shielded: an Esc cancels
        the prompt that waits, not the session's hooks."""
        work = self._session_work
        if work is not None and not work.done():
            await asyncio.wait({asyncio.shield(work)})

    # -- the session

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        """SessionStart (startup | resume): its output is context for the first message. Once:
        the REPL's first prompt may have started it already (start-up maintenance runs first)."""
        self._begin(agent, source)
        await self._session_ready()

    def _begin(self, agent: Agent, source: str) -> None:
        if not self._started:
            self._started, self._session = True, agent.session
            session = agent.session
            self._then(lambda: self._start(agent, session, source))

    async def _start(self, agent: Agent, session: Session, source: str) -> None:
        """SessionStart for `session`; what its hooks write to CLAUDE_ENV_FILE (`export NAME=value`
        lines) runs before every later Bash command of the session, as in Claude Code."""
        if not self.hooks.for_event("SessionStart", source):
            return
        env_file = paths.home_dir() / "session-env" / session.id / f"sessionstart-{source}.sh"
        try:
            env_file.parent.mkdir(parents=True, exist_ok=True)
            env_file.write_text("", encoding="utf-8")
            os.chmod(env_file, 0o600)
        except OSError as exc:
            self.notices.say(
                f"CLAUDE_ENV_FILE could not be made ({exc.strerror or exc}); SessionStart hooks run without it.",
                "warning",
                once=True,
            )
        payload = self._payload(agent, "SessionStart", session, source=source, model=agent.model)
        outcome = await self._run(
            "SessionStart", source, payload, agent.ctx.cwd, env={"CLAUDE_ENV_FILE": str(env_file)}
        )
        if self._session in (None, session):  # not replaced by a /clear meanwhile
            self._keep_context(f"SessionStart:{source}", outcome)
            self._adopt_env_file(agent, env_file, keep=source == "compact")

    @staticmethod
    def _adopt_env_file(agent: Agent, env_file: Path, *, keep: bool) -> None:
        """Read what the hooks wrote once, now: the Bash tool runs this text, so a later change
        to the file (by the model, say) changes nothing."""
        try:
            text = env_file.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            text = ""
        earlier = agent.ctx.shell_prelude if keep else ""
        agent.ctx.shell_prelude = "\n".join(part for part in (earlier, text) if part)

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear or /resume: SessionEnd (clear | resume) for the old conversation, SessionStart for
        the new one; started now, in order after any earlier switch, finished before the next
        prompt is sent."""
        old, self._session = self._session, session
        self._pending.clear()
        agent = self.agent
        if agent is None:
            return
        self._started = True
        self._then(lambda: self._change(agent, old, session, source))

    async def _change(self, agent: Agent, old: Session | None, new: Session, source: SessionSource) -> None:
        if old is not None:
            await self._run("SessionEnd", source, self._payload(agent, "SessionEnd", old, reason=source), agent.ctx.cwd)
        await self._start(agent, new, source)

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        """SessionEnd, after SessionStart work still due; then the background hooks (audits, `async`
        ones, SessionEnd's own) get a few seconds to finish. Ctrl-C while waiting skips them."""
        with contextlib.suppress(asyncio.CancelledError):  # the user is leaving: skip, do not fail
            await self._session_ready()
            await self._event(agent, "SessionEnd", reason, reason=reason)
            if self._background:
                await asyncio.wait(set(self._background), timeout=BACKGROUND_WAIT_SECONDS)
        for task in list(self._background):
            task.cancel()

    # -- one user turn

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        """UserPromptSubmit: exit 2 or `decision: block` refuses the prompt (PromptBlocked), its
        context joins the message."""
        self._begin(agent, "resume" if agent.session.messages else "startup")  # before maintenance ends
        await self._session_ready()
        self._prompt_id = str(uuid.uuid4())
        outcome = await self._event(agent, "UserPromptSubmit", None, prompt=text)
        if outcome is None:
            return
        if outcome.stop:
            raise PromptBlocked(outcome.stop_reason or "A UserPromptSubmit hook stopped this prompt.")
        if outcome.block:
            raise PromptBlocked(
                f"A UserPromptSubmit hook blocked this prompt: {(outcome.reason or 'no reason given').rstrip('.')}. "
                "It was not sent."
            )
        self._keep_context("UserPromptSubmit", outcome)

    def attachments(self) -> list[str]:
        """The hooks' context waiting for the next user-role message."""
        pending, self._pending = self._pending, []
        return pending

    async def before_tool(self, agent: Agent, call: ToolUseBlock) -> ToolVerdict | None:
        """PreToolUse: deny (exit 2, `permissionDecision: deny`), ask, allow, `updatedInput`."""
        self._tool_started[call.id] = time.monotonic()
        outcome = await self._event(
            agent, "PreToolUse", call.name, tool_name=call.name, tool_input=call.input, tool_use_id=call.id
        )
        if outcome is None:
            return None
        if outcome.stop:
            raise StoppedByHook(outcome.stop_reason or f"A PreToolUse hook stopped the turn before {call.name} ran.")
        self._keep_context(f"PreToolUse:{call.name}", outcome)
        return _verdict(call, outcome)

    async def vet_fork_call(self, agent: Agent, call: ToolUseBlock) -> ToolVerdict | None:
        """PreToolUse for a forked agent's call (`memory.hooksInForks`): only its deny and its
        `updatedInput` count; its context and `continue` are not the user's conversation's."""
        payload = self._payload(agent, "PreToolUse", tool_name=call.name, tool_input=call.input, tool_use_id=call.id)
        outcome = await self._run("PreToolUse", call.name, payload, agent.ctx.cwd, for_fork=True)
        if outcome is None:
            return None
        verdict = _verdict(call, outcome)
        deny = verdict.decision if verdict is not None and isinstance(verdict.decision, Deny) else None
        updated = verdict.updated_input if verdict is not None else None
        return ToolVerdict(deny, updated) if deny is not None or updated is not None else None

    async def after_tool(self, agent: Agent, call: ToolUseBlock, result: ToolResult) -> list[str]:
        """PostToolUse (PostToolUseFailure for an error result): its context and a blocking
        reason reach the model with the tool results."""
        event = "PostToolUseFailure" if result.is_error else "PostToolUse"
        if not self.hooks.for_event(event, call.name):  # spare the payload and the file's stat
            return []
        fields: dict[str, Any] = {"tool_name": call.name, "tool_input": call.input, "tool_use_id": call.id}
        if result.is_error:
            fields.update(error=result.content, is_interrupt=False)
        else:
            fields["tool_response"] = tool_response(call, result)
        started = self._tool_started.pop(call.id, None)
        fields["duration_ms"] = round((time.monotonic() - started) * 1000) if started is not None else 0
        seen = _mtime(result) if call.name in EDITING_TOOLS and not result.is_error else None
        outcome = await self._event(agent, event, call.name, **fields)
        if outcome is None:
            return []
        if outcome.stop:
            raise StoppedByHook(outcome.stop_reason or f"A {event} hook stopped the turn after {call.name}.")
        notes = context_notes(f"{event}:{call.name}", outcome)
        if seen is not None:
            notes += _reformatted(agent, result, seen)
        if outcome.block:
            notes.insert(0, f"{event}:{call.name} hook blocking error: {outcome.reason or 'blocked'}")
        return notes

    async def before_turn_end(self, agent: Agent, continued: int) -> str | None:
        """Stop: `decision: block` (or exit 2) sends its reason to the model and the turn goes on."""
        if continued >= MAX_STOP_CONTINUES:
            if self.hooks.for_event("Stop", None):
                self.notices.say(
                    f"Stop hooks kept this turn going {continued} times; it ends here "
                    "(a Stop hook should check stop_hook_active).",
                    "warning",
                )
            return None
        last = next((m.text for m in reversed(agent.session.messages) if m.role == "assistant"), "")
        outcome = await self._event(
            agent, "Stop", None, stop_hook_active=continued > 0, last_assistant_message=last, **STOP_LISTS
        )
        if outcome is None or outcome.stop or not outcome.block:
            if outcome is not None and outcome.stop and outcome.stop_reason:
                self.notices.say(outcome.stop_reason, "info")
            return None
        return f"Stop hook feedback:\n{outcome.reason or 'Continue.'}"

    # -- subagents

    def for_subagent(self, agent: Agent, run: SubagentRun) -> Part | None:
        """The hooks of the child's type (its frontmatter `hooks`), for that child's calls only."""
        return subagent_hooks(run, self.project_dir, self.notices, self.mode)

    async def on_subagent_start(self, agent: Agent, run: SubagentRun) -> list[str]:
        """SubagentStart (matcher: the agent type): its context goes into the child's first message."""
        outcome = await self._event(
            agent, "SubagentStart", run.agent_type, agent_id=run.agent_id, agent_type=run.agent_type
        )
        return context_notes("SubagentStart", outcome) if outcome is not None else []

    async def before_subagent_stop(self, agent: Agent, run: SubagentRun, continued: int) -> str | None:
        """SubagentStop: `decision: block` (or exit 2) sends its reason to the child, which goes on
        (at most MAX_STOP_CONTINUES times, as Stop)."""
        if continued >= MAX_STOP_CONTINUES:
            return None
        last = next((m.text for m in reversed(run.messages) if m.role == "assistant"), "")
        outcome = await self._event(
            agent,
            "SubagentStop",
            run.agent_type,
            agent_id=run.agent_id,
            agent_type=run.agent_type,
            stop_hook_active=continued > 0,
            agent_transcript_path=str(run.transcript),
            last_assistant_message=last,
            **STOP_LISTS,
        )
        if outcome is None or outcome.stop or not outcome.block:
            return None
        return f"SubagentStop hook feedback:\n{outcome.reason or 'Continue.'}"

    # -- compaction

    async def before_compact(self, agent: Agent, request: CompactRequest) -> None:
        """PreCompact: exit 2 or `decision: block` refuses the compaction; context (or plain
        stdout) is added to what the summary must pay attention to."""
        self._compact_trigger = request.trigger
        outcome = await self._event(
            agent, "PreCompact", request.trigger, trigger=request.trigger, custom_instructions=request.instructions
        )
        if outcome is None:
            return
        if outcome.block or outcome.stop:
            why = outcome.reason or outcome.stop_reason or "no reason given"
            raise CompactionRefused(f"a PreCompact hook refused it ({why}); the conversation was kept unchanged")
        extra = "\n".join(text.strip() for text in outcome.context if text.strip())
        if extra:
            request.instructions = f"{request.instructions.strip()}\n{extra}".strip()

    async def after_compact(self, agent: Agent) -> None:
        """PostCompact, then SessionStart (compact), whose context joins the next message."""
        summary = agent.session.messages[0].text if agent.session.messages else ""
        await self._event(
            agent, "PostCompact", self._compact_trigger, trigger=self._compact_trigger, compact_summary=summary
        )
        await self._start(agent, agent.session, "compact")

    # -- observers

    def on_instructions_loaded(self, agent: Agent, loads: Sequence[InstructionLoad]) -> None:
        """InstructionsLoaded for each file, in the background (it cannot change anything)."""
        if not self.hooks.for_event("InstructionsLoaded", None):  # None matches every matcher
            return
        payloads = [
            (load.reason, self._payload(agent, "InstructionsLoaded", **instruction_fields(load))) for load in loads
        ]
        self._in_background(self._observe("InstructionsLoaded", payloads, agent.ctx.cwd))

    def on_notification(self, agent: Agent, kind: NotificationKind, message: str) -> None:
        """Notification, in the background: it must not delay the question it announces."""
        payload = self._payload(agent, "Notification", message=message, title="claude-mini", notification_type=kind)
        if self.hooks.for_event("Notification", kind):
            self._in_background(self._observe("Notification", [(kind, payload)], agent.ctx.cwd))

    async def _observe(self, event: str, payloads: Sequence[tuple[str, dict[str, Any]]], cwd: Path) -> None:
        for value, payload in payloads:  # in order: an audit log keeps the load order
            try:
                await self._run(event, value, payload, cwd)
            except Exception as exc:  # a background audit must never surface as a crash
                log.debug("%s hook failed: %s", event, exc)


def _verdict(call: ToolUseBlock, outcome: HookOutcome) -> ToolVerdict | None:
    """A PreToolUse outcome as the loop's verdict (`defer` asks: Claude Code's SDK resumes it
    later, which a terminal session cannot)."""
    reason = outcome.permission_reason or outcome.reason
    decision: Deny | Ask | Allow | None = None
    if outcome.block or outcome.permission == "deny":
        decision = Deny(f"PreToolUse:{call.name} hook error: {reason or 'no reason given'}")
    elif outcome.permission in ("ask", "defer"):
        decision = Ask(reason or "a PreToolUse hook asks you to confirm this call")
    elif outcome.permission == "allow":
        decision = Allow()
    if decision is None and outcome.updated_input is None:
        return None
    return ToolVerdict(decision, outcome.updated_input)


def context_notes(label: str, outcome: HookOutcome) -> list[str]:
    """Context from hooks as the model reads it, labelled as Claude Code labels it."""
    return [f"{label} hook additional context: {text}" for text in outcome.context if text.strip()]


def _mtime(result: ToolResult) -> float | None:
    path = result.metadata.get("path")
    try:
        return os.stat(path).st_mtime if path else None
    except OSError:
        return None


def _reformatted(agent: Agent, result: ToolResult, seen: float) -> list[str]:
    """A PostToolUse hook changed the file the model just wrote (a formatter): count the new
    content as read, so its next Edit is not refused as stale, and tell the model."""
    now = _mtime(result)
    if now is None or now == seen:
        return []
    path = Path(result.metadata["path"])
    if path in agent.ctx.read_files:
        record_read(agent.ctx, path, now)
    return [
        f"A PostToolUse hook changed {path} after your edit (likely a formatter). Your next Edit "
        "is checked against the file as it is now: read it first if you need its exact text."
    ]


def instruction_fields(load: InstructionLoad) -> dict[str, Any]:
    """The InstructionsLoaded fields of one file, as Claude Code names them."""
    fields: dict[str, Any] = {"file_path": load.path, "memory_type": load.memory_type, "load_reason": load.reason}
    if load.globs:
        fields["globs"] = list(load.globs)
    if load.trigger_file_path:
        fields["trigger_file_path"] = load.trigger_file_path
    if load.parent_file_path:
        fields["parent_file_path"] = load.parent_file_path
    return fields


def tool_response(call: ToolUseBlock, result: ToolResult) -> Any:
    """What a PostToolUse hook reads as `tool_response`, shaped like Claude Code's for its tools."""
    if call.name == "Bash":
        return {"stdout": result.content, "stderr": "", "interrupted": False, "isImage": False}
    if call.name in ("Write", "Edit"):
        path = result.metadata.get("path") or call.input.get("file_path")
        return {"filePath": str(path), "success": True, **{k: v for k, v in call.input.items() if k != "file_path"}}
    return {"content": result.content}


class AgentTypeHooks(Part):
    """A session without hooks in settings still runs a subagent type's own (`for_subagent`)."""

    def __init__(self, project_dir: Path, notices: NoticeChannel, mode: Callable[[], str]) -> None:
        self.project_dir, self.notices, self.mode = project_dir, notices, mode

    def for_subagent(self, agent: Agent, run: SubagentRun) -> Part | None:
        return subagent_hooks(run, self.project_dir, self.notices, self.mode)


class _ChildHooks(UserHooksPart):
    """A subagent type's hooks in its child's lifecycle: tool events and its end, no session events."""

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        return None


def subagent_hooks(
    run: SubagentRun, project_dir: Path, notices: NoticeChannel, mode: Callable[[], str]
) -> UserHooksPart | None:
    """The part running `run`'s own hooks, or None when its type has none."""
    if not run.hooks:
        return None
    hook_set = agent_hooks(run.hooks, run.hooks_file)
    for problem in hook_set.problems:
        notices.say(problem, "warning", once=True)
    return _ChildHooks(hook_set, project_dir=project_dir, notices=notices, mode=mode) if hook_set.commands else None


def effort_level(value: Any) -> str:
    """The `effort` hooks are told: the setting `effortLevel` when it is one of Claude Code's levels."""
    return value if value in ("low", "medium", "high", "xhigh", "max") else "high"


def part(ctx: PartContext[RuntimeView]) -> UserHooksPart | AgentTypeHooks:
    """The user's hooks from settings as a lifecycle part (none configured: a part that only runs
    subagent types' own hooks); their skipped entries are said once."""
    hook_set = load_hooks(ctx.config)
    for problem in hook_set.problems:
        ctx.notices.say(problem, "warning", once=True)
    runtime = ctx.runtime
    if not hook_set.commands:
        return AgentTypeHooks(ctx.config.project_root, ctx.notices, lambda: runtime.policy.mode)
    hooks = UserHooksPart(
        hook_set,
        project_dir=ctx.config.project_root,
        notices=ctx.notices,
        mode=lambda: runtime.policy.mode,
        agent=ctx.agent,
        effort=effort_level(ctx.config.settings.get("effortLevel")),
    )
    # Off by default: a fork's calls are its own (memory writes inside the memory folder, reads),
    # already confined by its policy, and hooks written for the user's session (format the file,
    # ask about a push) would fire, and cost time, on background work the user never sees.
    if ctx.config.memory.extraction.hooks_in_forks:
        ctx.agent.fork_tool_check = functools.partial(hooks.vet_fork_call, ctx.agent)
    return hooks
