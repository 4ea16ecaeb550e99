"""`claude-mini -p`: run one prompt to completion and print it as text, json or stream-json.

cli.py parses the flags and hands over to `run_print`, which builds the runtime, runs the turn
and turns every ending (setup error, Ctrl-C, a closed pipe, a bug) into an exit status.

The json and stream-json shapes are a contract (DESIGN.md section 4).
Exit status: 0 success, 1 failed run (usage errors, 2, are the CLI's).

Nothing model- or tool-derived reaches the terminal raw: text output and every
stderr line have their control characters made visible (`base.text`), and
json lines escape the DEL, C1 and bidi characters `json.dumps` would leave raw
(the parsed values are unchanged).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
import sys
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from claude_mini.agent.events import AgentEvent, MessageAdded
from claude_mini.agent.loop import AgentStop, MaxTurnsReached, StoppedByHook, TurnCancelled, TurnDeclined
from claude_mini.base.notices import Display, Notice, NoticeChannel
from claude_mini.base.text import json_safe, one_line, visible_controls
from claude_mini.llm.events import Retrying
from claude_mini.llm.messages import Message, message_to_api
from claude_mini.llm.protocol import ModelError
from claude_mini.llm.stream_assembly import encodable
from claude_mini.mcp_servers.lifecycle import McpPart
from claude_mini.permissions.decisions import EXIT_PLAN_TOOL
from claude_mini.runtime import Runtime, SetupError, build_runtime, open_session
from claude_mini.session import Session, transcript_state
from claude_mini.signals import report_last_words
from claude_mini.skills.catalog import CatalogError
from claude_mini.skills.expand import ExpansionError

if TYPE_CHECKING:
    from claude_mini.agent.subagent_run import SubagentRun
    from claude_mini.config import Config

OUTPUT_FORMATS = ("text", "json", "stream-json")
# How long text output waits for the memory extraction after the answer, unless
# memory.extractWaitSeconds says otherwise.
TEXT_WAIT_SECONDS = 5.0
# With a prompt argument, how long a pipe on stdin may stay silent before it is ignored (as Claude
# Code does): under CI, stdin is often an open pipe nobody writes to.
STDIN_WAIT_SECONDS = 3.0


def run_print_stream(
    config: Config, stdin: TextIO, say: Callable[[str], None], *, resume: str | None = None, continue_: bool = False
) -> int:
    """`-p --input-format stream-json`: each user message line on stdin is a turn of one session,
    each answered with its lines and a `result` line, until stdin ends (Claude Code's protocol)."""
    return run_print(config, "", "stream-json", say, resume=resume, continue_=continue_, messages=stdin)


def run_print(
    config: Config,
    text: str,
    output_format: str,
    say: Callable[[str], None],
    *,
    resume: str | None = None,
    continue_: bool = False,
    messages: TextIO | None = None,
) -> int:
    """Start a runtime and run one print-mode turn (or one per line of `messages`, stream-json
    input); returns the exit status. A setup problem is one line (`say`) and status 1; Ctrl-C
    says whether the transcript is saved (130)."""
    session: Session | None = None  # the last words say whether its transcript really is saved

    async def go() -> int:
        nonlocal session
        notices = NoticeChannel()  # shown once the runtime is built: a setup error comes alone
        for warning in config.warnings:
            notices.say(warning, "warning")
        try:
            session = open_session(config, resume=resume, continue_=continue_)
            runtime = build_runtime(config, notices=notices, session=session)
            report_last_words(lambda: transcript_state(runtime.session))
        except SetupError as exc:
            return _failed(say, str(exc), config.debug)
        notices.attach(stderr_display(output_format))
        try:
            run = PrintRun(runtime, output_format)
            return await (run.run_stream(messages) if messages is not None else run.run(text))
        finally:
            await runtime.close()

    try:
        return asyncio.run(go())
    except KeyboardInterrupt:
        say(f"interrupted. {transcript_state(session)}.")
        return 130
    except OutputClosed:
        end_as_a_broken_pipe()
    except Exception as exc:  # a bug must not dump a traceback on the user
        return _failed(
            say,
            f"internal error: {type(exc).__name__}: {exc}. {transcript_state(session)}; "
            "run again with --debug for details.",
            config.debug,
        )


def _failed(say: Callable[[str], None], message: str, debug: bool) -> int:
    """A one-line error (a traceback too with --debug); the exit status 1."""
    if debug:
        import traceback

        traceback.print_exc()
    say(message)
    return 1


def end_as_a_broken_pipe() -> NoReturn:
    """Stdout's reader went away (`| head`): end silently, killed by SIGPIPE as `cat` would be
    (status 141 in a shell), once the session was closed."""
    import os
    import signal

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
    raise SystemExit(128 + signal.SIGPIPE)  # not reached: the signal ends the process


def print_prompt(argument: str | None, stdin: TextIO | None, warn: Callable[[str], None]) -> str:
    """The text of a print-mode turn: the argument, then what was piped in (`git diff | -p "review"`).

    Without an argument, stdin is the prompt and is read to its end. With one, a terminal or an
    empty stdin adds nothing; a pipe that sends nothing within STDIN_WAIT_SECONDS is left alone.
    """
    if argument is not None:
        argument = _valid_utf8(argument)
    if stdin is None or stdin.closed or stdin.isatty():
        return argument or ""
    if argument is None:
        return _read_text(stdin).rstrip()
    ready, _, _ = select.select([stdin], [], [], STDIN_WAIT_SECONDS)
    if not ready:
        warn(
            f"nothing arrived on stdin within {STDIN_WAIT_SECONDS:g} s; going on with the prompt alone "
            "(redirect stdin from /dev/null to skip the wait)."
        )
        return argument
    piped = _read_text(stdin).rstrip()
    return f"{argument}\n{piped}" if piped.strip() else argument


def _read_text(stdin: TextIO) -> str:
    """All of stdin as UTF-8, each invalid byte a U+FFFD (a Latin-1 file piped in must not end the
    run: the locale's decoder would raise, or keep surrogates no encoder takes)."""
    buffer = getattr(stdin, "buffer", None)  # a StringIO (tests, embedding) has no bytes under it
    return stdin.read() if buffer is None else buffer.read().decode("utf-8", "replace")


def _valid_utf8(text: str) -> str:
    """An argument with the bytes argv could not decode (lone surrogates) as U+FFFD."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte
        return encodable(text)


def stderr_display(output_format: str, err: TextIO = sys.stderr) -> Display:
    """How print mode shows the session's notices: one stderr line each, warnings prefixed
    like the CLI's own; saved memories only with text output (json consumers have the result)."""

    def show(notice: Notice) -> None:
        if notice.level == "saved" and output_format != "text":
            return
        prefix = "claude-mini: " if notice.level == "warning" else ""
        line = visible_controls(notice.text).replace("\n", "\\n")  # one notice, one line
        err.write(prefix + line + "\n")

    return show


def _uncancel() -> None:
    """The Ctrl-C that cancelled the running task was handled: later awaits run normally."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


async def stdin_lines(stdin: TextIO) -> AsyncIterator[str]:
    """The non-blank lines of `stdin` as they arrive, read by a daemon thread (a blocked read
    must not keep the process alive after Ctrl-C)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:
        for line in iter(stdin.readline, ""):
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=read, name="stdin-stream-json", daemon=True).start()
    while (line := await queue.get()) is not None:
        if line.strip():
            yield line


