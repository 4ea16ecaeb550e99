"""File checkpoints for scripts (`claude-mini checkpoints list|restore`): what /rewind does, on the
latest session of this directory (or the one `-r ID` names).

Without `force` a restore that would overwrite a file changed outside the assistant changes nothing
and raises, naming the files. A conversation restore appends a `rewind` entry to the transcript: the
next `claude-mini -c` (or `-r`) goes on from before that message. Actions return lines (or data for
--json); subcommands/checkpoints_cli.py parses arguments and prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.config import Config, load_config
from claude_mini.rewind.points import SessionCheckpoints, read_checkpoints
from claude_mini.rewind.store import FileHistory, StoreError, size_text
from claude_mini.session import RewindError, SessionNotFound, find_prompt, find_transcript


class CheckpointsError(Exception):
    """A one-line failure of a `checkpoints` command (exit status 1)."""


@dataclass
class Opened:
    """A session's checkpoints, found the way `-c` / `-r` finds a session."""

    config: Config
    checkpoints: SessionCheckpoints

    @property
    def session_id(self) -> str:
        return self.checkpoints.transcript.stem


def open_checkpoints(cwd: Path, resume: str | None) -> Opened:
    """The checkpoints of the session `resume` (None: the latest of `cwd`)."""
    config = load_config(cwd)
    try:
        transcript = find_transcript(config.cwd, resume)
    except SessionNotFound as exc:
        raise CheckpointsError(str(exc)) from None
    history = FileHistory.of_session(transcript.stem, config.checkpoints)
    try:
        return Opened(config, read_checkpoints(transcript, history))
    except StoreError as exc:
        raise CheckpointsError(str(exc)) from None


# --- actions -------------------------------------------------------------------------------


def list_data(opened: Opened) -> dict[str, Any]:
    """The session's messages newest first, each with the files its turn changed (for --json)."""
    cps = opened.checkpoints
    return {
        "session_id": opened.session_id,
        "transcript": str(cps.transcript),
        "store": str(cps.history.root),
        "stored_bytes": cps.history.stored_bytes(),
        "cap_bytes": cps.history.cap,
        "problems": cps.problems,
        "messages": [
            {
                "id": p.prompt.id,
                "number": p.number,
                "text": p.prompt.text,
                "timestamp": p.prompt.timestamp,
                "files": [
                    {
                        "path": f.path,
                        "created": f.created,
                        "restorable": f.not_restorable is None,
                        **({"why": f.not_restorable} if f.not_restorable else {}),
                    }
                    for f in p.files
                ],
                "commands": p.commands,
            }
            for p in cps.points
        ],
    }


def list_lines(data: dict[str, Any], cwd: Path) -> list[str]:
    """`list_data` as text: one message per line, the files its turn changed under it."""
    from claude_mini.base.text import one_line
    from claude_mini.rewind.restore import commands_line, shown

    lines = [
        f"Session {data['session_id']}: {len(data['messages'])} message(s); checkpoints take "
        f"{size_text(data['stored_bytes'])} of {size_text(data['cap_bytes'])} ({data['store']})"
    ]
    for message in data["messages"]:
        lines.append(
            f"  {message['id']}  {message['timestamp'][:19].replace('T', ' ')} UTC  "
            f"{one_line(message['text'], 60) or '(no text)'}"
        )
        for f in message["files"]:
            what = "created" if f["created"] else "changed"
            note = "" if f["restorable"] else f" (not restorable: {f['why']})"
            lines.append(f"      {what} {shown(Path(f['path']), cwd)}{note}")
        if message["commands"]:
            lines.append(f"      {commands_line(message['commands'])}")
    if data["messages"]:
        lines.append("Restore with: claude-mini checkpoints restore MESSAGE_ID [--code-only | --conversation-only]")
    return lines


def restore_lines(opened: Opened, message_id: str, *, code: bool, conversation: bool, force: bool) -> list[str]:
    """Restore the code, the conversation or both to before `message_id`; the lines saying what
    was done. CheckpointsError (nothing changed) for an unknown id or a file changed outside."""
    from claude_mini.rewind.restore import (
        apply_code_restore,
        conflict_lines,
        plan_code_restore,
        result_lines,
    )

    cps, cwd = opened.checkpoints, opened.config.cwd
    try:
        prompt = find_prompt(cps.contents.prompts, message_id)
    except RewindError as exc:
        raise CheckpointsError(str(exc)) from None
    lines = [f"Session {opened.session_id}, message {prompt.id}:"]
    if code and cps.damaged:
        raise CheckpointsError(
            f"{cps.problems[0]} Nothing was restored; --conversation-only still rewinds the conversation."
        )
    if code:
        plan = plan_code_restore(cps, prompt, root=opened.config.project_root)
        if plan.conflicts and not force:
            raise CheckpointsError(
                " ".join(
                    [
                        *conflict_lines(plan, cwd),
                        "Nothing was restored; --force restores those files too, losing those changes.",
                    ]
                )
            )
        try:
            result = apply_code_restore(cps, plan, overwrite_outside=force)
        except StoreError as exc:
            raise CheckpointsError(
                f"{exc}: the files were restored, but a later restore may call them changed outside the assistant."
            ) from None
        lines += result_lines(result, plan, cwd)
    if conversation:
        lines += _rewind_transcript(opened, prompt.id, prompt.text)
    return lines


def _rewind_transcript(opened: Opened, prompt_id: str, text: str) -> list[str]:
    """Append the `rewind` entry; the lines saying so, the message, and the memories saved since."""
    from claude_mini.base import paths
    from claude_mini.rewind.conversation import memories_since
    from claude_mini.session import Transcript, record_rewind

    transcript = opened.checkpoints.transcript
    try:
        record_rewind(Transcript(transcript, opened.session_id, cwd=str(opened.config.cwd)), prompt_id)
    except RewindError as exc:
        raise CheckpointsError(str(exc)) from None
    lines = [
        f"Rewound the conversation to before that message; `claude-mini -r {opened.session_id}` goes on "
        "from there (the transcript keeps the rest).",
        f"The message was: {text}",
    ]
    memories = memories_since(transcript, prompt_id, paths.memory_dir(opened.config.cwd))
    if memories:
        lines.append(
            f"Memories saved since that message: {', '.join(memories)}. They stay; forget one with "
            "`claude-mini memory forget NAME`."
        )
    return lines
