"""Forked agents: a side task that runs on the parent's exact request prefix (DESIGN.md section 6).

A fork sends what the parent sends — the same tools list, system blocks, model,
max_tokens, thinking settings and messages — plus one new user message with its
task, so its first request reads the parent's prompt cache up to the parent's
last message. Then it runs its own short loop:

- tools are the parent's tool objects, called with the fork's own `ToolContext`
  (its own read_files and cwd), so the parent's read-before-write state and
  working directory are never disturbed;
- every call is vetted by the fork's policy (`can_use_tool`); the tool list is
  never trimmed, since that would change the cached prefix. An `Ask` counts as
  a denial: a background agent has nobody to ask. A call the policy allows then
  goes to the parent's `fork_tool_check` if it has one (the user's PreToolUse
  hooks, only when `memory.hooksInForks` is on), which may deny it or rewrite
  its input; a rewritten call is judged by the policy again;
- at most `max_turns` model requests; a fork still asking for tools after the
  last one is stopped there (its tool calls are not run);
- its messages never join the parent's conversation; each request's usage is
  booked under the fork's purpose in the parent session's `CostLedger`.

Before its first request the fork compares its prefix with the parent's last
request (`prefix_mismatches`) and logs any difference as a cache-prefix mismatch.

Users and their settings:

    extraction (Layer 4)   purpose "extract", ExtractionPolicy, max_turns 5
    compaction (Layer 5)   purpose "compact", NO_TOOLS, max_turns 1, messages= for retries
    /dream                 purpose "dream", ExtractionPolicy

    result = await run_fork(agent, prompt, purpose="compact", policy=NO_TOOLS, max_turns=1)
    summary = result.text

A model failure propagates as `ModelError` (e.g. `ContextTooLong`); use `Fork`
directly to look at what a failed fork did before it failed (`fork.result`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.lifecycle import ForkToolCheck
from claude_mini.agent.loop import batch_calls, decide, run_tool, unusable_input
from claude_mini.llm.messages import (
    Message,
    ModelRequest,
    Purpose,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    build_request_body,
)
from claude_mini.llm.protocol import ModelClient
from claude_mini.permissions import Allow, Decision, Deny, ToolPolicy
from claude_mini.tools.base import (
    NO_READ_DENIALS,
    ReadDenials,
    ShellSandbox,
    Tool,
    ToolContext,
    ToolResult,
)

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.session import CostLedger
    from claude_mini.tools.background import BackgroundShells

log = logging.getLogger(__name__)

DEFAULT_MAX_TURNS = 5
WRITING_TOOLS = frozenset({"Write", "Edit"})


# ---------------------------------------------------------------- policies


class DenyAllTools:
    """The policy of a fork that must answer in text only (compaction): every call is denied."""

    def __init__(self, reason: str = "this task must be answered in text; no tools are available") -> None:
        self.reason = reason

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Decision:
        """Always Deny, saying why."""
        return Deny(f"{tool_name} is not available: {self.reason}.")


NO_TOOLS = DenyAllTools()


# ---------------------------------------------------------------- snapshot and result


@dataclass
class ForkSnapshot:
    """The parent, frozen at one moment: what a fork needs to start from it later.

    `request` is the parent's request as it would be sent now (the fork's
    prefix); `sent` is the request the parent really sent last, the one whose
    cache entries the fork hopes to read (None if it has sent nothing yet).
    """

    request: ModelRequest
    sent: ModelRequest | None
    tools: dict[str, Tool]
    cwd: Path
    project_root: Path
    client: ModelClient
    costs: CostLedger | None = None
    session_id: str = ""
    read_denials: ReadDenials = NO_READ_DENIALS  # the parent's, so a fork's Grep/Glob skip the same files
    tool_check: ForkToolCheck | None = None  # the parent's extra vetting of allowed calls
    sandbox: ShellSandbox | None = None  # the parent's: a fork's Bash is confined the same way
    shells: BackgroundShells | None = None  # the parent's: a fork's background shells end with the session

    @classmethod
    def of(cls, agent: Agent) -> ForkSnapshot:
        """Freeze `agent` now: later messages of the parent do not enter the snapshot.

        The message list is copied, the messages are shared (the session only ever
        appends, or merges into a last user message, which a turn end never has).
        """
        return cls(
            request=agent.request(),
            sent=agent.last_request,
            tools=dict(agent.tools),
            cwd=Path(agent.ctx.cwd),
            project_root=Path(agent.ctx.project_root),
            client=agent.client,
            costs=agent.session.costs,
            session_id=agent.session.id,
            read_denials=agent.ctx.read_denials,
            tool_check=agent.fork_tool_check,
            sandbox=agent.ctx.sandbox,
            shells=agent.ctx.shells,
        )

    @property
    def messages(self) -> list[Message]:
        """The parent's conversation at snapshot time."""
        return self.request.messages


@dataclass
class ToolRun:
    """One tool call the fork made, and what came of it."""

    call: ToolUseBlock
    result: ToolResult
    denied: bool = False

    @property
    def wrote(self) -> Path | None:
        """The file a successful Write/Edit changed, else None."""
        if self.call.name not in WRITING_TOOLS or self.denied or self.result.is_error:
            return None
        path = self.result.metadata.get("path")
        return Path(path) if path else None