def user_message_text(line: str) -> str:
    """The text of one stream-json input line, Claude Code's user message:
    `{"type":"user","message":{"role":"user","content":"..." | [{"type":"text","text":"..."}]}}`.
    Raises ValueError saying what is wrong."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    message = data.get("message") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("type") != "user" or not isinstance(message, dict):
        raise ValueError('expected {"type":"user","message":{"role":"user","content":...}}')
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise ValueError("message.content must be a string or a list of content blocks")
    kinds = {block.get("type") if isinstance(block, dict) else None for block in content}
    if kinds - {"text"}:
        raise ValueError("only text content blocks are read from stdin; this line has others")
    return "\n\n".join(str(block.get("text", "")) for block in content)


class OutputClosed(Exception):
    """Stdout was closed by its reader (`claude-mini -p ... | head`): the run ends quietly."""


def proposed_plan(message: Message) -> str:
    """The plan of the message's ExitPlanMode call, or ""."""
    for call in message.tool_uses:
        plan = call.input.get("plan") if call.name == EXIT_PLAN_TOOL and isinstance(call.input, dict) else None
        if isinstance(plan, str) and plan.strip():
            return plan
    return ""


def failure_text(exc: BaseException) -> str:
    """The `result` of a run that an exception ended."""
    if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)):
        return "interrupted"
    return f"internal error: {type(exc).__name__}: {exc}"


