"""`claude-mini <subcommand>`: the scriptable commands, which need no model and no terminal.

    app.py           the typer group `cli.py` hands `memory`, `context`, `hooks`, `mcp` and `checkpoints` to;
                     `claude-mini context`
    memory_cli.py    `claude-mini memory ...`: list, show, add, edit, forget, path, on/off, doctor
    forget_cli.py    `memory list --scores`, `memory gc`, `memory restore` (memory/maintenance/forget.py)
    context_view.py  plain-text reports of the instruction files and prompt sections
    hooks_cli.py     `claude-mini hooks list [--json]` (hooks/config.py's report)
    mcp_cli.py       `claude-mini mcp list|get|add|remove` (mcp_servers/config.py)
    checkpoints_cli.py  `claude-mini checkpoints list|restore`: /rewind for scripts (rewind/)

The REPL's `/memory`, `/context` and `/hooks` (ui/memory_commands.py, ui/context_commands.py,
ui/hooks_commands.py) reuse these actions and reports. Importing this package has no side effects and
imports nothing: the REPL's `/context` reads context_view.py without typer.
"""
