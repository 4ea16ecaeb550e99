"""Layer 2's index, MEMORY.md: one line per memory, `- [Title](file.md) — short hook`.

The index is what the model sees of the memories in every prompt, so its
size is capped (DESIGN.md section 5): the first 200 lines, then the first
25,000 bytes cut at a newline, with a WARNING line naming the limit hit.
Lines that are not entries (headings, notes) are kept as written; every
rewrite holds the index's cross-process lock and is atomic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from claude_mini.base.fileutil import atomic_write, locked
from claude_mini.base.safe_read import Unreadable, read_file
from claude_mini.base.text import one_line
from claude_mini.memory.store.errors import InvalidMemory, MemoryStoreError
from claude_mini.memory.store.folder import not_a_file

# What git leaves in a file it could not merge: `<<<<<<< ours`, `|||||||`, `=======`, `>>>>>>> theirs`.
CONFLICT_MARKER = re.compile(r"^(?:<{7}|\|{7}|={7}|>{7})(?:\s|$)")

INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25_000
INDEX_READ_MAX_BYTES = 2_000_000  # read cap: 80x what the prompt shows, far below what hurts
INDEX_HOOK_MAX_CHARS = 120  # keeps one index line near 150 chars, so 200 lines fit the byte cap

_INDEX_ENTRY = re.compile(
    r"^\s*[-*+]\s+\[(?P<title>(?:\\.|[^\]\\])*)\]"
    r"\((?P<target><[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\)"
    r"\s*(?:[—–:-]+\s*)?(?P<hook>.*)$"
)
_PLAIN_TARGET = re.compile(r"[^\s()<>]+")


@dataclass
class IndexEntry:
    """One `- [Title](file.md) — hook` line of MEMORY.md."""

    line_no: int  # 1-based
    title: str
    filename: str
    hook: str
    line: str


# --- lines ---------------------------------------------------------------------------
def normalise_target(target: str) -> str:
    """An index link target as a memory filename (`./a%20b.md` -> `a b.md`)."""
    target = target.strip().removeprefix("<").removesuffix(">")
    target = unquote(target.split("#", 1)[0])
    while target.startswith("./"):
        target = target[2:]
    return target


def parse_index(text: str) -> list[IndexEntry]:
    """The memory entries of MEMORY.md (other lines, such as headings, are not entries)."""
    entries = []
    for no, line in enumerate(text.splitlines(), start=1):
        m = _INDEX_ENTRY.match(line)
        if m:
            title = re.sub(r"\\(.)", r"\1", m.group("title"))
            entries.append(IndexEntry(no, title, normalise_target(m.group("target")), m.group("hook").strip(), line))
    return entries


def index_line(filename: str, title: str, hook: str) -> str:
    """One MEMORY.md line: `- [Title](file.md) — hook`, the hook shortened to a sentence."""
    title = one_line(title).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    hook = one_line(hook)
    if len(hook) > INDEX_HOOK_MAX_CHARS:
        hook = hook[: INDEX_HOOK_MAX_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:.") + "…"
    return f"- [{title}]({filename}) — {hook}" if hook else f"- [{title}]({filename})"


def retarget_index_line(line: str, filename: str) -> str:
    """An index line with its link pointing at `filename`, title and hook unchanged."""
    m = _INDEX_ENTRY.match(line)
    if m is None:
        raise InvalidMemory(f"not an index line: {line!r}")
    target = filename if _PLAIN_TARGET.fullmatch(filename) else f"<{filename}>"
    start, end = m.span("target")
    return line[:start] + target + line[end:]


def _checked_index_line(filename: str, line: str) -> str:
    """`line` on one line, refused unless it is an index entry pointing at `filename`."""
    line = one_line(line)
    entries = parse_index(line)
    if not entries or entries[0].filename != normalise_target(filename):
        raise InvalidMemory(f"not an index line for {filename}: {line!r} (expected '- [Title]({filename}) — hook')")
    return line


def sorted_entries(lines: list[str]) -> list[str]:
    """`lines` with the entries sorted by filename in the places entries held; other lines stay.

    The team tier's index is kept this way (memory/team/): each memory is one line at a place
    its filename decides, so two branches that each add a memory change different places of
    the file and git merges them without a conflict.
    """
    found = [(no, m) for no, line in enumerate(lines) if (m := _INDEX_ENTRY.match(line))]
    keyed = sorted((normalise_target(m.group("target")), lines[no]) for no, m in found)
    out = list(lines)
    for (no, _), (_, line) in zip(found, keyed, strict=True):
        out[no] = line
    return out


def _apply_index_changes(text: str, adds: dict[str, str], removes: set[str], sort: bool = False) -> str:
    """MEMORY.md with entries replaced in place, removed, or appended (`sort`: entries then put
    in filename order); other lines kept."""
    out: list[str] = []
    seen: set[str] = set()
    for line in text.splitlines():
        m = _INDEX_ENTRY.match(line)
        target = normalise_target(m.group("target")) if m else None
        if target is None:
            out.append(line)
        elif target in removes or (target in adds and target in seen):
            continue  # removed, or a later duplicate of an entry being rewritten
        elif target in adds:
            out.append(adds[target])
            seen.add(target)
        else:
            out.append(line)
    out.extend(line for target, line in adds.items() if target not in seen)
    if sort:
        out = sorted_entries(out)
    return "\n".join(out) + "\n" if out else ""


# --- the file ------------------------------------------------------------------------
class MemoryIndex:
    """MEMORY.md of one memory folder: read it, or change entries by filename under its lock."""

    def __init__(self, path: Path, warn: Callable[[str], None] | None = None, *, sort: bool = False) -> None:
        self.path = path
        self.warn = warn or (lambda message: None)
        self.sort = sort  # entries kept in filename order (the team tier: merges cleanly)

    def text(self) -> str:
        """MEMORY.md as text ('' if missing; undecodable bytes replaced).

        One that is not a regular file, or cannot be read, counts as missing, with a warning.
        It goes through safe_read: a link out of its folder (a committed MEMORY.md ->
        /proc/self/environ, or -> ~/.ssh/...) is refused, and at most INDEX_READ_MAX_BYTES are read.
        """
        problem = not_a_file(self.path)
        if problem:
            self.warn(
                f"{self.path} is {problem}, not a file, so it was taken as empty (no memory "
                "index in the prompt); `claude-mini memory doctor --fix` moves it aside."
            )
            return ""
        try:
            data = self._read(cut=True)
        except (FileNotFoundError, NotADirectoryError):
            return ""
        except Unreadable as e:
            self.warn(
                f"{self.path} was not read ({e}), so it was taken as empty (no memory index "
                "in the prompt); replace it with a regular file inside the memory folder."
            )
            return ""
        return data[:INDEX_READ_MAX_BYTES].decode("utf-8", errors="replace")

    def _read(self, cut: bool) -> bytes:
        """MEMORY.md's bytes through the shared reader; it must resolve inside its own folder."""
        return read_file(self.path, INDEX_READ_MAX_BYTES, cut=cut, inside=self.path.parent)

    def entries(self) -> list[IndexEntry]:
        """The memory lines of MEMORY.md."""
        return parse_index(self.text())

    def update(self, add_or_replace: dict[str, str] | None = None, remove: Iterable[str] = ()) -> bool:
        """Add/replace/remove MEMORY.md lines by filename under the lock; True if it changed."""
        adds = {normalise_target(f): _checked_index_line(f, line) for f, line in (add_or_replace or {}).items()}
        removes = {normalise_target(f) for f in remove}
        if not adds and not (removes and self.path.exists()):
            return False
        with locked(self.path):
            old = self._text_strict()
            new = _apply_index_changes(old, adds, removes, self.sort)
            if new == old:
                return False
            atomic_write(self.path, new)
            return True

    def _text_strict(self) -> str:
        # Rewriting an undecodable index would silently replace the user's bytes.
        problem = not_a_file(self.path)
        if problem:
            raise MemoryStoreError(
                f"{self.path} is {problem}, not a file, so the index was not changed; "
                "run `claude-mini memory doctor --fix` to move it aside, then try again"
            )
        try:
            return self._read(cut=False).decode("utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return ""
        except Unreadable as e:  # rewriting it would copy what it links to into the folder
            raise MemoryStoreError(
                f"{self.path} was not read ({e}), so the index was not changed; "
                "replace it with a regular file, then try again"
            ) from e
        except UnicodeDecodeError as e:
            raise MemoryStoreError(
                f"{self.path} is not valid UTF-8 (byte {e.start}); it was left unchanged. "
                "Fix or re-save it as UTF-8, then try again"
            ) from e


# --- the prompt's view ---------------------------------------------------------------
def render_index_for_prompt(
    text: str, drop_order: Callable[[], Sequence[str]] | None = None, *, label: str = "MEMORY.md"
) -> tuple[str, str | None]:
    """MEMORY.md as injected: first 200 lines, then first 25,000 bytes cut at a newline.

    Returns (text for the prompt, warning). When a limit was hit the warning
    line is already appended to the text; it is also returned on its own so
    the UI can tell the user once.

    With `drop_order` (called only when a limit is hit: filenames, the first to leave first),
    entries are left out in that order until the rest fits, other lines kept in place, so what
    goes is what that order ranks lowest (the oldest and least-used) rather than the newest
    lines, which are the last ones; a cut by position only finishes what it could not do.
    """
    lines = text.splitlines()
    total_lines, total_bytes = len(lines), len(text.encode("utf-8"))
    if total_lines <= INDEX_MAX_LINES and total_bytes <= INDEX_MAX_BYTES:
        return text.rstrip("\n"), None
    kept = _drop_entries(lines, drop_order()) if drop_order is not None else lines
    cut = "\n".join(kept[:INDEX_MAX_LINES])
    over_lines = total_lines > INDEX_MAX_LINES
    data = cut.encode("utf-8")
    over_bytes = len(data) > INDEX_MAX_BYTES or (kept is not lines and total_bytes > INDEX_MAX_BYTES)
    if len(data) > INDEX_MAX_BYTES:
        head = data[:INDEX_MAX_BYTES]
        nl = head.rfind(b"\n")
        cut = (head[:nl] if nl > 0 else head).decode("utf-8", errors="ignore")
    if not (over_lines or over_bytes):
        return text.rstrip("\n"), None
    left_out = total_lines - len(cut.splitlines())
    ranked = cut != "\n".join(lines[: len(cut.splitlines())])  # not simply the first lines
    warning = _index_warning(total_lines, total_bytes, cut, over_lines, over_bytes, left_out if ranked else None, label)
    return f"{cut.rstrip(chr(10))}\n\n{warning}", warning


def _drop_entries(lines: list[str], order: Sequence[str]) -> list[str]:
    """`lines` without the entries of `order` (first named, first dropped) that must go for
    the rest to fit both limits; lines that are not entries, and entries not named, stay."""
    where: dict[str, list[int]] = {}
    for no, line in enumerate(lines):
        m = _INDEX_ENTRY.match(line)
        if m:
            where.setdefault(normalise_target(m.group("target")), []).append(no)
    sizes = [len(line.encode("utf-8")) + 1 for line in lines]
    count, size, dropped = len(lines), sum(sizes) - 1, set()
    for filename in order:
        for no in where.get(filename, ()):
            if count <= INDEX_MAX_LINES and size <= INDEX_MAX_BYTES:
                return [line for no, line in enumerate(lines) if no not in dropped]
            dropped.add(no)
            count, size = count - 1, size - sizes[no]
    return [line for no, line in enumerate(lines) if no not in dropped]


def _index_warning(
    lines: int,
    size: int,
    cut: str,
    over_lines: bool,
    over_bytes: bool,
    left_out: int | None = None,
    label: str = "MEMORY.md",
) -> str:
    kept_lines = len(cut.splitlines())
    if over_lines and over_bytes:
        limits = f"{lines} lines and {size:,} bytes (limits: {INDEX_MAX_LINES} lines, {INDEX_MAX_BYTES:,} bytes)"
        loaded = f"Only the first {kept_lines} lines were loaded"
    elif over_lines:
        limits = f"{lines} lines (limit: {INDEX_MAX_LINES})"
        loaded = f"Only the first {INDEX_MAX_LINES} were loaded"
    else:
        limits = f"{size:,} bytes (limit: {INDEX_MAX_BYTES:,})"
        loaded = f"Only the first {kept_lines} lines ({len(cut.encode()):,} bytes) were loaded"
    if left_out is not None:  # entries were left out by rank, not the last lines
        loaded = (
            f"{kept_lines} lines were loaded: the {left_out} oldest and least-used "
            "entries were left out (`claude-mini memory gc` archives them)"
        )
    return (
        f"> WARNING: {label} is {limits}. {loaded}; keep index lines short and move "
        "detail into topic files (claude-mini memory doctor)."
    )
