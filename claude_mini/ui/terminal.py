"""The terminal under the REPL: its colours, the prompt's keys, echo and Ctrl-C while a turn runs.

At the prompt, Ctrl-C clears the input; on an empty prompt Ctrl-C or Ctrl-D asks
for a second press within EXIT_WINDOW_S to exit (`ExitKeys`; the status line
says so meanwhile). Esc Esc clears the input (it stays in the history), and on an
empty prompt sends /rewind; Ctrl-O opens the transcript view. While a turn or command
runs, SIGINT cancels its task (`Interrupts`); during a turn Esc cancels it too
(`escape_cancels`). From a line sent until the next prompt typed keys are not echoed
(`quiet_tty`): the line being typed is drawn under the spinner instead, a line sent with
Enter is queued, to be sent when the turn ends, and the rest waits for the next prompt.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import termios
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.document import Document
from prompt_toolkit.filters import is_searching
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import get_typeahead, store_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPress, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.lexers import Lexer
from prompt_toolkit.search import stop_search
from prompt_toolkit.shortcuts.choice_input import ChoiceInput
from prompt_toolkit.styles import Style

from claude_mini.ui.clipboard import clipboard_image

EXIT_WINDOW_S = 2.0
STYLE = Style.from_dict(
    {
        "prompt": "bold",
        "bottom-toolbar": "noreverse",
        "bottom-toolbar.text": "#888888",
        "toolbar.warn": "#d7af00 bold",
        "toolbar.mode": "#af87ff bold",
        "banner": "bold",
        "dim": "#888888",
        "warn": "#d7af00",
        "shell": "#ff5fd7",
    }
)


class ShellLineLexer(Lexer):
    """Colours the input when it starts with `!`: the line runs in the shell, not as a message."""

    def lex_document(self, document: Document) -> Callable[[int], StyleAndTextTuples]:
        shell = document.text.lstrip().startswith("!")
        lines = document.lines
        return lambda number: [("class:shell" if shell else "", lines[number])] if number < len(lines) else []


# ---------------------------------------------------------------- the prompt's keys


class ExitKeys:
    """Ctrl-C and Ctrl-D at the prompt: edit the input, or on an empty prompt arm the exit."""

    def __init__(self) -> None:
        self._armed_until = 0.0

    def armed(self) -> bool:
        """Whether a second press now exits (the status line asks for it)."""
        return time.monotonic() < self._armed_until

    def on_ctrl_c(self, event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            self._arm_or_exit(event)

    def on_ctrl_d(self, event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.delete()
        else:
            self._arm_or_exit(event)

    def _arm_or_exit(self, event: KeyPressEvent) -> None:
        now = time.monotonic()
        if now < self._armed_until:
            event.app.exit(exception=EOFError())
            return
        self._armed_until = now + EXIT_WINDOW_S
        event.app.loop.call_later(EXIT_WINDOW_S + 0.05, event.app.invalidate)  # type: ignore[union-attr]


def prompt_bindings(
    exit_keys: ExitKeys, cycle_mode: Callable[[], None], transcript: Callable[[], None] | None = None
) -> KeyBindings:
    """Enter sends, Alt-Enter / Ctrl-J / a trailing backslash add a line, Shift-Tab cycles the mode,
    Ctrl-O calls `transcript` (the transcript view)."""
    keys = KeyBindings()
    keys.add("enter", eager=True)(_on_enter)
    keys.add("escape", "enter")(lambda event: event.current_buffer.insert_text("\n"))
    keys.add("c-j")(lambda event: event.current_buffer.insert_text("\n"))
    keys.add("c-c", eager=True, filter=is_searching)(_leave_search)
    keys.add("c-c", eager=True, filter=~is_searching)(exit_keys.on_ctrl_c)
    keys.add("c-d", eager=True)(exit_keys.on_ctrl_d)
    keys.add("s-tab", eager=True)(lambda event: cycle_mode())
    keys.add("escape", "escape", eager=True)(_on_double_escape)
    if transcript is not None:
        keys.add("c-o", eager=True)(lambda event: transcript())
    keys.add("c-v")(_paste_clipboard_image)
    return keys


def _paste_clipboard_image(event: KeyPressEvent) -> None:
    """Ctrl-V: the clipboard's image is saved and its quoted path typed in (attached when sent)."""
    path, problem = clipboard_image()
    if path is not None:
        event.current_buffer.insert_text(f"'{path}' ")
    else:
        run_in_terminal(lambda: print(problem))


