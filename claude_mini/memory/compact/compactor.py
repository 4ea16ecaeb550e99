"""Layer 5: compaction — when the context is nearly full, replace the conversation by a summary
and put back what the model needs right after.

    Compactor.compact()   `before_compact` to every part (extraction flushes), then a forked
                          summary request (purpose `compact`, parent's prefix, no tools), then
                          summary + restored attachments, then `after_compact` (recall's budget,
                          extraction's cursor)

When to compact is the part's decision (compact/part.py); how full the context is, the
budget's (compact/budget.py). After compacting, the conversation is one user message: a note
that earlier messages were summarised (and where the transcript is), the summary, the user's
latest request verbatim, the most recently read files (current contents, within budget) and the
path-scoped rules and nested CLAUDE.md files that were active. Three consecutive failed
auto-compactions switch auto-compact off for the session.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from claude_mini.agent.fork import DenyAllTools, run_fork
from claude_mini.agent.lifecycle import CompactRequest, system_reminder
from claude_mini.base.safe_read import Unreadable, read_file
from claude_mini.base.text import estimate_tokens
from claude_mini.llm.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    message_to_api,
)
from claude_mini.llm.protocol import ContextTooLong
from claude_mini.memory.compact.budget import (
    ContextMeter,
    compact_threshold,
    context_window,
    estimate_request,
)
from claude_mini.memory.instructions import attachment_loads

if TYPE_CHECKING:
    from claude_mini.agent.lifecycle import CompactTrigger, LoadReason
    from claude_mini.agent.loop import Agent
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.config import Config
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.memory.instructions import AttachmentTracker
    from claude_mini.session import Session

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


class CompactorRuntime(Protocol):
    """What a compaction reads from the runtime, when it runs (/model swaps the client, /clear and
    /resume the session, a rebuilt prompt the tracker), and the two things it asks of it."""

    @property
    def config(self) -> Config: ...
    @property
    def client(self) -> ModelClient: ...
    @property
    def session(self) -> Session: ...
    @property
    def agent(self) -> Agent: ...
    @property
    def notices(self) -> NoticeChannel: ...
    @property
    def tracker(self) -> AttachmentTracker: ...

    def rebuild_prompt(self) -> None:
        """Rebuild the system prompt and Layer 1 (a compaction may change what they hold)."""
        ...

    def announce_instructions(self, reason: LoadReason) -> None:
        """Tell the lifecycle which instruction files the system prompt holds now."""
        ...


class Compactor:
    """Runs compactions for one session and keeps their count and failure streak."""

    def __init__(self, runtime: CompactorRuntime, summarise: SummaryRunner) -> None:
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
        room = self.threshold - estimate_request(agent.system, agent.tool_specs, [Message("user", list(blocks))])
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
        after = estimate_request(agent.system, agent.tool_specs, new)
        return CompactResult(0, after, [p for p, _ in restored], len(reattached))


async def fork_summary(agent: Agent, prompt: str, messages: list[Message]) -> str:
    """The summary from a forked request: parent's prefix (or fewer rounds) + prompt, no tools, one turn."""
    result = await run_fork(agent, prompt, purpose="compact", policy=DenyAllTools(), max_turns=1, messages=messages)
    return result.text
