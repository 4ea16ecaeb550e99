"""`/help`: every command with its help text, and the REPL's keys."""

from __future__ import annotations

from claude_mini.ui.commands import CommandContext, command, print_lines

KEYS_HELP = (
    "Keys: Enter sends · Alt-Enter, Ctrl-J or a trailing \\ adds a line · Tab completes /commands "
    "and @files · Shift-Tab cycles the permission mode · Esc or Ctrl-C cancels a turn · Ctrl-C clears the input "
    "· Esc Esc clears it too, and on an empty prompt opens /rewind · Ctrl-O opens the transcript view (every "
    "tool call's input and output in full) · Ctrl-C or Ctrl-D twice on an empty prompt exits."
)
SHELL_HELP = "Start a line with ! to run it in the shell (!git status): no model request; the model sees it next turn."


@command("help", help="List the commands and keys.", needs_runtime=False, aliases=("?",))
def show_help(ctx: CommandContext) -> None:
    """Print every command of the session with its usage and help, in two aligned columns."""
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column()
    for c in ctx.commands.all():
        short = len(c.usage) <= 8  # a long usage would push every help text to the right
        left = f"/{c.name}" + (f" {c.usage}" if c.usage and short else "")
        text = c.help + (f" Usage: /{c.name} {c.usage}" if c.usage and not short else "")
        table.add_row(Text(left), Text(text))  # Text: a `[x]` in a usage is not markup
    ctx.console.print("Commands:", markup=False)
    ctx.console.print(table)
    print_lines(ctx, ["Mention a file with @path to attach its contents.", SHELL_HELP, KEYS_HELP])
