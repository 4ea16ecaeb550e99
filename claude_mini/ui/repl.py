"""The interactive REPL: read input, run slash commands and turns, ask permission.

    run_repl ─► Repl.run ─► prompt ─┬─ /command ─► commands.run_command
                                    └─ message  ─► attach_mentions ─► Agent.run ─► Renderer

The parts it is made of, each in its own module:

    startup.py      banner first, the runtime built in a background thread (start-up speed)
    terminal.py     colours, the prompt's keys, Ctrl-C / Esc / echo while a turn runs
    status_line.py  model · mode · context · cost · background work, under the prompt
    mentions.py     @path completion and attachment
    render.py       rich rendering of the agent's events

The REPL owns the session's `NoticeChannel` (claude_mini.base.notices) and gives it
to the runtime: the memory layers' notices are drawn above the prompt, and
their background work shows in the status line and the spinner.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.application import in_terminal, run_in_terminal
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.history import FileHistory
from prompt_toolkit.output import create_output

from claude_mini.base import paths
from claude_mini.base.notices import Notice, NoticeChannel
from claude_mini.base.text import one_line, visible_controls
from claude_mini.command_table import CommandTable, discover
from claude_mini.llm.protocol import ModelError
from claude_mini.signals import report_last_words
from claude_mini.ui import commands
from claude_mini.ui.draft_recall import DraftRecall, recall_of
from claude_mini.ui.mcp_approval import confirm_mcp_servers
from claude_mini.ui.mentions import ProjectFiles, ReplCompleter, attach_mentions, attach_resources
from claude_mini.ui.skill_commands import register_runtime_commands, wait_for_custom_commands
from claude_mini.ui.startup import (
    RuntimeLoader,
    SessionStart,
    StartupFailed,
    fail_if_trust_cannot_help,
    open_client_early,
    print_banner,
    startup_message,
)
from claude_mini.ui.status_line import MODE_LABELS, next_mode, status_line
from claude_mini.ui.terminal import (
    CANCELLED,
    STYLE,
    ExitKeys,
    Interrupts,
    ShellLineLexer,
    choice_menu,
    discard_typeahead,
    escape_cancels,
    prompt_bindings,
    quiet_tty,
)
from claude_mini.ui.trust_prompt import confirm_trust

if TYPE_CHECKING:
    from rich.console import Console

    from claude_mini.agent.loop import PermissionAnswer
    from claude_mini.config import Config
    from claude_mini.llm.messages import MediaBlock, ToolUseBlock
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.runtime import Runtime
    from claude_mini.session import Session
    from claude_mini.ui.render import Renderer


IDLE_NOTIFY_MS = 60_000
WORKSPACE_EDITS = "Edit(./**)"  # the rule suggested for an edit inside the project
BYPASS_NOTE = (
    "⚠ bypassPermissions: every tool runs without asking (deny and ask rules still apply); Shift-Tab leaves it."
)
T = TypeVar("T")


def permission_question(call: ToolUseBlock, cwd: Path, grants: Sequence[str] = ()) -> str:
    """`Run this command?`, `Make this edit to app.py?` ... (controls in a name made visible);
    a skill's question says the rules its allowed-tools would add (`grants`)."""
    from claude_mini.ui.render import short_path  # startup: rich loads after the first paint

    raw = short_path(str(call.input.get("file_path", "")), cwd)
    target = one_line(raw, terminal=True)
    if call.name == "Bash":
        return "Run this command?"
    if call.name == "Edit":
        return f"Make this edit to {target}?"
    if call.name == "Write":
        return f"{'Overwrite' if (cwd / raw).exists() else 'Create'} {target}?"
    if call.name == "WebFetch":
        return one_line(f"Fetch {call.input.get('url', '')}?", 300, terminal=True)
    if call.name == "WebSearch":
        return one_line(f"Search the web for {call.input.get('query', '')!r}?", 300, terminal=True)
    if call.name == "Skill":
        rules = f" It would allow {', '.join(grants)} without asking for the rest of this turn." if grants else ""
        return one_line(f"Load the skill {call.input.get('skill', '')}?{rules}", terminal=True)
    return f"Allow {one_line(call.name, terminal=True)}?"


