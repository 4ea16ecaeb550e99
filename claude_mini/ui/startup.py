"""How the REPL starts: the banner and prompt first, the runtime behind them.

The anthropic SDK takes over a second to import, so the banner and the prompt
are drawn first and the runtime is built in a background thread
(`RuntimeLoader`) while the user types; rich, the plug-in slash commands and the
SDK are imported there too (`warm_imports`). `SessionStart` starts that thread
just after the prompt's first paint, and the session's start-up work (auto gc,
auto dream) once the runtime exists. A first message sent faster than that
waits for it under the spinner.

Keep this module's own imports light: it is imported before the first paint.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prompt_toolkit import print_formatted_text
from prompt_toolkit.formatted_text import FormattedText

from claude_mini import __version__
from claude_mini.base.text import visible_controls
from claude_mini.command_table import discover
from claude_mini.llm import local
from claude_mini.llm.anthropic_client import missing_credentials
from claude_mini.ui.terminal import STYLE

if TYPE_CHECKING:
    from prompt_toolkit.application import Application

    from claude_mini.base.notices import NoticeChannel
    from claude_mini.config import Config
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.runtime import Runtime

FIRST_PAINT_PAUSE_S = 0.05  # loading right away would compete with the first paint for the GIL


class RuntimeLoader:
    """Builds the runtime in a background thread, then imports rich and the anthropic SDK."""

    def __init__(self, build: Callable[[], Runtime]) -> None:
        self._build = build
        self.runtime_future: concurrent.futures.Future[Runtime] = concurrent.futures.Future()
        self.sdk_future: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start loading (idempotent)."""
        if self._thread is None:
            # Running futures cannot be cancelled: a Ctrl-C while waiting for them must not.
            self.runtime_future.set_running_or_notify_cancel()
            self.sdk_future.set_running_or_notify_cancel()
            self._thread = threading.Thread(target=self._work, name="runtime-loader", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        try:
            runtime = self._build()
        except BaseException as exc:  # handed to whoever awaits the runtime
            self.runtime_future.set_exception(exc)
            self.sdk_future.set_result(None)
            return
        self.runtime_future.set_result(runtime)
        try:
            warm_imports()
        finally:
            self.sdk_future.set_result(None)

    def peek(self) -> Runtime | None:
        """The runtime if it is ready, else None (never blocks)."""
        future = self.runtime_future
        return future.result() if future.done() and future.exception() is None else None

    async def runtime(self) -> Runtime:
        """The runtime, waiting for the loader if needed (its build error is raised here)."""
        self.start()
        return await asyncio.wrap_future(self.runtime_future)

    async def sdk_ready(self) -> None:
        """Wait until the slow imports are done, so the first request does not block the event loop."""
        self.start()
        await asyncio.wrap_future(self.sdk_future)


def warm_imports() -> None:
    """Import what the first turn needs (rich, plug-in commands, the anthropic SDK) off the main thread."""
    import claude_mini.ui.render  # noqa: F401  # startup: rich, imported in this thread after the first paint

    discover()
    with contextlib.suppress(Exception):  # the first request reports a broken install properly
        import anthropic  # noqa: F401  # startup: over a second, imported in this thread after the first paint


class SessionStart:
    """Starts the loader just after the prompt's first paint, and the session's start-up work
    (auto gc, auto dream) once the runtime is built."""

    def __init__(self, loader: RuntimeLoader, app: Application[Any], *, resumed: bool) -> None:
        self.loader = loader
        self._app = app
        self._resumed = resumed
        self._loading = False
        self.maintenance: asyncio.Future[None] | None = None  # auto gc / auto dream at session start

    def after_first_paint(self) -> None:
        """The prompt's `pre_run` hook: load once the first paint is done."""
        asyncio.get_running_loop().call_later(FIRST_PAINT_PAUSE_S, self.begin)

    def begin(self) -> None:
        """Start loading now (idempotent)."""
        if self._loading:
            return
        self._loading = True
        loop = asyncio.get_running_loop()
        self.loader.start()
        self.loader.runtime_future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._runtime_loaded))

    def _runtime_loaded(self) -> None:
        """Redraw the status line with the runtime's numbers; a failed build ends the prompt at once."""
        app = self._app
        if not app.is_running:
            return
        if self.loader.runtime_future.exception() is not None:
            app.exit(exception=EOFError())
        else:
            app.invalidate()
            runtime = self.loader.runtime_future.result()
            self.maintenance = asyncio.ensure_future(
                runtime.start(source="resume" if self._resumed else "startup", dream=True)
            )


def print_banner(config: Config, client: ModelClient | None = None) -> None:
    """The first lines of the REPL: version, model, folder, the main keys and the settings' warnings.

    The model is the one that answers: the offline model's file when it is in use (`client`,
    opened before the banner in that case)."""
    model = client.name if client is not None and client.provider == "local" else config.model
    lines = [
        ("class:banner", f"claude-mini {__version__}"),
        ("class:dim", f"  ·  {model}  ·  {config.cwd}\n"),
        ("class:dim", "/help for commands · @ to attach a file · Esc cancels a turn · Ctrl-D twice exits\n"),
    ]
    for warning in config.warnings:
        lines.append(("class:warn", f"⚠ {visible_controls(warning)}\n"))
    print_formatted_text(FormattedText(lines), style=STYLE, end="")


def open_client_early(config: Config, notices: NoticeChannel) -> ModelClient | None:
    """The model client, opened before the prompt is drawn where opening it can fail: a
    `local[:PATH]` model, or no API configured (the offline model, or the line saying what to
    set). StartupFailed says why it cannot start: a REPL that ended after its prompt appeared would
    leave what the user typed to the shell. None: the API client, made with the runtime.

    It also settles which model the banner names (runtime.make_client switches to the
    offline one when no API is configured)."""
    if not (local.is_local_model(config.model) or missing_credentials()):
        return None
    from claude_mini.runtime import SetupError, make_client  # startup: the runtime is built after the first paint

    try:
        return make_client(config, notices)
    except SetupError as exc:
        raise StartupFailed(str(exc)) from None


def fail_if_trust_cannot_help(config: Config, notices: NoticeChannel) -> None:
    """Raise StartupFailed now when start-up will fail whatever the trust answer: no API is
    configured and neither this folder's settings, once trusted, nor the offline model offer a
    model. The trust question is not asked only to end on "no model configured"."""
    from claude_mini.runtime import model_asked_for  # startup: the runtime is built after the first paint

    if not missing_credentials() or local.is_local_model(config.model):
        return
    if not model_asked_for(config) and local.local_available():
        return  # the offline model answers
    trusted = copy.deepcopy(config)
    trusted.grant_trust(this_run_only=True)  # in memory only: nothing is recorded
    if trusted.model != config.model or trusted.get("env") != config.get("env"):
        return  # the folder's own settings may name a model or the credentials: ask first
    open_client_early(config, notices)


class StartupFailed(Exception):
    """The runtime could not be built (no model configured, a bad setting); the REPL ends."""


def startup_message(exc: BaseException | None) -> str:
    """The one line shown when the runtime could not be built."""
    from claude_mini.runtime import SetupError  # startup: the runtime is built after the first paint

    if isinstance(exc, SetupError):
        return str(exc)
    return f"could not start the session: {type(exc).__name__}: {exc}"
