"""What the extraction fork may write and what it wrote: its policy, the write journal that rolls
a failed run back, provenance stamped into each saved memory, and the files the disk refused."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.agent.fork import WRITING_TOOLS, ForkResult, ForkSnapshot
from claude_mini.base.fileutil import atomic_write, os_error_text
from claude_mini.base.notices import NoticeChannel
from claude_mini.base.text import one_line
from claude_mini.llm.messages import Message, ToolResultBlock
from claude_mini.memory.extract.supersede import apply_links
from claude_mini.memory.secrets.guard import lands_in
from claude_mini.memory.store import (
    ARCHIVE_DIR,
    INDEX_FILENAME,
    LOGS_DIR,
    MemoryStore,
    MemoryStoreError,
    dump_frontmatter,
    index_line,
    iso_utc,
    parse_memory_text,
)
from claude_mini.memory.team import TeamTier
from claude_mini.memory.team.moves import drop_team_flag, propose, proposed_for_team
from claude_mini.permissions import Allow, Decision, ExtractionPolicy, Guard, PolicyChain

if TYPE_CHECKING:
    from claude_mini.session import Session

log = logging.getLogger(__name__)

NOTICE_DESCRIPTION_CHARS = 100


@dataclass
class SavedMemory:
    """A memory file an extraction created or updated; `line` is what the user is shown."""

    filename: str
    description: str
    path: Path
    created: bool

    @property
    def line(self) -> str:
        """`Saved memory: feedback_testing.md — always run pytest with -x`."""
        desc = self.description
        if len(desc) > NOTICE_DESCRIPTION_CHARS:
            desc = desc[: NOTICE_DESCRIPTION_CHARS - 1].rstrip() + "…"
        return f"Saved memory: {self.filename} — {desc}" if desc else f"Saved memory: {self.filename}"


def memory_fork_policy(memory_dir: Path, session_policy: PolicyChain, cwd: Path) -> PolicyChain:
    """The tool policy of extraction: ExtractionPolicy bound by the session's deny and ask rules,
    under the session chain's fork guards (the secret guard). Relative paths resolve against
    the fork's `cwd`."""
    return session_policy.for_fork(ExtractionPolicy(memory_dir, base=session_policy, cwd=cwd), cwd)


def main_agent_wrote_memory(messages: list[Message], memory_dir: Path, cwd: Path) -> bool:
    """Whether a successful Write/Edit of the main agent in `messages` targets the memory folder."""
    ids = {
        block.id
        for m in messages
        if m.role == "assistant"
        for block in m.tool_uses
        if block.name in ("Write", "Edit") and lands_in(block.input.get("file_path"), memory_dir, cwd)
    }
    return any(
        isinstance(block, ToolResultBlock) and block.tool_use_id in ids and not block.is_error
        for m in messages
        if m.role == "user"
        for block in m.content
    )


def unsaved_writes(result: ForkResult, cwd: Path) -> list[str]:
    """`name (why)` of each file the fork's Write or Edit could not save because of the disk
    (full, read-only) and never changed. The fork's own mistakes (an old_string not found, a
    Write over an unread file) are its to retry, not a save failure: those go to the debug log."""
    written = {os.path.realpath(p) for p in result.written}
    failed: dict[str, str] = {}
    for run in result.tool_runs:
        path = run.call.input.get("file_path") if run.call.name in WRITING_TOOLS else None
        if (
            isinstance(path, str)
            and run.result.is_error
            and not run.denied
            and not run.result.metadata.get("disk_error")
        ):
            log.debug("extraction %s of %s failed: %s", run.call.name, path, run.result.content)
        elif isinstance(path, str) and run.result.is_error and not run.denied:
            real = os.path.realpath(cwd / path)
            if real not in written:
                failed[real] = (run.result.content.strip().splitlines() or ["failed"])[0].rstrip(".")
    return [f"{Path(p).name} ({why})" for p, why in failed.items()]


class WriteJournal(Guard):
    """The fork's outermost guard: before an allowed Write/Edit runs, keeps its target's old bytes.

    `kept` maps each real path the fork was allowed to write to its bytes at
    that moment (None: it did not exist), so a failed run can be rolled back
    and a rewritten memory keeps its `created` time.
    """

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.kept: dict[str, bytes | None] = {}

    def after(self, tool_name: str, input: dict[str, Any], decision: Decision) -> Decision:
        """The decision unchanged; an allowed write is journalled first."""
        raw = input.get("file_path")
        if isinstance(decision, Allow) and tool_name in WRITING_TOOLS and isinstance(raw, str):
            self._keep(os.path.realpath(os.path.join(self.cwd, os.path.expanduser(raw))))
        return decision

    def _keep(self, real: str) -> None:
        if real in self.kept:
            return  # the first write of a run is the one to undo
        try:
            self.kept[real] = Path(real).read_bytes()
        except FileNotFoundError:
            self.kept[real] = None
        except OSError as exc:  # unreadable: the write will most likely fail too
            log.warning("cannot keep a copy of %s before the extraction writes it: %s", real, exc)

    def roll_back(self) -> None:
        """Put every journalled file back as it was (one that did not exist is removed)."""
        for real, old in self.kept.items():
            try:
                if old is None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(real)
                elif Path(real).read_bytes() != old:
                    atomic_write(Path(real), old)
            except OSError as exc:
                log.warning("could not roll back %s after a failed extraction: %s", real, exc)


