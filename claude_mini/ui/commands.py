"""Slash commands: a registry where one command is one small function with its help text.

    @command("cost", help="Tokens and dollars of this session, by purpose.")
    def show_cost(ctx: CommandContext) -> None:
        ctx.console.print(...)

A command gets a `CommandContext`: the runtime, the console, its argument
string and the REPL as `host` (to run a turn, ask the user, exit). It may be a
plain or an async function. To add a command from another part of the program,
put it in a module whose file name ends in `_commands.py` anywhere in the
package (e.g. `claude_mini/memory/memory_commands.py`): such modules are
imported when the registry is first used, so adding `/memory` is a one-file change.
"""

from __future__ import annotations

import asyncio
import difflib
import importlib
import inspect
import json
import os
import platform
import re
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rich.console import Console

    from claude_mini.runtime import Runtime

CommandFn = Callable[["CommandContext"], Awaitable[None] | None]
_COMMAND_WORD = re.compile(r"^/[A-Za-z][\w:-]*$")


class CommandHost(Protocol):
    """What commands may ask of the REPL (they tell the user things through `rt.notices`)."""

    async def run_turn(self, text: str) -> None:
        """Send `text` to the model as a user turn, rendered like any other."""

    async def choose(self, message: str, options: Sequence[tuple[str, str]]) -> str | None:
        """Let the user pick one `(value, label)`; None when they cancel."""

    def request_exit(self) -> None:
        """Leave the REPL after this command."""

    def session_changed(self) -> None:
        """The runtime now holds another session (after /clear or /resume)."""


@dataclass
class CommandContext:
    """Everything one command invocation may use."""

    host: CommandHost
    runtime: Runtime | None
    console: Console
    args: str = ""

    @property
    def rt(self) -> Runtime:
        """The runtime (commands that declare `needs_runtime` always have one)."""
        assert self.runtime is not None, "this command was registered with needs_runtime=False"
        return self.runtime


@dataclass(frozen=True)
class Command:
    """One registered slash command."""

    name: str
    help: str
    run: CommandFn
    usage: str = ""
    aliases: tuple[str, ...] = ()
    needs_runtime: bool = True


COMMANDS: dict[str, Command] = {}
_discovered: set[Path] = set()


def command(name: str, *, help: str, usage: str = "", aliases: Sequence[str] = (),
            needs_runtime: bool = True) -> Callable[[CommandFn], CommandFn]:
    """Register the decorated function as `/name` (a later registration of the same name wins)."""

    def register(fn: CommandFn) -> CommandFn:
        COMMANDS[name] = Command(name, help, fn, usage, tuple(aliases), needs_runtime)
        return fn

    return register


def discover_commands(root: Path | None = None, package: str = "claude_mini") -> list[str]:
    """Import every `*_commands.py` module under `root` (the package folder) once.

    Returns one line per module that failed to import; the others still register.
    """
    root = (root or Path(__file__).resolve().parent.parent).resolve()
    if root in _discovered:
        return []
    _discovered.add(root)
    problems = []
    for path in sorted(root.rglob("*_commands.py")):
        module = ".".join([package, *path.relative_to(root).with_suffix("").parts])
        try:
            importlib.import_module(module)
        except Exception as exc:  # one broken plug-in must not take the REPL down
            problems.append(f"Slash commands in {module} are unavailable: {type(exc).__name__}: {exc}")
    return problems


def all_commands() -> list[Command]:
    """Registered commands sorted by name."""
    return [COMMANDS[name] for name in sorted(COMMANDS)]


def find_command(name: str) -> Command | None:
    """The command called `name` or having it as an alias."""
    name = name.lower()
    return COMMANDS.get(name) or next((c for c in COMMANDS.values() if name in c.aliases), None)


def _unique_prefix(name: str) -> Command | None:
    """`/co` is not a command, but `/cos` can only be /cost."""
    matches = [c for c in COMMANDS.values() if c.name.startswith(name.lower())]
    return matches[0] if len(matches) == 1 else None


