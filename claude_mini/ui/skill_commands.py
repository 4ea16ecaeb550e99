"""Custom commands and skills as slash commands (issue 18), `/skills`, and `-p "/name args"`.

    register_custom_commands(catalog, warn)   each entry of the catalog becomes `/name` (and its
                                              aliases, `/frontend:component`); a name claude-mini
                                              already uses is not taken: one warning line
    /name args                                the entry expanded (SkillHook.expand_typed: arguments,
                                              `!` lines through the permission check) and sent as
                                              the user's turn, @files in it attached by the REPL
    /skills                                   every entry: kind, source, listed or not, invoked, and
                                              the catalog's problems and the listing's budget
    print_command_text(runtime, prompt, warn) the same expansion for `claude-mini -p "/name args"`

The entries are registered when the runtime is ready and again after /clear (the catalog is
the conversation's, rebuilt then): a command that vanished goes, a new one comes. Built-in
commands win over custom ones (the issue; Claude Code lets the custom one win).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from claude_mini.ui import commands
from claude_mini.ui.commands import COMMANDS, CommandContext, command, print_lines

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime
    from claude_mini.skills.catalog import Catalog, Listing, PromptCommand
    from claude_mini.skills.lifecycle import SkillHook

HELP_CHARS = 90  # a description in /help is cut to this (the listing keeps up to 1,536)
_registered: set[str] = set()  # the names the last register_custom_commands added to COMMANDS
_runtime_registered = False  # whether this process's runtime registered its catalog yet (the REPL)
_PRINT_COMMAND = re.compile(r"/([A-Za-z0-9][\w.:-]*)(?:\s+(.*))?\Z", re.S)


# ---- registration


def register_custom_commands(catalog: Catalog | None, warn: Callable[[str], None]) -> list[str]:
    """Make every entry of `catalog` a slash command (those of the previous catalog go);
    returns the names registered. `warn` gets one line per entry a built-in name hides."""
    for name in _registered:
        COMMANDS.pop(name, None)
    _registered.clear()
    if catalog is None:
        return []
    commands.discover_commands()  # every module's commands are in COMMANDS before the clash check
    builtin = {n.lower() for c in COMMANDS.values() for n in (c.name, *c.aliases)}
    for entry in catalog.entries:
        names = [n.lower() for n in (entry.name, *entry.aliases)]
        if names[0] in builtin:
            warn(clash_warning(entry))
        free = [n for n in dict.fromkeys(names) if n not in builtin and n not in _registered]
        if free:  # a name an earlier entry holds: the catalog's problems already say so
            command(free[0], help=help_text(entry, free[1:]), usage=entry.argument_hint,
                    aliases=free[1:])(_runner(entry))
            _registered.update(free)
    return sorted(_registered)


def builtin_clashes(catalog: Catalog) -> list[str]:
    """The warning for each entry whose name is one of claude-mini's own commands."""
    commands.discover_commands()
    return [clash_warning(entry) for entry in catalog.entries if commands.find_command(entry.name) is not None]


def register_runtime_commands(runtime: Runtime) -> list[str]:
    """The runtime's catalog registered, its warnings said once on the session's channel."""
    global _runtime_registered
    _runtime_registered = True
    hook = runtime.skills
    return register_custom_commands(hook.catalog if hook is not None else None,
                                    lambda line: runtime.notices.say(line, "warning", once=True))


async def wait_for_custom_commands(get_runtime: Callable[[], Awaitable[Runtime]]) -> None:
    """A slash command typed before the runtime registered the custom ones (`claude-mini "/greet
    Alice"`, /help at once) waits for it, so /help lists them and /greet is not unknown. A runtime
    that cannot be built is for the command to report (/help still works)."""
    from claude_mini.ui.startup import StartupFailed

    if _runtime_registered:
        return
    with contextlib.suppress(StartupFailed):
        register_runtime_commands(await get_runtime())


def shown_path(entry: PromptCommand) -> str:
    """`.claude/commands/help.md` for a project entry, `~/...` or the full path of a user one."""
    from claude_mini.skills.catalog import shown

    return entry.shown_path or shown(entry.path)


def clash_warning(entry: PromptCommand) -> str:
    """One line: the built-in keeps the name; what the user can do."""
    model = "" if entry.disable_model_invocation else " The model can still load it with the Skill tool."
    return (f"/{entry.name} is claude-mini's own command: {shown_path(entry)} is not run by /{entry.name}; "
            f"rename it.{model}")


def help_text(entry: PromptCommand, aliases: Sequence[str] = ()) -> str:
    """/help's line: the description (one line, cut), then the source label `(project:frontend)`."""
    description = " ".join(entry.description.split()) or f"A custom {entry.kind}"
    if len(description) > HELP_CHARS:
        description = description[: HELP_CHARS - 1].rstrip() + "…"
    label = entry.source + ("".join(f", also /{a}" for a in aliases))
    if not entry.user_invocable:
        label += ", for the model only"
    return f"{description} ({label})"


def _runner(entry: PromptCommand) -> Callable[[CommandContext], Awaitable[None]]:
    async def run(ctx: CommandContext) -> None:
        await run_custom_command(ctx, entry)

    return run


