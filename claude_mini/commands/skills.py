"""/skills' table: every custom command and skill with its kind, source and state, what this session
invoked, the catalog's problems and the listing's budget (`claude-mini context` shows the same
catalog through commands/context.py); what typing a command or skill added mid-conversation says."""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mini.base import paths
from claude_mini.base.text import clip
from claude_mini.command_table import BUILTIN, builtin_table

if TYPE_CHECKING:
    from claude_mini.runtime import Runtime
    from claude_mini.skills.lifecycle import SkillPart


def skills_table(hook: SkillPart | None, runtime: Runtime, *, width: int = 100) -> list[str]:
    """/skills' lines: `skills.report`'s first line and rows, with what this session invoked and
    each description (the catalog read from disk when the session has none: only its problems)."""
    from claude_mini.skills import report  # startup: skills load after the first paint
    from claude_mini.skills.catalog import (  # startup: skills load after the first paint
        Catalog,
        build_listing,
        load_catalog,
    )

    if hook is not None:
        catalog = hook.catalog
    else:  # nothing was found when the session started: nothing is a command, only problems to show
        catalog = Catalog(
            [],
            load_catalog(
                runtime.config.project_root,
                paths.home_dir(),
                trusted=runtime.config.trusted,
                claude_code=runtime.config.claude_code_home,
            ).problems,
        )
    problems = [*catalog.problems, *report.builtin_clashes(catalog, builtin_table().names_of(BUILTIN))]
    if not catalog.entries and not problems:
        return [report.none_line(paths.home_dir())]
    listing = hook.listing if hook is not None else build_listing([], 0)
    invoked = hook.invoked if hook is not None else {}
    cells = [
        (r.name, r.kind, r.source, r.state, _invoked(invoked.get(r.name)), r.description) for r in report.rows(catalog)
    ]
    lines = [report.listing_line(catalog, listing) + ":"]
    lines += [clip(line, width, strip=True) for line in report.table(cells)]
    shortened = report.shortened_line(listing)
    lines += [shortened] if shortened else []
    lines += [f"⚠ {problem}" for problem in problems]
    return lines


def _invoked(tokens: int | None) -> str:
    return f"invoked ({tokens:,} tokens)" if tokens is not None else ""


def late_hint(runtime: Runtime, name: str) -> str | None:
    """What typing `/name` says when it is no command yet but a command or skill on disk: one added
    after the conversation started (the catalog is the conversation's, read again at /clear)."""
    from claude_mini.skills.catalog import load_catalog  # startup: skills load after the first paint

    hook = runtime.skills
    if hook is not None and hook.catalog.find(name) is not None:
        return None
    if (
        load_catalog(
            runtime.config.project_root,
            paths.home_dir(),
            trusted=runtime.config.trusted,
            claude_code=runtime.config.claude_code_home,
        ).find(name)
        is None
    ):
        return None
    when = "at the next /clear" if hook is not None else "when claude-mini starts again"
    return f"/{name} was added after this conversation started; it becomes a command {when}."