REWIND_COMMAND = "/rewind"


def _on_double_escape(event: KeyPressEvent) -> None:
    """Esc Esc: clear the input (kept in the history, Up brings it back); on an empty prompt, /rewind."""
    buffer = event.current_buffer
    if buffer.text.strip():
        buffer.append_to_history()
        buffer.reset()
    else:
        event.app.exit(result=REWIND_COMMAND)


def _leave_search(event: KeyPressEvent) -> None:
    """Ctrl-C in Ctrl-R history search: leave it, with the line typed before the search back."""
    control = event.app.layout.search_target_buffer_control
    stop_search(control)
    if control is not None:
        # The draft is the last working line (prompt_toolkit has no public name for it).
        control.buffer.go_to_history(len(control.buffer._working_lines) - 1)


def _on_enter(event: KeyPressEvent) -> None:
    buffer = event.current_buffer
    state = buffer.complete_state
    if state and state.current_completion:
        buffer.apply_completion(state.current_completion)
        if buffer.text.startswith("/") and " " not in buffer.text.strip():
            buffer.validate_and_handle()  # a completed slash command runs on this Enter, as in Claude Code
    elif buffer.document.is_cursor_at_the_end and buffer.text.endswith("\\"):
        buffer.delete_before_cursor(1)
        buffer.insert_text("\n")
    elif not buffer.text.strip():
        buffer.reset()  # blank input is not sent, nor kept in the history
    else:
        buffer.validate_and_handle()


async def choice_menu(
    message: str, options: Sequence[tuple[str, str]], *, shortcuts: str = "", escape: str | None = None
) -> str | None:
    """A numbered menu: arrows and Enter, or a digit; `shortcuts` are letters for the options in order.

    Esc answers `escape`; Ctrl-C answers None.
    """
    keys = KeyBindings()
    for number, (value, _) in enumerate(options[:9], start=1):
        keys.add(str(number), eager=True)(lambda event, v=value: event.app.exit(result=v))
    for letter, (value, _) in zip(shortcuts, options, strict=False):
        keys.add(letter, eager=True)(lambda event, v=value: event.app.exit(result=v))
    keys.add("escape", eager=True)(lambda event: event.app.exit(result=escape))
    menu = ChoiceInput(message=message, options=list(options), key_bindings=keys, style=STYLE)
    try:
        return await menu.prompt_async()
    except (KeyboardInterrupt, EOFError):
        return None


# ---------------------------------------------------------------- while a turn runs


CANCELLED = object()  # what `Interrupts.run` returns for a task that Ctrl-C cancelled


class Interrupts:
    """SIGINT cancels the task that runs now (a turn, a command, a wait), never the REPL itself."""

    def __init__(self) -> None:
        self._current: asyncio.Task[Any] | None = None

    def install(self) -> None:
        """Handle SIGINT on the running loop (again after a prompt or menu that took it over)."""
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self.cancel)

    def cancel(self) -> None:
        """Cancel the task that runs now, if any."""
        if self._current is not None and not self._current.done():
            self._current.cancel()

    async def run(self, coro: Any) -> Any:
        """Run `coro` as the task SIGINT cancels; returns CANCELLED if it was."""
        task = asyncio.ensure_future(coro)
        previous, self._current = self._current, task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and not (current and current.cancelling()):
                return CANCELLED
            raise
        finally:
            self._current = previous


@contextlib.contextmanager
def quiet_tty(stream: Any) -> Iterator[None]:
    """From a line sent until the next prompt: keys are not echoed (they wait for the next prompt
    or the running turn's queue); Ctrl-C still signals."""
    try:
        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError, AttributeError):
        yield
        return
    quiet = list(saved)
    quiet[0] &= ~termios.ICRNL  # Enter stays \r, told apart from Ctrl-J (a new line) as at the prompt
    quiet[3] &= ~(termios.ECHO | termios.ICANON)
    quiet[3] |= termios.NOFLSH  # Ctrl-C must not throw away what was typed ahead
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


def discard_typeahead(stream: Any) -> None:
    """Throw away keys typed but not read yet: claude-mini is ending on a start-up error, and
    a line typed meanwhile must not run in the shell that gets the terminal back."""
    with contextlib.suppress(termios.error, OSError, ValueError, AttributeError):
        termios.tcflush(stream.fileno(), termios.TCIFLUSH)