async def run_custom_command(ctx: CommandContext, entry: PromptCommand) -> None:
    """Expand the entry with the typed arguments and send it as the user's turn; an `!` line
    refused or failing, or a body that cannot be read, is one red line and nothing is sent."""
    from claude_mini.skills.catalog import CatalogError
    from claude_mini.skills.expand import ExpansionError

    hook = ctx.rt.skills
    if not entry.user_invocable:
        print_lines(ctx, [model_only_line(entry)])
        return
    if hook is None:  # registered from a catalog the runtime does not have: a bug, said plainly
        ctx.console.print(f"✗ /{entry.name}: this session has no skills loaded.", style="red", markup=False)
        return
    try:
        text = await hook.expand_typed(entry, ctx.args)
    except (ExpansionError, CatalogError) as exc:
        ctx.console.print(f"✗ /{entry.name} was not sent: {exc}", style="red", markup=False, highlight=False)
        return
    await ctx.host.run_turn(text)


def model_only_line(entry: PromptCommand) -> str:
    """What typing a `user-invocable: false` entry says."""
    return (f"/{entry.name} is for the model only (user-invocable: false); nothing was sent. "
            f"Ask for what it does and the model can load the {entry.name} {entry.kind} with the Skill tool.")


# ---- /skills


@command("skills", help="Custom commands and skills: source, listed to the model or not, invoked.")
def show_skills(ctx: CommandContext) -> None:
    """Every entry with its kind, source and state; the catalog's problems; the listing's size."""
    print_lines(ctx, skills_report(ctx.rt.skills, ctx.rt, width=ctx.console.width))


def skills_report(hook: SkillHook | None, runtime: Runtime, *, width: int = 100) -> list[str]:
    """/skills' lines (the catalog read from disk when the session has none: only its problems)."""
    from claude_mini import paths
    from claude_mini.skills.catalog import load_catalog

    catalog = hook.catalog if hook is not None else load_catalog(runtime.config.project_root, paths.home_dir())
    if not catalog.entries and not catalog.problems:
        home = paths.home_dir()
        return ["No custom commands or skills. Add .claude/commands/NAME.md or .claude/skills/NAME/SKILL.md "
                f"here, or {home}/commands/NAME.md or {home}/skills/NAME/SKILL.md for every project."]
    listing = hook.listing if hook is not None else None
    invoked = hook.invoked if hook is not None else {}
    listed = {e.name for e in catalog.listed()}
    lines = [_skills_header(catalog, listing)]
    rows = [(e.name, e.kind, e.source, _state(e, listed), _invoked(invoked.get(e.name))) for e in catalog.entries]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for entry, row in zip(catalog.entries, rows, strict=True):
        left = "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
        lines.append(_cut(f"{left}  {' '.join(entry.description.split())}".rstrip(), width))
    if listing is not None and listing.shortened:
        lines.append("Listed without their description (over the budget): " + ", ".join(listing.shortened))
    lines += [f"⚠ {problem}" for problem in catalog.problems]
    return lines


def _skills_header(catalog: Catalog, listing: Listing | None) -> str:
    head = f"Custom commands and skills ({len(catalog.entries)}; {len(catalog.listed())} listed to the model"
    if listing is None:
        return head + "):"
    from claude_mini.prompt import estimate_tokens

    return head + (f" in {listing.chars:,} of {listing.budget:,} characters, "
                   f"about {estimate_tokens(listing.text):,} tokens):")


def _state(entry: PromptCommand, listed: set[str]) -> str:
    """listed (the model sees it), you-only (disable-model-invocation), model-only."""
    if not entry.user_invocable:
        return "model-only"
    return "listed" if entry.name in listed else "you-only"


def _invoked(tokens: int | None) -> str:
    return f"invoked ({tokens:,} tokens)" if tokens is not None else ""


def _cut(line: str, width: int) -> str:
    return line if len(line) <= width else line[: max(width - 1, 0)].rstrip() + "…"


# ---- print mode


async def print_command_text(runtime: Runtime, prompt: str, warn: Callable[[str], None]) -> str:
    """The text `-p` sends for `prompt`: a `/name args` naming a custom command or skill expanded
    as the REPL would (no one to ask: a `!` line that needs asking is refused) with its @files
    attached; anything else as typed. ExpansionError (one line) when the command must not be sent."""
    from claude_mini.skills.expand import ExpansionError

    match = _PRINT_COMMAND.match(prompt.strip())
    if match is None:
        return prompt
    name, args = match.group(1), (match.group(2) or "").strip()
    hook = runtime.skills
    entry = hook.catalog.find(name) if hook is not None else None
    commands.discover_commands()
    if commands.find_command(name) is not None:
        hidden = f" ({shown_path(entry)} is not run; rename it)" if entry is not None else ""
        warn(f"/{name} is one of claude-mini's own commands, which print mode does not run: "
             f"the text was sent to the model as typed{hidden}.")
        return prompt
    if entry is None or hook is None:
        return prompt
    if not entry.user_invocable:
        raise ExpansionError(model_only_line(entry))
    text = await hook.expand_typed(entry, args)
    return _with_mentions(runtime, text, warn)


def _with_mentions(runtime: Runtime, text: str, warn: Callable[[str], None]) -> str:
    """`text` with the @files it names attached, as the REPL attaches a typed message's."""
    from claude_mini.ui.mentions import ProjectFiles, attach_mentions

    return attach_mentions(text, runtime, project_root=runtime.config.project_root,
                           files=ProjectFiles(runtime.config.cwd), warn=warn)
