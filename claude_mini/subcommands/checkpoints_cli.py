"""`claude-mini checkpoints list [--json]` and `checkpoints restore MESSAGE_ID [--code-only |
--conversation-only] [--force]`: what /rewind does, for scripts, on the latest session of this
directory (or the one `-r ID` names).

Without `--force` a restore that would overwrite a file changed outside the assistant changes
nothing and exits 1, naming the files. A conversation restore appends a `rewind` entry to the
transcript: the next `claude-mini -c` (or `-r`) goes on from before that message. The actions
are commands/checkpoints.py's; the typer commands here only parse arguments and print.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from claude_mini.base.text import visible_controls
from claude_mini.commands.checkpoints import (
    CheckpointsError,
    list_data,
    list_lines,
    open_checkpoints,
    restore_lines,
)

checkpoints_app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # the root command\'s plain style, without Python types
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
