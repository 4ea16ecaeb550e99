"""`/add-dir DIR`: one more folder the tools may work in, for the rest of the session.

The folder joins the workspace as `--add-dir` and `permissions.additionalDirectories` do: reads
there run as anywhere, edits follow the rules and the mode (acceptEdits edits it unasked), the
Bash sandbox may write it, and `@` mentions may name its files. The system prompt is not
rebuilt (the cache prefix stays); the model learns of the folder from a reminder on the next
message. Its CLAUDE.md is not read (the prompt stays; --add-dir with
CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1 reads it at start-up).
"""

from __future__ import annotations

import os
from pathlib import Path

from claude_mini.base.text import within
from claude_mini.ui.commands import CommandContext, command, print_lines


@command("add-dir", help="Add a folder the tools may work in for this session: /add-dir ../other-repo")
def add_dir(ctx: CommandContext) -> None:
    """Add the folder named in the arguments to the session's workspace (or list the folders)."""
    rules = ctx.rt.policy.rules
    raw = ctx.args.strip().strip("\"'")
    if not raw:
        folders = ", ".join(str(p) for p in rules.roots)
        print_lines(ctx, [f"Working folders: {folders}", "Add one with /add-dir PATH."])
        return
    folder = Path(os.path.abspath(ctx.rt.agent.ctx.cwd / Path(raw).expanduser()))
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        print_lines(ctx, [f"{folder} {what}; nothing was added."])
        return
    if any(within(os.path.realpath(folder), str(root)) for root in rules.roots):
        print_lines(ctx, [f"{folder} is already part of this session's working folders."])
        return
    rules.add_directory(folder)
    ctx.rt.agent.notes_for_model.append(
        f"The user added {folder} as a working directory (/add-dir): you may read files there, "
        "and change them as the permission rules allow."
    )
    print_lines(
        ctx,
        [
            f"Added {folder} as a working folder for this session "
            "(--add-dir or permissions.additionalDirectories keep it for later sessions)."
        ],
    )
