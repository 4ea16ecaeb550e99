"""Layer 5: compaction — when the context is nearly full, replace the conversation by a summary
and put back what the model needs right after.

    ContextMeter          how full the context is: last response's input + cache + output,
                          plus an estimate of what was added since
    compact_threshold()   window - min(max output, 20,000) - 13,000, at most 3/8 of the
                          window (monotonic, >= half of it), or a configured fraction
    Compactor.compact()   `before_compact` to every part (extraction flushes), then a forked
                          summary request (purpose `compact`, parent's prefix, no tools), then
                          summary + restored attachments, then `after_compact` (recall's budget,
                          extraction's cursor)
    CompactPart           auto-compacts before a request that would cross the threshold,
                          and once when the API says the prompt is too long; past half the
                          threshold, a line on the context used joins the next user message;
                          on resume, rebuilds the files read from the conversation

After compacting, the conversation is one user message: a note that earlier
messages were summarised (and where the transcript is), the summary, the user's
latest request verbatim, the most recently read files (current contents, within
budget) and the path-scoped rules and nested CLAUDE.md files that were active.
Three consecutive failed auto-compactions switch auto-compact off for the session.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from claude_mini.agent.lifecycle import CompactRequest, ConversationRewind, Part, system_reminder
from claude_mini.base.safe_read import Unreadable, read_file
from claude_mini.base.text import estimate_tokens
from claude_mini.llm.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    message_to_api,
)
from claude_mini.memory.instructions import attachment_loads

if TYPE_CHECKING:
    from claude_mini.agent.lifecycle import CompactTrigger, SessionSource
    from claude_mini.agent.loop import Agent
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.config import Config
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.runtime import Runtime
    from claude_mini.session import Session
    from claude_mini.tools.base import ToolContext

DEFAULT_CONTEXT_WINDOW = 200_000
# Longest matching prefix wins; unknown models get the default.
CONTEXT_WINDOWS: dict[str, int] = {
    "claude-": 200_000,
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3": 200_000,
}
OUTPUT_RESERVE_CAP = 20_000
SAFETY_MARGIN = 13_000
WARNING_MARGIN = 20_000
MAX_FAILURES = 3
MAX_TOO_LONG_RETRIES = 3
RESTORE_FILES = 5
RESTORE_FILE_TOKENS = 5_000
RESTORE_TOTAL_TOKENS = 50_000
# A typed `/name args`: Claude Code's tags, then the text of the command's file (skills/lifecycle.py).
_COMMAND_TAGS = re.compile(r"\A((?:<command-(?:message|name|args)>.*?</command-(?:message|name|args)>\n?)+)\n", re.S)

SUMMARY_PROMPT = """\
Your task now is to write a detailed summary of the conversation so far. The \
summary will replace the conversation: after it, you will continue the work \
with nothing else but the summary, the user's latest request and the files \
you read most recently. Do not call any tools; answer with text only.

First think inside <analysis>...</analysis> (this part is thrown away), going \
through the conversation in order. Then write the summary inside \
<summary>...</summary> with these sections:

1. Primary request and intent: everything the user asked for, in detail.
2. Key technical concepts: technologies, frameworks and conventions involved.
3. Files and code: each file examined, changed or created, why it matters, \
and the important snippets (full snippets for recent changes).
4. Errors and fixes: what went wrong and how it was fixed, including what the \
user said about it.
5. Problem solving: what was solved and what is still being worked out.
6. All user messages: every message the user wrote (not tool results), in order.
7. Pending tasks: what the user asked for that is not done yet.
8. Current work: precisely what was being worked on right before this summary.
9. Next step: the next step, only if it follows directly from the user's \
latest request; quote the relevant words of the latest messages."""

CONTINUATION_NOTE = """\
This session continues an earlier conversation that ran out of context. The \
earlier messages were summarised below; the full transcript is in {transcript}. \
Continue from where it left off without asking the user to repeat anything."""


