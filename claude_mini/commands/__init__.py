"""Commands shared by both front ends: the typer CLI (subcommands/) and the REPL's slash commands (ui/).

Each module is one family of plain functions that take data (the config, the runtime's parts,
parsed arguments) and return lines or JSON-able data; the front ends only parse and print:

    memory.py        `claude-mini memory` and /memory: list, show, add, edit, forget, on/off, doctor
    forget.py        forgetting: `list --scores`, `gc`, `restore`, secrets left in archive/
    team.py          the team memory: promote, demote, blame, `list --tier team`; `import --from`
    mcp.py           the MCP servers of the three scopes: list, get, add, remove, check; /mcp's reports
    checkpoints.py   file checkpoints: list, restore (/rewind for scripts)
    context.py       reports of the instruction files, prompt sections and the skills catalog
    hooks.py         the hooks of the settings files
    sandbox.py       what the Bash sandbox enforces (here, or in the session)
    skills.py        /skills' table of custom commands and skills
    agents.py        /agents' table of subagent types, and the last subagent's conversation

The slash-command table a session owns is claude_mini/command_table.py (the runtime holds it, so
it sits below this package). No typer, prompt-toolkit or rich console in here. Importing this
package has no side effects and imports nothing.
"""
