"""Bash: run a shell command in the session's working directory.

Each call is a fresh `bash -c` in its own process group (so a timeout, an
interrupt or a SIGTERM/SIGHUP to claude-mini can kill everything it started)
with stdin at /dev/null. The working
directory persists between calls: an EXIT trap writes the shell's final `pwd`
to a temp file, and the tool moves `ctx.cwd` there. Output (stdout and stderr
interleaved) is kept to its first and last 15,000 characters while streaming,
so a command that prints gigabytes costs no memory.

A line the read-only check approves (the ones that run without asking) runs
with git's program-running configuration switched off; see shell/git_safety.py.

With the session's sandbox on (claude_mini/sandbox), the shell runs inside bubblewrap: the
argv and environment come from `ToolContext.sandbox.prepare`, and the cwd file lives in the
sandbox's temp folder, the one place outside the project it may write.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import shlex
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from claude_mini.base.process_groups import group_gone, signal_group
from claude_mini.shell.git_safety import GIT_FUNCTION, safe_git_env
from claude_mini.shell.read_only import is_read_only_command
from claude_mini.signals import tool_group_ended, tool_group_started
from claude_mini.tools import ToolContext, ToolError, ToolResult, bool_arg, int_arg, opt_str_arg, str_arg
from claude_mini.tools.base import ShellSandbox

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
# After the shell exits, how long background children may keep writing to our pipe.
DRAIN_SECONDS = 0.5

DESCRIPTION = """\
Runs a bash command and returns its output (stdout and stderr together).

