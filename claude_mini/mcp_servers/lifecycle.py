"""MCP servers as a part of the session lifecycle: started at session start, their tools fixed
into the request's tool list where the prompt cache allows it, closed at the end.

The tool list is part of the cached prefix (DESIGN.md section 6), so it is fixed when a
conversation's first request is built: `Agent.builtin_tools` (the built-ins and Skill),
then the tools of the servers connected by then (the first request waits for servers still
connecting, at most `connect_wait` seconds). A server that connects later, or one added to or
removed from the settings mid-session, changes the list at the start of the next turn, never
inside one; that request writes the prompt cache anew (the tools lead the prefix), once, and
the user is told. Forks copy the list, so theirs is the same.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from claude_mini.agent.lifecycle import EndReason, Part, PartContext, SessionSource
from claude_mini.mcp_servers.client import McpManager
from claude_mini.mcp_servers.config import load_servers
from claude_mini.mcp_servers.tools import DEFAULT_CALL_TIMEOUT, ordered_tools

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.config import Config
    from claude_mini.session import Session

DEFAULT_CONNECT_WAIT = 10.0  # seconds the first request waits for servers still connecting


@dataclass(frozen=True)
class McpSettings:
    """`mcp.*` settings (and Claude Code's MCP_TIMEOUT / MCP_TOOL_TIMEOUT, in milliseconds, which win)."""

    connect_wait: float = DEFAULT_CONNECT_WAIT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    trust_read_only_hints: bool = False  # a tool's readOnlyHint lets it run without asking
    problems: tuple[str, ...] = field(default=())

    @classmethod
    def read(cls, config: Config, environ: dict[str, str] | None = None) -> McpSettings:
        """The validated settings; a bad value keeps its default and is named in `problems`."""
        env = os.environ if environ is None else environ
        problems: list[str] = []
        connect = _seconds(
            env.get("MCP_TIMEOUT"),
            config.get("mcp.connectTimeoutMs"),
            DEFAULT_CONNECT_WAIT,
            "MCP_TIMEOUT / mcp.connectTimeoutMs",
            problems,
        )
        call = _seconds(
            env.get("MCP_TOOL_TIMEOUT"),
            config.get("mcp.toolTimeoutMs"),
            DEFAULT_CALL_TIMEOUT,
            "MCP_TOOL_TIMEOUT / mcp.toolTimeoutMs",
            problems,
        )
        hints = config.get("mcp.trustReadOnlyHints", False)
        if not isinstance(hints, bool):
            problems.append(
                f"mcp.trustReadOnlyHints must be true or false (got {hints!r}); read-only hints are not trusted."
            )
            hints = False
        return cls(connect, call, hints, tuple(problems))


def _seconds(raw_env: str | None, setting: Any, default: float, what: str, problems: list[str]) -> float:
    """Milliseconds from the environment (wins) or a setting, as seconds; bad: the default, named."""
    value: Any = raw_env if raw_env not in (None, "") else setting
    if value is None:
        return default
    try:
        ms = float(value)
    except (TypeError, ValueError):
        ms = -1.0
    if isinstance(value, bool) or not ms > 0:
        problems.append(f"{what} must be a number of milliseconds above 0 (got {value!r}); using {default:g} s.")
        return default
    return ms / 1000


class McpPart(Part):
    """Starts the session's MCP servers and puts their tools into the tool list, cache-safely."""

    def __init__(
        self,
        manager: McpManager,
        settings: McpSettings,
        notices: NoticeChannel,
        trust_read_only: Any = None,
        name_tools: Any = None,
    ) -> None:
        self.manager = manager
        self.settings = settings
        self.notices = notices
        self.trust_read_only = trust_read_only  # the policy's setter for hinted tools, if any
        self.name_tools = name_tools  # the policy's setter for each tool's server (rules match on it)
        self.fixed = False  # this conversation's tool list is fixed
        self.listed: set[str] = set()  # the servers whose tools are in the list
        self._waited = False
        self._told: set[str] = set()

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        self.manager.start()

    async def before_request(self, agent: Agent) -> None:
        """The first request of a conversation fixes its tool list; later ones only notice
        servers that connected since."""
        self.manager.start()  # idempotent: the REPL's first turn may come before session start
        if self.fixed:
            self._notice_late_servers()
            return
        await self.fix_tools(agent)

    async def fix_tools(self, agent: Agent) -> None:
        """Wait (once, at most `connect_wait`) for the servers and fix the tool list with theirs
        (print mode's stream-json `system/init` line lists them before the first request)."""
        self.manager.start()
        if not self._waited:
            self._waited = True
            await self.manager.wait_ready(self.settings.connect_wait)
        tools = ordered_tools(
            self.manager.connections,
            timeout=self.settings.call_timeout,
            trust_read_only_hints=self.settings.trust_read_only_hints,
        )
        agent.set_tools([*agent.builtin_tools, *tools])
        if self.trust_read_only is not None:
            self.trust_read_only({t.name for t in tools if t.read_only})
        if self.name_tools is not None:
            self.name_tools({t.name: t.info.server for t in tools})
        self.listed = {t.info.server for t in tools} | {
            name for name, c in self.manager.connections.items() if c.status == "connected"
        }
        self.fixed = True

    def _notice_late_servers(self) -> None:
        for name, connection in self.manager.connections.items():
            if connection.status == "connected" and name not in self.listed and name not in self._told:
                self._told.add(name)
                self.notices.say(
                    f"MCP server {name} connected during this turn; its tools join at the start of the next one."
                )

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        """A turn boundary: servers that connected late, or were added or removed in the settings,
        change the tool list now (the next request re-writes the prompt cache once: the tools
        come first in its prefix)."""
        if not self.fixed:
            return
        connected = {name for name, c in self.manager.connections.items() if c.status == "connected"}
        joined = sorted(connected - self.listed)
        left = sorted(self.listed - set(self.manager.connections))
        if not joined and not left:
            return
        self.fixed = False  # the next request fixes the list again, without waiting
        words = [f"{', '.join(joined)} joined" if joined else "", f"{', '.join(left)} left" if left else ""]
        self.notices.say(
            f"MCP tools changed ({'; '.join(w for w in words if w)}): the tool list is sent anew from this "
            "turn (its prompt cache is written once more)."
        )

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        self.fixed = False

    def server_states(self) -> list[dict[str, str]]:
        """Each server's name and status in Claude Code's words (connected, pending, failed), by name."""
        words = {"connecting": "pending", "closed": "failed"}
        return [
            {"name": name, "status": words.get(c.status, c.status)}
            for name, c in sorted(self.manager.connections.items())
        ]

    async def after_compact(self, agent: Agent) -> None:
        self.fixed = False

    async def on_session_end(self, agent: Agent, reason: EndReason = "other") -> None:
        await self.manager.close()

    def context_report(self) -> list[str]:
        """/context: the MCP tools in the list."""
        states = [f"{name} ({c.status}, {len(c.tools)} tools)" for name, c in sorted(self.manager.connections.items())]
        return [f"MCP servers: {', '.join(states)}"] if states else []


def part(ctx: PartContext[object]) -> McpPart | None:
    """The session's MCP servers as a lifecycle part (none configured: no part, and the SDK is
    never imported). Skipped entries and servers waiting for approval are said once."""
    config, notices = ctx.config, ctx.notices
    found = load_servers(config)
    for problem in found.problems:
        notices.say(problem, "warning", once=True)
    if found.pending_approval:
        names = ", ".join(spec.name for spec in found.pending_approval)
        which = f"server {names} was" if len(found.pending_approval) == 1 else f"servers {names} were"
        notices.say(
            f"The project's MCP {which} not started: it needs your approval once (run "
            "claude-mini here and answer, or list it in enabledMcpjsonServers in "
            ".claude/settings.local.json).",
            "warning",
            once=True,
        )
    if not found.servers:
        return None

    settings = McpSettings.read(config)
    for problem in settings.problems:
        notices.say(problem, "warning", once=True)
    manager = McpManager(found.servers, notices, cwd=str(config.project_root))
    return McpPart(manager, settings, notices, ctx.rules.trust_read_only, ctx.rules.name_mcp_tools)
