"""The REPL's start-up question about a project's new MCP servers, as Claude Code asks it.

A server of the repository's `.mcp.json` runs a program (or reaches a URL) the repository chose,
so it starts only once the user approved it. Before the runtime is built, the REPL asks once per
server still waiting (`load_servers(config).pending_approval`), showing its command or URL with
env and header values masked:

    yes  use this server                    -> enabledMcpjsonServers
    all  use it and every project server    -> enableAllProjectMcpServers: true
    no   do not use it                      -> disabledMcpjsonServers

The answers go to `.claude/settings.local.json` (`config.approve`), so the runtime built next
starts the approved servers. Esc, Ctrl-C or Ctrl-D records nothing: the server stays off and
the question comes back next time. Print mode and a non-terminal never ask (the runtime says
one line about servers waiting for approval).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from prompt_toolkit import print_formatted_text
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.shortcuts.choice_input import ChoiceInput

from claude_mini.base.text import visible_controls
from claude_mini.ui.trust_prompt import STYLE

if TYPE_CHECKING:
    from claude_mini.config import Config
    from claude_mini.mcp_servers.config import ServerSpec

CHOICES = (
    ("yes", "Use this server"),
    ("all", "Use this and every other MCP server of this project's .mcp.json"),
    ("no", "Do not use this server"),
)
KEYS = {"y": "yes", "a": "all", "n": "no"}

Ask = Callable[["ServerSpec"], "str | None"]


def server_lines(spec: ServerSpec) -> list[str]:
    """The question's heading and what the server runs (env and header values masked)."""
    shown = spec.redacted()
    lines = [f"New MCP server found in .mcp.json: {spec.name}"]
    if shown["transport"] == "stdio":
        lines.append(f"command: {' '.join([shown['command'], *shown['args']])}")
        if shown["env"]:
            lines.append("env: " + ", ".join(f"{key}={value}" for key, value in shown["env"].items()))
    else:
        lines.append(f"{shown['transport']} url: {shown['url']}")
        if shown["headers"]:
            lines.append("headers: " + ", ".join(f"{key}: {value}" for key, value in shown["headers"].items()))
    lines.append("An MCP server runs with your permissions; its tools still ask before they run.")
    return lines


def ask_approval(spec: ServerSpec) -> str | None:
    """Ask in the terminal: "yes", "all" or "no"; None for Esc, Ctrl-C, Ctrl-D."""
    heading, *rest = [visible_controls(line) for line in server_lines(spec)]
    text = [("class:bold", f"{heading}\n"), *(("class:dim", f"  {line}\n") for line in rest)]
    print_formatted_text(FormattedText(text), style=STYLE, end="")
    keys = KeyBindings()
    digits = {str(number): value for number, (value, _) in enumerate(CHOICES, start=1)}  # as every menu's
    for key, value in {**KEYS, **digits}.items():
        keys.add(key, eager=True)(lambda event, value=value: event.app.exit(result=value))
    keys.add("escape", eager=True)(lambda event: event.app.exit(result=None))
    menu = ChoiceInput(message="", options=list(CHOICES), default="yes", key_bindings=keys, style=STYLE)
    try:
        return menu.prompt()
    except (KeyboardInterrupt, EOFError):
        return None


def record_answer(config: Config, spec: ServerSpec, answer: str | None) -> str | None:
    """Write the answer to .claude/settings.local.json; the one line to show if that failed. A file
    this creates is git-ignored, and a line says where the pattern went."""
    from claude_mini.config.edit import SettingsEditError  # startup: kept off the first paint
    from claude_mini.config.git_ignore import ignore_local_settings  # startup: kept off the first paint
    from claude_mini.mcp_servers.config import (  # startup: MCP loads after the first paint
        approve,
        edit_settings,
        local_settings_file,
    )

    if answer is None:
        return None
    created = not local_settings_file(config).exists()
    try:
        approve(config, [spec.name], approved=answer != "no")
        if answer == "all":
            edit_settings(
                config, local_settings_file(config), lambda data: data.__setitem__("enableAllProjectMcpServers", True)
            )
    except SettingsEditError as exc:
        return f"claude-mini: could not record your answer about MCP server {spec.name}: {exc}"
    ignored = ignore_local_settings(local_settings_file(config)) if created else None
    if ignored:
        print(ignored)  # before the prompt exists: plain output
    return None


def confirm_mcp_servers(config: Config, ask: Ask = ask_approval) -> None:
    """Ask about each project server waiting for approval (the REPL calls this before the runtime
    is built); "all" answers for the servers after it too."""
    from claude_mini.mcp_servers.config import load_servers  # startup: MCP loads after the first paint

    for spec in load_servers(config).pending_approval:
        answer = ask(spec)
        note = record_answer(config, spec, answer)
        if note:
            print_formatted_text(FormattedText([("class:warn", f"{note}\n")]), style=STYLE, end="")
        if answer == "all":
            break
