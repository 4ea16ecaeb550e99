"""The user's hooks: commands from Claude Code's `hooks` settings key, run on the session's events.

    config.py     load_hooks(config) -> HookSet: every settings layer's hooks, matchers, and
                  what does not run and why (untrusted folder, allowManagedHooksOnly, ...)
    runner.py     run_hook_commands(): one process group each, stdin JSON, timeout, killed on cancel
    output.py     interpret(event, runs) -> HookOutcome: exit codes and JSON output, merged
    lifecycle.py  UserHooksPart: the lifecycle part (agent/lifecycle.py) that raises each event

lifecycle.part(ctx) builds a UserHooksPart only when at least one hook would run.
"""
