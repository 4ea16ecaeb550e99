"""/agents' lines: the subagent types the Agent tool can start with what is wrong with their files,
and the last subagent's conversation.

The types are the session's (`runtime.subagents.types`, read when it started), else read from
disk now. Claude Code 2.1.332 has no such command any more (its /agents wizard was removed), so
the rows follow its listing to the model: name, when to use it, its tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from claude_mini.base import paths
from claude_mini.base.text import clip, one_line, visible_controls
from claude_mini.llm.messages import TextBlock, ToolUseBlock
from claude_mini.skills.catalog import shown
from claude_mini.skills.report import table
from claude_mini.subagents.types import load_agent_types

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime
    from claude_mini.subagents.types import AgentType, AgentTypes

HEADER = ("NAME", "SOURCE", "TOOLS", "MODEL", "MEMORY", "CONTEXT")


def session_types(runtime: Runtime) -> AgentTypes:
    """The session's types, or (a runtime without the Agent tool) the files as they are now."""
    if runtime.subagents is not None:
        return runtime.subagents.types
    config = runtime.config
    return load_agent_types(
        config.project_root, paths.home_dir(), trusted=config.trusted, claude_code=config.claude_code_home
    )


def agents_table(types: AgentTypes, *, width: int = 100) -> list[str]:
    """/agents' lines: a count, a row per type and its description under it (both cut at `width`),
    a line per problem."""
    custom = [t for t in types.types if t.path is not None]
    home = shown(paths.home_dir() / "agents")
    lines = [
        f"Agent types: {len(types.types)} ({len(types.types) - len(custom)} built-in, {len(custom)} from "
        f".claude/agents/ and {home}/):"
    ]
    header, *rows = table([HEADER, *(_row(t) for t in types.types)])
    lines.append(clip(header, width))
    for row, agent_type in zip(rows, types.types, strict=True):  # when to use it: under its row
        lines += [clip(row, width), clip("      " + one_line(agent_type.description, terminal=True), width)]
    if not custom and not types.problems:
        lines.append(
            f"Add one as .claude/agents/NAME.md (this project) or {home}/NAME.md (every project): "
            "frontmatter `name` and `description`, optionally `tools`, `model`, `memory`; the body is "
            "its system prompt."
        )
    lines += [f"⚠ {problem}" for problem in types.problems]
    return lines


def _row(agent_type: AgentType) -> tuple[str, ...]:
    tools = "all tools" if agent_type.tools is None else ", ".join(agent_type.tools) or "no tools"
    context = "fork" if agent_type.fork else "own" + (", read-only" if agent_type.read_only else "")
    return (agent_type.name, agent_type.source, tools, agent_type.model or "inherit", agent_type.memory or "-", context)


def last_run_lines(runs: Sequence[Any], label: Callable[[ToolUseBlock], str]) -> list[str]:
    """The last child's type, task, status and tool count, then its messages: text as it was
    written (controls made visible), each tool call on one line as the front end labels it."""
    if not runs:
        return ["No subagent ran in this session."]
    run = runs[-1]
    calls = f"{run.tool_count} tool call{'s' * (run.tool_count != 1)}"
    kind, task = one_line(run.agent_type, terminal=True), one_line(run.description, terminal=True)
    lines = [f"Last subagent: {kind} · {task} · {run.status} · {calls}"]
    for message in run.messages:
        body: list[str] = []
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                body += ["  " + line for line in visible_controls(block.text.strip()).splitlines()]
            elif isinstance(block, ToolUseBlock):
                body.append(f"  ● {label(block)}")
        if body:
            lines += [f"{message.role}:", *body]
    return lines