def is_command(text: str) -> bool:
    """Whether the input is a slash command (`/usr/bin/x is broken` is a message)."""
    first = text.strip().split(maxsplit=1)[0] if text.strip() else ""
    return bool(_COMMAND_WORD.match(first))


def unknown_hint(name: str) -> str:
    """`Unknown command /hlep. Did you mean /help?`"""
    names = [*COMMANDS, *(a for c in COMMANDS.values() for a in c.aliases)]
    close = difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.5)
    tip = f"Did you mean /{close[0]}?" if close else "Type /help for the list."
    return f"Unknown command /{name}. {tip}"


async def run_command(line: str, host: CommandHost, console: Console,
                      get_runtime: Callable[[], Awaitable[Runtime]], *, debug: bool = False) -> None:
    """Run one `/name args` line; a failing command prints one line and the REPL goes on."""
    for problem in discover_commands():
        console.print(problem, style="yellow", markup=False)
    name, _, args = line.strip()[1:].partition(" ")
    cmd = find_command(name) or _unique_prefix(name)
    if cmd is None:
        console.print(unknown_hint(name), style="yellow", markup=False)
        return
    runtime = await get_runtime() if cmd.needs_runtime else None  # start-up failures are not ours
    try:
        result = cmd.run(CommandContext(host, runtime, console, args.strip()))
        if inspect.isawaitable(result):
            await result
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if debug:
            console.print(traceback.format_exc(), markup=False, highlight=False)
        console.print(f"✗ /{cmd.name} failed: {type(exc).__name__}: {' '.join(str(exc).split())}. "
                      "The session is unchanged.", style="red", markup=False)


# ---------------------------------------------------------------- helpers shared by commands


def human_tokens(n: int) -> str:
    """1234 -> '1.2k', 200000 -> '200k'."""
    if n < 1000:
        return str(n)
    if n < 1_000_000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return f"{n / 1_000_000:.1f}M".replace(".0M", "M")


def context_window(runtime: Runtime) -> int:
    """The model's context window (the `contextWindow` setting, the client's, or the table)."""
    from claude_mini.memory.compact import context_window as window_of

    return window_of(runtime.config, runtime.agent.model, runtime.client)


def context_used(runtime: Runtime) -> int:
    """Tokens the next request would carry: the last request's usage plus what was added since."""
    if runtime.compactor is not None:
        return runtime.compactor.used()
    usage = runtime.agent.last_usage
    return usage.total_input + usage.output_tokens


def compaction_line(runtime: Runtime) -> str:
    """Where auto-compact triggers, whether it is on, and how many compactions happened."""
    from claude_mini.memory.compact import MAX_FAILURES

    c = runtime.compactor
    if c is None:
        return "Auto-compact: not available"
    state = "on" if c.auto_enabled else (
        f"off after {MAX_FAILURES} failures (/compact still works)" if c.failures >= MAX_FAILURES
        else "off (autoCompact setting)")
    return (f"Auto-compact: {state}, at {c.threshold:,} tokens · "
            f"{c.count} compaction(s) this session")


def compact_warning(runtime: Runtime) -> str | None:
    """A short warning once the context is within 20,000 tokens of the auto-compact threshold."""
    from claude_mini.memory.compact import WARNING_MARGIN

    c = runtime.compactor
    if c is None or not c.auto_enabled:
        return None
    left = c.threshold - context_used(runtime)
    return f"auto-compact in {human_tokens(max(left, 0))}" if left < WARNING_MARGIN else None


def _ago(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit} ago"
    return "just now"


def _print_lines(ctx: CommandContext, lines: Sequence[str]) -> None:
    for line in lines:
        ctx.console.print(line, markup=False, highlight=False)


# ---------------------------------------------------------------- built-in commands