@dataclass
class ForkResult:
    """What a fork did: its messages, tool calls, cost, and how it ended."""

    purpose: Purpose
    messages: list[Message] = field(default_factory=list)
    tool_runs: list[ToolRun] = field(default_factory=list)
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    hit_turn_limit: bool = False
    mismatches: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The text of the fork's last response."""
        replies = [m for m in self.messages if m.role == "assistant"]
        return replies[-1].text if replies else ""

    @property
    def written(self) -> list[Path]:
        """Files the fork changed with Write/Edit, in order, each once."""
        paths = [run.wrote for run in self.tool_runs if run.wrote is not None]
        return list(dict.fromkeys(paths))

    @property
    def denials(self) -> list[ToolRun]:
        """The calls its policy refused."""
        return [run for run in self.tool_runs if run.denied]


# ---------------------------------------------------------------- the cache guard


def prefix_mismatches(sent: ModelRequest | None, fork: ModelRequest) -> list[str]:
    """What in `fork` differs from the cached prefix of `sent` (empty: the cache can be read).

    Compared as the API sees them (cache_control aside): model, max_tokens,
    thinking, tools, system blocks, and the blocks of `sent`'s messages, which
    must be a prefix of the fork's.
    """
    if sent is None:
        return []
    a, b = _body(sent), _body(fork)
    problems = [
        f"{key} {a.get(key)!r} != {b.get(key)!r}"
        for key in ("model", "max_tokens", "thinking")
        if a.get(key) != b.get(key)
    ]
    problems += _list_difference("tools", a.get("tools", []), b.get("tools", []), _tool_label)
    problems += _list_difference("system", a.get("system", []), b.get("system", []), None)
    problems += _messages_difference(a["messages"], b["messages"])
    return problems


def _body(request: ModelRequest) -> dict[str, Any]:
    body: dict[str, Any] = strip_cache_control(build_request_body(replace(request, cache=False)))
    return body