class CompactionError(Exception):
    """Compaction could not produce a usable summary; the conversation was kept unchanged."""


class CompactionRefused(CompactionError):
    """A lifecycle part (the user's PreCompact hook) refused this compaction. Not a failure:
    it does not count toward the auto-compact circuit breaker; the part is asked again next time."""


@runtime_checkable
class KnowsContextWindow(Protocol):
    """A client that knows its context window (the local model: what it allocated)."""

    context_window: int


def context_window(config: Config, model: str, client: ModelClient | None = None) -> int:
    """The model's context window in tokens: the `contextWindow` setting, else what the client
    knows (the local model's allocated context), else the per-model table."""
    configured = config.memory.compact.context_window
    if configured is not None:
        return configured
    if isinstance(client, KnowsContextWindow):
        known = client.context_window
        if isinstance(known, int) and not isinstance(known, bool) and known > 0:
            return known
    name = model.lower()
    matches = [prefix for prefix in CONTEXT_WINDOWS if name.startswith(prefix)]
    return CONTEXT_WINDOWS[max(matches, key=len)] if matches else DEFAULT_CONTEXT_WINDOW


def compact_threshold(config: Config, window: int, max_tokens: int) -> int:
    """Tokens above which a request triggers auto-compaction.

    The default leaves room for the answer and a margin: min(max output, 20,000) +
    13,000, but never more than 3/8 of the window (a quarter for the answer, an eighth
    as margin), so a small window compacts at 5/8 of it rather than before every
    request. Either way the threshold never falls as the window grows, and never below
    half of it. `autoCompactThreshold` (or CLAUDE_MINI_AUTOCOMPACT_PCT) moves it down or
    up as a fraction of the window, but never above what still leaves room for the answer.
    """
    fraction = config.memory.compact.threshold
    if fraction is None:
        reserves = min(max_tokens, OUTPUT_RESERVE_CAP) + SAFETY_MARGIN
        return max(window - min(reserves, window * 3 // 8), 1)
    answer = min(max_tokens, OUTPUT_RESERVE_CAP, window // 4)
    return max(min(int(window * fraction), window - answer), 1)


def warning_margin(window: int) -> int:
    """How close to the threshold the status line starts warning: 20,000 tokens, or a tenth
    of a smaller window (a 16k window is not "nearly full" as soon as it starts)."""
    return min(WARNING_MARGIN, window // 10)


@dataclass
class ContextMeter:
    """How full the context is: the API's usage of the last response plus an estimate of what is new.

    `sent_messages` is len(messages) when the last request was sent; the response
    to it is counted as output, so only messages after it are estimated.
    """

    sent_messages: int = 0

    def estimate(self, agent: Agent) -> int:
        """Tokens the next request would carry."""
        messages = agent.session.messages
        usage = agent.last_usage
        if not usage.total_input:  # nothing measured yet (new or resumed session, just compacted)
            return _estimate_request(agent.system, agent.tool_specs, messages)
        new = messages[self.sent_messages + 1 :]
        return usage.total_input + usage.output_tokens + sum(_estimate_message(m) for m in new)

    def mark_sent(self, agent: Agent) -> None:
        self.sent_messages = len(agent.session.messages)

    def reset(self, agent: Agent) -> None:
        agent.last_usage = Usage()
        self.mark_sent(agent)


def _estimate_message(message: Message) -> int:
    return estimate_tokens(str(message_to_api(message)["content"]))


def _estimate_request(system: list[str], tools: list[dict], messages: list[Message]) -> int:
    return (
        sum(estimate_tokens(s) for s in system)
        + estimate_tokens(str(tools))
        + sum(_estimate_message(m) for m in messages)
    )


# A fork runner: (agent, prompt, messages) -> summary text. Injected so tests and the
# local model can provide their own; the default uses agent/fork.py.
SummaryRunner = Callable[["Agent", str, list[Message]], Awaitable[str]]


def clean_summary(text: str) -> str:
    """The summary without its private <analysis>; the <summary> body when tagged."""
    text = re.sub(r"<analysis>.*?(</analysis>|$)", "", text, flags=re.S)
    tagged = re.search(r"<summary>(.*?)(</summary>|$)", text, flags=re.S)
    if tagged:
        text = tagged.group(1)
    return text.strip()


def drop_oldest_round(messages: list[Message]) -> list[Message] | None:
    """The messages without their oldest request/response round; None when nothing is left to drop.

    A round starts at a user message that carries text (not only tool results),
    so the result never begins with an orphan tool_result.
    """
    starts = [i for i, m in enumerate(messages) if m.role == "user" and _is_user_request(m)]
    if len(starts) < 2:
        return None
    return messages[starts[1] :]


def _is_user_request(message: Message) -> bool:
    return any(isinstance(b, TextBlock) for b in message.content) and not all(
        isinstance(b, ToolResultBlock) for b in message.content
    )


def latest_user_request(messages: list[Message]) -> str:
    """The text of the user's most recent request (not a tool result, not an attachment); a typed
    custom command or skill as its tags only (its text is a file's, and is not kept either)."""
    for message in reversed(messages):
        if message.role != "user":
            continue
        texts = [
            b.text for b in message.content if isinstance(b, TextBlock) and not b.text.startswith("<system-reminder>")
        ]
        if texts:
            return without_command_text("\n".join(texts))
    return ""


def without_command_text(request: str) -> str:
    """A typed custom command or skill as its tags only: its text is a file's, loaded again on demand."""
    tags = _COMMAND_TAGS.match(request)
    if tags is None:
        return request
    return tags.group(1).rstrip("\n") + "\n(the text this command expanded to is not repeated here)"


def restore_files(read_files: dict[Path, float], total_budget: int = RESTORE_TOTAL_TOKENS) -> list[tuple[str, str]]:
    """(path, current contents) of the most recently read files, within the token budgets.

    A file deleted since, or binary now, is skipped; one over the per-file budget is cut.
    """
    restored: list[tuple[str, str]] = []
    total, total_budget = 0, min(total_budget, RESTORE_TOTAL_TOKENS)
    for path in reversed(list(read_files)):
        if len(restored) >= RESTORE_FILES or total >= total_budget:
            break
        text = _read_text_file(Path(path))
        if text is None:
            continue
        budget = min(RESTORE_FILE_TOKENS, total_budget - total)
        if estimate_tokens(text) > budget:
            text = text[: budget * 4] + "\n[... cut: the file is longer; Read it for the rest]"
        total += estimate_tokens(text)
        restored.append((str(path), text))
    return restored


def _read_text_file(path: Path) -> str | None:
    """The head of a file read earlier, through safe_read: one that became a FIFO, a link to
    /proc or a huge file is skipped or cut, never waited on or loaded whole."""
    try:
        data = read_file(path, RESTORE_FILE_TOKENS * 16, cut=True)  # 4 bytes a char at most
    except (OSError, Unreadable):
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


@dataclass
class CompactResult:
    """What a compaction did, for the user's one-line notice and /context."""

    tokens_before: int
    tokens_after: int
    restored_files: list[str] = field(default_factory=list)
    reattached: int = 0


class Compactor:
    """Runs compactions for one session and keeps their count and failure streak."""

    def __init__(self, runtime: Runtime, summarise: SummaryRunner) -> None:
        self.runtime = runtime
        self.summarise = summarise
        self.meter = ContextMeter()
        self.count = 0
        self.failures = 0
        self.running = False

    @property
    def window(self) -> int:
        return context_window(self.runtime.config, self.runtime.agent.model, self.runtime.client)

    @property
    def threshold(self) -> int:
        return compact_threshold(self.runtime.config, self.window, self.runtime.agent.max_tokens)

    @property
    def auto_enabled(self) -> bool:
        return self.runtime.config.memory.compact.auto_compact and self.failures < MAX_FAILURES

    def used(self) -> int:
        """Tokens the next request would carry (for the status line and /context)."""
        return self.meter.estimate(self.runtime.agent)

    async def compact(self, instructions: str = "", trigger: CompactTrigger = "manual") -> CompactResult:
        """Summarise the conversation and restore what matters; raises CompactionError on failure."""
        agent = self.runtime.agent
        messages = list(agent.session.messages)
        if not messages:
            raise CompactionError("Nothing to compact: the conversation is empty.")
        self.running = True
        request = CompactRequest(trigger, instructions)
        try:
            with self.runtime.notices.busy("compact"):
                await agent.lifecycle.before_compact(agent, request)  # the user's hooks may refuse; extraction flushes
                before = self.used()
                summary = await self._summarise(agent, request.instructions, messages)
                result = self._replace_conversation(agent, summary, messages)
                result.tokens_before = before
                self.count += 1
                await agent.lifecycle.after_compact(agent)  # in reverse order, as a stack unwinds
        finally:
            self.running = False
        return result

    async def _summarise(self, agent: Agent, instructions: str, messages: list[Message]) -> str:
        from claude_mini.llm.protocol import ContextTooLong

        prompt = SUMMARY_PROMPT
        if instructions.strip():
            prompt += f"\n\nThe user asked this summary to pay attention to:\n{instructions.strip()}"
        attempt_messages = messages
        for _ in range(MAX_TOO_LONG_RETRIES + 1):
            try:
                text = await self.summarise(agent, prompt, attempt_messages)
            except ContextTooLong:
                shorter = drop_oldest_round(attempt_messages)
                if shorter is None:
                    break
                attempt_messages = shorter
                continue
            summary = clean_summary(text)
            if not summary:
                raise CompactionError("The summary came back empty; the conversation was kept unchanged.")
            return summary
        raise CompactionError(
            "The conversation is too long to summarise even without its oldest rounds; "
            "it was kept unchanged. Use /clear to start fresh."
        )

    def _replace_conversation(self, agent: Agent, summary: str, old: list[Message]) -> CompactResult:
        """Swap the conversation for the summary plus restored attachments; log a boundary."""
        rt = self.runtime
        note = CONTINUATION_NOTE.format(transcript=agent.session.transcript.path)
        blocks: list[TextBlock] = [TextBlock(f"{note}\n\n<summary>\n{summary}\n</summary>")]
        request = latest_user_request(old)
        if request:
            blocks.append(system_reminder(f"The user's most recent request, verbatim:\n{request}"))
        # Files get at most half the room left under the threshold, so the compacted
        # conversation is not over it at once (only a small window makes this bite).
        room = self.threshold - _estimate_request(agent.system, agent.tool_specs, [Message("user", list(blocks))])
        restored = restore_files(agent.ctx.read_files, max(room // 2, 0))
        for path, text in restored:
            blocks.append(system_reminder(f"Current contents of {path} (read earlier):\n\n{text}"))
        reattached = rt.tracker.reattach_after_compaction()
        blocks += [system_reminder(a.render()) for a in reattached if a.render()]
        blocks += [system_reminder(text) for text in agent.lifecycle.compact_attachments(agent)]
        new = [Message("user", list(blocks))]
        agent.session.messages[:] = new
        agent.session.transcript.append(
            "compact_boundary",
            messages=[message_to_api(m) for m in new],
            summarised_messages=len(old),
        )
        rt.rebuild_prompt()
        rt.tracker.adopt(reattached)  # the new tracker must know they are in the context again
        rt.announce_instructions("compact")
        agent.announce_instructions(attachment_loads(reattached, reason="compact"))
        self.meter.reset(agent)
        after = _estimate_request(agent.system, agent.tool_specs, new)
        return CompactResult(0, after, [p for p, _ in restored], len(reattached))


class CompactPart(Part):
    """Auto-compaction before a request that would cross the threshold, with a circuit breaker;
    the budget line past half the threshold; the files read, rebuilt when a session is resumed."""

    def __init__(self, compactor: Compactor, notices: NoticeChannel) -> None:
        self.compactor = compactor
        self.notices = notices
        self.refused = False  # a hook refused an auto-compaction this turn: not asked again until the next
        self.budget_due = True  # the budget line goes with the next user message at most once per request
        # Read now, before this run writes to it: when the resumed conversation saw each file.
        self.seen_times = seen_times(compactor.runtime.session)

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        """-c / -r: the files the resumed conversation read count as read again (unless changed since)."""
        if source == "resume":
            rebuild_read_files(agent.ctx, agent.session.messages, self.seen_times)

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        self.refused = False

    def attachments(self) -> list[str]:
        """One line on the context used, once past half the auto-compact threshold (or of the
        window when auto-compact is off), so the model can wrap up or save state in time."""
        if not self.budget_due or not self.compactor.runtime.agent.session.messages:
            return []
        self.budget_due = False
        line = budget_line(self.compactor)
        return [line] if line else []

    async def before_request(self, agent: Agent) -> None:
        c = self.compactor
        if c.auto_enabled and not self.refused and agent.session.messages and c.used() > c.threshold:
            await self.auto_compact(f"over the auto-compact threshold of {c.threshold:,}")
        c.meter.mark_sent(agent)
        self.budget_due = True

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear or /resume: a new conversation starts with no compactions and no failures
        (the breaker's message tells the user that /clear turns auto-compact back on); /resume
        gets back the files its conversation read."""
        c = self.compactor
        c.count = c.failures = 0
        c.meter.sent_messages = len(session.messages)
        if source == "resume":
            self.seen_times = seen_times(session)
            rebuild_read_files(c.runtime.agent.ctx, session.messages, self.seen_times)

    async def on_rewind(self, agent: Agent, rewind: ConversationRewind) -> None:
        """/rewind: the files the kept conversation read count as read again, as on a resume (one
        restored or changed since must be read afresh before an edit); nothing the rewound-away part
        read does."""
        rebuild_read_files(agent.ctx, agent.session.messages, seen_times(agent.session))

    async def on_context_too_long(self, agent: Agent) -> bool:
        """The API refused the request as too long: compact once, unless the breaker is open."""
        if self.compactor.failures >= MAX_FAILURES:
            return False
        return await self.auto_compact("the model said the prompt is too long")

    async def auto_compact(self, why: str) -> bool:
        """One automatic compaction; True when it worked. Failures count toward the breaker."""
        c = self.compactor
        self.notices.say(f"Compacting the conversation ({why}: {c.used():,} of {c.window:,} tokens)…")
        try:
            result = await c.compact(trigger="auto")
        except CompactionRefused as exc:
            self.refused = True
            self.notices.say(f"Compaction skipped: {exc}.", once=True)
            return False
        except CompactionError as exc:
            c.failures += 1
            self.notices.say(f"Compaction failed: {exc}")
            if c.failures >= MAX_FAILURES:
                self.notices.say(
                    f"Auto-compact is off for this session after {MAX_FAILURES} failures. "
                    "Run /compact to try again, or /clear to start a fresh conversation."
                )
            return False
        c.failures = 0
        self.notices.say(
            f"Compacted: {result.tokens_before:,} → {result.tokens_after:,} tokens; "
            f"restored {len(result.restored_files)} file(s) and the latest request."
        )
        return True


BUDGET_SHARE = 0.5  # the budget line appears once the context passes this share of the threshold
# The header of a file a compaction put back (Compactor._replace_conversation).
_RESTORED_FILE = re.compile(r"\A<system-reminder>\nCurrent contents of (.+?) \(read earlier\):\n")
# The tools whose success leaves the model knowing a file's current contents.
_FILE_TOOLS = ("Read", "Write", "Edit")


def budget_line(compactor: Compactor) -> str | None:
    """The context used against the auto-compact threshold (or the window when auto-compact is
    off), once past half of it; None below."""
    used = compactor.used()
    limit = compactor.threshold if compactor.auto_enabled else compactor.window
    if used <= limit * BUDGET_SHARE:
        return None
    used = round(used, -2)
    against = "before auto-compaction" if compactor.auto_enabled else "of the context window (auto-compact is off)"
    return (
        f"Context: {used:,} of {limit:,} tokens used {against} ({used * 100 // limit}%). "
        "Wrap up or save what matters if the work is long."
    )


@dataclass
class SeenTimes:
    """When a resumed conversation saw its files, from its transcript's entries: each tool
    result's entry time, and the last compaction's (for the files it put back)."""

    results: dict[str, float] = field(default_factory=dict)
    compacted: float = 0.0


def seen_times(session: Session) -> SeenTimes:
    """The times of the session's transcript entries (nothing when it has none or cannot be read)."""
    from datetime import datetime

    from claude_mini.session import transcript_entries

    times = SeenTimes()
    for entry in transcript_entries(session.transcript.path):
        try:
            when = datetime.fromisoformat(str(entry["timestamp"]).replace("Z", "+00:00")).timestamp()
        except (ValueError, KeyError):
            continue
        if entry.get("type") == "compact_boundary":
            times.compacted = when
        content = entry.get("message", {}).get("content") if isinstance(entry.get("message"), dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                times.results[str(block.get("tool_use_id"))] = when
    return times


def files_seen(messages: list[Message], ctx: ToolContext) -> list[tuple[Path, str | None]]:
    """The files a conversation showed the model, oldest first, each once at its latest place,
    with the call that showed it (None: a compaction put it back): those a compaction put back,
    then each successful Read, Write and Edit. Relative paths resolve from `ctx.cwd` (a `cd`
    during the session is not followed)."""
    succeeded = {
        b.tool_use_id for m in messages for b in m.content if isinstance(b, ToolResultBlock) and not b.is_error
    }
    seen: dict[Path, str | None] = {}
    for message in messages:
        restored = [
            m.group(1) for b in message.content if isinstance(b, TextBlock) and (m := _RESTORED_FILE.match(b.text))
        ]
        for path in reversed(restored):  # a compaction lists the most recent first
            seen.pop(Path(path), None)
            seen[Path(path)] = None
        for block in message.content:
            if isinstance(block, ToolUseBlock) and block.name in _FILE_TOOLS and block.id in succeeded:
                name = block.input.get("file_path") if isinstance(block.input, dict) else None
                if isinstance(name, str) and name:
                    path = ctx.resolve(name)
                    seen.pop(path, None)
                    seen[path] = block.id
    return list(seen.items())


def rebuild_read_files(ctx: ToolContext, messages: list[Message], times: SeenTimes) -> None:
    """The read-before-write state of a resumed conversation, in reading order (for the
    post-compact restore). A file unchanged since the conversation saw it counts as read as it
    is now; one changed since (by the user, during or after the session) as read before that,
    so Write and Edit ask for a fresh Read; a deleted one, or one whose time is unknown, is left
    out."""
    ctx.read_files.clear()
    for path, call_id in files_seen(messages, ctx):
        seen = times.results.get(call_id, 0.0) if call_id is not None else times.compacted
        try:
            mtime = path.stat().st_mtime
        except OSError:
            continue
        if seen:
            ctx.read_files[path] = mtime if mtime <= seen else seen


async def fork_summary(agent: Agent, prompt: str, messages: list[Message]) -> str:
    """The summary from a forked request: parent's prefix (or fewer rounds) + prompt, no tools, one turn."""
    from claude_mini.agent.fork import DenyAllTools, run_fork

    result = await run_fork(agent, prompt, purpose="compact", policy=DenyAllTools(), max_turns=1, messages=messages)
    return result.text
