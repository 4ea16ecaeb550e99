"""`claude-mini checkpoints list [--json]` and `checkpoints restore MESSAGE_ID [--code-only |
--conversation-only] [--force]`: what /rewind does, for scripts, on the latest session of this
directory (or the one `-r ID` names).

Without `--force` a restore that would overwrite a file changed outside the assistant changes
nothing and exits 1, naming the files. A conversation restore appends a `rewind` entry to the
transcript: the next `claude-mini -c` (or `-r`) goes on from before that message. Actions return
lines (or data for --json); the typer commands at the bottom only parse arguments and print.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from claude_mini.base.text import visible_controls
from claude_mini.config import Config, load_config
from claude_mini.rewind.points import SessionCheckpoints, read_checkpoints
from claude_mini.rewind.store import FileHistory, StoreError, size_text
from claude_mini.session import RewindError, SessionNotFound, find_prompt, find_transcript

checkpoints_app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="The file checkpoints of a session: list them, restore one (/rewind for scripts).",
)

ResumeOption = Annotated[
    str | None,
    typer.Option(
        "-r",
        "--resume",
        metavar="ID",
        help="The session with this id (or a unique start of it); default: the latest here.",
    ),
]


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


# --- commands ------------------------------------------------------------------------------


DebugOption = Annotated[bool, typer.Option("--debug", help="Show a traceback instead of a one-line internal error.")]


def _fail(message: str) -> typer.Exit:
    sys.stderr.write(visible_controls(f"claude-mini checkpoints: {message}") + "\n")
    return typer.Exit(1)


def _guarded(action: Callable[[], list[str]], debug: bool) -> list[str]:
    """Run an action: its own failures are one line and status 1, and so is a bug (unless --debug)."""
    try:
        return action()
    except CheckpointsError as exc:
        raise _fail(str(exc)) from None
    except Exception as exc:
        if debug:
            raise
        raise _fail(f"internal error: {type(exc).__name__}: {exc}. Run again with --debug for the traceback.") from None


def _print(lines: list[str]) -> None:
    for line in lines:
        print(visible_controls(line))  # messages and paths come from the session: no escape reaches the terminal


@checkpoints_app.command("list")
def list_command(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    resume: ResumeOption = None,
    debug: DebugOption = False,
) -> None:
    """The session's messages, newest first, with the files each turn changed."""

    def action() -> list[str]:
        opened = open_checkpoints(Path.cwd(), resume)
        for problem in opened.checkpoints.problems:
            sys.stderr.write(visible_controls(f"claude-mini checkpoints: {problem}") + "\n")
        data = list_data(opened)
        return [json.dumps(data, indent=2, ensure_ascii=False)] if as_json else list_lines(data, opened.config.cwd)

    _print(_guarded(action, debug))


@checkpoints_app.command("restore")
def restore_command(
    message_id: Annotated[
        str,
        typer.Argument(
            metavar="MESSAGE_ID",
            help="The message to go back to before (an id from `checkpoints list`, or a unique start of one).",
        ),
    ],
    code_only: Annotated[bool, typer.Option("--code-only", help="Restore the files, keep the conversation.")] = False,
    conversation_only: Annotated[
        bool, typer.Option("--conversation-only", help="Rewind the conversation, keep the files as they are.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option("--force", help="Also restore files changed outside the assistant since, losing those changes."),
    ] = False,
    resume: ResumeOption = None,
    debug: DebugOption = False,
) -> None:
    """Put the files the assistant changed since MESSAGE_ID back as they were, and rewind the conversation
    to before it (both unless told otherwise)."""
    if code_only and conversation_only:
        sys.stderr.write("claude-mini checkpoints: --code-only and --conversation-only exclude each other.\n")
        raise typer.Exit(2)
    _print(
        _guarded(
            lambda: restore_lines(
                open_checkpoints(Path.cwd(), resume),
                message_id,
                code=not conversation_only,
                conversation=not code_only,
                force=force,
            ),
            debug,
        )
    )
