"""What the session holds, costs and runs with: /context, /cost, /status, /config, /model."""

from __future__ import annotations

import json
import os
import platform
import time
from typing import TYPE_CHECKING, Any

from claude_mini import __version__
from claude_mini.base import paths
from claude_mini.base.text import estimate_tokens
from claude_mini.commands.context import instructions_report, prompt_report
from claude_mini.config.layers import settings_files
from claude_mini.config.models import MODEL_ALIASES, alias_of, model_named
from claude_mini.llm import local
from claude_mini.llm.anthropic_client import AnthropicClient, missing_credentials
from claude_mini.llm.messages import PURPOSES, media_tokens, message_to_api
from claude_mini.llm.pricing import price_for
from claude_mini.memory.instructions import to_json
from claude_mini.ui.commands import CommandContext, command, print_lines
from claude_mini.ui.context_usage import compaction_line, context_used, context_window
from claude_mini.ui.status_line import unknown_price_models

if TYPE_CHECKING:
    from claude_mini.config import Config
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.runtime import Runtime


@command("context", help="What is in the context now: prompt sections, instruction files, messages.")
def show_context(ctx: CommandContext) -> None:
    """Token use, the system prompt's sections, Layer 1 files and attachments, and the messages."""
    rt = ctx.rt
    used, window = context_used(rt), context_window(rt)
    lines = [
        f"Context: {used:,} of {window:,} tokens ({100 * used / window:.0f}%) · model {rt.agent.model}",
        compaction_line(rt),
    ]
    lines += prompt_report(rt.prompt)
    lines += instructions_report(to_json(rt.instructions, rt.tracker))
    tools = estimate_tokens(json.dumps(rt.agent.tool_specs))
    lines.append(f"Tools: {len(rt.agent.tool_specs)} definitions (~{tools:,} tokens)")
    messages = rt.session.messages
    # Images and PDFs count what the API charges for them, not their base64's length.
    size = sum(
        estimate_tokens(json.dumps(message_to_api(m, media=False), ensure_ascii=False)) + media_tokens(m)
        for m in messages
    )
    users = sum(1 for m in messages if m.role == "user")
    lines.append(f"Messages: {len(messages)} ({users} user, {len(messages) - users} assistant; ~{size:,} tokens)")
    lines += _hook_reports(rt)
    print_lines(ctx, lines)


def _hook_reports(runtime: Runtime) -> list[str]:
    """What the lifecycle's parts put in the context (recall reports its files and budget)."""
    return runtime.lifecycle.context_report()


@command("cost", help="Tokens and dollars of this session, by purpose (main, recall, extract, ...).")
def show_cost(ctx: CommandContext) -> None:
    """A table of requests, tokens and dollars per purpose, with totals."""
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
        shown = _dollars(line.cost_usd, bool(unknown_price_models(ctx.rt, [line])))
        lines.append(
            f"  {purpose:<9}{line.requests:>9}{u.input_tokens:>10,}{u.cache_read_input_tokens:>10,}"
            f"{u.cache_creation_input_tokens:>10,}{u.output_tokens:>9,}{shown:>10}"
        )
    t = costs.total_usage
    unknown = unknown_price_models(ctx.rt, costs.by_purpose.values())
    lines.append(
        f"  {'total':<9}{sum(c.requests for c in costs.by_purpose.values()):>9}{t.input_tokens:>10,}"
        f"{t.cache_read_input_tokens:>10,}{t.cache_creation_input_tokens:>10,}{t.output_tokens:>9,}"
        f"{_dollars(costs.total_cost, bool(unknown)):>10}"
    )
    if ctx.rt.client.provider == "local":
        lines.append("  (the offline model runs on this machine: it costs nothing)")
    elif price_for(ctx.rt.agent.model) is None:
        unknown.add(ctx.rt.agent.model)
    if unknown:
        lines.append(
            f"  (no price known for {', '.join(sorted(unknown))}: its requests' cost is unknown, "
            "not counted in the dollars)"
        )
    print_lines(ctx, lines)


def _dollars(cost: float, unknown_part: bool) -> str:
    """`$0.0123`; `?` when nothing was priced, `$0.0123+?` when part of it was not."""
    if not unknown_part:
        return f"${cost:.4f}"
    return f"${cost:.4f}+?" if cost else "?"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


@command("status", help="Versions, endpoint, home folder and the settings files in effect.")
def show_status(ctx: CommandContext) -> None:
    """Where this session runs and what it talks to."""
    rt, cfg = ctx.rt, ctx.rt.config
    loaded = {str(layer.path) for layer in cfg.layers if layer.path}
    lines = [
        f"claude-mini {__version__} · Python {platform.python_version()} · {_versions()}",
        *_model_lines(rt),
        f"Directory:    {cfg.cwd} (project root {cfg.project_root})",
        f"Session:      {rt.session.id}",
        f"Transcript:   {rt.session.transcript.path}",
        f"Home folder:  {paths.home_dir()}" + (" (CLAUDE_MINI_HOME)" if os.environ.get("CLAUDE_MINI_HOME") else ""),
        f"Memory:       {rt.store.root}" + ("" if cfg.auto_memory else " (auto memory is off)"),
        f"Permissions:  {rt.policy.mode} mode",
        "Settings files (lowest precedence first):",
        *_claude_code_lines(cfg, loaded),
    ]
    for source, path in settings_files(cfg.cwd, cfg.project_root):
        state = (
            "loaded" if str(path) in loaded else ("present, not used (see warnings)" if path.exists() else "not found")
        )
        lines.append(f"  {source:<8} {path}  [{state}]")
    if any(layer.source == "flags" for layer in cfg.layers):
        lines.append("  flags    command line  [loaded]")
    print_lines(ctx, lines)


