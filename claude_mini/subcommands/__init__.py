"""`claude-mini <subcommand>`: the scriptable commands, which need no model and no terminal.

    app.py           the typer group `cli.py` hands `memory`, `context`, `hooks`, `mcp`, `checkpoints`
                     and `sandbox` to; `claude-mini context` and `claude-mini sandbox status`
    memory_cli.py    `claude-mini memory ...`: list, show, add, edit, forget, path, on/off, doctor
    forget_cli.py    `memory list --scores`, `memory gc`, `memory restore`
    team_cli.py      `memory promote|demote|blame|import`, `list --tier team`
    hooks_cli.py     `claude-mini hooks list [--json]`
    mcp_cli.py       `claude-mini mcp list|get|add|remove`
    checkpoints_cli.py  `claude-mini checkpoints list|restore`: /rewind for scripts
    output.py        `say`: one `claude-mini: ...` line on stderr (cli.py's too)

Each module only parses arguments and prints: the actions are the families of claude_mini/commands/,
which the REPL's slash commands (ui/) share. Nothing here imports ui/ but its text helper, nor
cli.py. Importing this package has no side effects and imports nothing.
"""
