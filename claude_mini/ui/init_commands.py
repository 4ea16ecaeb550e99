"""`/init`: ask the model to write the repository's CLAUDE.md (Layer 1, DESIGN.md section 1)."""

from __future__ import annotations

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


@command("init", help="Ask the model to write a CLAUDE.md for this repository.")
async def init_claude_md(ctx: CommandContext) -> None:
    """Run a normal agent turn with a fixed prompt (edits still ask for permission)."""
    await ctx.host.run_turn(INIT_PROMPT)
