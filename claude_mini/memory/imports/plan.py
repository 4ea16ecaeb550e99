"""From what another assistant remembers to topic files in the private memory folder.

`plan_import` decides for each memory found: import it, skip it as a duplicate (of one that
exists, or of one found earlier in the same import: the doctor's TF-IDF duplicate detection,
memory/maintenance/forget.py, at a stricter threshold, plus identical bodies), or refuse it (the secret
guard's scan). `apply_import` writes the planned ones, each to a filename claimed with O_EXCL,
so nothing is ever overwritten; each carries `source: import:<tool>` and `imported_from`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from claude_mini.base.text import one_line
from claude_mini.memory.imports.sources import Foreign
from claude_mini.memory.maintenance.forget import live_documents, similar_pairs
from claude_mini.memory.recall.lexical import candidate_from_text
from claude_mini.memory.secrets.scan import describe_findings, find_secrets
from claude_mini.memory.store import (
    MEMORY_TYPES,
    MemoryStore,
    format_memory,
    iso_utc,
)

# Stricter than doctor's 0.3 ("worth a look"): an import skips only what clearly repeats.
IMPORT_DUPLICATE_THRESHOLD = 0.5
_NEW = "\0import:"  # how a found memory is named among the existing ones (no file has it)


@dataclass
class PlannedImport:
    """What becomes of one memory found: `action` is import, duplicate or refused."""

    memory: Foreign
    action: str
    stem: str = ""  # the filename stem it will get (import)
    why: str = ""  # the memory it repeats (duplicate), what it holds (refused)
    filename: str = ""  # the file written, once applied


def fields_of(memory: Foreign, tool: str, now: str) -> dict[str, Any]:
    """`MemoryStore.write` arguments for a found memory, with its provenance."""
    kind = memory.type if memory.type in MEMORY_TYPES else "project"
    extra = {
        "source": f"import:{tool}",
        "imported_from": memory.origin,
        "created": memory.created or now,
        "updated": now,
    }
    return {
        "name": one_line(memory.name) or "Imported memory",
        "description": one_line(memory.description) or one_line(memory.name),
        "type": kind,
        "body": memory.body,
        "extra_frontmatter": extra,
    }


def plan_import(store: MemoryStore, memories: list[Foreign], tool: str) -> list[PlannedImport]:
    """Each memory found, with what an import does with it (nothing is written here)."""
    now = iso_utc(store.clock())
    texts = [format_memory(**fields_of(m, tool, now)) for m in memories]
    existing = live_documents(store)
    docs = existing + [candidate_from_text(f"{_NEW}{i}", text, store.clock()) for i, text in enumerate(texts)]
    alike: dict[int, list[str]] = {}
    for a, b, _ in similar_pairs(docs, IMPORT_DUPLICATE_THRESHOLD):
        for new, other in ((a, b), (b, a)):
            if new.startswith(_NEW):
                alike.setdefault(int(new.removeprefix(_NEW)), []).append(other)
    bodies = {_key(d.head_text): d.filename for d in existing}
    planned: list[PlannedImport] = []
    for i, (memory, text) in enumerate(zip(memories, texts, strict=True)):
        planned.append(_decide(i, memory, text, alike.get(i, []), bodies, planned))
    return planned


def _decide(
    i: int, memory: Foreign, text: str, alike: list[str], bodies: dict[str, str], planned: list[PlannedImport]
) -> PlannedImport:
    found = find_secrets(text)
    if found:
        return PlannedImport(memory, "refused", why=f"it holds {describe_findings(found)}")
    same = bodies.get(_key(memory.body))
    kept = {f"{_NEW}{j}" for j, p in enumerate(planned) if p.action == "import"}
    twin = (
        same
        or next((o for o in alike if not o.startswith(_NEW)), None)
        or next((o for o in alike if o in kept and int(o.removeprefix(_NEW)) < i), None)
    )
    if twin is not None:
        what = (
            f"your {twin}"
            if not twin.startswith(_NEW)
            else f"{planned[int(twin.removeprefix(_NEW))].memory.origin}, imported too"
        )
        return PlannedImport(memory, "duplicate", why=what)
    bodies.setdefault(_key(memory.body), f"{_NEW}{i}")
    return PlannedImport(memory, "import", stem=memory.name)


def apply_import(store: MemoryStore, planned: list[PlannedImport], tool: str) -> None:
    """Write every planned import to a filename nobody has (claimed with O_EXCL)."""
    now = iso_utc(store.clock())
    for item in planned:
        if item.action != "import":
            continue
        filename = store.claim_filename(item.stem)
        try:
            store.write(filename, **fields_of(item.memory, tool, now))
        except BaseException:
            (store.root / filename).unlink(missing_ok=True)  # the empty claim, never a memory
            raise
        item.filename = filename


def _key(body: str) -> str:
    """A body compared as words: the same text with other spacing or case is the same."""
    return one_line(body).casefold()