def _claude_code_lines(cfg: Config, loaded: set[str]) -> list[str]:
    """Claude Code's user folder in /status: its settings file (the lowest layer), or why it is not read."""
    if cfg.claude_code_home is None:
        off = cfg.get("useClaudeCodeHome") is False
        return ["  user     Claude Code's ~/.claude  [off: useClaudeCodeHome is false]"] if off else []
    path = cfg.claude_code_home / "settings.json"
    state = "loaded" if str(path) in loaded else ("present, not used (see warnings)" if path.exists() else "not found")
    return [
        f"  user     {path}  [{state}; Claude Code's, below claude-mini's own; its CLAUDE.md, commands, "
        "skills and agents are read too]"
    ]


def _model_lines(rt: Runtime) -> list[str]:
    """Endpoint, auth and model: for the offline model, that nothing leaves this machine."""
    if rt.client.provider == "local":
        return [
            "Endpoint:     none: the offline model runs in this process (no network)",
            f"Model:        {rt.client.name}; it also serves recall and compaction (no side model)",
            "Web search:   not offered: the offline model cannot search the web",
        ]
    endpoint = os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com (default)"
    auth = next((n for n in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") if os.environ.get(n)), None)
    return [
        f"Endpoint:     {endpoint}",
        f"Auth:         {auth + ' is set' if auth else 'no key (a local server may not need one)'}",
        f"Model:        {rt.agent.model} (side model {rt.config.small_model})",
        f"Web search:   {rt.agent.ctx.web.search.why if rt.agent.ctx.web else 'not offered'}",
    ]


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
        lines.append(f"  {key.ljust(width)} = {json.dumps(value, ensure_ascii=False)}  <- {cfg.origins.get(key, '?')}")
    said = [n.text for n in ctx.rt.notices.said("warning") if n.text not in cfg.warnings]
    lines += [f"  warning: {w}" for w in [*cfg.warnings, *said]]
    print_lines(ctx, lines)


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.update(_flatten(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


@command(
    "model",
    help="Show or change the model: opus, sonnet, haiku, an id, or `local` (offline).",
    usage="[name]",
)
async def set_model(ctx: CommandContext) -> None:
    """`/model` shows the model and offers the aliases to pick from; `/model NAME` switches to it
    (`opus`, `sonnet`, `haiku`: their current ids; `local[:PATH]`: the offline model)."""
    rt = ctx.rt
    if not ctx.args:
        ctx.console.print(f"Model: {_model_shown(rt)}. Change it with /model NAME.", markup=False)
        choice = await ctx.host.choose("Switch to which model?", _model_options(rt))
        if choice is None or choice == rt.agent.model:
            return
        name = choice
    else:
        name = ctx.args.split()[0]
    _switch_model(ctx, model_named(name) or name)


def _model_shown(rt: Runtime) -> str:
    """The model as /model shows it: its id, the alias naming it, the side model."""
    if rt.client.provider == "local":
        return f"{rt.client.name}; it also serves recall and compaction (no side model)"
    alias = alias_of(rt.agent.model)
    named = f" ({alias})" if alias else ""
    return f"{rt.agent.model}{named} (side model: {rt.config.small_model})"


def _model_options(rt: Runtime) -> list[tuple[str, str]]:
    """The picker's rows: the current model (kept), then each alias with the id it stands for."""
    rows = [(rt.agent.model, f"keep {rt.agent.model}")]
    rows += [(target, f"{alias:<7} {target}") for alias, target in MODEL_ALIASES.items() if target != rt.agent.model]
    return rows


def _switch_model(ctx: CommandContext, name: str) -> None:
    """Switch the session to `name` (an id, or `local[:PATH]`) and say what that means."""
    rt = ctx.rt
    try:
        client = _client_for(rt, name)
    except _NotSwitched as exc:
        ctx.console.print(f"Not changed: {exc}", style="yellow", markup=False)
        return
    rt.switch_client(client)
    rt.agent.model = rt.config.model = name
    if client.provider == "local":
        ctx.console.print(
            f"Model set to {client.name} for this session "
            "(it also serves recall and compaction; memory extraction is off).",
            markup=False,
        )
        return
    ctx.console.print(f"Model set to {name} for this session (the prompt cache starts over).", markup=False)
    if price_for(name) is None:
        ctx.console.print(
            f"⚠ {name} is not a Claude model claude-mini knows: its price is unknown (/cost "
            "shows it as unknown), and the server says on the first request whether it "
            "has it.",
            style="yellow",
            markup=False,
        )


class _NotSwitched(Exception):
    """/model cannot switch to that model here; the message says why."""


def _client_for(rt: Runtime, name: str) -> ModelClient:
    """The client that serves `name`: the offline model for `local[:PATH]`, else the API client
    (the running one, or a new one when leaving the offline model)."""
    if local.is_local_model(name):
        try:
            return local.open_local_client(name)
        except local.LocalModelError as exc:
            raise _NotSwitched(str(exc)) from None
    if rt.client.provider != "local":
        return rt.client
    if missing_credentials():
        raise _NotSwitched(
            f"{name} needs the Anthropic API or a compatible server: set ANTHROPIC_API_KEY "
            "(or ANTHROPIC_AUTH_TOKEN) or ANTHROPIC_BASE_URL, then start claude-mini again."
        )
    return AnthropicClient()
