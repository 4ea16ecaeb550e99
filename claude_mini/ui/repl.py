"""The interactive REPL: prompt-toolkit input, rich output, slash commands, permission prompts.

Startup shapes this module. The anthropic SDK takes over a second to import, so
the prompt is drawn first and the runtime is built in a background thread
(`RuntimeLoader`) while the user types; rich and the SDK are imported there too.
A first message sent faster than that waits for it under the spinner.

    run_repl ─► Repl.run ─► prompt ─┬─ /command ─► commands.run_command
                                    └─ message  ─► expand_mentions ─► Agent.run ─► Renderer

Ctrl-C at the prompt clears the input; on an empty prompt it asks for a second
press (or Ctrl-D) to exit. While a turn or command runs, SIGINT cancels its
task; the agent loop keeps the conversation valid. During a turn Esc cancels it
too, and other typed keys are not echoed: they wait for the next prompt.

The REPL owns the session's `NoticeChannel` (claude_mini.notices) and gives it
to the runtime: the memory layers' notices are drawn above the prompt, and
their background work shows in the status line and the spinner.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import signal
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.completion import Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.input import Input
from prompt_toolkit.input.typeahead import store_typeahead
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.output import create_output
from prompt_toolkit.shortcuts.choice_input import ChoiceInput
from prompt_toolkit.styles import Style

from claude_mini import __version__, paths
from claude_mini.notices import Notice, NoticeChannel
from claude_mini.ui import commands
from claude_mini.ui.safe_text import visible_controls

if TYPE_CHECKING:
    from rich.console import Console

    from claude_mini.agent.loop import PermissionAnswer
    from claude_mini.config import Config
    from claude_mini.llm.messages import ToolUseBlock
    from claude_mini.runtime import Runtime
    from claude_mini.session import Session
    from claude_mini.ui.render import Renderer

MODE_LABELS = {"default": "default", "acceptEdits": "accept edits", "plan": "plan",
               "bypassPermissions": "bypass permissions"}
EXIT_WINDOW_S = 2.0
MAX_ATTACH_CHARS = 100_000
MAX_LISTED_FILES = 20_000
STYLE = Style.from_dict({
    "prompt": "bold",
    "bottom-toolbar": "noreverse",
    "bottom-toolbar.text": "#888888",
    "toolbar.warn": "#d7af00 bold",
    "toolbar.mode": "#af87ff bold",
    "banner": "bold",
    "dim": "#888888",
    "warn": "#d7af00",
})


# ---------------------------------------------------------------- background start-up


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
    import claude_mini.ui.render  # noqa: F401

    commands.discover_commands()
    with contextlib.suppress(Exception):  # the first request reports a broken install properly
        import anthropic  # noqa: F401


# ---------------------------------------------------------------- @path mentions


MENTION = re.compile(r'(?<![\w@/])@(?:"([^"\n]+)"|([^\s"]+))')
TRAILING = ",.;:!?)]}'"


@dataclass
class Mentions:
    """A message with its @files attached, the warnings to show and the files read."""

    text: str
    warnings: list[str] = field(default_factory=list)
    read: list[Path] = field(default_factory=list)


def expand_mentions(text: str, *, cwd: Path, project_root: Path, ignored: Callable[[Path], bool],
                    read_denied: Callable[[str], str | None] = lambda _: None) -> Mentions:
    """Append the contents of every `@path` in `text`; a path that cannot be attached gets a warning."""
    out = Mentions(text)
    seen: set[Path] = set()
    for match in MENTION.finditer(text):
        raw = match.group(1) or match.group(2)
        path = _mention_path(raw, cwd)
        if path in seen:
            continue
        seen.add(path)
        shown = match.group(0)
        problem = _mention_problem(path, shown, cwd, project_root, ignored, read_denied)
        if problem:
            out.warnings.append(f"{problem}; sent without it.")
            continue
        out.text += "\n\n" + _attachment(path, cwd)
        if path.is_file():
            out.read.append(path)
    return out


def _mention_path(raw: str, cwd: Path) -> Path:
    """The absolute path of a mention; trailing punctuation is dropped unless it names a file."""
    candidates = [raw, raw.rstrip(TRAILING)]
    paths_ = [Path(os.path.abspath(cwd / Path(c).expanduser())) for c in candidates if c]
    return next((p for p in paths_ if p.exists()), paths_[-1] if paths_ else cwd)


def _mention_problem(path: Path, shown: str, cwd: Path, project_root: Path,
                     ignored: Callable[[Path], bool], read_denied: Callable[[str], str | None]) -> str | None:
    real = Path(os.path.realpath(path))
    roots = [Path(os.path.realpath(project_root)), Path(os.path.realpath(cwd))]
    if not any(real == root or root in real.parents for root in roots):
        return f"{shown} is outside the project"
    if not path.exists():
        return f"{shown} does not exist"
    denied = read_denied(str(path))
    if denied:
        return f"{shown} may not be read ({denied})"
    if ignored(path):
        return f"{shown} is ignored by .gitignore (ask the model to Read it if you need it)"
    if path.is_file() and _is_binary(path):
        return f"{shown} is a binary file"
    if not (path.is_file() or path.is_dir()):
        return f"{shown} is not a regular file"
    return None


def _is_binary(path: Path) -> bool:
    from claude_mini.tools.read import BINARY_EXTENSIONS, SNIFF_BYTES, sniff_encoding

    if path.suffix.lower().lstrip(".") in BINARY_EXTENSIONS:
        return True
    try:
        with path.open("rb") as fh:
            return sniff_encoding(fh.read(SNIFF_BYTES)) is None
    except OSError:
        return True


def _attachment(path: Path, cwd: Path) -> str:
    """`<attached-file path=...>contents</attached-file>` (a folder attaches its listing)."""
    name = os.path.relpath(path, cwd)
    if path.is_dir():
        entries = sorted(p.name + ("/" if p.is_dir() else "") for p in path.iterdir())
        body = "\n".join(entries[:200]) + (f"\n… {len(entries) - 200} more" if len(entries) > 200 else "")
        return f'<attached-folder path="{name}">\n{body}\n</attached-folder>'
    text = path.read_text(encoding="utf-8", errors="replace")
    note = ""
    if len(text) > MAX_ATTACH_CHARS:
        note = f"\n[truncated: the first {MAX_ATTACH_CHARS:,} of {len(text):,} characters; Read the rest]"
        text = text[:MAX_ATTACH_CHARS]
    return f'<attached-file path="{name}">\n{text.rstrip(chr(10))}{note}\n</attached-file>'


class ProjectFiles:
    """Files under the working directory that .gitignore does not exclude (for @ completion)."""

    def __init__(self, cwd: Path, ttl: float = 10.0) -> None:
        self.cwd = cwd
        self.ttl = ttl
        self._cache: tuple[float, list[str]] | None = None
        self._spec: Any = None

    def list(self) -> list[str]:
        """Relative paths of files and folders (folders end in '/'), cached for `ttl` seconds."""
        now = time.monotonic()
        if self._cache is None or now - self._cache[0] > self.ttl:
            files = self._git_files()
            files = self._walk_files() if files is None else files
            folders = {str(Path(f).parent) + "/" for f in files if "/" in f}
            self._cache = (now, sorted(folders) + files)
        return self._cache[1]

    def _git_files(self) -> list[str] | None:
        try:
            out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
                                 cwd=self.cwd, capture_output=True, timeout=5)
        except (OSError, subprocess.SubprocessError):
            return None
        if out.returncode != 0:
            return None
        names = out.stdout.decode("utf-8", "replace").split("\0")
        return sorted({n for n in names if n})[:MAX_LISTED_FILES]

    def _walk_files(self) -> list[str]:
        found: list[str] = []
        for folder, dirs, files in os.walk(self.cwd):
            rel = os.path.relpath(folder, self.cwd)
            dirs[:] = sorted(d for d in dirs if d != ".git" and not self._spec_ignores(os.path.join(rel, d) + "/"))
            found += [os.path.normpath(os.path.join(rel, f)) for f in sorted(files)
                      if not self._spec_ignores(os.path.join(rel, f))]
            if len(found) >= MAX_LISTED_FILES:
                break
        return found[:MAX_LISTED_FILES]

    def _spec_ignores(self, rel: str) -> bool:
        if self._spec is None:
            import pathspec

            ignore = self.cwd / ".gitignore"
            lines = ignore.read_text(errors="replace").splitlines() if ignore.is_file() else []
            self._spec = pathspec.GitIgnoreSpec.from_lines(lines)
        return bool(self._spec.match_file(os.path.normpath(rel) + ("/" if rel.endswith("/") else "")))

    def is_ignored(self, path: Path) -> bool:
        """Whether git (or, outside git, the folder's .gitignore) ignores `path`."""
        try:
            out = subprocess.run(["git", "check-ignore", "-q", "--", str(path)], cwd=self.cwd,
                                 capture_output=True, timeout=5)
            if out.returncode in (0, 1):
                return out.returncode == 0
        except (OSError, subprocess.SubprocessError):
            pass
        return self._spec_ignores(os.path.relpath(path, self.cwd) + ("/" if path.is_dir() else ""))


class ReplCompleter(Completer):
    """Completes `/commands` at the start of the input and `@paths` anywhere."""

    def __init__(self, files: ProjectFiles, limit: int = 40) -> None:
        self.files = files
        self.limit = limit

    def get_completions(self, document: Document, complete_event: Any) -> Iterable[Completion]:
        before = document.text_before_cursor
        if before.startswith("/") and not any(ch.isspace() for ch in before):
            for cmd in commands.all_commands():
                if cmd.name.startswith(before[1:].lower()):
                    yield Completion("/" + cmd.name, -len(before), display_meta=cmd.help)
            return
        word = document.get_word_before_cursor(WORD=True)
        if word.startswith("@"):
            for path in rank_paths(self.files.list(), word[1:].lstrip('"'))[: self.limit]:
                text = f'@"{path}"' if " " in path else f"@{path}"
                yield Completion(text, -len(word), display=path)


def rank_paths(paths_: Sequence[str], query: str) -> list[str]:
    """Paths matching `query`: path prefix first, then file-name prefix, then anywhere."""
    q = query.lower()
    groups: tuple[list[str], list[str], list[str]] = ([], [], [])
    for path in paths_:
        low = path.lower()
        if low.startswith(q):
            groups[0].append(path)
        elif os.path.basename(low.rstrip("/")).startswith(q):
            groups[1].append(path)
        elif q in low:
            groups[2].append(path)
    return [*groups[0], *groups[1], *groups[2]]


# ---------------------------------------------------------------- terminal helpers


@contextlib.contextmanager
def quiet_tty(stream: Any) -> Iterator[None]:
    """While a turn runs: keys are not echoed (they wait for the next prompt); Ctrl-C still signals."""
    try:
        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (termios.error, OSError, ValueError, AttributeError):
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ICANON)
    quiet[3] |= termios.NOFLSH  # Ctrl-C must not throw away what was typed ahead
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


