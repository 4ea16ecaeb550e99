"""The front ends of the agent loop: the interactive terminal, and print mode (`-p`).

The REPL:

    repl.py           Repl and run_repl: the prompt loop, turns, permission prompts
    startup.py        banner first, the runtime built in a background thread
    terminal.py       colours, the prompt's keys, Ctrl-C / Esc / echo while a turn runs
    status_line.py    the line under the prompt; the permission modes' names and order
    context_usage.py  how full the context is, in words (status line, /context, /config)
    mentions.py       @path completion and attachment
    render.py         rich rendering of the agent's events
    trust_prompt.py   "Do you trust the files in this folder?"

Slash commands: commands.py (the decorator, dispatch, the session's table); the commands in
`*_commands.py` modules, thin layers over claude_mini/commands/ (which `claude-mini <subcommand>`
shares): they parse the arguments and print.

    printmode.py      `claude-mini -p`: the runtime built, one turn printed as text, json or
                      stream-json, every ending an exit status (cli.py only parses the flags)
    safe_text.py      control characters made visible before anything reaches a terminal

Print mode stays here, not with the scriptable subcommands (claude_mini/subcommands/):
like the REPL it runs the agent loop and shows its events; the subcommands need no model.
Nothing here imports subcommands/ or cli.py.
Importing this package has no side effects.
"""