KEYS_HELP = (
    "Keys: Enter sends · Alt-Enter, Ctrl-J or a trailing \\ adds a line · Tab completes /commands "
    "and @files · Shift-Tab cycles the permission mode · Esc or Ctrl-C cancels a turn · Ctrl-C clears the input "
    "· Ctrl-C or Ctrl-D twice on an empty prompt exits."
)


@command("help", help="List the commands and keys.", needs_runtime=False, aliases=("?",))
def show_help(ctx: CommandContext) -> None:
    """Print every command with its usage and help, in two aligned columns."""
    from rich.table import Table
    from rich.text import Text

    table = Table.grid(padding=(0, 2))
    table.add_column(no_wrap=True)
    table.add_column()
    for c in all_commands():
        short = len(c.usage) <= 8  # a long usage would push every help text to the right
        left = f"/{c.name}" + (f" {c.usage}" if c.usage and short else "")
        text = c.help + (f" Usage: /{c.name} {c.usage}" if c.usage and not short else "")
        table.add_row(Text(left), Text(text))  # Text: a `[x]` in a usage is not markup
    ctx.console.print("Commands:", markup=False)
    ctx.console.print(table)
    _print_lines(ctx, ["Mention a file with @path to attach its contents.", KEYS_HELP])


@command("exit", help="Leave claude-mini (the session is saved).", aliases=("quit",), needs_runtime=False)
def exit_repl(ctx: CommandContext) -> None:
    """Ask the REPL to stop."""
    ctx.host.request_exit()


@command("clear", help="Start a new session in this process (the old one stays resumable).")
def clear_session(ctx: CommandContext) -> None:
    """Swap in a fresh session and rebuild the system prompt."""
    from claude_mini.session import Session

    old = ctx.rt.session
    ctx.rt.switch_session(Session(ctx.rt.config.cwd), "clear")
    ctx.host.session_changed()
    kept = f" The previous session ({old.id}) is saved; /resume brings it back." if old.messages else ""
    ctx.console.print(f"Started a new session.{kept}", markup=False)


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


@command("cost", help="Tokens and dollars of this session, by purpose (main, recall, extract, ...).")
def show_cost(ctx: CommandContext) -> None:
    """A table of requests, tokens and dollars per purpose, with totals."""
    from claude_mini.llm.messages import PURPOSES
    from claude_mini.llm.pricing import price_for

    costs = ctx.rt.session.costs
    header = f"  {'purpose':<9}{'requests':>9}{'input':>10}{'cache rd':>10}{'cache wr':>10}{'output':>9}{'cost':>10}"
    lines = [f"Session {ctx.rt.session.id} · {_duration(time.time() - ctx.rt.session.started)}", header]
    names = [*PURPOSES, *(p for p in costs.by_purpose if p not in PURPOSES)]
    for purpose in names:
        line = costs.by_purpose.get(purpose)
        if line is None:
            lines.append(f"  {purpose:<9}{0:>9}{'-':>10}{'-':>10}{'-':>10}{'-':>9}{'-':>10}")
            continue
        u = line.usage
        lines.append(f"  {purpose:<9}{line.requests:>9}{u.input_tokens:>10,}{u.cache_read_input_tokens:>10,}"
                     f"{u.cache_creation_input_tokens:>10,}{u.output_tokens:>9,}{'$' + format(line.cost_usd, '.4f'):>10}")
    t = costs.total_usage
    lines.append(f"  {'total':<9}{sum(c.requests for c in costs.by_purpose.values()):>9}{t.input_tokens:>10,}"
                 f"{t.cache_read_input_tokens:>10,}{t.cache_creation_input_tokens:>10,}{t.output_tokens:>9,}"
                 f"{'$' + format(costs.total_cost, '.4f'):>10}")
    if price_for(ctx.rt.agent.model) is None:
        lines.append(f"  (no price known for {ctx.rt.agent.model}: counted as $0, as for local models)")
    _print_lines(ctx, lines)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


