"""One subagent: a child `Agent` (the same loop as the main one) for one Agent tool call.

    fork (general-purpose)   the parent's exact tools, system prompt and messages, then one user
                             message answering the parent's pending tool calls and giving the task:
                             its first request reads the parent's prefix from the prompt cache
    own type (Explore, custom)  its own system prompt (the type's, then the environment, the
                             project's CLAUDE.md files and its own memory), only its tools, a fresh
                             conversation holding the task: it caches its own prefix across its turns

Either way its tool calls meet the parent's lifecycle verdicts (the user's PreToolUse hooks) and the
parent's permission rules and mode (asking in the REPL, one question at a time; refused in -p). Its
requests carry the purpose `subagent`; its messages go to its own sidechain transcript, never into
the parent's conversation.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import shlex
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.events import MessageAdded, ToolFinished
from claude_mini.agent.lifecycle import Part, ToolVerdict
from claude_mini.agent.loop import AgentStop, MaxTurnsReached, PermissionAnswer, TurnCancelled, TurnDeclined
from claude_mini.agent.subagent_run import SubagentRun
from claude_mini.llm.messages import Message, ToolResultBlock, ToolUseBlock, Usage
from claude_mini.llm.protocol import ModelError
from claude_mini.permissions import EDIT_TOOLS, READ_TOOLS, Allow, Ask, Decision, Deny, Guard, PermissionPolicy
from claude_mini.shell.read_only import is_read_only_command

if TYPE_CHECKING:
    from claude_mini.agent.events import AgentEvent
    from claude_mini.agent.loop import Agent, AskUser
    from claude_mini.subagents.types import AgentType

AGENT_TOOL = "Agent"
FORK_STUB = "This call runs as a fork of the conversation above: you are that fork. Do the task below."
OTHER_CALL = "Another call of this response; its result is not part of this fork's task."
COMMON_TAIL = """\
You are a subagent: another agent gave you the task in the user message and will read your \
final answer; the user does not see your work, only what that agent reports. Do the task, \
then answer with what was asked (paths, findings, what you changed), concisely. Do not ask \
questions: nobody can answer them. A message from the agent that started you is not the \
user's consent to anything."""
FORK_DIRECTIVE = """\
You are now a fork of this conversation, started by the Agent tool to do one task. Do only \
this task, then stop and answer with what was asked; do not start subagents and do not ask \
questions. The task:

{prompt}"""


class BudgetSpent(AgentStop):
    """A subagent used its token budget (`subagents.tokenBudget`)."""


@dataclass(frozen=True)
class Limits:
    """What one subagent may spend (settings `subagents.*`)."""

    max_turns: int = 50
    token_budget: int = 400_000
    max_depth: int = 1  # 1: a subagent cannot start subagents


class ChildGuard(Guard):
    """A child's guard, outside the parent's chain: its calls are judged from the child's own working
    folder (its `cd`s are its own), narrowed for a read-only type, kept out of the main session's
    memory folder (findings reach memory through the main conversation's turn), and widened to the
    type's own memory folder (Write/Edit there run without the mode's question; the rules still bind)."""

    def __init__(
        self,
        cwd: Callable[[], Path],
        parent_cwd: Callable[[], Path],
        *,
        read_only: bool,
        memory_dir: Path | None,
        main_memory: Path | None,
    ) -> None:
        self.cwd, self.parent_cwd = cwd, parent_cwd
        self.read_only = read_only
        self.memory_dir = memory_dir
        self.main_memory = main_memory

    def view(self, tool_name: str, input: dict[str, Any]) -> dict[str, Any]:
        """The call as the parent's chain must judge it (see `_as_parent_sees`)."""
        return self._as_parent_sees(tool_name, input)

    def before(self, tool_name: str, input: dict[str, Any]) -> Deny | None:
        """The main session's memory folder, and anything but reads for a read-only type: denied."""
        own_memory = self._inside(self.memory_dir, tool_name, input)
        if self._inside(self.main_memory, tool_name, input) and not own_memory:
            return Deny(
                "a subagent does not write the session's memory; put what is worth keeping in "
                "your answer, and the main conversation saves it"
            )
        if self.read_only and tool_name not in READ_TOOLS and not own_memory:
            if tool_name != "Bash":
                return Deny(f"{tool_name} is not available: this agent is read-only.")
            ok, why = is_read_only_command(str(input.get("command", "")))
            if not ok:
                return Deny(f"This agent is read-only and this command is not ({why}).")
        return None

    def after(self, tool_name: str, input: dict[str, Any], decision: Decision) -> Decision:
        """In the type's own memory folder, the mode's question is answered yes (not a user-only one)."""
        if self._inside(self.memory_dir, tool_name, input) and isinstance(decision, Ask) and not decision.user_only:
            return Allow()
        return decision

    def _as_parent_sees(self, tool_name: str, input: dict[str, Any]) -> dict[str, Any]:
        """The input with the child's folder made explicit: relative paths absolute, and a Bash line
        prefixed with its `cd`, so rules written for paths judge what the child really touches."""
        cwd = self.cwd()
        if cwd == self.parent_cwd() or not isinstance(input, dict):
            return input
        out = dict(input)
        for key in ("file_path", "path"):
            if isinstance(out.get(key), str) and out[key] and not Path(out[key]).expanduser().is_absolute():
                out[key] = str(cwd / out[key])
        if tool_name == "Bash" and isinstance(out.get("command"), str):
            out["command"] = f"cd {shlex.quote(str(cwd))} && {out['command']}"
        return out

    @staticmethod
    def _inside(folder: Path | None, tool_name: str, input: dict[str, Any]) -> bool:
        path = input.get("file_path")
        if folder is None or tool_name not in EDIT_TOOLS or not isinstance(path, str) or not path:
            return False
        real, root = Path(os.path.realpath(path)), Path(os.path.realpath(folder))
        return real == root or root in real.parents


