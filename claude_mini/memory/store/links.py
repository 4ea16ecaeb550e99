"""Who is current: the `supersedes` / `superseded_by` links between memories, read (Layer 2).

    new.md   frontmatter `supersedes: old.md`      written by extraction or `memory add`
    old.md   frontmatter `superseded_by: new.md`   stamped by extract/supersede.py

While its successor is live (a memory file in the folder, not archived), a superseded memory
is not offered by recall (`superseded_names`), has no MEMORY.md line, and is the first thing
gc archives; the successor is kept by gc while the old one is live (`record_links`, used by
the keep-scores). A chain that loops hides nobody in the loop.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from claude_mini.base.text import one_line
from claude_mini.memory.store.folder import ARCHIVE_DIR
from claude_mini.memory.store.index import normalise_target

if TYPE_CHECKING:
    from claude_mini.memory.store.topic import MemoryRecord


SUPERSEDES = "supersedes"
SUPERSEDED_BY = "superseded_by"


class Linked(Protocol):
    """A memory as recall indexes it: its `superseded_by` filename ('' for none)."""

    @property
    def superseded_by(self) -> str: ...


def link_names(value: Any) -> list[str]:
    """The memories a `supersedes`/`superseded_by` value names (a string or a list), as
    written: `old.md`, `./old.md`, or a name that `MemoryStore.resolve` understands."""
    items = value if isinstance(value, list) else [value]
    return [
        normalise_target(one_line(str(item)))
        for item in items
        if isinstance(item, str | int | float) and str(item).strip()
    ]


def as_filename(name: str) -> str:
    """`old` -> `old.md`: how a link is compared with filenames."""
    return name if name.lower().endswith(".md") else f"{name}.md"


def successor_of(frontmatter: Mapping[str, Any]) -> str:
    """The `superseded_by` filename of a memory ('' when none)."""
    names = link_names(frontmatter.get(SUPERSEDED_BY))
    return as_filename(names[0]) if names else ""


def predecessors_of(frontmatter: Mapping[str, Any]) -> list[str]:
    """The memories a memory's `supersedes` names, as written."""
    return link_names(frontmatter.get(SUPERSEDES))


def hidden(successors: Mapping[str, str], live: Collection[str]) -> set[str]:
    """The names whose `superseded_by` chain reaches a live successor that is itself current.

    `successors` maps a name to its `superseded_by` ('' for none); `live` are the memory files
    in the folder. A chain that loops hides nobody in the loop: a hand-edited cycle must not
    make both memories disappear.
    """
    out = set()
    for name in successors:
        head = _head(name, successors, live)
        if head is not None and head != name:
            out.add(name)
    return out


def _head(name: str, successors: Mapping[str, str], live: Collection[str]) -> str | None:
    """The current end of `name`'s chain, or None for a cycle."""
    seen, current = {name}, name
    while True:
        nxt = successors.get(current, "")
        if not nxt or nxt == current or nxt not in live:
            return current
        if nxt in seen:
            return None
        seen.add(nxt)
        current = nxt


def superseded_names(live: Mapping[str, Linked], archived: Mapping[str, Linked] | None = None) -> frozenset[str]:
    """The candidates recall must neither offer nor select, for its `exclude`: live files
    superseded by a live one, and the archived ones (named `archive/<file>`) whose successor
    is live. `live` is every live candidate by filename (the scanner's index), so a successor
    counts even when the query would not shortlist it."""
    successors = {name: doc.superseded_by for name, doc in live.items()}
    successors.update((f"{ARCHIVE_DIR}/{f}", d.superseded_by) for f, d in (archived or {}).items())
    return frozenset(hidden(successors, live))


def record_links(records: Iterable[MemoryRecord]) -> tuple[set[str], set[str]]:
    """(superseded, corrections) among live records: those hidden by a live successor, and
    the successors that hide a live memory (gc keeps them while the old one is live)."""
    records = list(records)
    live = {r.filename for r in records}
    successors = {r.filename: successor_of(r.frontmatter) for r in records}
    gone = hidden(successors, live)
    corrections = {successors[name] for name in gone}
    return gone, corrections