def skill_grants(runtime: Runtime, call: ToolUseBlock) -> list[str]:
    """The allowed-tools a Skill call would turn into allow rules for the turn (a project's only in
    a trusted folder); [] for any other call."""
    skill = call.input.get("skill")
    if call.name != "Skill" or runtime.skills is None or not isinstance(skill, str):
        return []
    entry = runtime.skills.catalog.find(skill.strip())
    if entry is None or not (entry.scope == "user" or runtime.config.trusted):
        return []
    return list(entry.allowed_tools)


class Repl:
    """One interactive session: reads input, runs commands and turns, draws the status line."""

    def __init__(
        self,
        config: Config,
        *,
        session: Session | None = None,
        client: ModelClient | None = None,
        notices: NoticeChannel | None = None,
        input: Any = None,
        output: Any = None,
        console: Console | None = None,
    ) -> None:
        self.config = config
        self.notices = notices or NoticeChannel()
        self.files = ProjectFiles(config.cwd)
        self.client = client  # opened before the prompt (offline model, no API configured), else None
        self.loader = RuntimeLoader(lambda: self._build_runtime(session, client))
        self.exit_requested = False
        self.exit_code = 0
        self.exit_keys = ExitKeys()
        self.interrupts = Interrupts()
        self._pending_mode = config.permission_mode or config.get("permissions.defaultMode") or "default"
        # Only a session started in bypassPermissions (and not barred from it) may Shift-Tab to it.
        self._bypass_started = (
            self._pending_mode == "bypassPermissions"
            and config.get("permissions.disableBypassPermissionsMode") != "disable"
        )
        self._console = _guarded(console) if console is not None else None  # None: made on first use
        self._told_discovery = False  # the command modules that failed to import are said once
        self._told_bypass = False  # what bypassPermissions means is said the first time Shift-Tab reaches it
        self._renderer: Renderer | None = None
        self._input, self._output = input, output
        self._held: list[tuple[str, str]] | None = None  # notices kept back while a menu is open
        self.queued: list[str] = []  # lines sent with Enter while a turn ran: sent after it, in order
        self._draft = ""  # the next prompt's input: queued lines given back by a cancel
        self._transcript_next = False  # Ctrl-O was pressed while a turn ran
        self.prompt = self._prompt_session()
        self.drafts = DraftRecall(self.loader, self.prompt.default_buffer)
        self.startup = SessionStart(self.loader, self.prompt.app, resumed=bool(session and session.messages))
        self._resumed = session  # redrawn under the banner

    # -- start-up

    def _build_runtime(self, session: Session | None, client: ModelClient | None) -> Runtime:
        from claude_mini.runtime import build_runtime  # startup: the runtime is built after the first paint
        from claude_mini.session import transcript_state  # startup: kept off the first paint

        runtime = build_runtime(
            self.config, notices=self.notices, session=session, client=client, ask_user=self.ask_permission
        )
        report_last_words(lambda: transcript_state(runtime.session))  # a signal's last line says whether it is saved
        if runtime.subagents is not None:  # a running subagent is one live line, not its output
            runtime.subagents.listen(lambda run, event: self.renderer.on_subagent(run, event))
        with contextlib.suppress(ValueError):
            runtime.policy.mode = self._pending_mode
        if runtime.sandbox is not None:  # a new host a sandboxed command connects to asks here
            runtime.sandbox.ask_domain = self.ask_domain
        return runtime

    def _prompt_session(self) -> PromptSession[str]:
        history = paths.project_dir(self.config.cwd) / "history"
        history.parent.mkdir(parents=True, exist_ok=True)
        return PromptSession(
            message=[("class:prompt", "> ")],
            multiline=True,
            prompt_continuation="  ",
            history=FileHistory(str(history)),
            completer=ReplCompleter(self.files, resources=self._resources, table=self.command_table),
            complete_while_typing=True,
            complete_in_thread=True,
            key_bindings=prompt_bindings(self.exit_keys, self.cycle_mode, self.open_transcript),
            lexer=ShellLineLexer(),
            bottom_toolbar=self.toolbar,
            style=STYLE,
            reserve_space_for_menu=6,
            input=self._input,
            output=self._output or create_output(always_prefer_tty=True),
        )

    @property
    def console(self) -> Console:
        """The rich console for conversation output: the injected one, else a terminal console
        created on first use (rich is slow to import)."""
        if self._console is None:
            from rich.console import Console  # startup: rich loads after the first paint

            from claude_mini.ui.render import guard_console  # startup: rich loads after the first paint

            self._console = guard_console(Console(highlight=False, emoji=False, markup=False))
        return self._console

    @property
    def renderer(self) -> Renderer:
        """The event renderer (created on first use)."""
        if self._renderer is None:
            from claude_mini.ui.render import Renderer  # startup: rich loads after the first paint

            self._renderer = Renderer(self.console, cwd=self.config.cwd, status=self.notices)
        return self._renderer

    # -- main loop

    async def run(self, initial: str | None = None) -> int:
        """Read and handle input until /exit, a double Ctrl-C/Ctrl-D or a fatal start-up error."""
        self.interrupts.install()
        self.notices.subscribe(self.prompt.app.invalidate)
        print_banner(self.config, self.client)
        if self._bypass_started:  # said once, under the banner
            self._told_bypass = True
            print_formatted_text(FormattedText([("ansiyellow", BYPASS_NOTE)]), style=STYLE)
        if self._resumed is not None:
            from claude_mini.ui.session_commands import resumed_lines  # startup: kept off the first paint

            print("\n".join(resumed_lines(self._resumed)))  # which session, and its last exchanges
        loop = asyncio.get_running_loop()
        # From this thread (the ones said before the prompt, such as the offline model's): drawn
        # now, under the banner; from background threads: through the event loop.
        self.notices.attach(
            lambda notice: (
                self._show_notice(notice) if _on_loop(loop) else loop.call_soon_threadsafe(self._show_notice, notice)
            )
        )
        self.loader.runtime_future.add_done_callback(lambda _: loop.call_soon_threadsafe(self._list_mcp))
        if initial and initial.strip():
            self.startup.begin()
            self.queued.append(initial)
        while not self.exit_requested:
            text = None
            if not self.queued:
                draft, self._draft = self._draft, ""
                idle = self._notify_when_idle(loop)
                try:
                    text = await self.prompt.prompt_async(
                        default=draft, handle_sigint=False, pre_run=self._before_prompt
                    )
                except (EOFError, KeyboardInterrupt):
                    break
                finally:
                    if idle is not None:
                        idle.cancel()
                self.drafts.settle(text)
            # Quiet until the next prompt, not only while a turn streams: keys typed while the
            # runtime loads or between queued turns keep their Enter (ICRNL off) and no echo.
            with quiet_tty(sys.stdin):
                if text is not None:
                    await self.handle(text)
                await self._send_queued()
        await self._shutdown()
        return self.exit_code

    def _list_mcp(self) -> None:
        """Once the runtime is built: its custom commands and skills registered; its MCP servers'
        prompts and resources, listed as they connect."""
        runtime = self.loader.peek()
        if runtime is not None:
            from claude_mini.ui.mcp_commands import warm_listings  # startup: MCP loads after the first paint

            register_runtime_commands(runtime)
            self._mcp_listing = asyncio.ensure_future(warm_listings(runtime))
            recall = recall_of(runtime)
            if recall is not None:
                recall.warm_up()

    def command_table(self) -> CommandTable:
        """The session's slash commands (only the built-ins before the runtime is built)."""
        return commands.session_table(self.loader.peek())

    def _resources(self) -> list[tuple[str, str]]:
        """@server:uri completions (the listed resources; none before the runtime is built)."""
        from claude_mini.ui.mcp_commands import resource_mentions  # startup: MCP loads after the first paint

        return resource_mentions(self.loader.peek())

    def _notify_when_idle(self, loop: asyncio.AbstractEventLoop) -> asyncio.TimerHandle | None:
        """After an answer, tell the lifecycle (the Notification hook) once the prompt has waited
        `messageIdleNotifThresholdMs` (default 60 s, as Claude Code's) with nothing sent."""
        runtime = self.loader.peek()
        if runtime is None or not runtime.session.messages:
            return None
        ms = runtime.config.get("messageIdleNotifThresholdMs", IDLE_NOTIFY_MS)
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms <= 0:
            ms = IDLE_NOTIFY_MS
        return loop.call_later(
            ms / 1000, runtime.waiting_for_user, "idle_prompt", "claude-mini is waiting for your input"
        )

    async def _send_queued(self) -> None:
        """Send the lines queued during turns (and the initial prompt), in order, each shown as typed."""
        while self.queued and not self.exit_requested:
            text = self.queued.pop(0)
            print_formatted_text(FormattedText([("class:prompt", "> "), ("", text)]), style=STYLE)
            self.prompt.history.append_string(text)
            await self.handle(text)

    async def handle(self, text: str) -> None:
        """Run one input: nothing for blank input, a slash command, or a turn."""
        if not text.strip():
            return
        try:
            runtime = self.loader.peek()
            if runtime is not None:  # settings files edited since the last input apply from this one
                await runtime.apply_settings_changes()
            if text.lstrip().startswith("/") and not commands.is_command(text, self.command_table()):
                # A custom command's name with a dot or a leading digit is known once registered.
                await wait_for_custom_commands(self.get_runtime)
            if text.lstrip().startswith("!"):
                await self.run_shell(text)
            elif commands.is_command(text, self.command_table()):
                if await self.interrupts.run(self._run_command(text)) is CANCELLED:
                    self._unqueue()  # lines queued while a command's `!` lines ran
            else:
                await self.run_turn(text)
        except StartupFailed as exc:
            self._fatal(str(exc))
        except Exception as exc:  # a bug must not end the session
            if self.config.debug:
                self.console.print_exception()
            self.renderer.error(f"internal error: {type(exc).__name__}: {exc}. {self._transcript_state()}.")
        if not self.exit_requested:
            self.console.print()

    async def _run_command(self, text: str) -> None:
        """A slash command (typed before the runtime registered the custom ones, it waits for them)."""
        await wait_for_custom_commands(self.get_runtime)
        runtime = self.loader.peek()
        name = text.strip()[1:].split(" ", 1)[0]
        if runtime is not None and self.command_table().find(name) is None:  # a command file made mid-session
            runtime.refresh_custom_commands()
            register_runtime_commands(runtime)
        if not self._told_discovery:
            self._told_discovery = True
            for problem in discover().problems:
                self.console.print(problem, style="yellow", markup=False)
        await commands.run_command(
            text, self, self.console, self.get_runtime, self.command_table(), debug=self.config.debug
        )

    def _transcript_state(self) -> str:
        """What is true of this session's transcript, after an internal error."""
        from claude_mini.session import transcript_state  # startup: kept off the first paint

        runtime = self.loader.peek()
        return transcript_state(runtime.session if runtime is not None else None)

    async def get_runtime(self) -> Runtime:
        """The runtime, built in the background; StartupFailed if it could not be built."""
        try:
            return await self.loader.runtime()
        except Exception as exc:
            raise StartupFailed(startup_message(exc)) from exc

    def _fatal(self, message: str) -> None:
        sys.stderr.write(f"claude-mini: {visible_controls(message)}\n")
        self.exit_code, self.exit_requested = 1, True

    async def _shutdown(self) -> None:
        future = self.loader.runtime_future
        if self.exit_code == 0 and future.done() and future.exception() is not None:
            self._fatal(startup_message(future.exception()))
        runtime = self.loader.peek()
        if runtime is None:
            return
        if self.startup.maintenance is not None:
            self.startup.maintenance.cancel()  # a dream cut short changes nothing (memory/maintenance/dream.py)
        await self._finish_extraction(runtime)
        await runtime.close("prompt_input_exit")
        if runtime.session.messages:
            print_formatted_text(
                FormattedText([("class:dim", f"Resume this session with: claude-mini --resume {runtime.session.id}")]),
                style=STYLE,
            )

    async def _finish_extraction(self, runtime: Runtime) -> None:
        """Start the session's final memory extraction if its pending turns are durable, and give
        a running one its configured time before leaving (Ctrl-C skips it)."""
        extractor = runtime.extractor
        if extractor is None or not extractor.schedule_final_run(runtime.agent):
            return
        limit = extractor.settings.wait_seconds
        print_formatted_text(
            FormattedText([("class:dim", f"Saving memories from this session (up to {limit:g} s; Ctrl-C skips)…")]),
            style=STYLE,
        )
        self.interrupts.install()
        if await self.interrupts.run(extractor.wait(limit)) is not True:
            await extractor.stop()

    def notify(self, text: str, style: str = "dim") -> None:
        """Show one line from background work, above the prompt if the user is typing; while a
        menu or question is open, after it (a line drawn into it would break its screen)."""
        if self._held is not None:
            self._held.append((text, style))
            return
        show: Callable[[], None] = lambda: self.renderer.line(text, style)  # noqa: E731
        if self.prompt.app.is_running:
            asyncio.ensure_future(run_in_terminal(show))
        else:
            show()

    @contextlib.contextmanager
    def notices_held(self) -> Iterator[None]:
        """Keep background lines back while a menu or question has the screen (calls nest)."""
        outer = self._held is not None
        if not outer:
            self._held = []
        try:
            yield
        finally:
            if not outer:
                held, self._held = self._held or [], None
                for text, style in held:
                    self.notify(text, style)

    # -- turns

    async def run_turn(self, text: str) -> None:
        """Send one message (with its @files) to the model and render the answer; Esc or Ctrl-C
        cancels it."""
        runtime = await self.get_runtime()
        warn = lambda warning: self.renderer.line(f"⚠ {warning}", "yellow")  # noqa: E731
        media: list[MediaBlock] = []  # @images, @PDFs and pasted image paths, as blocks beside the text
        note = lambda line: self.renderer.line(f"⎿  {line}", "dim")  # noqa: E731
        message = attach_mentions(
            text, runtime, project_root=self.config.project_root, files=self.files, warn=warn, media=media, note=note
        )
        message += await attach_resources(text, runtime, warn=warn)
        renderer = self.renderer
        renderer.begin_turn()
        try:
            with escape_cancels(
                self.prompt.input, self.interrupts.cancel, self.queue, self._show_typeahead, self._transcript_later
            ):
                if await self.interrupts.run(self._consume(runtime, message, text, media)) is CANCELLED:
                    renderer.interrupted()
                    self._unqueue()
        finally:
            renderer.end_turn()

    async def run_shell(self, text: str) -> None:
        """A `!` line: its command runs now as the Bash tool's would (shell_mode.py) and joins the
        conversation; its output is drawn as a tool call's. Esc or Ctrl-C stops it."""
        from claude_mini.ui.render import indented, outcome_lines  # startup: rich loads after the first paint
        from claude_mini.ui.shell_mode import run_shell_line, shell_command  # startup: kept off the first paint

        command = shell_command(text)
        if not command:
            self.renderer.line("Type a command after ! to run it in the shell, e.g. !git status", "dim")
            return
        runtime = await self.get_runtime()
        status = f"Running !{one_line(command, 40, terminal=True)}"
        outcome = await self.interrupts.run(self.cancellable(run_shell_line(runtime.agent, command), status))
        if outcome is CANCELLED:
            self.renderer.interrupted()
            self._unqueue()
            return
        call, result = outcome
        self.console.print(indented(outcome_lines(call, result), "  ⎿  "))

    async def cancellable(self, work: Awaitable[T], status: str) -> T:
        """Await `work` (a typed command's `!` lines) as a turn runs: the spinner says `status`, Esc
        or Ctrl-C cancels it, lines typed meanwhile are queued (`handle` puts them back on a cancel)."""
        renderer = self.renderer
        renderer.begin_turn()
        renderer.activity = status
        try:
            with escape_cancels(
                self.prompt.input, self.interrupts.cancel, self.queue, self._show_typeahead, self._transcript_later
            ):
                return await work
        finally:
            renderer.end_turn()

    def queue(self, text: str) -> None:
        """A line sent with Enter while a turn runs: sent when the turn ends (as Claude Code does)."""
        self.queued.append(text)
        first = text.splitlines()[0] + (" …" if "\n" in text else "")
        self.renderer.line(f"Queued: {first} (sent when this turn ends; Esc puts it back in the input)", "dim")

    def _show_typeahead(self, text: str) -> None:
        """What the user is typing while a turn runs, drawn under the spinner until Enter queues it."""
        self.renderer.typeahead = text

    def _unqueue(self) -> None:
        """A cancelled turn: the queued lines go back into the input, to be edited or sent again."""
        if self.queued:
            self._draft = "\n".join(self.queued)
            self.queued.clear()
            self.renderer.line("The queued message is back in the input.", "dim")

    async def _consume(self, runtime: Runtime, text: str, typed: str, media: Sequence[MediaBlock] = ()) -> None:
        from claude_mini.agent.loop import (  # startup: the loop loads after the first paint
            AgentStop,
            PromptWithdrawn,
            StoppedByHook,
            TurnCancelled,
            TurnDeclined,
        )

        await self.loader.sdk_ready()
        try:
            async for event in runtime.agent.run(text, media=media):
                self.renderer.on_event(event)
        except TurnCancelled as exc:
            self.renderer.interrupted()
            self._unqueue()
            if isinstance(exc, PromptWithdrawn):  # never sent: it goes back into the input
                self._draft = "\n".join(filter(None, (typed, self._draft)))
                self.renderer.line("The message was not sent; it is back in the input.", "dim")
        except TurnDeclined as exc:  # the user said No: the turn waits for them, not an error
            runtime.session.record_system("stopped", message=str(exc))
            self.renderer.line(f"⎿  {exc}", "dim")
        except StoppedByHook as exc:  # the turn ended as a hook asked: said, not an error
            runtime.session.record_system("stopped", message=str(exc))
            self.renderer.line(f"⎿  {exc}", "yellow")
        except (AgentStop, ModelError) as exc:
            runtime.session.record_system("error", message=str(exc))
            self.renderer.error(str(exc))

    # -- permission prompts

    async def ask_permission(self, call: ToolUseBlock, reason: str) -> PermissionAnswer:
        """Show what the tool will do and ask: yes / yes and don't ask again / no (the turn stops) /
        no and tell it what to do instead. Esc is No. A plan (ExitPlanMode) has its own question."""
        from claude_mini.agent.loop import PermissionAnswer  # startup: the loop loads after the first paint
        from claude_mini.permissions.decisions import EXIT_PLAN_TOOL  # startup: kept off the first paint
        from claude_mini.ui.render import permission_preview, preview_diff  # startup: rich loads after the first paint

        runtime = await self.get_runtime()
        if call.name == EXIT_PLAN_TOOL:
            return await self.ask_plan_approval(runtime, call)
        runtime.waiting_for_user("permission_prompt", f"claude-mini needs your permission to use {call.name}")
        cwd = runtime.agent.ctx.cwd
        suggested = runtime.policy.suggest_rule(call.name, call.input)
        options = [
            ("yes", "Yes"),
            ("always", self._always_label(runtime, call, suggested)),
            ("no", "No (esc): the turn stops and waits for you"),
            ("instead", "No, and tell it what to do instead"),
        ]
        with self.notices_held():
            self.renderer.pause()
            tool = runtime.agent.tools.get(call.name)
            # What the tool is, for any whose call is not self-explanatory (an MCP server's above all).
            about = tool.description if tool is not None and call.name not in ("Bash", "Edit", "Write") else ""
            self.console.print(permission_preview(call, reason, cwd, preview_diff(call, cwd), about))
            try:
                question = permission_question(call, cwd, skill_grants(runtime, call))
                answer = await self.choose(question, options, shortcuts="yant", escape="no")
                if answer is None:
                    raise KeyboardInterrupt
                message = await self._ask_text("What should it do instead?") if answer == "instead" else ""
            except (KeyboardInterrupt, EOFError):
                raise asyncio.CancelledError() from None  # Ctrl-C here cancels the whole turn
            finally:
                self.interrupts.install()
                self.renderer.resume()
            if answer == "always":
                for line in self._remember(runtime, suggested).splitlines():
                    self.renderer.line(line, "dim")
        return PermissionAnswer(allow=answer in ("yes", "always"), message=message)

    def _always_label(self, runtime: Runtime, call: ToolUseBlock, suggested: str) -> str:
        """The "don't ask again" choice: an edit in the project switches to acceptEdits for the
        session (as Claude Code offers); anything else saves its rule to the local settings."""
        from claude_mini.permissions.bash import exact_command_rule  # startup: kept off the first paint

        if suggested == WORKSPACE_EDITS:  # never saved: it would let every later session edit unasked
            return "Yes, and allow all edits in this project during this session (shift+tab)"
        rule = one_line(suggested, terminal=True)  # holds the command text
        # A program that runs others or writes any file (`docker run`, `tee`, `sudo`) gets no wider rule.
        exact = call.name == "Bash" and exact_command_rule(suggested, call.input.get("command"))
        scope = "exactly this command line" if exact else rule
        where = "in this project" if runtime.config.trusted else "this session"
        return f"Yes, and don't ask again {where} for {scope}"

    def _remember(self, runtime: Runtime, suggested: str) -> str:
        """Carry out "don't ask again"; the line saying what was done."""
        from claude_mini.permissions.decisions import RuleError  # startup: kept off the first paint
        from claude_mini.ui.permission_commands import remember_allow  # startup: kept off the first paint

        if suggested == WORKSPACE_EDITS:
            if runtime.policy.mode == "default":
                runtime.policy.mode = "acceptEdits"
            return "Edits in this project are accepted for the rest of this session (mode: acceptEdits)."
        try:
            return remember_allow(runtime, suggested)
        except RuleError as exc:  # only means it will ask again next time
            return f"Not remembered: {exc}"

    async def _ask_text(self, question: str) -> str:
        """One line of text under a menu (Enter alone gives "")."""
        session: PromptSession[str] = PromptSession(style=STYLE, input=self._input, output=self._output)
        text = await session.prompt_async(
            [("class:dim", f"  {question} (Enter alone: just stop) ")], handle_sigint=False
        )
        return text.strip()

    async def ask_plan_approval(self, runtime: Runtime, call: ToolUseBlock) -> PermissionAnswer:
        """ExitPlanMode: the plan drawn as markdown, then approve it (and how edits go on) or keep
        planning, saying why. Approving switches the mode; keep planning with nothing said (or
        Esc on the menu) stops the turn, waiting for the user."""
        from claude_mini.agent.loop import PermissionAnswer  # startup: the loop loads after the first paint
        from claude_mini.ui.render import plan_panel  # startup: rich loads after the first paint

        runtime.waiting_for_user("permission_prompt", "claude-mini has a plan for you to approve")
        options = [
            ("acceptEdits", "Yes, and auto-accept edits"),
            ("default", "Yes, and manually approve edits"),
            ("keep", "No, keep planning (tell it why)"),
        ]
        with self.notices_held():
            self.renderer.pause()
            self.console.print(plan_panel(str(call.input.get("plan", "")), self.console.width))
            try:
                answer = await self.choose("Would you like to proceed?", options, shortcuts="ymn", escape="stop")
                if answer is None:
                    raise KeyboardInterrupt
                message = await self._ask_text("What should change in the plan?") if answer == "keep" else ""
            except (KeyboardInterrupt, EOFError):
                raise asyncio.CancelledError() from None
            finally:
                self.interrupts.install()
                self.renderer.resume()
        if answer in ("keep", "stop"):  # Esc, or nothing said: the turn stops and waits for the user
            return PermissionAnswer(allow=False, message=message)
        runtime.policy.mode = answer
        self.renderer.line(f"Plan approved; permission mode: {MODE_LABELS.get(answer, answer)}.", "dim")
        return PermissionAnswer(allow=True)

    async def ask_domain(self, host: str, port: int) -> bool:
        """A sandboxed command connects to a host no rule allows: allow it for the session?"""
        runtime = await self.get_runtime()
        runtime.waiting_for_user("permission_prompt", f"claude-mini needs your permission to reach {host}")
        self.renderer.pause()
        try:
            answer = await self.choose(
                one_line(
                    f"A sandboxed command connects to {host}:{port}. Allow {host} for this session?", terminal=True
                ),
                [("yes", f"Yes, allow {one_line(host, terminal=True)} until the session ends"), ("no", "No")],
                shortcuts="yn",
                escape="no",
            )
        finally:
            self.renderer.resume()
        return answer == "yes"

    async def choose(
        self, message: str, options: Sequence[tuple[str, str]], *, shortcuts: str = "", escape: str | None = None
    ) -> str | None:
        """A numbered menu (`terminal.choice_menu`); SIGINT is the REPL's again afterwards."""
        try:
            with self.notices_held():
                return await choice_menu(message, options, shortcuts=shortcuts, escape=escape)
        finally:
            self.interrupts.install()

    # -- CommandHost

    def request_exit(self) -> None:
        """/exit."""
        self.exit_requested = True

    def put_in_input(self, text: str) -> None:
        """The next prompt starts with `text` (a rewound message, to edit or send again)."""
        self._draft = text

    def session_changed(self) -> None:
        """/clear or /resume swapped the session (the status line shows the new one on the next prompt);
        the custom commands are the new conversation's catalog's."""
        runtime = self.loader.peek()
        if runtime is not None:
            register_runtime_commands(runtime)

    # -- permission mode and status line

    def cycle_mode(self) -> None:
        """Shift-Tab: the next permission mode (applied when the runtime is ready, if it is not yet);
        bypassPermissions only in a session started in it, said once when the cycle reaches it."""
        runtime = self.loader.peek()
        if runtime is None:
            modes = tuple(m for m in MODE_LABELS if self._bypass_started or m != "bypassPermissions")
            self._pending_mode = mode = next_mode(self._pending_mode, modes)
        else:
            policy = runtime.policy
            policy.mode = mode = next_mode(policy.mode, policy.available_modes)
        if mode == "bypassPermissions" and not self._told_bypass:
            self._told_bypass = True
            self.notify(BYPASS_NOTE, "yellow")
        self.prompt.app.invalidate()

    def _transcript_later(self) -> None:
        """Ctrl-O while a turn runs: the view opens at the next prompt (the turn's output keeps the screen)."""
        if not self._transcript_next:
            self._transcript_next = True
            self.renderer.line("The transcript view opens when this turn ends.", "dim")

    def _before_prompt(self) -> None:
        """As the prompt appears: the first paint's work, and a transcript view asked for meanwhile."""
        self.startup.after_first_paint()
        if self._transcript_next:
            self._transcript_next = False
            self.open_transcript()

    def open_transcript(self) -> None:
        """Ctrl-O at the prompt: the transcript view over the prompt, which comes back as it was."""
        self.prompt.app.create_background_task(self._show_transcript())

    async def _show_transcript(self) -> None:
        from claude_mini.ui.transcript_view import show_transcript  # startup: rich loads after the first paint

        runtime = self.loader.peek()
        messages = runtime.session.messages if runtime is not None else []
        async with in_terminal():
            await show_transcript(messages, self.config.cwd, self.prompt.app.output.get_size().columns)

    def toolbar(self) -> FormattedText:
        """The status line (`status_line`), redrawn on every repaint."""
        return status_line(
            self.loader.peek(),
            model=self.config.model,
            pending_mode=self._pending_mode,
            notices=self.notices,
            exit_armed=self.exit_keys.armed(),
        )

    # -- messages outside turns

    def _show_notice(self, notice: Notice) -> None:
        """Draw one notice of the session's channel (on the event loop's thread)."""
        text = commands.repl_wording(notice.text)
        if notice.level == "warning":
            self.notify(f"⚠ {text}", "yellow")
        else:
            self.notify(text, "dim" if notice.level == "saved" else "yellow")