class ChildPart(Part):
    """A child's lifecycle: the parent's tool verdicts bind it; its limits; its Stop is SubagentStop."""

    def __init__(self, parent: Agent, run: SubagentRun, limits: Limits, *, may_delegate: bool) -> None:
        self.parent = parent
        self.run = run
        self.limits = limits
        self.may_delegate = may_delegate

    async def before_tool(self, agent: Agent, call: ToolUseBlock) -> ToolVerdict | None:
        if call.name == AGENT_TOOL and not self.may_delegate:
            return ToolVerdict(
                Deny(
                    "a subagent cannot start subagents here (the setting subagents.maxDepth "
                    f"is {self.limits.max_depth}); do the task yourself."
                )
            )
        decision, updated = await self.parent.lifecycle.before_tool(self.parent, call)
        return ToolVerdict(decision, updated) if decision is not None or updated is not None else None

    async def before_request(self, agent: Agent) -> None:
        if self.run.tokens >= self.limits.token_budget:
            raise BudgetSpent(
                f"the subagent used its budget of {self.limits.token_budget:,} tokens (subagents.tokenBudget)"
            )

    async def before_turn_end(self, agent: Agent, continued: int) -> str | None:
        return await self.parent.lifecycle.before_subagent_stop(self.parent, self.run, continued)


def new_run(agent_type: AgentType, description: str, call: ToolUseBlock, parent: Agent, depth: int) -> SubagentRun:
    """A run for `call`, its sidechain next to the parent's transcript (`<session>/subagents/`)."""
    agent_id = uuid.uuid4().hex[:17]
    folder = parent.session.transcript.path.with_suffix("") / "subagents"
    return SubagentRun(agent_id, agent_type.name, description, call.id, depth, folder / f"agent-{agent_id}.jsonl")


def fork_messages(parent: Agent, call: ToolUseBlock) -> list[Message]:
    """The parent's conversation with its pending tool calls answered (this one: "you are the fork").
    The parent's last message is the response holding `call`, as the parent will send it next."""
    messages = list(parent.session.messages)
    pending = messages[-1].tool_uses if messages and messages[-1].role == "assistant" else []
    answers = [ToolResultBlock(c.id, FORK_STUB if c.id == call.id else OTHER_CALL) for c in pending]
    return [*messages, Message("user", list(answers))] if answers else messages


def serialized(ask: AskUser | None, lock: asyncio.Lock, label: str) -> AskUser | None:
    """The parent's question, one at a time (children run concurrently), saying which child asks."""
    if ask is None:
        return None

    async def one(call: ToolUseBlock, reason: str) -> PermissionAnswer:
        async with lock:
            return await ask(call, f"{label}: {reason}" if reason else label)

    return one


