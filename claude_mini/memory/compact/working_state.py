"""Layer 5's working state: what a compaction must not lose, taken from the conversation itself
(no model call) and attached beside the model's summary. (The file checkpoints that /rewind
restores are another thing: claude_mini/rewind/.)

A summary keeps decisions but loses the exact things: the commands that were run, the ones that
failed, the files touched, the user's own words. Those are extracted exactly here:

    requests     the user's requests in this session, verbatim, in order (long ones cut, with
                 a pointer to the transcript)
    commands     every Bash command with its exit status and a one-line outcome (deduplicated;
                 the newest first when the budget cuts)
    failed       commands that failed and were not followed by a success of the same kind
    files        files created, written, edited or removed, with their line counts
    (the todo list goes beside it too, as TodoPart's own attachment: agent/todos.py)
    instructions the path-scoped rules and nested CLAUDE.md files attached so far
    errors       errors that ended a turn (from the transcript)
    memories     the memories saved in this session

A second compaction merges the previous working state with what happened since: nothing is
duplicated and nothing from before the first summary is lost. The budget is WORKING_STATE_TOKENS;
sections are cut newest first, the user's requests and the failed approaches last.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from claude_mini.agent.lifecycle import Part, PartContext
from claude_mini.base.text import estimate_tokens
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.memory.compact.compactor import without_command_text
from claude_mini.session import transcript_entries

if TYPE_CHECKING:
    from claude_mini.agent.lifecycle import SessionSource
    from claude_mini.agent.loop import Agent
    from claude_mini.memory.extract.part import Extractor
    from claude_mini.memory.instructions import AttachmentTracker
    from claude_mini.session import Session

WORKING_STATE_TOKENS = 4_000  # about 16,000 characters: the last 30 commands, every request and failure
MAX_COMMANDS = 30
REQUEST_CHARS = 600  # a longer request is cut, with a pointer to the transcript
OUTCOME_CHARS = 120
HEADER = "Working state before this summary (taken from the conversation, not written by a model):"
_EXIT = re.compile(r"(?:Exit code (-?\d+)|Killed by signal \w+)\s*$")
_SUMMARY_START = "This session continues an earlier conversation"
_ERROR_WORD = re.compile(r"\b(?:error|fatal|failed|failure|exception|traceback|denied|not found)\b", re.I)


@dataclass
class CommandRun:
    """One Bash command and how it ended."""

    command: str
    exit_code: int | None  # None: it did not finish (denied, cut off, timed out)
    outcome: str  # one line: the output's first line, or why it did not run

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def kind(self) -> str:
        """What counts as "the same kind" of command: the program and its first argument
        (`pytest tests/a.py` and `pytest tests/b.py -x` are two tries of one thing)."""
        try:
            words = shlex.split(self.command)
        except ValueError:
            words = self.command.split()
        while words and re.fullmatch(r"\w+=.*", words[0]):  # `FOO=1 pytest` is pytest
            words = words[1:]
        if not words:
            return self.command
        argument = next((w for w in words[1:] if not w.startswith("-")), "")  # `python3 -m pytest`: pytest
        return f"{words[0]} {argument}".strip()


@dataclass
class FileChange:
    """The last thing done to one file."""

    path: str
    action: str  # created | written | edited | removed
    lines: int | None = None


@dataclass
class WorkingState:
    """The working state of one conversation (see the module docstring)."""

    requests: list[str] = field(default_factory=list)
    commands: list[CommandRun] = field(default_factory=list)
    files: dict[str, FileChange] = field(default_factory=dict)
    instructions: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    memories: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[CommandRun]:
        """Failed commands with no later success of the same kind: approaches not to retry blindly."""
        out: list[CommandRun] = []
        for i, run in enumerate(self.commands):
            if not run.ok and not any(later.ok and later.kind == run.kind for later in self.commands[i + 1 :]):
                out.append(run)
        return out

    def merged(self, newer: WorkingState) -> WorkingState:
        """This working state followed by `newer` (a later stretch of the same session)."""
        return WorkingState(
            requests=[*self.requests, *newer.requests],
            commands=_dedupe([*self.commands, *newer.commands]),
            files={**self.files, **newer.files},
            instructions=list(dict.fromkeys([*self.instructions, *newer.instructions])),
            errors=list(dict.fromkeys([*self.errors, *newer.errors])),
            memories=list(dict.fromkeys([*self.memories, *newer.memories])),
        )


def _dedupe(commands: list[CommandRun]) -> list[CommandRun]:
    """Each command once, where it last ran (its last outcome is the one that matters)."""
    last = {run.command: i for i, run in enumerate(commands)}
    return [run for i, run in enumerate(commands) if last[run.command] == i]


# ---------------------------------------------------------------- from the conversation


def build_working_state(messages: Sequence[Message], *, transcript: str = "") -> WorkingState:
    """The working state of `messages` alone (the caller merges an earlier one and adds the rest)."""
    results = {b.tool_use_id: b for m in messages for b in m.content if isinstance(b, ToolResultBlock)}
    cp = WorkingState()
    for message in messages:
        for block in message.content:
            if message.role == "user" and isinstance(block, TextBlock):
                request = _request(block.text, transcript)
                if request:
                    cp.requests.append(request)
            elif isinstance(block, ToolUseBlock) and isinstance(block.input, dict):
                _add_call(cp, block, results.get(block.id))
    cp.commands = _dedupe(cp.commands)
    return cp


def _request(text: str, transcript: str) -> str:
    """A user's own words (not an attachment, not a compaction's summary), cut when long."""
    text = without_command_text(text.strip())
    if not text or text.startswith(("<system-reminder>", _SUMMARY_START, "[Request interrupted")):
        return ""
    if len(text) <= REQUEST_CHARS:
        return text
    where = f" in {transcript}" if transcript else ""
    return (
        f"{text[:REQUEST_CHARS].rstrip()} [… cut: {len(text):,} characters; the whole request is{where} the transcript]"
    )


def _add_call(cp: WorkingState, call: ToolUseBlock, result: ToolResultBlock | None) -> None:
    text = result.content if result is not None and isinstance(result.content, str) else ""
    failed = result is None or result.is_error
    if call.name == "Bash" and isinstance(call.input.get("command"), str):
        cp.commands.append(_command_run(call.input["command"], text, failed, result is None))
        if not failed:
            for path in _removed(call.input["command"]):
                cp.files[path] = FileChange(path, "removed")
    elif call.name in ("Write", "Edit") and not failed and isinstance(call.input.get("file_path"), str):
        path = call.input["file_path"]
        lines = _lines_in(text)
        action = "edited" if call.name == "Edit" else "created" if text.startswith("File created") else "written"
        if path in cp.files and cp.files[path].action == "created":
            action = "created"  # created, then edited: still new in this session
        cp.files[path] = FileChange(path, action, lines)


def _command_run(command: str, output: str, failed: bool, unanswered: bool) -> CommandRun:
    command = " ".join(command.split())
    if unanswered:
        return CommandRun(command, None, "no result (the turn ended before it finished)")
    # Only a failed result ends with the Bash tool's "Exit code N"; a success's output may say anything.
    found = _EXIT.search(output.strip()) if failed else None
    code = 0 if not failed else int(found.group(1)) if found and found.group(1) else None
    lines = [line.strip() for line in output.strip().splitlines() if line.strip() and not _EXIT.fullmatch(line.strip())]
    outcome = lines[0] if lines else "(no output)"
    if failed and len(lines) > 1:  # the line that names the error, else the last one
        outcome = next((line for line in lines if _ERROR_WORD.search(line)), lines[-1])
    return CommandRun(command, code, outcome[:OUTCOME_CHARS])


def _removed(command: str) -> list[str]:
    """The files a plain `rm` (or `git rm`) removed."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    if any(w in ("&&", "||", ";", "|") for w in words):
        return []
    if words[:1] == ["rm"] or words[:2] == ["git", "rm"]:
        return [w for w in words[1 if words[0] == "rm" else 2 :] if not w.startswith("-")]
    return []


