"""`/init`: ask the model to write the repository's CLAUDE.md (Layer 1, DESIGN.md section 1)."""

from __future__ import annotations

from pathlib import Path

from claude_mini.ui.commands import CommandContext, command

INIT_PROMPT = """\
Please analyze this codebase and create a CLAUDE.md file in the repository root, which \
will be given to future coding-assistant sessions working in this repository.

What to add:
1. The commands that will be commonly used: how to install, build, lint and run the tests, \
including how to run a single test.
2. The high-level architecture and structure of the code: the "big picture" that takes \
reading several files to understand.

Usage notes:
- If there is already a CLAUDE.md, suggest improvements to it instead of replacing it.
- Do not repeat yourself, and do not list every file or obvious generic advice.
- Include the important parts of README.md, .cursor/rules, .github/copilot-instructions.md \
or AGENTS.md if they exist.
- Begin the file with the line: # CLAUDE.md"""


IMPROVE_PROMPT = """\
This repository already has a CLAUDE.md at {path}. Read it first, then analyze the codebase \
and improve that file in place with Edit, for future coding-assistant sessions working in \
this repository: keep what is still right and the author's structure, fix what the code \
contradicts, and add what is missing:
1. The commands that will be commonly used: how to install, build, lint and run the tests, \
including how to run a single test.
2. The high-level architecture and structure of the code: the "big picture" that takes \
reading several files to understand.

Do not rewrite it from scratch, do not repeat yourself, and do not list every file or obvious \
generic advice. Include the important parts of README.md, .cursor/rules, \
.github/copilot-instructions.md or AGENTS.md if they exist and the file lacks them. End with a \
short list of what you changed."""


def init_prompt(project_root: Path) -> str:
    """The /init request: write a CLAUDE.md, or improve the one the repository has."""
    existing = project_root / "CLAUDE.md"
    return IMPROVE_PROMPT.format(path=existing) if existing.is_file() else INIT_PROMPT


@command("init", help="Ask the model to write a CLAUDE.md for this repository, or improve the one it has.")
async def init_claude_md(ctx: CommandContext) -> None:
    """Run a normal agent turn with the /init request (edits still ask for permission)."""
    await ctx.host.run_turn(init_prompt(ctx.rt.config.project_root))
