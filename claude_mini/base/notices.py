"""The one channel through which every part of a session tells the user something.

Two kinds of thing travel on it (DESIGN.md section 7, "says so once"):

- **notices**: one line each, with a level: `warning` (a setting or file was
  skipped; drawn with ⚠), `info` (background work that went wrong or finished:
  a failed extraction, a compaction, a recall fallback), `saved` (a memory was
  written; the quietest);
- **background status**: which background jobs (recall, extraction,
  compaction, dream) run now, for the REPL's status line and spinner.

Each layer is given the session's `NoticeChannel` when it is built; the REPL and
print mode attach a display to it. Notices said before a display is attached
are kept and shown when one is, so nothing said at start-up is lost. The
channel is safe to use from any thread.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

from claude_mini.base.text import visible_controls

log = logging.getLogger(__name__)

Level = Literal["warning", "info", "saved"]

BACKGROUND_WORDS = {"recall": "recalling", "extract": "extracting", "compact": "compacting", "dream": "dreaming"}


@dataclass(frozen=True)
class Notice:
    """A one-line message for the user."""

    text: str
    level: Level = "info"


Display = Callable[[Notice], object]  # what it returns is ignored


class NoticeChannel:
    """Notices and background status of one session (one per REPL or print-mode run)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._delivering = threading.RLock()  # displays see notices one at a time, in order
        self._displays: list[Display] = []
        self._pending: list[Notice] = []
        self._once: set[str] = set()
        self._said: list[Notice] = []
        self._counts: dict[str, int] = {}
        self._listeners: list[Callable[[], None]] = []

    # -- notices

    def say(self, text: str, level: Level = "info", *, once: bool = False) -> None:
        """Tell the user `text`; with `once`, a text already said on this channel is dropped."""
        notice = Notice(text, level)
        with self._delivering:
            with self._lock:
                if once and text in self._once:
                    return
                self._once.add(text)
                self._said.append(notice)
                displays = list(self._displays)
                if not displays:
                    self._pending.append(notice)
            for display in displays:
                _show(display, notice)

    def attach(self, display: Display) -> None:
        """Show every later notice with `display`, after the ones kept until now."""
        with self._delivering:
            with self._lock:
                pending, self._pending = self._pending, []
                self._displays.append(display)
            for notice in pending:
                _show(display, notice)

    def said(self, level: Level | None = None) -> list[Notice]:
        """Every notice said so far (of one level), oldest first: for /config and tests."""
        with self._lock:
            return [n for n in self._said if level is None or n.level == level]

    # -- background status

    def set_background(self, kind: str, running: bool) -> None:
        """Record that a `kind` job ('recall', 'extract', 'compact', 'dream') started or ended;
        calls nest per kind."""
        with self._lock:
            self._counts[kind] = max(0, self._counts.get(kind, 0) + (1 if running else -1))
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    @contextlib.contextmanager
    def busy(self, kind: str) -> Iterator[None]:
        """Mark `kind` as running for the duration of a `with` block."""
        self.set_background(kind, True)
        try:
            yield
        finally:
            self.set_background(kind, False)

    def running(self) -> list[str]:
        """The kinds running now, sorted."""
        with self._lock:
            return sorted(kind for kind, count in self._counts.items() if count > 0)

    def words(self) -> str:
        """'extracting, recalling' (empty when idle)."""
        return ", ".join(BACKGROUND_WORDS.get(kind, kind) for kind in self.running())

    def subscribe(self, listener: Callable[[], None]) -> None:
        """Call `listener()` (from any thread) whenever a job starts or stops."""
        with self._lock:
            self._listeners.append(listener)


def _show(display: Display, notice: Notice) -> None:
    """One display, one notice: a display that fails (a closed pipe, a loop that ended) must
    not break the work that said it."""
    try:
        display(notice)
    except Exception as exc:
        log.debug("a notice could not be shown (%s): %s", exc, notice.text)


def say(message: str) -> None:
    """One `claude-mini: ...` line on stderr, for a command with no session (and so no channel) to speak through.

    Its control characters (newlines too) are made visible: warnings carry paths, setting
    values and import targets from the repository, and an escape sequence in them must not
    reach the terminal, nor a newline fake a line.
    """
    line = visible_controls(message).replace("\n", "\\n")
    sys.stderr.write(f"claude-mini: {line}\n")