def _lines_in(result: str) -> int | None:
    found = re.search(r"\((\d+) lines?\)", result)
    return int(found.group(1)) if found else None


def recorded_working_state(transcript: Path) -> WorkingState | None:
    """The last working state a compaction recorded in the transcript (None: none, or unreadable)."""
    found: dict[str, Any] | None = None
    for entry in transcript_entries(transcript):
        # Transcripts name the entry "checkpoint" (its recorded format, read back on resume).
        if entry.get("type") == "system" and entry.get("subtype") == "checkpoint":
            found = entry.get("checkpoint") if isinstance(entry.get("checkpoint"), dict) else found
    if found is None or not _well_formed(found):
        return None
    try:
        return WorkingState(
            requests=[str(r) for r in found.get("requests", [])],
            commands=[CommandRun(**c) for c in found.get("commands", [])],
            files={p: FileChange(**c) for p, c in found.get("files", {}).items()},
            instructions=[str(i) for i in found.get("instructions", [])],
            errors=[str(e) for e in found.get("errors", [])],
            memories=[str(m) for m in found.get("memories", [])],
        )
    except (TypeError, AttributeError):  # a transcript edited by hand: start afresh
        return None


def _well_formed(data: dict[str, Any]) -> bool:
    """Whether a recorded working state has the shapes this module writes (a transcript edited by hand
    may not: then the next compaction starts afresh rather than fails)."""
    lists = ("requests", "commands", "instructions", "errors", "memories")
    if not all(isinstance(data.get(key, []), list) for key in lists) or not isinstance(data.get("files", {}), dict):
        return False
    commands_ok = all(
        isinstance(c, dict)
        and isinstance(c.get("command"), str)
        and isinstance(c.get("outcome"), str)
        and (c.get("exit_code") is None or type(c.get("exit_code")) is int)
        for c in data.get("commands", [])
    )
    files_ok = all(
        isinstance(f, dict)
        and isinstance(f.get("path"), str)
        and isinstance(f.get("action"), str)
        and (f.get("lines") is None or type(f.get("lines")) is int)
        for f in data.get("files", {}).values()
    )
    return commands_ok and files_ok


