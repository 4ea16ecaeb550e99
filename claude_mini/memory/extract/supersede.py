"""Corrections supersede: a memory that replaces another says so, and the old one steps aside.

    new.md   frontmatter `supersedes: old.md`      written by extraction or `memory add`
    old.md   frontmatter `superseded_by: new.md`   stamped here; nothing else of the file changes

While its successor is live (a memory file in the folder, not archived), a superseded memory
is not offered by recall (`superseded_names`), has no MEMORY.md line, and is the
first thing gc archives; the successor is kept by gc while the old one is live, since
archiving the correction would bring the corrected fact back (`record_links`, used by
forget.keep_scores). When the successor
is gone (forgotten, archived), the old memory is offered again. Links that cannot be right (a
missing file, a memory superseding itself, a cycle) are refused with one line and change
nothing; a cycle already on disk hides neither of its memories.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.base.fileutil import atomic_write, locked, os_error_text
from claude_mini.base.frontmatter import dump_frontmatter
from claude_mini.base.text import one_line
from claude_mini.memory.store.errors import AmbiguousMemoryName, MemoryStoreError
from claude_mini.memory.store.folder import LIST_READ_BYTES, read_text_head
from claude_mini.memory.store.links import SUPERSEDED_BY, as_filename, predecessors_of, record_links, successor_of
from claude_mini.memory.store.topic import parse_memory_text

if TYPE_CHECKING:
    from claude_mini.memory.store import MemoryStore

# `memory add` guesses that a new memory replaces an old one when the old one has the same
# name, or when the new text has a correction cue and repeats most of the old one's words:
# at least OVERLAP_MIN of the smaller set of name+description terms, and OVERLAP_TERMS of them.
OVERLAP_MIN = 0.6
OVERLAP_TERMS = 3
CORRECTION_CUE = re.compile(
    r"\b(no longer|not any ?more|instead|now|moved to|moved from|replaced|replaces|renamed|"
    r"switched to|changed to|deprecated|from now on)\b",
    re.IGNORECASE,
)
_CUE_WORDS = "no longer anymore instead now moved replaced replaces renamed switched changed deprecated"


# --- marking the old file ------------------------------------------------------------
def with_frontmatter_line(text: str, key: str, value: str) -> str | None:
    """`text` with `key: value` set in its frontmatter block, every other byte unchanged.

    An existing `key:` line is replaced, else the line goes just before the closing `---`.
    None when the file has no closed frontmatter block to put it in.
    """
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom) :].splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return None
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip("\r\n").rstrip() in ("---", "...")), None)
    if end is None:
        return None
    newline = "\r\n" if lines[0].endswith("\r\n") else "\n"
    line = dump_frontmatter({key: value}).rstrip("\n") + newline
    pattern = re.compile(rf"{re.escape(key)}\s*:")
    at = next((i for i in range(1, end) if pattern.match(lines[i])), None)
    if at is None:
        lines.insert(end, line)
    else:
        lines[at] = line
    return bom + "".join(lines)


def mark_superseded(path: Path, successor: str) -> None:
    """Stamp `superseded_by: successor` into a memory file, atomically; its time is kept.

    The file's modification time says when the memory was written (its age in recall, the
    staleness check), so marking it does not make it look new. Raises MemoryStoreError when
    it has no frontmatter block to mark.
    """
    st = path.stat()
    text = path.read_bytes().decode("utf-8")
    new = with_frontmatter_line(text, SUPERSEDED_BY, successor)
    if new is None:
        raise MemoryStoreError(
            f"{path.name} has no frontmatter block to mark (`claude-mini memory doctor --fix` repairs it)"
        )
    if new == text:
        return
    atomic_write(path, new)
    if len(new.encode("utf-8")) != st.st_size:  # same size and time would hide it from caches
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


# --- checking and applying a link ----------------------------------------------------
@dataclass(frozen=True)
class LinkOutcome:
    """What became of one `supersedes` link: `marked` is the old file when it was marked."""

    message: str
    marked: str | None = None


def link_problem(store: MemoryStore, new: str, old: str) -> tuple[str | None, str | None]:
    """(old's filename, None) when `new` may supersede `old`, else (None, why not)."""
    filename = _resolved(store, old)
    if filename is None:
        try:
            store.resolve(old)
        except AmbiguousMemoryName as exc:
            return None, str(exc)
        except MemoryStoreError:
            pass
        return None, f"there is no memory {old!r}"
    if filename == new:
        return None, f"{new} cannot supersede itself"
    successors: dict[str, str] = {}
    records = store.list()
    for r in records:  # a `supersedes` line not yet stamped on the old file counts too
        for earlier in predecessors_of(r.frontmatter):
            successors.setdefault(as_filename(earlier), r.filename)
    successors.update((r.filename, s) for r in records if (s := successor_of(r.frontmatter)))
    if _reaches(successors, new, filename):
        return None, f"{filename} already (directly or not) replaces {new}, so that would be a cycle"
    return filename, None


def _reaches(successors: Mapping[str, str], start: str, target: str) -> bool:
    """Whether following `superseded_by` links from `start` arrives at `target`."""
    seen: set[str] = set()
    name = start
    while name and name not in seen:
        if name == target:
            return True
        seen.add(name)
        name = successors.get(name, "")
    return False


def apply_link(store: MemoryStore, new: str, old: str, why: str = "") -> LinkOutcome:
    """Mark `old` as superseded by `new` and drop its MEMORY.md line; never raises.

    `why` (how a guess found `old`) goes into the message, with how to undo a wrong guess.
    """
    filename, problem = link_problem(store, new, old)
    if problem is not None or filename is None:
        return LinkOutcome(
            f"{new} says it supersedes {old}, but {problem}; nothing was marked "
            f"(fix or remove the `supersedes:` line of {new})."
        )
    try:
        with locked(store.index_path):
            before = successor_of(_frontmatter(store.root / filename))
            mark_superseded(store.root / filename, new)
            store.update_index(remove=[filename])
    except (MemoryStoreError, OSError, UnicodeDecodeError) as exc:
        why = os_error_text(exc) if isinstance(exc, OSError) else str(exc)
        return LinkOutcome(
            f"{filename} could not be marked as superseded by {new} ({why}); both "
            f"are kept and recall may offer both: add `superseded_by: {new}` to "
            f"{filename} by hand."
        )
    was = f" (instead of {before})" if before and before != new else ""
    reason = f" ({why})" if why else ""
    undo = (
        (" Not a correction? Delete its superseded_by line, then run `claude-mini memory doctor --fix`.") if why else ""
    )
    return LinkOutcome(
        f"Marked {filename} as superseded by {new}{was}{reason}: recall no "
        f"longer offers it and it left MEMORY.md.{undo}",
        filename,
    )


def apply_links(store: MemoryStore, new: str) -> list[LinkOutcome]:
    """Mark every memory the `supersedes` of `new` names (after extraction saved `new`)."""
    olds = predecessors_of(_frontmatter(store.root / new))
    out = []
    for old in olds:
        # Already marked for `new` (the fork did it, or a second run): nothing to say.
        done = _resolved(store, old)
        if done and successor_of(_frontmatter(store.root / done)) == new and not _indexed(store, done):
            continue
        out.append(apply_link(store, new, old))
    return out


def _resolved(store: MemoryStore, name: str) -> str | None:
    """The filename of the live memory `name` means (a filename or a name), else None; never
    a path outside the memory folder."""
    try:
        return store.resolve(name).relative_to(store.root).as_posix()
    except (MemoryStoreError, ValueError):
        return None


def _frontmatter(path: Path) -> dict[str, Any]:
    text, _ = read_text_head(path, LIST_READ_BYTES) if path.is_file() else (None, None)
    return parse_memory_text(text).frontmatter if text else {}


def _indexed(store: MemoryStore, filename: str) -> bool:
    return any(e.filename == filename for e in store.index_entries())


# --- guessing the replaced memory (memory add) ---------------------------------------
@dataclass(frozen=True)
class Guess:
    """The memory a new one most likely replaces, and why (for the one line the user sees)."""

    filename: str
    why: str


def guess_replaced(store: MemoryStore, name: str, description: str) -> tuple[Guess | None, str]:
    """(the memory `memory add` should mark as superseded, '') or (None, a tip when unsure).

    Same name: that memory. Otherwise the new text must carry a correction cue ("no longer",
    "instead", "now", "moved to", "replaced"...) and share at least OVERLAP_MIN of the
    smaller set of name+description terms with exactly one current memory.
    """
    from claude_mini.memory.recall.lexical import tokenize

    records = store.list()
    gone, _ = record_links(records)
    live = [r for r in records if r.filename not in gone]
    same = [r for r in live if one_line(r.name).casefold() == one_line(name).casefold()]
    if len(same) == 1:
        return Guess(same[0].filename, "it has the same name"), ""
    cue = CORRECTION_CUE.search(f"{name} {description}")
    if cue is None:
        return None, ""
    cue_terms = set(tokenize(_CUE_WORDS))
    new_terms = set(tokenize(f"{name} {description}")) - cue_terms
    scored = []
    for r in live:
        old_terms = set(tokenize(f"{r.name} {r.description}")) - cue_terms
        shared = len(new_terms & old_terms)
        smaller = min(len(new_terms), len(old_terms)) or 1
        if shared >= OVERLAP_TERMS and shared / smaller >= OVERLAP_MIN:
            scored.append((shared / smaller, r.filename))
    scored.sort(reverse=True)
    if not scored:
        return None, ""
    if len(scored) > 1 and scored[0][0] - scored[1][0] < 0.1:
        files = ", ".join(f for _, f in scored[:3])
        return None, (
            f"Tip: this looks like a correction of one of {files}; `--supersedes FILE` marks the one it replaces."
        )
    share, filename = scored[0]
    return Guess(filename, f"it repeats {share:.0%} of its words and says {cue.group(0)!r}"), ""
