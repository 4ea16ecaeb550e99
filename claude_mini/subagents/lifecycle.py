"""Subagents as a part of the session lifecycle (`runtime.subagents`): the agent types, the
Agent tool, the children it runs, their limits, and what the UIs may watch of them.

The Agent tool calls `delegate`, which builds the child (runner.py) for the agent that made the
call (the main one, or a subagent where `subagents.maxDepth` allows it), runs it to the end and
returns its answer and a one-line summary. Each child's messages go to its sidechain transcript;
the parent's transcript records a `subagent` entry linking it. Esc cancels the parent's turn and
with it every child. Extraction, recall and compaction never run in a child: its findings reach
memory through the main conversation's turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from claude_mini.agent.fork import prefix_mismatches
from claude_mini.agent.lifecycle import Lifecycle, Part, PartContext, RuntimeView, SessionSource
from claude_mini.agent.loop import RUNNING_CALL, Agent
from claude_mini.agent.subagent_run import SubagentRun
from claude_mini.base import paths
from claude_mini.config.models import model_named
from claude_mini.llm.messages import message_to_api
from claude_mini.memory.store import MemoryStore, memory_prompt_section
from claude_mini.prompt import environment_section
from claude_mini.session import Session
from claude_mini.skills.catalog import CatalogError, load_catalog
from claude_mini.subagents.runner import (
    COMMON_TAIL,
    ChildGuard,
    ChildPart,
    Limits,
    agent_rules,
    child_context,
    directive,
    fork_messages,
    new_run,
    resolved_tools,
    run_child,
    serialized,
)
from claude_mini.subagents.tool import AgentTool, describe
from claude_mini.subagents.types import (
    AgentType,
    AgentTypes,
    load_agent_types,
    memory_dir,
    memory_dir_problem,
)
from claude_mini.tools.base import ToolError, ToolResult

if TYPE_CHECKING:
    from pathlib import Path

    from claude_mini.agent.events import AgentEvent
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.config import Config

log = logging.getLogger(__name__)
Listener = Callable[[SubagentRun, "AgentEvent"], None]
MAX_RUNS_KEPT = 20  # for /agents last; older children are dropped


def read_limits(config: Config) -> tuple[Limits, list[str]]:
    """`subagents.maxTurns`, `.tokenBudget`, `.maxDepth`: a bad value is one line and its default."""
    raw = config.get("subagents") or {}
    defaults, problems, values = Limits(), [], {}
    for key, attr in (("maxTurns", "max_turns"), ("tokenBudget", "token_budget"), ("maxDepth", "max_depth")):
        value = raw.get(key) if isinstance(raw, dict) else None
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            problems.append(
                f"subagents.{key} must be a whole number of at least 1 (got {value!r}); "
                f"using {getattr(defaults, attr):,}."
            )
            continue
        values[attr] = value
    return Limits(**values), problems


@dataclass
class _Child:
    """What the hook knows of a running child, to start a grandchild from it."""

    run: SubagentRun
    depth: int


class SubagentPart(Part):
    """The session's agent types, the Agent tool, and the children it ran."""

    def __init__(
        self,
        config: Config,
        notices: NoticeChannel,
        instructions: Callable[[], str],
        limits: Limits | None = None,
        main_memory: Path | None = None,
        agent: Agent | None = None,
    ) -> None:
        self.config = config
        self.notices = notices
        self.instructions = instructions  # the project's CLAUDE.md files as the system prompt holds them
        self.limits = limits or Limits()
        self.main_memory = main_memory  # the session's auto-memory folder: children never write it
        self.agent = agent  # the main agent: its tool list is re-specified at /clear
        self.home = paths.home_dir()
        self.types: AgentTypes = self._read_types()
        self.tool = AgentTool(self)
        self.runs: list[SubagentRun] = []
        self.listeners: list[Listener] = []
        self._children: dict[int, _Child] = {}  # id(child agent) -> its run and depth
        self._asking = asyncio.Lock()

    def _read_types(self) -> AgentTypes:
        types = load_agent_types(
            self.config.project_root, self.home, trusted=self.config.trusted, claude_code=self.config.claude_code_home
        )
        for problem in types.problems:
            self.notices.say(problem, "warning", once=True)
        return types

    def listen(self, listener: Listener) -> None:
        """Call `listener(run, event)` for every event of every child (the REPL's live line, stream-json)."""
        self.listeners.append(listener)

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """A new conversation: the types are read again and the Agent tool lists them (its description
        is part of the cached prefix, so it changes only here)."""
        self.types = self._read_types()
        self.tool.description = describe(self.types)
        if self.agent is not None:  # the tools' specs are what is sent: rebuild them from the new description
            self.agent.set_tools(list(self.agent.tools.values()))

    # -- the Agent tool

    def type_for(self, name: Any) -> AgentType:
        """The type the model asked for (general-purpose when omitted); ToolError names the others."""
        if name is None or name == "":
            name = "general-purpose"
        found = self.types.find(name) if isinstance(name, str) else None
        if found is None:
            names = ", ".join(t.name for t in self.types.types)
            raise ToolError(f"Unknown agent type {name!r}. Available: {names}.")
        return found

    async def delegate(self, agent_type: AgentType, description: str, prompt: str) -> ToolResult:
        """Run a child for the agent whose call is running now; its answer and a summary line."""
        parent, call = RUNNING_CALL.get()
        depth = self._children[id(parent)].depth + 1 if id(parent) in self._children else 1
        run = new_run(agent_type, description, call, parent, depth)
        if agent_type.hooks and self._lifts(agent_type):  # a project's type runs code only when trusted
            run.hooks, run.hooks_file = agent_type.hooks, agent_type.path
        self.runs = [*self.runs[-(MAX_RUNS_KEPT - 1) :], run]
        parent.session.record_system(
            "subagent",
            agent_id=run.agent_id,
            agent_type=agent_type.name,
            tool_use_id=call.id,
            transcript=str(run.transcript),
        )
        child, text = await self._child(parent, agent_type, run, call, prompt)
        self._children[id(child)] = _Child(run, depth)
        try:
            await run_child(child, run, text, self._observe)
        finally:
            self._children.pop(id(child), None)
        answer = run.text.strip() or "(the subagent gave no answer)"
        return ToolResult(
            f"{answer}\n\n{run.summary()}",
            is_error=run.status == "failed",
            metadata={"agent_id": run.agent_id, "transcript": str(run.transcript)},
        )

    def _observe(self, run: SubagentRun, event: AgentEvent) -> None:
        for listener in self.listeners:
            listener(run, event)

    async def _child(
        self, parent: Agent, agent_type: AgentType, run: SubagentRun, call: Any, prompt: str
    ) -> tuple[Agent, str]:
        """The child agent and the text of its first message."""
        may_delegate = run.depth < self.limits.max_depth
        folder = self._memory_folder(agent_type)
        # The parent's session id: the sidechain's rows say which session they belong to.
        session = Session(parent.ctx.cwd, session_id=parent.session.id, transcript_path=run.transcript)
        session.costs = parent.session.costs  # booked under `subagent` in the parent's /cost
        context = await parent.lifecycle.on_subagent_start(parent, run)
        if agent_type.fork:
            tools, system, model = list(parent.tools.values()), list(parent.system), parent.model
            session.messages = fork_messages(parent, call)
            session.record_system(
                "fork_context",
                parent_session=parent.session.id,
                parent_messages=len(parent.session.messages),
                pending_results=message_to_api(session.messages[-1]),
            )
            text = directive(prompt)
        else:
            tools, missing = resolved_tools(
                parent, agent_type, may_delegate=may_delegate, with_memory=folder is not None
            )
            if missing:
                self.notices.say(
                    f"Agent type {agent_type.name} names tools this session does not have: "
                    f"{', '.join(missing)}; it runs without them.",
                    "warning",
                    once=True,
                )
            system = self._own_system(parent, agent_type, folder)
            chosen = agent_type.model if self._lifts(agent_type) else None
            model = model_named(chosen) or parent.model  # an untrusted repository does not pick the cost
            text = self._skills_text(agent_type) + prompt
        if context:
            text += "\n\n" + "\n\n".join(context)
        ctx = child_context(parent)
        own = agent_rules(agent_type, parent, self.config.project_root, lifts=self._lifts(agent_type))
        policy = parent.policy.with_guards(
            *([own] if own is not None else []),
            ChildGuard(
                lambda: ctx.cwd,
                lambda: parent.ctx.cwd,
                read_only=agent_type.read_only,
                memory_dir=folder,
                main_memory=self.main_memory,
            ),
        )
        child = Agent(
            client=parent.client,
            session=session,
            tools=tools,
            policy=policy,
            system=system,
            model=model,
            ctx=ctx,
            max_tokens=parent.max_tokens,
            max_turns=self.limits.max_turns,
            ask_user=serialized(parent.ask_user, self._asking, f"subagent {agent_type.name} ({run.description})"),
            lifecycle=Lifecycle(
                [
                    ChildPart(parent, run, self.limits, may_delegate=may_delegate),
                    *parent.lifecycle.for_subagent(parent, run),
                ]
            ),
        )
        child.purpose = "subagent"
        if agent_type.fork:
            self._check_fork_prefix(parent, child)
        session.record_system(
            "subagent_meta",
            agent_type=agent_type.name,
            description=run.description,
            parent_session=parent.session.id,
            tool_use_id=call.id,
            depth=run.depth,
            fork=agent_type.fork,
        )
        return child, text

    def _lifts(self, agent_type: AgentType) -> bool:
        """May the type's file choose for the session (model, allow rules, a mode that asks less)? A
        project's type only in a trusted folder."""
        return agent_type.source != "project" or self.config.trusted

    def _skills_text(self, agent_type: AgentType) -> str:
        """The bodies of the type's `skills`, before its task (Claude Code preloads them); one line
        per skill that cannot be found."""
        if not agent_type.skills:
            return ""
        catalog = load_catalog(self.config.project_root, self.home, trusted=self.config.trusted)
        parts = []
        for name in agent_type.skills:
            entry = catalog.find(name)
            try:
                parts.append(f"<skill name={entry.name!r}>\n{entry.body().strip()}\n</skill>" if entry else "")
            except CatalogError as exc:
                self.notices.say(str(exc), "warning", once=True)
            if entry is None:
                self.notices.say(
                    f"Agent type {agent_type.name} names the skill {name!r}, which does not exist; it runs without it.",
                    "warning",
                    once=True,
                )
        return "".join(f"{p}\n\n" for p in parts if p)

    def _memory_folder(self, agent_type: AgentType) -> Path | None:
        """The type's own memory folder; none (and one line) when it is not a real folder where it
        belongs (a committed link would let the child write anywhere without a question)."""
        folder = memory_dir(agent_type, self.config.project_root, self.home)
        if folder is None:
            return None
        problem = memory_dir_problem(agent_type, folder, self.config.project_root, self.home)
        if problem is None:
            return folder
        self.notices.say(
            f"The memory folder of agent {agent_type.name} ({folder}) was not used: {problem}; "
            "it runs without its memory. Remove the link to give it a memory folder.",
            "warning",
            once=True,
        )
        return None

    @staticmethod
    def _check_fork_prefix(parent: Agent, child: Agent) -> None:
        """A fork's first request must extend the parent's last one, or it pays the whole prefix
        again: the fork module's cache guard logs what differs."""
        mismatches = prefix_mismatches(parent.last_request, child.request("subagent"))
        if mismatches:
            log.warning("cache-prefix mismatch (subagent fork): %s", "; ".join(mismatches))

    def _own_system(self, parent: Agent, agent_type: AgentType, folder: Any) -> list[str]:
        """A non-fork child's system prompt: its type's, the common rules, where it runs, the project's
        instructions, and its own memory (never the main session's auto memory)."""
        blocks = [
            agent_type.prompt.strip() or "You are a helpful agent.",
            COMMON_TAIL,
            environment_section(parent.ctx.cwd).text,
        ]
        instructions = self.instructions().strip()
        if instructions:
            blocks.append(instructions)
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            blocks.append(memory_prompt_section(MemoryStore(folder)))
        return blocks

    # -- reports

    def context_report(self) -> list[str]:
        if not self.runs:
            return []
        done = [r for r in self.runs if r.status != "running"]
        tokens = sum(r.tokens for r in self.runs)
        return [
            f"Subagents: {len(self.runs)} run this session ({len(done)} finished, {tokens:,} tokens); "
            "/agents last shows the last one"
        ]


def part(ctx: PartContext[RuntimeView]) -> SubagentPart:
    """The session's subagents part, its limits from settings (a bad value said once)."""
    limits, problems = read_limits(ctx.config)
    for problem in problems:
        ctx.notices.say(problem, "warning", once=True)
    runtime = ctx.runtime
    main_memory = ctx.memory_root if ctx.config.auto_memory else None
    return SubagentPart(
        ctx.config, ctx.notices, lambda: runtime.instructions.render(), limits, main_memory, agent=ctx.agent
    )
