"""One report of the catalog: what /skills, `claude-mini context` (text and --json) and /context
say about the commands and skills, in the same words and with the same token figure.

    rows(catalog)                     per entry: name, kind, source, state, path, description
    listing_line(catalog, listing)    the first line: how many, how many listed, what the model pays
    tool_tokens(listing)              the one token figure: the Skill tool's whole description
    shortened_line(listing)           the names listed without their description, or None
    builtin_clashes(catalog, names)   one warning per entry that one of claude-mini's commands hides
    catalog_json(catalog, listing, builtin_names)   the same for `claude-mini context --json`

The figure is the whole Skill tool description (the guide and the listing), not the listing's
text alone: that is what every request carries. Pure: no terminal, no slash-command registry
(the names of claude-mini's own commands are given).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from claude_mini.base.text import estimate_tokens
from claude_mini.skills.catalog import Catalog, Listing, PromptCommand
from claude_mini.skills.tool import describe

State = Literal["listed", "you-only", "model-only"]


@dataclass(frozen=True)
class EntryRow:
    """One entry as every view shows it."""

    name: str
    kind: str
    source: str  # "project", "user", "project:frontend"
    state: State
    path: str  # as messages show it (relative to the project, `~/...`, or absolute)
    description: str  # on one line


def entry_state(entry: PromptCommand) -> State:
    """listed (the model sees it and you can type it), you-only (disable-model-invocation),
    model-only (user-invocable: false)."""
    if not entry.user_invocable:
        return "model-only"
    return "you-only" if entry.disable_model_invocation else "listed"


def rows(catalog: Catalog) -> list[EntryRow]:
    """The catalog's entries in listing order."""
    return [
        EntryRow(e.name, e.kind, e.source, entry_state(e), e.shown_path, " ".join(e.description.split()))
        for e in catalog.entries
    ]


def tool_tokens(listing: Listing) -> int:
    """Tokens of the Skill tool's description (0 when nothing is listed: there is no Skill tool)."""
    return estimate_tokens(describe(listing)) if listing.text else 0


def listing_line(catalog: Catalog, listing: Listing) -> str:
    """`Skills and custom commands: 4 (3 listed to the model in the Skill tool's description:
    168 tokens, the listing 241 of 8,000 characters)`."""
    listed = len(catalog.listed())
    if not listed:
        cost = "none listed to the model: no Skill tool"
    else:
        cost = (
            f"{listed} listed to the model in the Skill tool's description: {tool_tokens(listing):,} tokens, "
            f"the listing {listing.chars:,} of {listing.budget:,} characters"
        )
    return f"Skills and custom commands: {len(catalog.entries)} ({cost})"


def none_line(home: Path) -> str:
    """What the views say when there is no command or skill at all: where to put one."""
    return (
        "Skills and custom commands: none. Add .claude/skills/NAME/SKILL.md or .claude/commands/NAME.md "
        f"here, or {home}/skills/NAME/SKILL.md or {home}/commands/NAME.md for every project."
    )


def shortened_line(listing: Listing) -> str | None:
    """The entries the budget left without their description, or None."""
    if not listing.shortened:
        return None
    return "Listed by name only (over the listing's budget): " + ", ".join(listing.shortened)


def table(cells: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    """Rows of cells in aligned columns (trailing spaces dropped)."""
    if not cells:
        return []
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return [(indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))).rstrip() for row in cells]


def clash_warning(entry: PromptCommand) -> str:
    """One line: the built-in keeps the name; what the user can do."""
    model = "" if entry.disable_model_invocation else " The model can still load it with the Skill tool."
    return (
        f"/{entry.name} is claude-mini's own command: {entry.shown_path} is not run by /{entry.name}; rename it.{model}"
    )


def builtin_clashes(catalog: Catalog, builtin_names: Collection[str]) -> list[str]:
    """The warning for each entry whose name is one of claude-mini's own commands (`builtin_names`:
    their names and aliases, lower case)."""
    return [clash_warning(e) for e in catalog.entries if e.name.lower() in builtin_names]


def catalog_json(catalog: Catalog, listing: Listing, builtin_names: Collection[str]) -> dict[str, Any]:
    """`claude-mini context --json`'s `skills`: the rows (with the absolute path too), the listing's
    size and budget, the Skill tool's tokens, the problems (clashes with built-ins included)."""
    return {
        "entries": [
            {
                "name": row.name,
                "kind": row.kind,
                "source": row.source,
                "state": row.state,
                "path": str(entry.path),
                "shown_path": row.path,
                "description": row.description,
            }
            for entry, row in zip(catalog.entries, rows(catalog), strict=True)
        ],
        "listing_chars": listing.chars,
        "listing_budget": listing.budget,
        "tool_tokens": tool_tokens(listing),
        "shortened": list(listing.shortened),
        "problems": [*catalog.problems, *builtin_clashes(catalog, builtin_names)],
    }
