"""Which conversation this is and who answers it: /clear, /resume, /model, /exit.

A new or resumed session goes through `Runtime.switch_session`, so every memory
layer follows it; the old session stays on disk, resumable.
"""

from __future__ import annotations

import time

from claude_mini.ui.commands import CommandContext, command


@command("clear", help="Start a new session in this process (the old one stays resumable).")
def clear_session(ctx: CommandContext) -> None:
    """Swap in a fresh session and rebuild the system prompt."""
    from claude_mini.session import Session

    old = ctx.rt.session
    ctx.rt.switch_session(Session(ctx.rt.config.cwd), "clear")
    ctx.host.session_changed()
    kept = f" The previous session ({old.id}) is saved; /resume brings it back." if old.messages else ""
    ctx.console.print(f"Started a new session.{kept}", markup=False)


@command("resume", help="Continue an earlier session of this directory.", usage="[number|id]")
async def resume(ctx: CommandContext) -> None:
    """Pick an earlier session from a list (or by number or id) and switch to it."""
    from claude_mini.session import first_user_text, list_sessions, load_messages, resume_session

    rt = ctx.rt
    found = [p for p in list_sessions(rt.config.cwd) if p.stem != rt.session.id][:20]
    if not found:
        ctx.console.print("No earlier session in this directory.", markup=False)
        return
    options = []
    for path in found:
        messages = load_messages(path)
        title = _title(first_user_text(messages), 60) or "(no text)"
        options.append((path.stem, f"{_ago(time.time() - path.stat().st_mtime):>8}  "
                                   f"{len(messages):>3} msgs  {title}"))
    choice = _pick(ctx.args, options) if ctx.args else await ctx.host.choose("Resume which session?", options)
    if choice is None:
        ctx.console.print("Nothing resumed." if not ctx.args else f"No session matches {ctx.args!r}.",
                          markup=False)
        return
    session = resume_session(rt.config.cwd, choice)
    rt.switch_session(session, "resume")
    ctx.host.session_changed()
    last = first_user_text(list(reversed([m for m in session.messages if m.role == "user"])))
    ctx.console.print(f"Resumed session {session.id} ({len(session.messages)} messages). "
                      f"Last request: {_title(last, 80) or '-'}", markup=False)


def _title(text: str, width: int) -> str:
    """A user message on one line, without the files its @mentions attached."""
    return " ".join(text.split("\n\n<attached-")[0].split())[:width]


def _pick(arg: str, options: list[tuple[str, str]]) -> str | None:
    """`3` (a list number) or an id prefix -> the session id."""
    if arg.isdigit() and 1 <= int(arg) <= len(options):
        return options[int(arg) - 1][0]
    matches = [value for value, _ in options if value.startswith(arg)]
    return matches[0] if len(matches) == 1 else None


def _ago(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


@command("model", help="Show or change the model for this session.", usage="[name]")
def set_model(ctx: CommandContext) -> None:
    """`/model` shows the model; `/model NAME` switches to it."""
    rt = ctx.rt
    if not ctx.args:
        ctx.console.print(f"Model: {rt.agent.model} (side model: {rt.config.small_model}). "
                          "Change it with /model NAME.", markup=False)
        return
    name = ctx.args.split()[0]
    rt.agent.model = rt.config.model = name
    ctx.console.print(f"Model set to {name} for this session (the prompt cache starts over).", markup=False)


@command("exit", help="Leave claude-mini (the session is saved).", aliases=("quit",), needs_runtime=False)
def exit_repl(ctx: CommandContext) -> None:
    """Ask the REPL to stop."""
    ctx.host.request_exit()