def turn_errors(transcript: Path) -> list[str]:
    """The errors that ended a turn, as the transcript recorded them."""
    errors = [
        " ".join(str(e.get("message", "")).split())[:200]
        for e in transcript_entries(transcript)
        if e.get("type") == "system" and e.get("subtype") == "error"
    ]
    return list(dict.fromkeys(e for e in errors if e))


# ---------------------------------------------------------------- as text


def render_working_state(cp: WorkingState, budget_tokens: int = WORKING_STATE_TOKENS) -> str:
    """The working state as the model reads it, within `budget_tokens`; empty when there is nothing."""
    sections = [
        ("The user's requests, in order (their own words)", [f"- {r}" for r in cp.requests]),
        (
            "Failed approaches (failed, and not followed by a success of the same kind)",
            [f"- `{r.command}` → {_status(r)}: {r.outcome}" for r in cp.failed],
        ),
        (
            "Files changed",
            [f"- {c.path}: {c.action}" + (f" ({c.lines} lines)" if c.lines else "") for c in cp.files.values()],
        ),
        ("Commands run, newest first", [f"- `{r.command}` → {_status(r)}: {r.outcome}" for r in reversed(cp.commands)]),
        ("Instructions attached (path rules, nested CLAUDE.md)", [f"- {p}" for p in cp.instructions]),
        ("Errors that ended a turn", [f"- {e}" for e in cp.errors]),
        ("Memories saved in this session", [f"- {m}" for m in cp.memories]),
    ]
    if not any(lines for _, lines in sections):
        return ""
    room = budget_tokens * 4 - len(HEADER)
    parts = [HEADER]
    # The requests and failures are what a summary loses most; the rest is cut first, its oldest lines first.
    # Budget order: the failed approaches (short, and what a summary loses), then the requests, then the rest.
    for title, lines in sorted(
        sections, key=lambda s: 0 if s[0].startswith("Failed") else 1 if s[0].startswith("The user's") else 2
    ):
        if not lines:
            continue
        newest_first = title.startswith("Commands")
        kept = _within(
            lines[:MAX_COMMANDS] if newest_first else lines,
            room - len(title) - 2,
            newest_last=not newest_first,
            total=len(lines),
        )
        if kept:
            block = f"{title}:\n" + "\n".join(kept)
            room -= len(block) + 2
            parts.append(block)
    ordered = [HEADER] + [p for title, _ in sections for p in parts[1:] if p.startswith(title + ":")]
    return "\n\n".join(ordered)