def strip_cache_control(value: Any) -> Any:
    """A request body (or part of one) without its `cache_control` markers, for comparing
    what two requests share."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def _tool_label(tool: Any) -> str:
    return str(tool.get("name")) if isinstance(tool, dict) else "?"


def _list_difference(what: str, parent: list[Any], fork: list[Any], label: Any) -> list[str]:
    if parent == fork:
        return []
    if len(parent) != len(fork):
        names = f" ({', '.join(map(label, parent))} vs {', '.join(map(label, fork))})" if label else ""
        return [f"{what}: {len(parent)} vs {len(fork)} entries{names}"]
    changed = [label(p) if label else str(i) for i, (p, f) in enumerate(zip(parent, fork, strict=True)) if p != f]
    kind = "tool definitions changed" if label else "blocks changed (index)"
    return [f"{what}: {kind}: {', '.join(changed)}"]


def _flat_blocks(messages: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    return [(i, m["role"], json.dumps(block, sort_keys=True)) for i, m in enumerate(messages) for block in m["content"]]


def _messages_difference(parent: list[dict[str, Any]], fork: list[dict[str, Any]]) -> list[str]:
    mine, theirs = _flat_blocks(fork), _flat_blocks(parent)
    for n, block in enumerate(theirs):
        if n >= len(mine):
            return [f"messages: the fork has {len(mine)} message blocks, fewer than the {len(theirs)} the parent sent"]
        if mine[n] != block:
            return [f"messages: block {n} (message {block[0]}, {block[1]}) differs"]
    return []


# ---------------------------------------------------------------- the fork


def with_prompt(messages: Sequence[Message], prompt: str) -> list[Message]:
    """`messages` plus the fork's task as a user message; appended to a last user message instead
    (mid-turn, before a request) so roles still alternate and the cached blocks stay in place."""
    out = list(messages)
    if out and out[-1].role == "user":
        out[-1] = Message("user", [*out[-1].content, TextBlock(prompt)])
    else:
        out.append(Message.user(prompt))
    return out


class Fork:
    """One forked run; `result` holds what it did so far, even when `run` raised."""

    def __init__(
        self,
        parent: Agent | ForkSnapshot,
        *,
        purpose: Purpose,
        policy: ToolPolicy,
        max_turns: int = DEFAULT_MAX_TURNS,
        messages: Sequence[Message] | None = None,
    ) -> None:
        snap = parent if isinstance(parent, ForkSnapshot) else ForkSnapshot.of(parent)
        if messages is not None:  # compaction's retry without the oldest rounds
            snap = replace(snap, request=replace(snap.request, messages=list(messages)))
        self.snapshot = snap
        self.purpose = purpose
        self.policy = policy
        self.max_turns = max(1, max_turns)
        self.ctx = ToolContext(
            cwd=snap.cwd,
            project_root=snap.project_root,
            read_denials=snap.read_denials,
            sandbox=snap.sandbox,
            shells=snap.shells,
        )
        self.result = ForkResult(purpose)
        self._messages: list[Message] = []

    def request(self) -> ModelRequest:
        """The fork's next request: the parent's prefix, then the fork's own messages."""
        return replace(self.snapshot.request, messages=list(self._messages), purpose=self.purpose)

    async def run(self, prompt: str) -> ForkResult:
        """Run the task to its end or to the turn limit; ModelError propagates."""
        self._messages = with_prompt(self.snapshot.request.messages, prompt)
        self.result.messages.append(self._messages[-1])
        self._check_prefix()
        for turn in range(1, self.max_turns + 1):
            message, stop_reason = await self._ask_model()
            calls = message.tool_uses
            if stop_reason != "tool_use" or not calls:
                self.result.stop_reason = stop_reason
                return self.result
            if turn == self.max_turns:
                return self._stop_at_limit(stop_reason)
            results = await self._run_tools(calls)
            self._add(Message("user", list(results)))
        return self.result  # not reached: the loop returns

    def _check_prefix(self) -> None:
        self.result.mismatches = prefix_mismatches(self.snapshot.sent, self.request())
        if self.result.mismatches:
            log.warning("cache-prefix mismatch (%s fork): %s", self.purpose, "; ".join(self.result.mismatches))

    def _stop_at_limit(self, stop_reason: str) -> ForkResult:
        self.result.stop_reason = stop_reason
        self.result.hit_turn_limit = True
        log.warning("%s fork stopped after %d turns with tool calls still pending", self.purpose, self.max_turns)
        return self.result

    def _add(self, message: Message) -> None:
        self._messages.append(message)
        self.result.messages.append(message)

    async def _ask_model(self) -> tuple[Message, str]:
        snap = self.snapshot
        done = await snap.client.complete(self.request())
        self.result.turns += 1
        self.result.usage = self.result.usage + done.billed
        if snap.costs is not None:
            snap.costs.add(self.purpose, done.model or snap.request.model, done.billed)
        self._add(done.message)
        return done.message, done.stop_reason

    async def _run_tools(self, calls: list[ToolUseBlock]) -> list[ToolResultBlock]:
        """Run one response's calls: consecutive read-only ones together, the others in order."""
        results: dict[str, ToolResult] = {}
        for batch in batch_calls(calls, self.snapshot.tools):
            allowed = []
            for proposed in batch:
                call, refusal = await self._vet(proposed)
                if refusal is None:
                    allowed.append(call)
                else:
                    results[call.id] = refusal
                    self.result.tool_runs.append(ToolRun(call, refusal, denied=True))
            outcomes = await asyncio.gather(*(self._call_tool(c) for c in allowed))
            for call, outcome in zip(allowed, outcomes, strict=True):
                results[call.id] = outcome
                self.result.tool_runs.append(ToolRun(call, outcome))
        return [ToolResultBlock(c.id, results[c.id].content, results[c.id].is_error) for c in calls]

    async def _vet(self, call: ToolUseBlock) -> tuple[ToolUseBlock, ToolResult | None]:
        """The call as it will run and None when it may, else the error result telling the fork
        why not."""
        if call.name not in self.snapshot.tools:
            known = ", ".join(self.snapshot.tools)
            return call, ToolResult(f"Unknown tool {call.name!r}. Available: {known}.", True)
        problem = unusable_input(call.input)
        if problem is not None:
            return call, ToolResult(problem, True)
        refusal = await self._check_policy(call)
        check = self.snapshot.tool_check
        if refusal is not None or check is None:
            return call, refusal
        verdict = await check(call)
        if verdict is not None and isinstance(verdict.decision, Deny):
            return call, ToolResult(f"Permission denied: {verdict.decision.reason}", True)
        if verdict is not None and verdict.updated_input is not None:
            call = ToolUseBlock(call.id, call.name, verdict.updated_input)
            problem = unusable_input(call.input)
            refusal = ToolResult(problem, True) if problem else await self._check_policy(call)
        return call, refusal

    async def _check_policy(self, call: ToolUseBlock) -> ToolResult | None:
        decision = await decide(self.policy, call)
        if isinstance(decision, Allow):
            return None
        reason = (
            decision.reason
            if isinstance(decision, Deny)
            else (f"{decision.reason or call.name + ' needs approval'}; this background task cannot ask the user")
        )
        return ToolResult(f"Permission denied: {reason}", True)

    async def _call_tool(self, call: ToolUseBlock) -> ToolResult:
        return await run_tool(self.snapshot.tools[call.name], call, self.ctx)


async def run_fork(
    parent: Agent | ForkSnapshot,
    prompt: str,
    *,
    purpose: Purpose,
    policy: ToolPolicy,
    max_turns: int = DEFAULT_MAX_TURNS,
    messages: Sequence[Message] | None = None,
) -> ForkResult:
    """Run `prompt` as a fork of `parent` (an Agent now, or a snapshot taken earlier).

    `messages` replaces the parent's messages (compaction's too-long retry); the
    cache guard then reports the difference, as it should.
    """
    fork = Fork(parent, purpose=purpose, policy=policy, max_turns=max_turns, messages=messages)
    return await fork.run(prompt)
