"""Custom commands and skills as slash commands, `/skills`, and `-p "/name args"`.

    register_custom_commands(catalog, warn)   each entry of the catalog becomes `/name` (and its
                                              aliases, `/frontend:component`); a name claude-mini
                                              already uses is not taken: one warning line
    /name args                                the entry expanded (SkillPart.expand_typed: arguments,
                                              `!` lines through the permission check) and sent as
                                              the user's turn, @files in it attached by the REPL
    /skills                                   every entry: kind, source, listed or not, invoked, and
                                              the catalog's problems and the listing's budget
    print_command_text(runtime, prompt, warn) the same expansion for `claude-mini -p "/name args"`

The entries are registered when the runtime is ready and again after /clear (the catalog is
the conversation's, rebuilt then): a command that vanished goes, a new one comes. Built-in
commands win over custom ones (on purpose; Claude Code lets the custom one win).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from claude_mini.ui import commands
from claude_mini.ui.commands import COMMANDS, CommandContext, command, print_lines

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime
    from claude_mini.skills.catalog import Catalog, PromptCommand
    from claude_mini.skills.lifecycle import SkillPart

SNIPPET_CHARS = 60  # of a `!` line in the status shown while it runs
HELP_CHARS = 90  # a description in /help is cut to this (the listing keeps up to 1,536)
# What the last register_custom_commands put into the (process-wide) registry, and from which
# catalog: a runtime whose catalog is another one (a second runtime, a /clear) registers its own.
_registered: set[str] = set()
_registered_from: Catalog | None = None
_PRINT_COMMAND = re.compile(r"/([A-Za-z0-9][\w.:-]*)(?:\s+(.*))?\Z", re.S)


# ---- registration


def register_custom_commands(catalog: Catalog | None, warn: Callable[[str], None]) -> list[str]:
    """Make every entry of `catalog` a slash command (those of the previous catalog go);
    returns the names registered. `warn` gets one line per entry a built-in name hides."""
    global _registered_from
    _registered_from = catalog
    for name in _registered:
        COMMANDS.pop(name, None)
    _registered.clear()
    if catalog is None:
        return []
    from claude_mini.skills.report import clash_warning

    builtin = builtin_names()
    for entry in catalog.entries:
        names = [n.lower() for n in (entry.name, *entry.aliases)]
        if names[0] in builtin:
            warn(clash_warning(entry))
        free = [n for n in dict.fromkeys(names) if n not in builtin and n not in _registered]
        if free:  # a name an earlier entry holds: the catalog's problems already say so
            command(free[0], help=help_text(entry, free[1:]), usage=entry.argument_hint, aliases=free[1:])(
                _runner(entry)
            )
            _registered.update(free)
    return sorted(_registered)


def builtin_names() -> set[str]:
    """claude-mini's own commands and their aliases, lower case (no custom one among them)."""
    commands.discover_commands()  # every module's commands are in COMMANDS before the clash check
    return {n.lower() for c in COMMANDS.values() if c.name not in _registered for n in (c.name, *c.aliases)}


def register_runtime_commands(runtime: Runtime) -> list[str]:
    """The runtime's catalog registered, its warnings said once on the session's channel."""
    hook = runtime.skills
    return register_custom_commands(
        hook.catalog if hook is not None else None, lambda line: runtime.notices.say(line, "warning", once=True)
    )


async def wait_for_custom_commands(get_runtime: Callable[[], Awaitable[Runtime]]) -> None:
    """A slash command typed before the runtime registered the custom ones (`claude-mini "/greet
    Alice"`, /help at once) waits for it, so /help lists them and /greet is not unknown. A runtime
    that cannot be built is for the command to report (/help still works)."""
    from claude_mini.ui.startup import StartupFailed

    with contextlib.suppress(StartupFailed):
        runtime = await get_runtime()  # at once when it is built
        if (runtime.skills.catalog if runtime.skills is not None else None) is not _registered_from:
            register_runtime_commands(runtime)


def late_hint(runtime: Runtime, name: str) -> str | None:
    """What typing `/name` says when it is no command yet but a command or skill on disk: one added
    after the conversation started (the catalog is the conversation's, read again at /clear)."""
    from claude_mini import paths
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
    from claude_mini.ui.render import one_line

    if not snippets:
        return f"Reading /{entry.name}"
    first = one_line(snippets[0])
    first = first if len(first) <= SNIPPET_CHARS else first[: SNIPPET_CHARS - 1] + "…"
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


def skills_table(hook: SkillPart | None, runtime: Runtime, *, width: int = 100) -> list[str]:
    """/skills' lines: `skills.report`'s first line and rows, with what this session invoked and
    each description (the catalog read from disk when the session has none: only its problems)."""
    from claude_mini import paths
    from claude_mini.skills import report
    from claude_mini.skills.catalog import Catalog, build_listing, load_catalog

    if hook is not None:
        catalog = hook.catalog
    else:  # nothing was found when the session started: nothing is a command, only problems to show
        catalog = Catalog(
            [], load_catalog(runtime.config.project_root, paths.home_dir(), trusted=runtime.config.trusted).problems
        )
    problems = [*catalog.problems, *report.builtin_clashes(catalog, builtin_names())]
    if not catalog.entries and not problems:
        return [report.none_line(paths.home_dir())]
    listing = hook.listing if hook is not None else build_listing([], 0)
    invoked = hook.invoked if hook is not None else {}
    cells = [
        (r.name, r.kind, r.source, r.state, _invoked(invoked.get(r.name)), r.description) for r in report.rows(catalog)
    ]
    lines = [report.listing_line(catalog, listing) + ":"]
    lines += [_cut(line, width) for line in report.table(cells)]
    shortened = report.shortened_line(listing)
    lines += [shortened] if shortened else []
    lines += [f"⚠ {problem}" for problem in problems]
    return lines


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