@command("context", help="What is in the context now: prompt sections, instruction files, messages.")
def show_context(ctx: CommandContext) -> None:
    """Token use, the system prompt's sections, Layer 1 files and attachments, and the messages."""
    from claude_mini.llm.messages import message_to_api
    from claude_mini.memory.instructions import to_json
    from claude_mini.prompt import estimate_tokens
    from claude_mini.ui.context_view import instructions_report, prompt_report

    rt = ctx.rt
    used, window = context_used(rt), context_window(rt)
    lines = [f"Context: {used:,} of {window:,} tokens ({100 * used / window:.0f}%) "
             f"· model {rt.agent.model}", compaction_line(rt)]
    lines += prompt_report(rt.prompt)
    lines += instructions_report(to_json(rt.instructions, rt.tracker))
    tools = estimate_tokens(json.dumps(rt.agent.tool_specs))
    lines.append(f"Tools: {len(rt.agent.tool_specs)} definitions (~{tools:,} tokens)")
    messages = rt.session.messages
    size = sum(estimate_tokens(json.dumps(message_to_api(m), ensure_ascii=False)) for m in messages)
    users = sum(1 for m in messages if m.role == "user")
    lines.append(f"Messages: {len(messages)} ({users} user, {len(messages) - users} assistant; ~{size:,} tokens)")
    lines += _hook_reports(rt)
    _print_lines(ctx, lines)


def _hook_reports(runtime: Runtime) -> list[str]:
    """What the lifecycle's parts put in the context (recall reports its files and budget)."""
    return [line for hook in runtime.hooks for line in hook.context_report()]


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


@command("status", help="Versions, endpoint, home folder and the settings files in effect.")
def show_status(ctx: CommandContext) -> None:
    """Where this session runs and what it talks to."""
    from claude_mini import __version__, paths
    from claude_mini.config import settings_files

    rt, cfg = ctx.rt, ctx.rt.config
    endpoint = os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com (default)"
    auth = next((n for n in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if os.environ.get(n)), None)
    loaded = {str(layer.path) for layer in cfg.layers if layer.path}
    lines = [
        f"claude-mini {__version__} · Python {platform.python_version()} · {_versions()}",
        f"Endpoint:     {endpoint}",
        f"Auth:         {auth + ' is set' if auth else 'no key (a local server may not need one)'}",
        f"Model:        {rt.agent.model} (side model {cfg.small_model})",
        f"Directory:    {cfg.cwd} (project root {cfg.project_root})",
        f"Session:      {rt.session.id}",
        f"Transcript:   {rt.session.transcript.path}",
        f"Home folder:  {paths.home_dir()}" + (" (CLAUDE_MINI_HOME)" if os.environ.get("CLAUDE_MINI_HOME") else ""),
        f"Memory:       {rt.store.root}" + ("" if cfg.auto_memory else " (auto memory is off)"),
        f"Permissions:  {rt.policy.mode} mode",
        "Settings files (lowest precedence first):",
    ]
    for source, path in settings_files(cfg.cwd, cfg.project_root):
        state = "loaded" if str(path) in loaded else ("present, not used (see warnings)" if path.exists()
                                                       else "not found")
        lines.append(f"  {source:<8} {path}  [{state}]")
    if any(layer.source == "flags" for layer in cfg.layers):
        lines.append("  flags    command line  [loaded]")
    _print_lines(ctx, lines)


def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for name in ("anthropic", "prompt-toolkit", "rich"):
        try:
            out.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            out.append(f"{name} (not installed)")
    return ", ".join(out)