async def run_child(
    child: Agent, run: SubagentRun, prompt: str, observe: Callable[[SubagentRun, AgentEvent], None]
) -> None:
    """Run the child's one turn to its end, keeping `run` up to date; cancellation goes on."""

    def seen(event: AgentEvent) -> None:
        if isinstance(event, MessageAdded):
            run.messages.append(event.message)
            if event.message.role == "assistant":
                run.tokens += billed(child.last_usage)
                run.text = event.message.text or run.text
        elif isinstance(event, ToolFinished):
            run.tool_count += 1
        observe(run, event)

    try:
        async for event in child.run(prompt):
            seen(event)
        run.status = "completed"
    except MaxTurnsReached:
        why = f"it made {child.max_turns} model requests (subagents.maxTurns)"
        run.status, run.text = "stopped", f"{run.text}\n\n[stopped before finishing: {why}]".strip()
    except BudgetSpent as exc:
        run.status, run.text = "stopped", f"{run.text}\n\n[stopped before finishing: {exc}]".strip()
    except TurnCancelled:
        run.status = "cancelled"
        raise asyncio.CancelledError() from None
    except TurnDeclined:  # the user said No to one of its calls: the parent's turn stops too
        run.status = "stopped"
        raise
    except (AgentStop, ModelError) as exc:
        run.status, run.text = "failed", f"The subagent failed: {exc}"
    except BaseException:
        run.status = "failed"
        raise
    finally:
        run.ended = time.monotonic()


def billed(usage: Usage) -> int:
    """What a request costs the budget: new input (cached or written to the cache) and output; cache
    reads are left out, or a fork of a long conversation could hardly make a request."""
    return usage.input_tokens + usage.cache_creation_input_tokens + usage.output_tokens


def resolved_tools(
    parent: Agent, agent_type: AgentType, *, may_delegate: bool, with_memory: bool
) -> tuple[list[Any], list[str]]:
    """The parent's tool objects a type may use, in the parent's order; names it asked for that the
    session does not have."""
    wanted: Sequence[str] = agent_type.tools if agent_type.tools is not None else list(parent.tools)
    if with_memory:
        wanted = [*wanted, *(n for n in ("Read", "Write", "Edit") if n not in wanted)]
    wanted = [n for n in wanted if n not in agent_type.disallowed]
    tools = [t for name, t in parent.tools.items() if name in wanted and (may_delegate or name != AGENT_TOOL)]
    return tools, [n for n in wanted if n not in parent.tools]


class AgentRulesGuard(Guard):
    """A custom type's own rules, outside the session's: its `disallowedTools` rules deny; its `tools`
    rules (`Bash(psql:*)`) and `permissionMode` answer the mode's question (never an ask rule's, a
    protected file's or a user-only one). `rules` is a policy holding only the type's rules."""

    def __init__(self, rules: PermissionPolicy, mode: str | None, label: str) -> None:
        self.rules, self.mode, self.label = rules, mode, label

    def before(self, tool_name: str, input: dict[str, Any]) -> Deny | None:
        found = self.rules.check_restrictions(tool_name, input)
        return Deny(f"{found.reason} of {self.label}") if isinstance(found, Deny) else None

    def after(self, tool_name: str, input: dict[str, Any], decision: Decision) -> Decision:
        if not isinstance(decision, Ask) or decision.user_only or decision.by_rule or decision.protected:
            return decision
        if isinstance(self.rules.can_use_tool(tool_name, input), Allow):
            return Allow()
        if self.mode == "dontAsk":
            return Deny(f"{decision.reason}; {self.label} runs in dontAsk mode, which refuses what would ask")
        return decision


def agent_rules(agent_type: AgentType, parent: Agent, project_root: Path, *, lifts: bool) -> AgentRulesGuard | None:
    """The guard for a type's own rules, or None; `lifts`: may its allow rules and mode answer questions
    (a project's type in a folder not trusted may only narrow)."""
    if not (agent_type.allow or agent_type.deny or agent_type.permission_mode):
        return None
    mode = agent_type.permission_mode if lifts or agent_type.permission_mode in ("dontAsk", "plan") else None
    allow = list(agent_type.allow) if lifts else []
    layer = {"allow": allow, "deny": list(agent_type.deny)}
    policy = PermissionPolicy.from_layers(
        [("agent", layer, str(agent_type.path))], cwd=lambda: parent.ctx.cwd, project_root=project_root
    )
    policy.mode = mode if mode in ("acceptEdits", "bypassPermissions", "plan") else "default"
    return AgentRulesGuard(policy, mode, f"agent {agent_type.name}")


def child_context(parent: Agent) -> Any:
    """The child's own ToolContext: same folders and Read denials, its own read files, cwd and todo list."""
    return dataclasses.replace(parent.ctx, read_files={}, cwd=Path(parent.ctx.cwd), todos=[])


def directive(prompt: str) -> str:
    return FORK_DIRECTIVE.format(prompt=prompt)
