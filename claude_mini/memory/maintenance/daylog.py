"""Daily-log memory mode (setting `memory.mode: "log"`): append-only, timestamped bullets per day.

For long-running sessions, rewriting topic files after every turn is costly and
racy; in log mode memories are first jotted down and later distilled by /dream:

    logs/2026/11/2026-11-30.md

    # 2026-11-30

    - 14:03 The user prefers rebasing over merge commits on feature branches.
    - 14:20 Staging deploys need the VPN: `make deploy ENV=staging`.
    <!-- dreamed through byte 133 at 2026-12-01T03:00:00Z -->

Writers:
- `append_log` is the one safe writer: it holds the log's lock and appends
  with O_APPEND, so two processes never lose a line. Log-mode extraction
  should use it: the fork answers with bullet lines
  (`LOG_EXTRACTION_INSTRUCTIONS`), its caller passes them through
  `bullets_from_reply` to `append_log`; no file tools needed.
- Agents (the main agent, or a fork with tools) are held to appending by
  `LogModePolicy`, which wraps their tool policy: inside the memory folder the
  only permitted change is to extend today's log (a Write whose content starts
  with the file's current content, or an Edit that extends its last text).
  MEMORY.md and topic files are read-only to them in this mode. Such a
  read-then-write append can race with another writer; `append_log` cannot.

/dream reads what no marker has consumed yet (`unconsumed_logs`), distils it
into topic files and the index, and then appends a marker line recording the
byte offset it consumed through (`mark_consumed`), so lines appended while it
ran are read next time. Logs are never rewritten or deleted.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from claude_mini.base.clock import Clock
from claude_mini.base.fileutil import locked
from claude_mini.base.text import one_line, within
from claude_mini.memory.store import LOGS_DIR, iso_utc
from claude_mini.permissions import Deny, Guard

LOG_BUDGET_BYTES = 60 * 1024  # at most this much log text goes into one /dream
_MARKER = re.compile(r"^<!-- dreamed through byte (\d+) at [^>]*-->$", re.MULTILINE)
_BULLET = re.compile(r"^\s*[-*+]\s+(.*\S)\s*$")
LOG_EXTRACTION_INSTRUCTIONS = """\
Memory is in daily-log mode: do not write or edit any file. Answer with the facts worth \
remembering from the messages above, one per line, each line starting with "- " (no \
timestamps: they are added for you). Answer with nothing at all if nothing is worth keeping."""


# --- where logs live ---------------------------------------------------------------------
def log_path(memory_dir: Path, when: float, tz: tzinfo | None = None) -> Path:
    """The log file for the day of `when` (local time unless `tz`): logs/YYYY/MM/YYYY-MM-DD.md."""
    day = datetime.fromtimestamp(when, tz)
    return Path(memory_dir) / LOGS_DIR / f"{day:%Y}" / f"{day:%m}" / f"{day:%Y-%m-%d}.md"


def log_files(memory_dir: Path) -> list[Path]:
    """Every daily log, oldest day first."""
    root = Path(memory_dir) / LOGS_DIR
    if not root.is_dir():
        return []
    return sorted((p for p in root.rglob("*.md") if p.is_file() and not p.is_symlink()), key=lambda p: p.name)


# --- appending -----------------------------------------------------------------------
def format_entry(text: str, when: float, tz: tzinfo | None = None) -> str:
    """`text` as timestamped bullets: each `- ` line of a list is one, else the whole text is one."""
    stamp = datetime.fromtimestamp(when, tz).strftime("%H:%M")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    if lines and all(_BULLET.match(line) for line in lines):
        items = [_BULLET.match(line).group(1) for line in lines]  # type: ignore[union-attr]
    else:
        items = [one_line(text)] if text.strip() else []
    return "".join(f"- {stamp} {_no_marker(item)}\n" for item in items)


def _no_marker(item: str) -> str:
    # A bullet must never look like a consumption marker (or hide in an HTML comment).
    return item.replace("<!--", "<!- -")


def append_log(memory_dir: Path, text: str, clock: Clock = time.time, tz: tzinfo | None = None) -> Path:
    """Append `text` as timestamped bullets to today's log (created with a heading); its path."""
    when = clock()
    path = log_path(memory_dir, when, tz)
    entry = format_entry(text, when, tz)
    if entry:
        heading = f"# {datetime.fromtimestamp(when, tz):%Y-%m-%d}\n\n"
        append_locked(path, entry, heading)
    return path


def append_locked(path: Path, text: str, heading: str = "") -> None:
    """Append `text` (after `heading` if the file is new or empty) under the file's lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with locked(path):
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            prefix = heading if size == 0 else ("" if _ends_with_newline(path, size) else "\n")
            data = (prefix + text).encode("utf-8")
            while data:
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        finally:
            os.close(fd)


def _ends_with_newline(path: Path, size: int) -> bool:
    with open(path, "rb") as f:
        f.seek(size - 1)
        return f.read(1) == b"\n"


def bullets_from_reply(reply: str) -> list[str]:
    """The `- ` lines of a log-mode extraction reply (anything else is ignored)."""
    out = []
    for line in reply.splitlines():
        m = _BULLET.match(line)
        if m:
            out.append(m.group(1))
    return out


# --- what /dream has not consumed yet ------------------------------------------------------
@dataclass(frozen=True)
class LogSlice:
    """The part of one log /dream has not consumed: bytes [start, end) minus marker lines."""

    path: Path
    start: int
    end: int
    text: str

    def relative(self, memory_dir: Path) -> str:
        """The log's path relative to the memory folder (posix)."""
        return self.path.relative_to(memory_dir).as_posix()