ESC_WAIT = 0.05  # a lone Esc is told from the start of an arrow key's sequence by this pause


@contextlib.contextmanager
def escape_cancels(inp: Input, cancel: Callable[[], None]) -> Iterator[None]:
    """While a turn runs (the terminal quiet): a lone Esc calls `cancel`; every other key is
    kept as type-ahead for the next prompt, which prompt-toolkit hands it on start. An Esc
    with a key right after it is an Alt combination (Alt-Enter adds a line) and is kept."""
    try:
        interactive = os.isatty(inp.fileno())
    except (OSError, ValueError, NotImplementedError):
        interactive = False
    if not interactive:
        yield
        return
    loop = asyncio.get_running_loop()
    active = True

    def take(keys: list[Any]) -> None:
        if not active:
            return  # a late flush: the next prompt owns the keys now
        if keys and keys[-1].key == Keys.Escape:
            cancel()
            keys = keys[:-1]
        if keys:
            store_typeahead(inp, keys)

    def ready() -> None:
        take(inp.read_keys())
        loop.call_later(ESC_WAIT, lambda: active and take(inp.flush_keys()))

    try:
        with inp.attach(ready):
            yield
    finally:
        active = False


def permission_question(call: ToolUseBlock, cwd: Path) -> str:
    """`Run this command?`, `Make this edit to app.py?` ... (controls in a name made visible)."""
    from claude_mini.ui.render import one_line, short_path

    raw = short_path(str(call.input.get("file_path", "")), cwd)
    target = one_line(raw)
    if call.name == "Bash":
        return "Run this command?"
    if call.name == "Edit":
        return f"Make this edit to {target}?"
    if call.name == "Write":
        return f"{'Overwrite' if (cwd / raw).exists() else 'Create'} {target}?"
    return f"Allow {one_line(call.name)}?"