- The command runs in the current working directory; a `cd` persists to later calls. Prefer \
absolute paths, and quote paths that contain spaces.
- timeout is in milliseconds: default 120000 (2 minutes), at most 600000 (10 minutes). On \
timeout the command and everything it started are killed.
- stdin is /dev/null: interactive commands (editors, pagers, prompts, `git rebase -i`) will \
not work; pass non-interactive flags instead.
- Output beyond 30000 characters is cut in the middle, keeping its beginning and end.
- A non-zero exit status is reported as an error together with the output.
- Use the dedicated tools instead of shell equivalents: Read instead of cat/head/tail, Edit or \
Write instead of sed/awk/echo redirection, Grep instead of grep/rg, Glob instead of find/ls -R.
- Chain dependent commands with `&&`; make independent calls in parallel instead.
- run_in_background: true starts the command and returns at once with a shell id (bash_1, \
bash_2, ...): read what it prints with BashOutput, end it with KillShell. Use it for servers, \
watchers and long builds instead of `&`; timeout does not apply, and the shell ends with the \
session. A `cd` in it does not move later calls.
- Background processes (`cmd &`) should redirect their output to a file, or they may block \
once nobody reads it.
- description: a short (5-10 word) summary of what the command does, shown to the user.
- When the sandbox is on (the default where bubblewrap is installed), commands may write only \
inside the project and $TMPDIR, credential files are hidden, and network access goes through a \
proxy that allows listed domains only. \
When a command fails because of the sandbox (a write outside the project, a refused host) \
and the user needs it to run, call it again with dangerouslyDisableSandbox: true; the user \
is asked first. Never set it otherwise."""


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command to run"},
            "timeout": {
                "type": "integer",
                "description": "Timeout in milliseconds (default 120000, max 600000)",
            },
            "description": {
                "type": "string",
                "description": "What the command does, in 5-10 words, shown to the user",
            },
            "run_in_background": {
                "type": "boolean",
                "description": "Start the command in the background and return its shell id at once; "
                "read it with BashOutput, end it with KillShell",
            },
            "dangerouslyDisableSandbox": {
                "type": "boolean",
                "description": "Run outside the sandbox (the user is asked first); only after a "
                "command failed because of the sandbox",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }


def _env_ms(name: str, default: int) -> int:
    """A positive number of milliseconds from the environment (Claude Code's BASH_*_TIMEOUT_MS, which a
    settings file's `env` may set), else `default`."""
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


class BashTool:
    """The Bash tool. `shell` and `kill_grace` (seconds between SIGTERM and SIGKILL) are injectable."""

    name = "Bash"
    description = DESCRIPTION
    read_only = False

    def __init__(self, *, shell: str | None = None, kill_grace: float = 2.0) -> None:
        self.input_schema = _schema()
        self.shell = shell
        self.kill_grace = kill_grace

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """Nothing to check ahead: a command's failure is only known by running it."""

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the command; update `ctx.cwd` to where the shell ended up."""
        command = str_arg(input, "command")
        default_ms, max_ms = _env_ms("BASH_DEFAULT_TIMEOUT_MS", DEFAULT_TIMEOUT_MS), _env_ms("BASH_MAX_TIMEOUT_MS", 0)
        max_ms = max_ms or max(MAX_TIMEOUT_MS, default_ms)
        timeout_ms = min(int_arg(input, "timeout", min(default_ms, max_ms), minimum=1) or 1, max_ms)
        cwd, note = _usable_cwd(ctx)
        sandbox = ctx.sandbox
        if sandbox is not None and (problem := sandbox.missing_problem()):
            raise ToolError(problem[0].upper() + problem[1:] + ".")
        if sandbox is not None and not sandbox.runs_sandboxed(input):
            sandbox = None
        env, prelude = await _environment(command, cwd, ctx.project_root)
        if ctx.shell_prelude:  # eval'd: a broken line in it must not stop the command (git's guard last)
            prelude = f"eval {shlex.quote(ctx.shell_prelude)}\n{prelude}"
        if bool_arg(input, "run_in_background"):
            described = opt_str_arg(input, "description") or ""
            return await self._background(command, described, cwd, ctx, (env, prelude), sandbox)
        fd, cwd_file = tempfile.mkstemp(prefix="claude-mini-cwd-", dir=sandbox.temp_dir if sandbox else None)
        os.close(fd)
        absent = sandbox.absent_protected() if sandbox else []
        try:
            run = await self._run(_wrap(command, Path(cwd_file), prelude), cwd, env, timeout_ms / 1000, sandbox)
            new_cwd = _read_cwd(Path(cwd_file))
        finally:
            with contextlib.suppress(OSError):
                os.unlink(cwd_file)
            if sandbox is not None and absent:
                run_note = sandbox.remove_created(absent)
                note = "\n".join(n for n in (note, run_note) if n)
        ctx.cwd = new_cwd or cwd
        return run.to_result(note, timeout_ms, ctx.cwd)

    async def _background(
        self,
        command: str,
        description: str,
        cwd: Path,
        ctx: ToolContext,
        setup: tuple[dict[str, str], str],
        sandbox: ShellSandbox | None,
    ) -> ToolResult:
        """Start the command as a background shell (tools/background.py) and return its id at once;
        `setup` is the environment and the prelude a foreground call would run with."""
        if ctx.shells is None:
            raise ToolError("Background shells are not available here: run the command without run_in_background.")
        env, prelude = setup
        argv = [self.shell or shutil.which("bash") or "/bin/bash", "-c", f"{prelude}\n{command}\n"]
        if sandbox is not None:
            argv, env = await sandbox.prepare(argv, cwd, env)
        absent = sandbox.absent_protected() if sandbox is not None else []

        async def spawn(write_fd: int) -> asyncio.subprocess.Process:
            try:
                return await asyncio.create_subprocess_exec(
                    *argv,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=write_fd,
                    stderr=asyncio.subprocess.STDOUT,
                    cwd=cwd,
                    env=env,
                    start_new_session=True,
                )
            except OSError as exc:
                raise ToolError(f"Could not start {argv[0]}: {exc.strerror or exc}.") from None

        box = sandbox
        after_exit = (lambda: box.remove_created(absent)) if box is not None and absent else None
        shell = await ctx.shells.start(command, description, spawn, after_exit)
        text = (
            f"Command running in the background as {shell.id}. Read its output with BashOutput "
            f'(bash_id "{shell.id}"); end it with KillShell.'
        )
        return ToolResult(text, metadata={"bash_id": shell.id, "background": True, "cwd": str(cwd)})

    async def _run(
        self, script: str, cwd: Path, env: dict[str, str], timeout: float, sandbox: ShellSandbox | None = None
    ) -> _Run:
        output = _OutputBuffer(MAX_OUTPUT_CHARS)
        argv = [self.shell or shutil.which("bash") or "/bin/bash", "-c", script]
        if sandbox is not None:
            argv, env = await sandbox.prepare(argv, cwd, env)
        proc, pipe = await self._spawn(argv, cwd, env, output)
        tool_group_started(proc.pid)  # SIGTERM/SIGHUP to claude-mini kill it too (signals.py)
        try:
            await asyncio.wait_for(proc.wait(), timeout)
            timed_out = False
        except TimeoutError:
            await self._stop_group(proc)
            timed_out = True
        except BaseException:
            # Interrupted (CancelledError) or failed: leave nothing running behind us.
            pipe.transport.close()
            await self._stop_group(proc)
            raise
        finally:
            tool_group_ended(proc.pid)
        await pipe.drain_or_detach()
        return _Run(output.render(), proc.returncode, timed_out)

    async def _spawn(
        self, argv: list[str], cwd: Path, env: dict[str, str], output: _OutputBuffer
    ) -> tuple[asyncio.subprocess.Process, _Pipe]:
        """Start the shell writing into a pipe we own (see _Pipe for why not PIPE)."""
        shell = argv[0]
        read_fd, write_fd = os.pipe()
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=asyncio.subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        )
        try:
            # Shielded: cancelled while connecting a shell that has started, asyncio would kill the
            # shell alone and leave what its command started running (Esc on a loaded machine).
            proc = await asyncio.shield(spawn)
        except OSError as exc:
            os.close(read_fd)
            raise ToolError(f"Could not start {shell}: {exc.strerror or exc}.") from None
        except asyncio.CancelledError:
            os.close(read_fd)
            await self._stop_spawned(spawn)
            raise
        finally:
            os.close(write_fd)
        try:
            return proc, await _Pipe.open(read_fd, output)
        except BaseException:  # cancelled (Esc) while the pipe was being attached: the shell runs already
            await self._stop_group(proc)
            raise

    async def _stop_spawned(self, spawn: asyncio.Future[asyncio.subprocess.Process]) -> None:
        """The call was cancelled while `spawn` connected the shell: end its group once it has."""
        try:
            proc = await spawn
        except OSError:
            return  # it never started
        await self._stop_group(proc)

    async def _stop_group(self, proc: asyncio.subprocess.Process) -> None:
        """SIGTERM the whole process group, allow `kill_grace` seconds, then SIGKILL what is left."""
        pgid = proc.pid  # start_new_session made the shell the group leader
        signal_group(pgid, signal.SIGTERM)
        try:
            await asyncio.wait_for(group_gone(pgid), self.kill_grace)
        except TimeoutError:
            pass
        finally:
            signal_group(pgid, signal.SIGKILL)
        # Reap the shell so its exit status is known and asyncio can release the process.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), 1.0)


async def _environment(command: str, cwd: Path, project_root: Path) -> tuple[dict[str, str], str]:
    """The shell's environment and the lines to run before the command.

    A read-only line gets git's dangerous configuration switched off (env) and the
    `git` function that adds --no-ext-diff/--no-textconv (prelude); any other line
    was approved by the user or a rule and runs with the user's environment as is.
    """
    # PWD tells bash the logical path, so `pwd` keeps symlinked folder names.
    env = {**os.environ, "PWD": str(cwd)}
    # The check is bounded but not free on huge input: keep it off the event loop.
    read_only, _ = await asyncio.to_thread(is_read_only_command, command)
    if not read_only:
        return env, ""
    return await safe_git_env(env, cwd, project_root, command), GIT_FUNCTION


def _wrap(command: str, cwd_file: Path, prelude: str = "") -> str:
    """The script bash runs: record the final directory on exit, our prelude, then the command.

    The command goes on its own lines so a trailing comment or heredoc cannot swallow
    anything of ours; the trap also fires on `exit` and under `set -e`.
    """
    trap = f"pwd > {shlex.quote(str(cwd_file))}"
    return f"trap {shlex.quote(trap)} EXIT\n{prelude}\n{command}\n"


def _usable_cwd(ctx: ToolContext) -> tuple[Path, str]:
    """ctx.cwd, or the project root (with a note) when the folder has gone away."""
    if ctx.cwd.is_dir():
        return ctx.cwd, ""
    if ctx.project_root.is_dir():
        note = f"[Note: the working directory {ctx.cwd} no longer exists; ran in {ctx.project_root}.]"
        return ctx.project_root, note
    raise ToolError(f"Neither the working directory {ctx.cwd} nor the project root exists.")


def _read_cwd(cwd_file: Path) -> Path | None:
    try:
        text = cwd_file.read_text(encoding="utf-8", errors="surrogateescape").strip()
    except OSError:
        return None
    path = Path(text) if text else None
    return path if path is not None and path.is_absolute() and path.is_dir() else None


class _Pipe(asyncio.Protocol):
    """The read end of the shell's output pipe, feeding an _OutputBuffer as data arrives.

    We create the pipe ourselves instead of using asyncio's PIPE so that the
    process's exit and the pipe's closing are separate events: a background child
    (`server &`) may hold the pipe open long after the shell exits, and with PIPE
    some Python versions make `proc.wait()` wait for the pipe as well.
    """

    def __init__(self, output: _OutputBuffer) -> None:
        self.output = output
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.transport: asyncio.ReadTransport

    @classmethod
    async def open(cls, read_fd: int, output: _OutputBuffer) -> _Pipe:
        pipe = cls(output)
        file = os.fdopen(read_fd, "rb", buffering=0)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: pipe, file)
        pipe.transport = transport
        return pipe

    def data_received(self, data: bytes) -> None:
        self.output.feed(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.output.feed(b"", final=True)
        if not self.closed.done():
            self.closed.set_result(None)

    async def drain_or_detach(self) -> None:
        """Wait briefly for the last output; if background children keep the pipe open, let go."""
        try:
            await asyncio.wait_for(asyncio.shield(self.closed), DRAIN_SECONDS)
        except TimeoutError:
            self.output.note("[Background processes are still running; their later output is not shown.]")
            self.output.detached = True
            # Keep reading (and discarding) so background writers never block on a full pipe.
            task = asyncio.create_task(self._close_when_done())
            _detached.add(task)
            task.add_done_callback(_detached.discard)

    async def _close_when_done(self) -> None:
        try:
            await self.closed
        finally:
            self.transport.close()  # also when the event loop shuts down and cancels us


_detached: set[asyncio.Task[None]] = set()


class _OutputBuffer:
    """Keeps the first and last halves of `limit` characters of a stream, counting the rest."""

    def __init__(self, limit: int) -> None:
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head: list[str] = []
        self._head_len = 0
        self._tail = ""
        self._total = 0
        self._notes: list[str] = []
        self.detached = False

    def feed(self, data: bytes, final: bool = False) -> None:
        if self.detached:
            return
        text = self._decoder.decode(data, final)
        self._total += len(text)
        room = self.head_limit - self._head_len
        if room > 0:
            self._head.append(text[:room])
            self._head_len += len(text[:room])
            text = text[room:]
        if text:
            self._tail = (self._tail + text)[-self.tail_limit :]

    def note(self, line: str) -> None:
        self._notes.append(line)

    def render(self) -> str:
        head = "".join(self._head)
        omitted = self._total - len(head) - len(self._tail)
        if omitted > 0:
            text = f"{head}\n\n... [{omitted:,} characters of output omitted] ...\n\n{self._tail}"
        else:
            text = head + self._tail
        return "\n".join([text.rstrip("\n"), *self._notes]).strip("\n")


@dataclass
class _Run:
    """What one command produced."""

    output: str
    exit_code: int | None
    timed_out: bool = False

    def to_result(self, note: str, timeout_ms: int, cwd: Path) -> ToolResult:
        parts = [note] if note else []
        if self.timed_out:
            parts.append(
                f"Command timed out after {_seconds(timeout_ms)} and was killed "
                "(with every process it started). Output so far:"
            )
        parts.append(self.output or "(no output)")
        if not self.timed_out and self.exit_code:
            parts.append(_exit_text(self.exit_code))
        is_error = self.timed_out or bool(self.exit_code)
        meta = {"exit_code": self.exit_code, "timed_out": self.timed_out, "cwd": str(cwd)}
        return ToolResult("\n\n".join(parts), is_error=is_error, metadata=meta)


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"Killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"Killed by signal {-code}"
    return f"Exit code {code}"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"