def _within(lines: list[str], room: int, *, newest_last: bool, total: int) -> list[str]:
    """As many of `lines` as fit in `room` characters, the newest kept; a note says how many of
    `total` went."""
    if room <= 0:
        return []
    order = list(reversed(lines)) if newest_last else list(lines)
    kept, used = [], 0
    for line in order:
        if used + len(line) + 1 > room:
            break
        kept.append(line)
        used += len(line) + 1
    if newest_last:
        kept.reverse()
    if len(kept) < total:
        note = f"- ({total - len(kept)} older ones left out to fit the checkpoint's budget)"
        kept = [note, *kept] if newest_last else [*kept, note]
    return kept


def _status(run: CommandRun) -> str:
    return "did not finish" if run.exit_code is None else f"exit {run.exit_code}"


# ---------------------------------------------------------------- the lifecycle part


class WorkingStatePart(Part):
    """Builds the working state at each compaction and attaches it beside the summary."""

    def __init__(
        self, *, instructions: Callable[[], list[str]] = lambda: [], memories: Callable[[], list[str]] = lambda: []
    ) -> None:
        self.instructions = instructions  # the rules and nested files attached so far
        self.memories = memories  # the memories saved in this session
        self.previous: WorkingState | None = None  # the last compaction's, merged into the next one
        self.last_text = ""  # what the last compaction attached (for /context)

    def current(self, agent: Agent) -> WorkingState:
        """The working state a compaction now would attach."""
        transcript = agent.session.transcript.path
        cp = build_working_state(agent.session.messages, transcript=str(transcript))
        if self.previous is not None:
            cp = self.previous.merged(cp)
        return replace(
            cp,
            instructions=list(dict.fromkeys([*cp.instructions, *self.instructions()])),
            errors=turn_errors(transcript),
            memories=list(dict.fromkeys([*cp.memories, *self.memories()])),
        )

    def compact_attachments(self, agent: Agent) -> list[str]:
        """The working state beside the summary; the transcript keeps it whole, so a resumed session
        merges it into its next one."""
        cp = self.current(agent)
        self.previous = cp
        self.last_text = render_working_state(cp)
        agent.session.record_system("checkpoint", checkpoint=asdict(cp))
        return [self.last_text] if self.last_text else []

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        if source == "resume":
            self.previous = recorded_working_state(agent.session.transcript.path)

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        self.previous = recorded_working_state(session.transcript.path) if source == "resume" else None
        self.last_text = ""

    def context_report(self) -> list[str]:
        if not self.last_text:
            return []
        return [
            f"Checkpoint: {estimate_tokens(self.last_text):,} tokens attached at the last compaction "
            f"(budget {WORKING_STATE_TOKENS:,}); /compact --show prints the one a compaction would attach now"
        ]


class WorkingStateRuntime(Protocol):
    """What the working state reads from the runtime at each compaction: the tracker in place then
    (a rebuilt prompt brings a new one) and Layer 4, for the memories saved."""

    @property
    def tracker(self) -> AttachmentTracker: ...
    @property
    def extractor(self) -> Extractor | None: ...


def part(ctx: PartContext[WorkingStateRuntime]) -> WorkingStatePart:
    """Compaction's working state: the rules and nested files attached so far, the memories saved."""
    runtime = ctx.runtime

    def memories() -> list[str]:
        extractor = runtime.extractor
        return extractor.saved_names if extractor is not None else []

    return WorkingStatePart(instructions=lambda: [a.path for a in runtime.tracker.active()], memories=memories)
