"""Recall while the user types: a pause in typing starts Layer 3's prefetch for the draft.

The side model's choice takes about as long as a person takes to finish a sentence and
press Enter, so started after a pause (`recall.draftPauseMs`, default 800 ms) it is often
ready before the turn starts and joins the user's message itself, instead of waiting for
the first tool result. The turn adopts the prefetch only if the text sent is the draft it
was made for (`RecallPart.settle_draft`); each changed draft after a pause costs one
side-model request.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prompt_toolkit.buffer import Buffer

    from claude_mini.memory.recall.part import RecallPart
    from claude_mini.runtime import Runtime
    from claude_mini.ui.startup import RuntimeLoader


class DraftRecall:
    """Watches the prompt's buffer and hands a paused draft to the session's recall."""

    def __init__(self, loader: RuntimeLoader, buffer: Buffer) -> None:
        self.loader = loader
        self._timer: asyncio.TimerHandle | None = None
        buffer.on_text_changed += self._changed

    def _changed(self, buffer: Buffer) -> None:
        self._cancel()
        runtime = self.loader.peek()
        if runtime is None or not self.loader.sdk_future.done():
            return  # the first request would import the SDK on the event loop: wait for it
        pause_ms = runtime.config.memory.recall.draft_pause_ms
        if pause_ms > 0 and buffer.text.strip():
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(pause_ms / 1000, self._start, buffer.text)

    def _start(self, text: str) -> None:
        self._timer = None
        runtime = self.loader.peek()
        hook = recall_of(runtime)
        if runtime is not None and hook is not None:
            hook.prefetch_draft(runtime.agent, text)

    def settle(self, text: str) -> None:
        """Enter was pressed: a prefetch for another draft is dropped, none starts any more."""
        self._cancel()
        hook = recall_of(self.loader.peek())
        if hook is not None:
            hook.settle_draft(text)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def recall_of(runtime: Runtime | None) -> RecallPart | None:
    """The session's recall part, once the runtime is built (None before, or with recall off)."""
    if runtime is None:
        # Not built yet: the loader thread is importing the memory layers now, and importing them
        # here too (Enter pressed early) can deadlock the two threads on the package's import cycles.
        return None
    from claude_mini.memory.recall.part import RecallPart  # startup: loaded with the runtime: a lookup now

    return runtime.lifecycle.find(RecallPart)
