"""The injected clock the memory tests share (the store, gc and dream read it)."""

from __future__ import annotations

T0 = 1_790_000_000.0  # 2026-09-21 14:13:20 UTC
HOUR = 3600.0
DAY = 24 * HOUR


class Clock:
    """A settable clock: `clock()` is the time, `advance(days)` moves it on."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float) -> None:
        self.now += days * DAY