def _stamp(value: Any) -> str | None:
    """A frontmatter time (YAML may have parsed it into a datetime) as `2026-11-30T12:00:00Z`."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        return aware.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value) if value else None


def created_stamp(data: bytes | None) -> str | None:
    """The `created` time in the frontmatter of a file's old bytes, if any."""
    if not data:
        return None
    return _stamp(parse_memory_text(data.decode("utf-8", "replace")).frontmatter.get("created"))


def stamp_provenance(path: Path, session_id: str, created: str | None, now: str) -> dict[str, Any] | None:
    """Add `source`, `created`, `updated` to a memory's frontmatter, atomically.

    Returns the new frontmatter, or None when the file has no usable frontmatter
    block (it is left as the fork wrote it; `memory doctor` reports it).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log.warning("extraction wrote %s but it cannot be read back: %s", path, exc)
        return None
    parsed = parse_memory_text(text)
    if parsed.problem_kind in ("missing", "unclosed", "invalid_yaml", "not_mapping"):
        log.warning("extraction wrote %s without valid frontmatter (%s)", path, parsed.problem)
        return None
    fm = dict(parsed.frontmatter)
    fm["source"] = session_id
    fm["created"] = created or _stamp(fm.get("created")) or now
    fm["updated"] = now
    atomic_write(path, f"---\n{dump_frontmatter(fm)}---\n\n{parsed.body}")
    return fm


class MemoryWrites:
    """What one successful run wrote, made into memories: provenance, index lines, the notice
    of each saved memory, then the `supersedes` links it declares and its team proposals."""

    def __init__(
        self,
        store: MemoryStore,
        notices: NoticeChannel,
        team: Callable[[], TeamTier | None],
    ) -> None:
        self.store = store
        self.notices = notices
        self.team = team

    def record(
        self, result: ForkResult, snapshot: ForkSnapshot, before: dict[str, bytes | None], session: Session, when: float
    ) -> list[SavedMemory]:
        """Stamp provenance and add index lines for what the fork wrote, tell the user, then
        apply its `supersedes` links and team proposals; the memories saved, in order."""
        if result.hit_turn_limit:
            session.record_system("memory_extraction_stopped", turns=result.turns)
        now = iso_utc(when)
        saved, unsaved = [], unsaved_writes(result, snapshot.cwd)
        for path in result.written:
            try:
                memory = self._stamp_and_index(path, snapshot.session_id, before, now)
            except Exception as exc:  # one bad file must not hide the others
                unsaved.append(f"the index line of {Path(path).name} ({exc})")
                continue
            if memory is not None:
                saved.append(memory)
        if unsaved:  # a full or read-only memory folder: the user must know what is missing
            self.notices.say(f"Memory extraction could not save {'; '.join(unsaved)}.", "warning")
        for memory in saved:
            session.record_system(
                "memory_saved",
                file=memory.filename,
                path=str(memory.path),
                description=memory.description,
                created=memory.created,
            )
            self.notices.say(memory.line, "saved")
        self._mark_superseded(saved, session)
        self._propose_for_team(saved, session)
        return saved

    def _mark_superseded(self, saved: list[SavedMemory], session: Session) -> None:
        """Stamp `superseded_by` on the memories the saved ones say they supersede (one line
        each on the notice channel; a link that cannot be right is refused and said)."""
        for memory in saved:
            for outcome in apply_links(self.store, memory.filename):
                if outcome.marked:
                    session.record_system("memory_superseded", file=outcome.marked, by=memory.filename)
                self.notices.say(outcome.message, "saved" if outcome.marked else "warning")

    def _propose_for_team(self, saved: list[SavedMemory], session: Session) -> None:
        """The saved memories marked `team: true` go to the team tier, or stay private with a
        reason (memory/team/moves.py); one line each on the notice channel."""
        tier = self.team()
        for memory in saved:
            try:
                record = self.store.read(memory.filename)
                if not proposed_for_team(record):
                    continue
                if tier is None:
                    drop_team_flag(record.path)  # no team tier here: nothing to propose to
                    continue
                line, proposed = propose(tier, self.store, memory.filename)
            except (MemoryStoreError, OSError) as exc:
                line, proposed = (
                    (
                        f"Could not propose {memory.filename} for the team memory "
                        f"({os_error_text(exc)}); it stays private"
                    ),
                    False,
                )
            session.record_system("memory_team_proposal", file=memory.filename, outcome=line)
            self.notices.say(line, "saved" if proposed else "warning")

    def _stamp_and_index(
        self, path: Path, session_id: str, before: dict[str, bytes | None], now: str
    ) -> SavedMemory | None:
        filename = self._memory_filename(path)
        if filename is None:
            return None
        real = os.path.realpath(path)
        fm = stamp_provenance(Path(real), session_id, created_stamp(before.get(real)), now)
        if fm is None:
            return None
        name, description = one_line(fm.get("name") or Path(filename).stem), one_line(fm.get("description") or "")
        if filename not in {e.filename for e in self.store.index_entries()}:
            self.store.update_index(add_or_replace={filename: index_line(filename, name, description)})
        return SavedMemory(filename, description, Path(real), created=before.get(real) is None)

    def _memory_filename(self, path: Path) -> str | None:
        """`path` relative to the memory folder when it is a topic file, else None."""
        real, root = os.path.realpath(path), os.path.realpath(self.store.root)
        if not real.startswith(root + os.sep) or not real.endswith(".md"):
            return None
        rel = Path(os.path.relpath(real, root))
        if rel.as_posix() == INDEX_FILENAME or rel.parts[0] in (ARCHIVE_DIR, LOGS_DIR):
            return None
        return rel.as_posix()