def consumed_offset(data: bytes) -> int:
    """The byte offset the last marker in a log says /dream consumed through (0 if none)."""
    offsets = [int(m.group(1)) for m in _MARKER.finditer(data.decode("utf-8", errors="replace"))]
    return min(offsets[-1], len(data)) if offsets else 0


def unconsumed_logs(memory_dir: Path, budget: int = LOG_BUDGET_BYTES) -> list[LogSlice]:
    """The unconsumed log text, oldest first, at most `budget` bytes (cut at a line end)."""
    out: list[LogSlice] = []
    for path in log_files(memory_dir):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        start = consumed_offset(data)
        chunk = data[start:]
        if len(chunk) > budget:
            cut = chunk.rfind(b"\n", 0, budget)
            chunk = chunk[: cut + 1] if cut >= 0 else b""
        text = _MARKER.sub("", chunk.decode("utf-8", errors="replace")).strip()
        if text.replace("#", "").strip():
            out.append(LogSlice(path, start, start + len(chunk), text))
        budget -= len(chunk)
        if budget <= 0:
            break
    return out


def mark_consumed(slices: list[LogSlice], clock: Clock = time.time) -> None:
    """Append a marker to each log saying /dream consumed it through the slice's end."""
    stamp = iso_utc(clock())
    for piece in slices:
        append_locked(piece.path, f"<!-- dreamed through byte {piece.end} at {stamp} -->\n")


# --- agents in log mode --------------------------------------------------------------------
def log_mode_prompt(memory_dir: Path) -> str:
    """The memory-saving instructions for the system prompt in log mode (stable all day)."""
    return (
        f"Memory is in daily-log mode. MEMORY.md and the topic files in {memory_dir} are "
        "read-only. To remember something, append one bullet per fact to today's log, "
        f"{memory_dir}/{LOGS_DIR}/YYYY/MM/YYYY-MM-DD.md, as `- HH:MM fact`: Read it first, then "
        "Edit its last line into that line plus your bullets, or Write it whole with your "
        "bullets added at the end (create it with a `# YYYY-MM-DD` heading if missing). Never "
        "change earlier lines. /dream later distils the logs into topic files."
    )


class LogModeGuard(Guard):
    """The guard of log mode: inside the memory folder, only appends to today's log are allowed."""

    def __init__(
        self,
        memory_dir: Path,
        clock: Clock = time.time,
        *,
        tz: tzinfo | None = None,
        cwd: Path | Callable[[], Path] | None = None,
    ) -> None:
        self.memory_dir = Path(os.path.realpath(memory_dir))
        self.clock = clock
        self.tz = tz
        self._cwd = cwd

    def before(self, tool_name: str, input: dict[str, Any]) -> Deny | None:
        """Deny a memory-folder write that is not an append to today's log."""
        if tool_name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
            target = self._resolve(input.get("file_path"))
            if target is not None and within(target, str(self.memory_dir)):
                problem = self._append_problem(tool_name, Path(target), input)
                if problem:
                    return Deny(problem)
        return None

    def for_fork(self, cwd: Path) -> None:
        """No fork form: extraction in log mode appends without a fork, and /dream's fork turns
        the logs into topic files through its own staging policy."""
        return None

    def _resolve(self, raw: Any) -> str | None:
        if not isinstance(raw, str) or not raw.strip():
            return None
        path = os.path.expanduser(raw)
        if not os.path.isabs(path):
            cwd = self._cwd() if callable(self._cwd) else self._cwd
            path = os.path.join(str(cwd or os.getcwd()), path)
        return os.path.realpath(path)

    def _append_problem(self, tool: str, target: Path, input: dict[str, Any]) -> str | None:
        today = Path(os.path.realpath(log_path(self.memory_dir, self.clock(), self.tz)))
        rule = (
            f"memory is in daily-log mode: MEMORY.md and topic files are read-only; only "
            f"append bullets to today's log {today}"
        )
        if target != today:
            return rule
        current = _read_text(today)
        if tool == "Write":
            content = input.get("content")
            ok = isinstance(content, str) and content.startswith(current)
            return None if ok else f"{rule} (the new content must start with the whole current file)"
        if tool == "Edit":
            return (
                None
                if _is_append_edit(current, input)
                else (f"{rule} (an Edit must turn the file's last text into that text plus new lines)")
            )
        return rule


def _is_append_edit(current: str, input: dict[str, Any]) -> bool:
    old, new = input.get("old_string"), input.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str) or not old or input.get("replace_all"):
        return False
    return current.endswith(old) and current.count(old) == 1 and new.startswith(old)


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""