ESC_WAIT = 0.05  # a lone Esc is told from the start of an arrow key's sequence by this pause


@contextlib.contextmanager
def escape_cancels(
    inp: Input,
    cancel: Callable[[], None],
    submit: Callable[[str], None] | None = None,
    show: Callable[[str], None] | None = None,
    transcript: Callable[[], None] | None = None,
) -> Iterator[None]:
    """While a turn runs (the terminal quiet): a lone Esc calls `cancel`; a line ended by Enter
    is handed to `submit` (the REPL queues it for after the turn); every other key is kept as
    type-ahead for the next prompt, which prompt-toolkit hands it on start. An Esc with a key
    right after it is an Alt combination (Alt-Enter adds a line) and is kept. Keys kept by the
    turn before (or typed after the line the prompt sent) come first: a line typed across two
    turns stays whole. `show` gets the line being typed after every key (Backspace, Ctrl-U and
    Ctrl-W edit it), so the user sees it while the model works. Ctrl-O is not kept: it calls
    `transcript` (the REPL opens the transcript view at the next prompt)."""
    try:
        interactive = os.isatty(inp.fileno())
    except (OSError, ValueError, NotImplementedError):
        interactive = False
    if not interactive:
        yield
        return
    loop = asyncio.get_running_loop()
    active = True
    pending: list[KeyPress] = []

    def take(keys: list[KeyPress]) -> None:
        if not active:
            return  # a late flush: the next prompt owns the keys now
        if transcript is not None and any(key.key == Keys.ControlO for key in keys):
            keys = [key for key in keys if key.key != Keys.ControlO]
            transcript()
        if keys and keys[-1].key == Keys.Escape:
            cancel()
            while keys and keys[-1].key == Keys.Escape:  # Esc Esc cancels once; none is left to the prompt
                keys = keys[:-1]
        pending.extend(keys)
        if submit is not None:
            lines, rest = split_submitted(pending)
            pending[:] = rest
            for line in lines:
                submit(line)
        if show is not None:
            show(typed_text(pending))

    def ready() -> None:
        take(inp.read_keys())
        loop.call_later(ESC_WAIT, lambda: take(inp.flush_keys()) if active else None)

    pending.extend(get_typeahead(inp))
    take([])
    try:
        with inp.attach(ready):
            yield
    finally:
        active = False
        if show is not None:
            show("")
        if pending:
            store_typeahead(inp, pending)


def split_submitted(keys: Sequence[KeyPress]) -> tuple[list[str], list[KeyPress]]:
    """The lines that `keys` sent with Enter, as the prompt would have read them (Alt-Enter,
    Ctrl-J or a trailing backslash add a line, Backspace deletes, a paste is taken as is), and
    the keys typed after the last Enter. Blank lines are dropped, as the prompt drops them."""
    lines, start, _ = _read_keys(keys)
    return lines, list(keys[start:])


def typed_text(keys: Sequence[KeyPress]) -> str:
    """The line `keys` are typing after their last Enter, as the prompt will show it."""
    return _read_keys(keys)[2]


def _read_keys(keys: Sequence[KeyPress]) -> tuple[list[str], int, str]:
    """The lines sent with Enter, the index after the last Enter, the text typed since; Ctrl-U and
    Ctrl-W delete as the prompt's own (emacs) bindings do at the end of the line."""
    lines: list[str] = []
    text, start, escaped = "", 0, False
    for index, key in enumerate(keys):
        if key.key == Keys.ControlM and not escaped and not text.endswith("\\"):
            if text.strip():
                lines.append(text)
            text, start = "", index + 1
        elif key.key == Keys.ControlM or key.key == Keys.ControlJ:
            text = text.removesuffix("\\") + "\n"
        elif key.key == Keys.BracketedPaste:
            text += key.data.replace("\r\n", "\n").replace("\r", "\n")
        elif key.key in (Keys.ControlH, Keys.Backspace):
            text = text[:-1]
        elif key.key == Keys.ControlU:
            text = text[: text.rfind("\n") + 1]
        elif key.key == Keys.ControlW:
            text = re.sub(r"\S*[ \t]*$", "", text, count=1)
        elif key.key == key.data and key.data.isprintable():
            text += key.data
        escaped = key.key == Keys.Escape
    return lines, start, text