@command("config", help="The effective settings and the file each one came from.")
def show_config(ctx: CommandContext) -> None:
    """Resolved values first, then every setting with its origin."""
    cfg = ctx.rt.config
    lines = [
        f"model             {cfg.model}",
        f"smallModel        {cfg.small_model}",
        f"maxTokens         {cfg.max_tokens}",
        f"permission mode   {ctx.rt.policy.mode}",
        f"autoMemory        {'on' if cfg.auto_memory else 'off'}",
        f"contextWindow     {context_window(ctx.rt):,}",
        "Settings (key = value  <- origin):",
    ]
    flat = _flatten(cfg.settings)
    if not flat:
        lines.append("  (no settings files: defaults in effect)")
    width = max((len(k) for k in flat), default=0)
    for key, value in flat.items():
        lines.append(f"  {key.ljust(width)} = {json.dumps(value, ensure_ascii=False)}  "
                     f"<- {cfg.origins.get(key, '?')}")
    said = [n.text for n in ctx.rt.notices.said("warning") if n.text not in cfg.warnings]
    lines += [f"  warning: {w}" for w in [*cfg.warnings, *said]]
    _print_lines(ctx, lines)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


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


@command("permissions", help="List permission rules; add or remove session rules; set the mode.",
         usage="[allow RULE | remove RULE | mode [NAME]]", aliases=("allowed-tools",))
def permissions(ctx: CommandContext) -> None:
    """`/permissions` lists; `allow Bash(npm test:*)`, `remove RULE` and `mode acceptEdits` edit."""
    from claude_mini.agent.permissions import RuleError

    verb, _, rule = ctx.args.partition(" ")
    action = {"allow": allow_session_rule, "remove": remove_session_rule, "mode": set_mode}.get(verb)
    if not verb:
        _print_lines(ctx, [*ctx.rt.policy.describe().splitlines(),
                           "Edit: /permissions allow RULE · /permissions remove RULE · /permissions mode NAME"])
    elif action is None or (verb != "mode" and not rule.strip()):
        ctx.console.print("Usage: /permissions [allow RULE | remove RULE | mode [NAME]]", markup=False)
    else:
        try:
            ctx.console.print(action(ctx.rt, rule.strip()), markup=False)
        except (RuleError, ValueError) as exc:
            ctx.console.print(f"Not changed: {exc}", style="yellow", markup=False)


def allow_session_rule(runtime: Runtime, rule: str) -> str:
    """Add an allow rule for the rest of this session (RuleError when malformed)."""
    added = runtime.policy.add_session_allow(rule)
    return f"Allowed {added.text} for this session."


def set_mode(runtime: Runtime, name: str) -> str:
    """Switch to mode `name`, or to the next one when no name is given (ValueError if unknown)."""
    policy = runtime.policy
    policy.mode = name or next_mode(policy.mode, policy.available_modes)
    return f"Permission mode: {policy.mode}"


def next_mode(mode: str, modes: Sequence[str]) -> str:
    """The mode after `mode` in cycling order (Shift-Tab)."""
    return modes[(list(modes).index(mode) + 1) % len(modes)] if mode in modes else modes[0]


def remove_session_rule(runtime: Runtime, rule: str) -> str:
    """Drop a session allow rule by rebuilding the policy from the settings layers plus the rules kept.

    Rules from settings files cannot be removed here: the message names the file.
    """
    from claude_mini.agent.permissions import PermissionPolicy

    old = runtime.policy
    session_rules = [r.text for r in old.allow_rules if r.source == "session"]
    if rule not in session_rules:
        origin = next((r for r in (*old.allow_rules, *old.ask_rules, *old.deny_rules) if r.text == rule), None)
        if origin is not None:
            return f"{rule} comes from {origin.where}; edit that file to remove it."
        return f"No session rule {rule}. Session rules: {', '.join(session_rules) or 'none'}."
    ctx = runtime.agent.ctx
    new = PermissionPolicy.from_layers(runtime.config.permission_layers(), cwd=lambda: ctx.cwd,
                                       project_root=runtime.config.project_root, mode=old.mode)
    for kept in session_rules:
        if kept != rule:
            new.add_session_allow(kept)
    runtime.policy = runtime.agent.policy = new
    return f"Removed the session rule {rule}."