# ---------------------------------------------------------------- the REPL

CANCELLED = object()  # what `Repl._cancellable` returns for a task that Ctrl-C cancelled



class Repl:
    """One interactive session: reads input, runs commands and turns, draws the status line."""

    def __init__(self, config: Config, *, session: Session | None = None, input: Any = None,
                 output: Any = None) -> None:
        self.config = config
        self.notices = NoticeChannel()
        self._resumed = bool(session and session.messages)
        self.files = ProjectFiles(config.cwd)
        self.loader = RuntimeLoader(lambda: self._build_runtime(session))
        self.exit_requested = False
        self.exit_code = 0
        self._armed_until = 0.0
        self._current: asyncio.Task | None = None
        self._maintenance: asyncio.Future | None = None  # auto gc / auto dream at session start
        self._loading = False
        self._pending_mode = config.permission_mode or config.get("permissions.defaultMode") or "default"
        self._console: Console | None = None
        self._renderer: Renderer | None = None
        self._input, self._output = input, output
        self.prompt = self._prompt_session()

    # -- start-up

    def _build_runtime(self, session: Session | None) -> Runtime:
        from claude_mini.runtime import build_runtime

        runtime = build_runtime(self.config, notices=self.notices, session=session,
                                ask_user=self.ask_permission)
        with contextlib.suppress(ValueError):
            runtime.policy.mode = self._pending_mode
        return runtime

    def _prompt_session(self) -> PromptSession:
        history = paths.project_dir(self.config.cwd) / "history"
        history.parent.mkdir(parents=True, exist_ok=True)
        return PromptSession(
            message=[("class:prompt", "> ")], multiline=True, prompt_continuation="  ",
            history=FileHistory(str(history)), completer=ReplCompleter(self.files),
            complete_while_typing=True, complete_in_thread=True, key_bindings=self._bindings(),
            bottom_toolbar=self.toolbar, style=STYLE, reserve_space_for_menu=6,
            input=self._input, output=self._output or create_output(always_prefer_tty=True),
        )

    @property
    def console(self) -> Console:
        """The rich console for conversation output (created on first use: rich is slow to import)."""
        if self._console is None:
            from rich.console import Console

            from claude_mini.ui.render import guard_console

            self._console = guard_console(Console(highlight=False, emoji=False, markup=False))
        return self._console

    @property
    def renderer(self) -> Renderer:
        """The event renderer (created on first use)."""
        if self._renderer is None:
            from claude_mini.ui.render import Renderer

            self._renderer = Renderer(self.console, cwd=self.config.cwd, status=self.notices)
        return self._renderer

    # -- main loop

    async def run(self, initial: str | None = None) -> int:
        """Read and handle input until /exit, a double Ctrl-C/Ctrl-D or a fatal start-up error."""
        self._install_sigint()
        self.notices.subscribe(self.prompt.app.invalidate)
        self._banner()
        loop = asyncio.get_running_loop()
        self.notices.attach(lambda notice: loop.call_soon_threadsafe(self._show_notice, notice))
        if initial and initial.strip():
            self._start_loading()
            print_formatted_text(FormattedText([("class:prompt", "> "), ("", initial)]), style=STYLE)
            self.prompt.history.append_string(initial)
            await self.handle(initial)
        while not self.exit_requested:
            try:
                text = await self.prompt.prompt_async(handle_sigint=False, pre_run=self._after_first_paint)
            except (EOFError, KeyboardInterrupt):
                break
            await self.handle(text)
        await self._shutdown()
        return self.exit_code

    def _after_first_paint(self) -> None:
        # Loading right away would compete with the first paint for the GIL.
        asyncio.get_running_loop().call_later(0.05, self._start_loading)

    def _start_loading(self) -> None:
        if self._loading:
            return
        self._loading = True
        loop = asyncio.get_running_loop()
        self.loader.start()
        self.loader.runtime_future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._runtime_loaded))

    def _runtime_loaded(self) -> None:
        """Redraw the status line with the runtime's numbers; a failed build ends the prompt at once."""
        app = self.prompt.app
        if not app.is_running:
            return
        if self.loader.runtime_future.exception() is not None:
            app.exit(exception=EOFError())
        else:
            app.invalidate()
            runtime = self.loader.runtime_future.result()
            self._maintenance = asyncio.ensure_future(
                runtime.start(source="resume" if self._resumed else "startup", dream=True))

    async def handle(self, text: str) -> None:
        """Run one input: nothing for blank input, a slash command, or a turn."""
        if not text.strip():
            return
        try:
            if commands.is_command(text):
                await self._cancellable(commands.run_command(
                    text, self, self.console, self.get_runtime, debug=self.config.debug))
            else:
                await self.run_turn(text)
        except StartupFailed as exc:
            self._fatal(str(exc))
        except Exception as exc:  # a bug must not end the session
            if self.config.debug:
                self.console.print_exception()
            self.renderer.error(f"internal error: {type(exc).__name__}: {exc}. The conversation is saved.")
        if not self.exit_requested:
            self.console.print()

    async def get_runtime(self) -> Runtime:
        """The runtime, built in the background; StartupFailed if it could not be built."""
        try:
            return await self.loader.runtime()
        except Exception as exc:
            raise StartupFailed(_startup_message(exc)) from exc

    def _fatal(self, message: str) -> None:
        sys.stderr.write(f"claude-mini: {visible_controls(message)}\n")
        self.exit_code, self.exit_requested = 1, True

    async def _shutdown(self) -> None:
        future = self.loader.runtime_future
        if self.exit_code == 0 and future.done() and future.exception() is not None:
            self._fatal(_startup_message(future.exception()))
        runtime = self.loader.peek()
        if runtime is None:
            return
        if self._maintenance is not None:
            self._maintenance.cancel()  # a dream cut short changes nothing (memory/dream.py)
        await self._finish_extraction(runtime)
        await runtime.close()
        if runtime.session.messages:
            print_formatted_text(FormattedText([("class:dim", f"Resume this session with: claude-mini "
                                                              f"--resume {runtime.session.id}")]), style=STYLE)

    async def _finish_extraction(self, runtime: Runtime) -> None:
        """Give a running memory extraction its configured time before leaving (Ctrl-C skips it)."""
        extractor = runtime.extractor
        if extractor is None or not extractor.running:
            return
        limit = extractor.settings.wait_seconds
        print_formatted_text(FormattedText([("class:dim", f"Saving memories from this session (up to "
                                                          f"{limit:g} s; Ctrl-C skips)…")]), style=STYLE)
        self._install_sigint()
        if await self._cancellable(extractor.wait(limit)) is not True:
            await extractor.stop()

    def notify(self, text: str, style: str = "dim") -> None:
        """Show one line from background work, above the prompt if the user is typing."""
        show = lambda: self.renderer.line(text, style)  # noqa: E731
        if self.prompt.app.is_running:
            asyncio.ensure_future(run_in_terminal(show))
        else:
            show()

    # -- turns

    async def run_turn(self, text: str) -> None:
        """Send one message (with its @files) to the model and render the answer; Esc or Ctrl-C
        cancels it."""
        runtime = await self.get_runtime()
        message = self._attach(runtime, text)
        renderer = self.renderer
        renderer.begin_turn()
        try:
            with quiet_tty(sys.stdin), escape_cancels(self.prompt.input, self._on_sigint):
                if await self._cancellable(self._consume(runtime, message)) is CANCELLED:
                    renderer.interrupted()
        finally:
            renderer.end_turn()

    def _attach(self, runtime: Runtime, text: str) -> str:
        from claude_mini.tools.read import record_read

        found = expand_mentions(text, cwd=runtime.agent.ctx.cwd, project_root=self.config.project_root,
                                ignored=self.files.is_ignored, read_denied=runtime.policy.read_denied)
        for warning in found.warnings:
            self.renderer.line(f"⚠ {warning}", "yellow")
        for path in found.read:
            record_read(runtime.agent.ctx, path, path.stat().st_mtime)
        return found.text

    async def _consume(self, runtime: Runtime, text: str) -> None:
        from claude_mini.agent.loop import AgentStop, TurnCancelled
        from claude_mini.llm.client import ModelError

        await self.loader.sdk_ready()
        try:
            async for event in runtime.agent.run(text):
                self.renderer.on_event(event)
        except TurnCancelled:
            self.renderer.interrupted()
        except (AgentStop, ModelError) as exc:
            runtime.session.record_system("error", message=str(exc))
            self.renderer.error(str(exc))

    async def _cancellable(self, coro: Any) -> Any:
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

    def _install_sigint(self) -> None:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._on_sigint)

    def _on_sigint(self) -> None:
        if self._current is not None and not self._current.done():
            self._current.cancel()

    # -- permission prompts

    async def ask_permission(self, call: ToolUseBlock, reason: str) -> PermissionAnswer:
        """Show what the tool will do and ask: yes / yes for this session / no (with a message)."""
        from claude_mini.agent.loop import PermissionAnswer
        from claude_mini.ui.render import one_line, permission_preview, preview_diff

        runtime = await self.get_runtime()
        cwd = runtime.agent.ctx.cwd
        rule = one_line(runtime.policy.suggest_rule(call.name, call.input))  # holds the command text
        self.renderer.pause()
        self.console.print(permission_preview(call, reason, cwd, preview_diff(call, cwd)))
        options = [("yes", "Yes"), ("always", f"Yes, and don't ask again this session for {rule}"),
                   ("no", "No, and tell the model what to do differently")]
        try:
            answer = await self.choose(permission_question(call, cwd), options, shortcuts="yan", escape="no")
            if answer is None:
                raise KeyboardInterrupt
            message = ""
            if answer == "no":
                message = await PromptSession(style=STYLE, input=self._input, output=self._output).prompt_async(
                    [("class:dim", "  What should it do instead? (Enter to skip) ")], handle_sigint=False)
        except (KeyboardInterrupt, EOFError):
            raise asyncio.CancelledError() from None  # Ctrl-C here cancels the whole turn
        finally:
            self._install_sigint()
            self.renderer.resume()
        return PermissionAnswer(allow=answer != "no", remember=answer == "always", message=message.strip())

    async def choose(self, message: str, options: Sequence[tuple[str, str]], *, shortcuts: str = "",
                     escape: str | None = None) -> str | None:
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
        finally:
            self._install_sigint()

    # -- CommandHost

    def request_exit(self) -> None:
        """/exit."""
        self.exit_requested = True

    def session_changed(self) -> None:
        """/clear or /resume swapped the session (the status line shows the new one on the next prompt)."""

    # -- keys and status line

    def _bindings(self) -> KeyBindings:
        keys = KeyBindings()
        keys.add("enter", eager=True)(self._on_enter)
        keys.add("escape", "enter")(lambda event: event.current_buffer.insert_text("\n"))
        keys.add("c-j")(lambda event: event.current_buffer.insert_text("\n"))
        keys.add("c-c", eager=True)(self._on_ctrl_c)
        keys.add("c-d", eager=True)(self._on_ctrl_d)
        keys.add("s-tab", eager=True)(lambda event: self.cycle_mode())
        return keys

    def _on_enter(self, event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state and state.current_completion:
            buffer.apply_completion(state.current_completion)
        elif buffer.document.is_cursor_at_the_end and buffer.text.endswith("\\"):
            buffer.delete_before_cursor(1)
            buffer.insert_text("\n")
        elif not buffer.text.strip():
            buffer.reset()  # blank input is not sent, nor kept in the history
        else:
            buffer.validate_and_handle()

    def _on_ctrl_c(self, event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            self._arm_or_exit(event)

    def _on_ctrl_d(self, event: KeyPressEvent) -> None:
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

    def cycle_mode(self) -> None:
        """Shift-Tab: the next permission mode (applied when the runtime is ready, if it is not yet)."""
        runtime = self.loader.peek()
        if runtime is None:
            modes = tuple(MODE_LABELS)
            self._pending_mode = commands.next_mode(self._pending_mode, modes)
        else:
            policy = runtime.policy
            policy.mode = commands.next_mode(policy.mode, policy.available_modes)
        self.prompt.app.invalidate()

    def toolbar(self) -> FormattedText:
        """The status line: model · mode · context used · cost · background work."""
        if time.monotonic() < self._armed_until:
            return FormattedText([("class:toolbar.warn", " Press Ctrl-C or Ctrl-D again to exit")])
        runtime = self.loader.peek()
        mode = runtime.policy.mode if runtime else self._pending_mode
        mode_style = "" if mode == "default" else "class:toolbar.mode"
        line = [("", f" {runtime.agent.model if runtime else self.config.model} · "),
                (mode_style, f"mode: {MODE_LABELS.get(mode, mode)}"), ("", " (shift-tab)")]
        if runtime:
            used, window = commands.context_used(runtime), commands.context_window(runtime)
            line.append(("", f" · context {commands.human_tokens(used)}/{commands.human_tokens(window)} "
                             f"({100 * used / window:.0f}%) · ${runtime.session.costs.total_cost:.4f}"))
            warning = commands.compact_warning(runtime)
            if warning:
                line.append(("class:toolbar.warn", f" · {warning}"))
        words = self.notices.words()
        if words:
            line.append(("class:toolbar.warn", f" · {words}…"))
        return FormattedText(line)

    # -- messages outside turns

    def _banner(self) -> None:
        lines = [("class:banner", f"claude-mini {__version__}"),
                 ("class:dim", f"  ·  {self.config.model}  ·  {self.config.cwd}\n"),
                 ("class:dim", "/help for commands · @ to attach a file · Esc cancels a turn · "
                               "Ctrl-D twice exits\n")]
        for warning in self.config.warnings:
            lines.append(("class:warn", f"⚠ {visible_controls(warning)}\n"))
        print_formatted_text(FormattedText(lines), style=STYLE, end="")

    def _show_notice(self, notice: Notice) -> None:
        """Draw one notice of the session's channel (on the event loop's thread)."""
        if notice.level == "warning":
            self.notify(f"⚠ {notice.text}", "yellow")
        else:
            self.notify(notice.text, "dim" if notice.level == "saved" else "yellow")


class StartupFailed(Exception):
    """The runtime could not be built (no model configured, a bad setting); the REPL ends."""


def _startup_message(exc: BaseException | None) -> str:
    """The one line shown when the runtime could not be built."""
    from claude_mini.runtime import SetupError

    if isinstance(exc, SetupError):
        return str(exc)
    return f"could not start the session: {type(exc).__name__}: {exc}"


def run_repl(config: Config, prompt: str | None = None, *, resume: str | None = None,
             continue_: bool = False) -> int:
    """`claude-mini [PROMPT]`: the interactive session; returns the exit status."""
    if not sys.stdin.isatty():
        sys.stderr.write("claude-mini: interactive mode needs a terminal; use -p to run a prompt "
                         "from an argument or stdin.\n")
        return 2
    session = None
    if resume or continue_:
        from claude_mini.runtime import SetupError, open_session

        try:
            session = open_session(config, resume=resume, continue_=continue_)
        except SetupError as exc:
            sys.stderr.write(f"claude-mini: {visible_controls(str(exc))}\n")
            return 1
        print(f"Resumed session {session.id} ({len(session.messages)} messages).")
    if not config.trusted:  # asked before the prompt exists: the answer decides the settings it reads
        from claude_mini.ui.trust_prompt import confirm_trust

        confirm_trust(config)
    try:
        return asyncio.run(Repl(config, session=session).run(prompt))
    except KeyboardInterrupt:
        return 130