def _guarded(console: Console) -> Console:
    """An injected console, drawing no raw control characters (as the REPL's own)."""
    from claude_mini.ui.render import guard_console  # startup: rich loads after the first paint

    return guard_console(console)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    """Whether the caller runs on `loop`'s thread."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def run_repl(config: Config, prompt: str | None = None, *, resume: str | None = None, continue_: bool = False) -> int:
    """`claude-mini [PROMPT]`: the interactive session; returns the exit status."""
    if not sys.stdin.isatty():
        sys.stderr.write(
            "claude-mini: interactive mode needs a terminal; use -p to run a prompt from an argument or stdin.\n"
        )
        return 2
    try:
        code = _start(config, prompt, resume=resume, continue_=continue_)
    except KeyboardInterrupt:
        code = 130
    if code == 1:  # a start-up failure: keys typed meanwhile are not for the shell
        discard_typeahead(sys.stdin)
    return code


def _start(config: Config, prompt: str | None, *, resume: str | None, continue_: bool) -> int:
    """Open the session and the model client, then run the REPL; a start-up problem is one
    line and status 1, before the prompt is drawn where that can be known."""
    notices = NoticeChannel()
    session = None
    try:
        if resume or continue_:
            session = _open_session(config, resume=resume, continue_=continue_)
        if not config.trusted:  # asked before the prompt exists: the answer decides the settings it reads
            fail_if_trust_cannot_help(config, notices)
            confirm_trust(config)

        confirm_mcp_servers(config)  # before the runtime: the answers decide which servers start
        client = open_client_early(config, notices)
    except StartupFailed as exc:
        sys.stderr.write(f"claude-mini: {visible_controls(str(exc))}\n")
        return 1
    repl = Repl(config, session=session, client=client, notices=notices)
    if resume == "":  # -r/--resume without an id: the /resume picker, then the prompt if one was given
        repl.queued.append("/resume")
    return asyncio.run(repl.run(prompt))


def _open_session(config: Config, *, resume: str | None, continue_: bool) -> Session:
    from claude_mini.runtime import SetupError, open_session  # startup: the runtime is built after the first paint

    try:
        return open_session(config, resume=resume, continue_=continue_)
    except SetupError as exc:
        raise StartupFailed(str(exc)) from None