class PrintRun:
    """One print-mode run: drives the agent and writes the chosen output format."""

    def __init__(self, runtime: Runtime, output_format: str, out: TextIO = sys.stdout, err: TextIO = sys.stderr):
        self.runtime = runtime
        self.format = output_format
        self.out = out
        self.err = err
        self.started = time.monotonic()
        self.requests = 0
        self.result = ""
        self.plan = ""  # the plan an ExitPlanMode call presented: the result of a -p run in plan mode
        self.initialised = False  # the stream-json init line is written once per run

    def emit(self, obj: dict[str, Any]) -> None:
        """One json line; no raw control or bidi character, inside strings or out."""
        self.write(json_safe(json.dumps(obj, ensure_ascii=False)) + "\n")

    def write(self, text: str) -> None:
        """Write to stdout now; a reader that went away (`| head`) ends the run (OutputClosed)."""
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            raise OutputClosed from None

    def say(self, text: str) -> None:
        """One line on stderr (a notice, a retry, an error), controls made visible."""
        self.err.write(visible_controls(text) + "\n")

    async def run(self, prompt: str) -> int:
        """Run the turn, then let a background memory extraction finish; returns the exit status.

        Text is printed as soon as the turn ends; the json result waits for the extraction
        (the process would wait for it anyway), so `total_cost_usd` counts it too.
        """
        try:
            subtype, result = await self.run_turn(prompt)
        except OutputClosed:
            raise
        except BaseException as exc:  # a bug, Ctrl-C: json consumers still get their result object
            if self.format != "text":
                self.finish("error_during_execution", failure_text(exc))
            raise  # the CLI says it on stderr and picks the exit status
        if self.format == "text":
            status = self.finish(subtype, result)
            await self.wait_for_extraction()
            return status
        try:
            await self.wait_for_extraction()
        finally:  # interrupted while waiting: the result is still printed
            status = self.finish(subtype, result)
        return status

    async def run_stream(self, stdin: TextIO) -> int:
        """One turn per user message read from `stdin` as it arrives (a script may wait for each
        result before it writes the next), then the memory extraction; the status is 1 if a turn
        failed or a line could not be read (said on stderr, and skipped)."""
        status, turns = 0, 0
        async for line in stdin_lines(stdin):
            try:
                prompt = user_message_text(line)
            except ValueError as exc:
                self.say(f"claude-mini: stdin line skipped: {exc}")
                status = 1
                continue
            self.started, self.requests, self.result = time.monotonic(), 0, ""
            await self.runtime.apply_settings_changes()  # settings edited between two messages
            try:
                subtype, result = await self.run_turn(prompt)
            except OutputClosed:
                raise
            except BaseException as exc:
                self.finish("error_during_execution", failure_text(exc))
                raise
            turns += 1
            status = self.finish(subtype, result) or status
        if not turns:
            self.say('claude-mini: no user message arrived on stdin (one JSON line each: {"type":"user",...}).')
            return 1
        await self.wait_for_extraction()
        return status

    async def wait_for_extraction(self) -> None:
        """Start the session's final extraction if its pending turns are durable, then wait for a
        running extraction, saying so; stop it after the limit or at Ctrl-C.

        The limit is `memory.extractWaitSeconds`; unset, text output waits TEXT_WAIT_SECONDS
        (the answer is out: the shell should come back) and json keeps the settings' default,
        so its cost counts the extraction.
        """
        extractor = self.runtime.extractor
        if extractor is None or not extractor.schedule_final_run(self.runtime.agent):
            return
        limit = extractor.settings.wait_seconds
        if self.format == "text" and self.runtime.config.get("memory.extractWaitSeconds") is None:
            limit = min(limit, TEXT_WAIT_SECONDS)
        self.say("saving memories… (Ctrl-C skips)")
        try:
            done = await extractor.wait(limit)
        except asyncio.CancelledError:  # Ctrl-C: the run is over, only the saving is skipped
            _uncancel()
            await extractor.stop()
            self.say("Memory saving skipped; nothing from this turn was kept.")
            return
        if not done:
            await extractor.stop()
            self.say(
                f"Memory extraction was still running after {limit:g} s and was stopped; "
                "nothing from it was kept (memory.extractWaitSeconds sets the wait)."
            )

    async def run_turn(self, prompt: str) -> tuple[str, str]:
        """Run the turn; returns the result's subtype and text."""
        rt = self.runtime
        if self.format == "stream-json" and not self.initialised:
            self.initialised = True
            await self.emit_init()
            if rt.subagents is not None:
                rt.subagents.listen(self.on_child_event)
        resumed = bool(rt.session.messages)
        await rt.start(source="resume" if resumed else "startup", dream=False)
        if prompt.lstrip().startswith("/"):
            prompt, refused = await self.expand_command(prompt)
            if refused:  # nothing is sent
                rt.session.record_system("error", message=refused)
                return "error_during_execution", refused
        try:
            # Closed here, not at interpreter exit, when the output fails mid-turn (Agent.run is
            # an async generator; its annotation says only AsyncIterator).
            turn = cast(AsyncGenerator[AgentEvent, None], rt.agent.run(prompt))
            async with contextlib.aclosing(turn) as events:
                async for event in events:
                    self.on_event(event)
        except MaxTurnsReached as exc:
            return "error_max_turns", str(exc)
        except TurnCancelled:  # Ctrl-C: asyncio.run turns this into KeyboardInterrupt, exit 130
            raise asyncio.CancelledError() from None
        except TurnDeclined:  # plan mode: the plan waits for an approval nobody can give here
            return "success", self.plan or self.result
        except StoppedByHook as exc:  # a hook's `continue: false`: the turn ended as asked, not failed
            rt.session.record_system("stopped", message=str(exc))
            self.say(f"claude-mini: {exc}")
            return "success", self.result
        except (ModelError, AgentStop) as exc:
            rt.session.record_system("error", message=str(exc))
            return "error_during_execution", str(exc)
        return "success", self.result

    async def emit_init(self) -> None:
        """The `system/init` line, as Claude Code's: the tools (MCP ones too: the servers are waited
        for here, as the first request would) and each MCP server's status."""
        rt = self.runtime
        mcp = rt.lifecycle.find(McpPart)
        if mcp is not None:
            await mcp.fix_tools(rt.agent)
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "session_id": rt.session.id,
                "cwd": str(rt.config.cwd),
                "model": rt.config.model,
                "tools": list(rt.agent.tools),
                "mcp_servers": mcp.server_states() if mcp is not None else [],
                "permissionMode": rt.policy.mode,
            }
        )

    async def expand_command(self, prompt: str) -> tuple[str, str]:
        """`/name args` of a custom command or skill expanded (ui/skill_commands.py), and why it
        must not be sent ("" if it may); json formats say that on stderr too (text output says
        it there when the run ends)."""
        from claude_mini.ui.skill_commands import print_command_text  # startup: keeps prompt_toolkit out of -p

        try:
            return await print_command_text(self.runtime, prompt, lambda line: self.say(f"claude-mini: {line}")), ""
        except (ExpansionError, CatalogError) as exc:
            if self.format != "text":
                self.say(f"claude-mini: {exc}")
            return prompt, str(exc)

    def on_event(self, event: AgentEvent) -> None:
        if isinstance(event, MessageAdded):
            message = event.message
            if message.role == "assistant":
                self.result = message.text
                self.plan = proposed_plan(message) or self.plan
                self.requests += 1
                if self.format == "text" and self.runtime.config.verbose:
                    for call in message.tool_uses:  # --verbose: what the turn does, as it does it
                        self.say(
                            f"claude-mini: {call.name} {one_line(json.dumps(call.input, ensure_ascii=False), 200)}"
                        )
            if self.format == "stream-json":
                self.emit_message(message, None)
        elif isinstance(event, Retrying):
            self.say(f"claude-mini: {event.describe()}")
        elif isinstance(event, Notice):
            self.say(event.text)

    def on_child_event(self, run: SubagentRun, event: AgentEvent) -> None:
        """A subagent's messages, each a line like the parent's, with the Agent call's id."""
        if isinstance(event, MessageAdded):
            self.emit_message(event.message, run.tool_use_id)

    def emit_message(self, message: Message, parent_tool_use_id: str | None) -> None:
        """One `user` or `assistant` line; `parent_tool_use_id` is null for the main conversation's
        and the Agent call's id for a subagent's (Claude Code's shape)."""
        self.emit(
            {
                "type": message.role,
                "message": message_to_api(message),
                "parent_tool_use_id": parent_tool_use_id,
                "session_id": self.runtime.session.id,
            }
        )

    def finish(self, subtype: str, result: str) -> int:
        is_error = subtype != "success"
        costs = self.runtime.session.costs
        if self.format == "text":
            if is_error:
                self.say(f"claude-mini: {result}")
            else:
                self.write(visible_controls(result.rstrip("\n")) + "\n")
        else:
            self.emit(
                {
                    "type": "result",
                    "subtype": subtype,
                    "is_error": is_error,
                    "result": result,
                    "session_id": self.runtime.session.id,
                    "num_turns": self.requests,
                    "duration_ms": int((time.monotonic() - self.started) * 1000),
                    "total_cost_usd": round(costs.total_cost, 6),
                    "usage": costs.total_usage.to_dict(),
                }
            )
        return 1 if is_error else 0
