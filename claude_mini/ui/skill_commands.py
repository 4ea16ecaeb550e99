"""Custom commands and skills as slash commands, `/skills`, and `-p "/name args"`.

    register_custom_commands(table, catalog, warn)
                                              each entry of the catalog becomes `/name` (and its
                                              aliases, `/frontend:component`) in the session's
                                              table; a name claude-mini already uses is not taken:
                                              one warning line
    /name args                                the entry expanded (SkillPart.expand_typed: arguments,
                                              `!` lines through the permission check) and sent as
                                              the user's turn, @files in it attached by the REPL
    /skills                                   every entry: kind, source, listed or not, invoked, and
                                              the catalog's problems and the listing's budget
                                              (commands/skills.py)
    print_command_text(runtime, prompt, warn) the same expansion for `claude-mini -p "/name args"`

The entries are registered in the session's command table when the runtime is ready and again
after /clear (the catalog is the conversation's, rebuilt then): a command that vanished goes, a
new one comes. Built-in commands win over custom ones (on purpose; Claude Code lets the custom one win).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from claude_mini.base.text import clip, one_line
from claude_mini.command_table import BUILTIN, SKILLS, Command, CommandTable, builtin_table
from claude_mini.commands.skills import skills_table
from claude_mini.ui.commands import CommandContext, command, print_lines, session_table

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime
    from claude_mini.skills.catalog import Catalog, PromptCommand

SNIPPET_CHARS = 60  # of a `!` line in the status shown while it runs
HELP_CHARS = 90  # a description in /help is cut to this (the listing keeps up to 1,536)
_PRINT_COMMAND = re.compile(r"/([A-Za-z0-9][\w.:-]*)(?:\s+(.*))?\Z", re.S)


# ---- registration


def register_custom_commands(table: CommandTable, catalog: Catalog | None, warn: Callable[[str], None]) -> list[str]:
    """Make every entry of `catalog` a slash command of the session's `table` (those of its
    previous catalog go); returns the names registered. `warn` gets one line per entry a built-in
    name hides."""
    if catalog is None:
        table.put(SKILLS, [], origin=None)
        return []
    from claude_mini.skills.report import clash_warning

    builtin = table.names_of(BUILTIN)
    taken: set[str] = set()
    made: list[Command] = []
    for entry in catalog.entries:
        names = [n.lower() for n in (entry.name, *entry.aliases)]
        if names[0] in builtin:
            warn(clash_warning(entry))
        free = [n for n in dict.fromkeys(names) if n not in builtin and n not in taken]
        if free:  # a name an earlier entry holds: the catalog's problems already say so
            made.append(
                Command(free[0], help_text(entry, free[1:]), _runner(entry), entry.argument_hint, tuple(free[1:]))
            )
            taken.update(free)
    table.put(SKILLS, made, origin=catalog)
    return sorted(taken)


def builtin_names() -> set[str]:
    """claude-mini's own commands and their aliases, lower case (no custom one among them)."""
    return builtin_table().names_of(BUILTIN)


def register_runtime_commands(runtime: Runtime) -> list[str]:
    """The runtime's catalog registered in its table, its warnings said once on the session's channel."""
    hook = runtime.skills
    return register_custom_commands(
        session_table(runtime),
        hook.catalog if hook is not None else None,
        lambda line: runtime.notices.say(line, "warning", once=True),
    )


async def wait_for_custom_commands(get_runtime: Callable[[], Awaitable[Runtime]]) -> None:
    """A slash command typed before the runtime registered the custom ones (`claude-mini "/greet
    Alice"`, /help at once) waits for it, so /help lists them and /greet is not unknown. A runtime
    that cannot be built is for the command to report (/help still works)."""
    from claude_mini.ui.startup import StartupFailed

    with contextlib.suppress(StartupFailed):
        runtime = await get_runtime()  # at once when it is built
        catalog = runtime.skills.catalog if runtime.skills is not None else None
        table = session_table(runtime)
        if not table.has(SKILLS) or table.origin(SKILLS) is not catalog:
            register_runtime_commands(runtime)


def late_hint(runtime: Runtime, name: str) -> str | None:
    """What typing `/name` says when it is no command yet but a command or skill on disk: one added
    after the conversation started (the catalog is the conversation's, read again at /clear)."""
    from claude_mini.base import paths
    from claude_mini.skills.catalog import load_catalog

    hook = runtime.skills
    if hook is not None and hook.catalog.find(name) is not None:
        return None
    if load_catalog(runtime.config.project_root, paths.home_dir(), trusted=runtime.config.trusted).find(name) is None:
        return None
    when = "at the next /clear" if hook is not None else "when claude-mini starts again"
    return f"/{name} was added after this conversation started; it becomes a command {when}."


def help_text(entry: PromptCommand, aliases: Sequence[str] = ()) -> str:
    """/help's line: the description (one line, cut), then the source label `(project:frontend)`."""
    description = clip(one_line(entry.description) or f"A custom {entry.kind}", HELP_CHARS, strip=True)
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
    from claude_mini.skills.expand import ExpansionError, shell_snippets

    hook = ctx.rt.skills
    if not entry.user_invocable:
        print_lines(ctx, [model_only_line(entry)])
        return
    if hook is None:  # registered from a catalog the runtime does not have: a bug, said plainly
        ctx.console.print(f"✗ /{entry.name}: this session has no skills loaded.", style="red", markup=False)
        return
    try:
        snippets = shell_snippets(await asyncio.to_thread(entry.body))
        text = await ctx.host.cancellable(hook.expand_typed(entry, ctx.args), expanding_status(entry, snippets))
    except (ExpansionError, CatalogError) as exc:
        ctx.console.print(f"✗ /{entry.name} was not sent: {exc}", style="red", markup=False, highlight=False)
        return
    except asyncio.CancelledError:  # Esc or Ctrl-C while its `!` lines ran (or asked)
        ctx.console.print(f"/{entry.name} was not sent (interrupted).", style="yellow", markup=False, highlight=False)
        raise
    await ctx.host.run_turn(text)


def expanding_status(entry: PromptCommand, snippets: Sequence[str]) -> str:
    """What the spinner says while a typed command is expanded: `Running !`make test` for /check`."""
    if not snippets:
        return f"Reading /{entry.name}"
    first = one_line(snippets[0], SNIPPET_CHARS, terminal=True)
    more = f" and {len(snippets) - 1} more" if len(snippets) > 1 else ""
    return f"Running !`{first}`{more} for /{entry.name}"


def model_only_line(entry: PromptCommand) -> str:
    """What typing a `user-invocable: false` entry says."""
    return (
        f"/{entry.name} is for the model only (user-invocable: false); nothing was sent. "
        f"Ask for what it does and the model can load the {entry.name} {entry.kind} with the Skill tool."
    )


# ---- /skills


@command("skills", help="Custom commands and skills: source, listed to the model or not, invoked.")
def show_skills(ctx: CommandContext) -> None:
    """Every entry with its kind, source and state; the catalog's problems; the listing's size."""
    print_lines(ctx, skills_table(ctx.rt.skills, ctx.rt, width=ctx.console.width))


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
    if builtin_table().find(name) is not None:
        hidden = f" ({entry.shown_path} is not run; rename it)" if entry is not None else ""
        warn(
            f"/{name} is one of claude-mini's own commands, which print mode does not run: "
            f"the text was sent to the model as typed{hidden}."
        )
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

    return attach_mentions(
        text, runtime, project_root=runtime.config.project_root, files=ProjectFiles(runtime.config.cwd), warn=warn
    )
