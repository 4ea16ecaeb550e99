"""A fork server for the e2e tests: `python -m claude_mini ARGS` without paying the imports each run.

Starting the CLI costs about 2 s of CPU, nearly all of it `import anthropic`, and the e2e
tests start it over a hundred times. This server (one per xdist worker, started by
`tests/e2e/conftest.py`) imports the third-party packages once; each run is a forked
child that then becomes what a fresh `python -m claude_mini ARGS` would be: it takes the
caller's stdin, stdout and stderr as fds 0-2 and nothing else, its cwd, its environment
(replaced whole), a fresh `__main__`, `sys.argv`/`sys.path[0]` as `-m` sets them, new
`sys.std*` objects built the way the interpreter builds them, and it runs the package with
`runpy` as `-m` does, so exit codes, uncaught exceptions and interpreter shutdown (atexit,
non-daemon threads, flushing stdout) are the interpreter's own.

What keeps runs independent: no claude_mini module is imported here (each child imports
them, as a fresh process does), the server is one thread when it forks, and modules that
keep per-process state reseed on fork (`random`). What differs from a fresh process: the
third-party modules are already in `sys.modules` (and frozen out of the garbage collector's
sight, `gc.freeze()`), the string-hash seed is the server's, and claude_mini's modules are
read from a bytecode cache (`sys.pycache_prefix`) instead of being compiled each run.

The caller must fall back to a real process when a run's environment differs from this
server's in anything the interpreter or an imported package reads at start-up
(`RUNTIME_ONLY_ENV` in conftest.py says which variables may differ).

Protocol, per connection on a Unix socket: the client sends one length-prefixed JSON
request `{"args", "cwd", "env"}` with three fds (stdin, stdout, stderr); the server forks a
runner that forks the CLI, writes `{"pid": N}` and, when the CLI has exited,
`{"returncode": R}` (negative for a signal, as subprocess reports it), one JSON per line.
"""

from __future__ import annotations

import builtins
import compileall
import contextlib
import gc
import importlib
import importlib.machinery
import importlib.util
import io
import json
import locale
import os
import runpy
import select
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import types
from pathlib import Path

# What every model run of the CLI imports: anthropic (with httpx, pydantic, asyncio, ssl...) and
# what its client imports when it is built. Not llama_cpp: OpenMP's threads do not survive a fork.
PREIMPORT = (
    "anthropic",
    "typer",
    "typer._adapters",
    "click",
    "yaml",
    "pathspec",
    "httpcore2",
    "anyio._backends._asyncio",
    "anyio.streams.tls",
    "truststore",
    "opentelemetry.propagate",
)
HEADER = struct.Struct("!I")


def main(path: str, bytecode: str) -> None:
    """Serve on the Unix socket `path` until stdin (the test worker's end of a pipe) closes."""
    for name in PREIMPORT:
        importlib.import_module(name)
    compile_package("claude_mini", bytecode)
    gc.collect()
    gc.freeze()  # the children's collections skip (and so do not copy) the imported modules
    check_forkable()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    print("ready", flush=True)
    job = serve(listener)  # returns only in a forked CLI child
    become_cli(*job)


def compile_package(name: str, prefix: str) -> None:
    """Compile the package's modules into a bytecode cache under `prefix`, without importing it.

    The machines set PYTHONDONTWRITEBYTECODE=1 and claude_mini is an editable install, so a
    fresh process compiles every module it imports from source (a third of a forked run's
    CPU). Children read this cache through `sys.pycache_prefix`; a module edited since is
    recompiled from source, as a stale .pyc always is."""
    spec = importlib.util.find_spec(name)
    sys.pycache_prefix = prefix
    for folder in spec.submodule_search_locations:
        compileall.compile_dir(folder, quiet=1, workers=1)
    sys.pycache_prefix = None


def check_forkable() -> None:
    """Forking is only safe from a single-threaded process holding no stray files."""
    assert not [m for m in sys.modules if m.partition(".")[0] == "claude_mini"]
    tasks = os.listdir("/proc/self/task")
    assert threading.active_count() == 1 and len(tasks) == 1, f"threads at fork: {tasks}"
    fds = {int(fd) for fd in os.listdir("/proc/self/fd")} - {0, 1, 2}
    assert len(fds) <= 1, f"fds open after the imports: {sorted(fds)}"  # the one listdir used


def serve(listener: socket.socket) -> tuple[dict, list[int]]:
    """Accept requests until stdin closes; in each CLI child, return its request and fds."""
    while True:
        ready, _, _ = select.select([listener, sys.stdin], [], [], 1.0)
        reap()
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1024):
            os._exit(0)
        if listener in ready:
            conn, _ = listener.accept()
            if os.fork() == 0:
                listener.close()
                return run_request(conn)
            conn.close()


def reap() -> None:
    """Collect finished runners (each waits for its own CLI child)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def run_request(conn: socket.socket) -> tuple[dict, list[int]]:
    """In the runner: read the request, fork the CLI, report its pid and exit status."""
    try:
        request, fds = receive(conn)
        pid = os.fork()
    except BaseException:  # the client sees the connection close without a pid
        os._exit(1)
    if pid == 0:
        conn.close()
        return request, fds
    try:
        for fd in fds:
            os.close(fd)
        conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _, status = os.waitpid(pid, 0)
        conn.sendall(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
    finally:
        os._exit(0)


def receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    (size,) = HEADER.unpack(data[: HEADER.size])
    data = data[HEADER.size :]
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("request cut short")
        data += chunk
    return json.loads(data), list(fds)


def become_cli(request: dict, fds: list[int]) -> None:
    """Turn this forked child into `python -m claude_mini ARGS` started in `cwd` with `env`."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)  # dup2 leaves the copy inheritable, as a fresh process's 0-2 are
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))  # a spawned process has nothing else open
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["-m", *request["args"]]  # runpy puts the module's path in argv[0]
    if not sys.flags.safe_path:
        sys.path[0] = os.getcwd()  # `-m` puts the working directory first
    sys.pycache_prefix = request["bytecode"]  # read-only: sys.dont_write_bytecode stays as it was
    fresh_stdio()
    fresh_main_module()
    module = request.get("module", "claude_mini")  # another module only in the fidelity check
    sys.orig_argv = [sys.executable, "-m", module, *request["args"]]
    runpy._run_module_as_main(module, alter_argv=True)


def fresh_stdio() -> None:
    """New sys.stdin/stdout/stderr on fds 0-2, built as CPython's create_stdio() builds them."""
    buffered = not sys.stdout.write_through  # the interpreter's own streams say if -u/PYTHONUNBUFFERED
    for fd, name, old in ((0, "stdin", sys.stdin), (1, "stdout", sys.stdout), (2, "stderr", sys.stderr)):
        writing = fd != 0
        buffering = -1 if buffered or not writing else 0
        buf = open(fd, "wb" if writing else "rb", buffering, closefd=False)  # noqa: SIM115 (it is sys.std*)
        raw = buf.raw if buffering else buf
        raw.name = f"<{name}>"
        line_buffering = buffered and (raw.isatty() or fd == 2)
        stream = io.TextIOWrapper(buf, old.encoding, old.errors, "\n", line_buffering, not buffered)
        stream.mode = "w" if writing else "r"
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def fresh_main_module() -> None:
    """An empty `__main__`, as the interpreter makes one, for runpy to run the package in."""
    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __annotations__={}, __loader__=importlib.machinery.BuiltinImporter)
    sys.modules["__main__"] = main


# ---------------------------------------------------------------- the test side


class ForkServer:
    """The test worker's handle on one server: `run()` is `subprocess.run` for the CLI."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        """Start a server with `env` (what every run it serves must agree with) in `folder`."""
        self.env = env
        self.path = str(folder / "fork.sock")
        self.bytecode = str(folder / "bytecode")
        self.proc = subprocess.Popen(
            [sys.executable, __file__, self.path, self.bytecode],
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        ready = self.proc.stdout.readline()
        assert ready == b"ready\n", f"the fork server did not start: {ready!r}"

    def close(self) -> None:
        """Stop the server (its runs in flight finish on their own)."""
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()

    def run(
        self,
        args: list[str],
        *,
        cwd: Path,
        env: dict[str, str],
        input: str | None,
        timeout: float,
        module: str = "claude_mini",
    ) -> subprocess.CompletedProcess:
        """What `subprocess.run([python, -m, module, *args], cwd, env, input, capture_output=True,
        text=True, timeout, stdin=DEVNULL unless input)` returns or raises."""
        cmd = [sys.executable, "-m", module, *args]
        request = {"args": list(args), "cwd": str(cwd), "env": env, "module": module, "bytecode": self.bytecode}
        fds = _Fds()
        if input is None:
            stdin_r, stdin_w = fds.add(os.open(os.devnull, os.O_RDWR)), None
        else:
            stdin_r, stdin_w = fds.add(*os.pipe())
        out_r, out_w = fds.add(*os.pipe())
        err_r, err_w = fds.add(*os.pipe())
        pid = None
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn, fds:
            try:
                conn.connect(self.path)
                data = json.dumps(request).encode()
                message = HEADER.pack(len(data)) + data
                sent = socket.send_fds(conn, [message], [stdin_r, out_w, err_w])
                conn.sendall(message[sent:])
                fds.close(stdin_r, out_w, err_w)  # the child has them now
                replies = _Replies(conn)
                pid = replies.next()["pid"]
                deadline = time.monotonic() + timeout
                stdin_bytes = None if input is None else input.encode(_encoding())
                out, err = _communicate(fds, stdin_w, stdin_bytes, out_r, err_r, deadline)
                exited = out is not None and replies.next(deadline)
                if not exited:  # timed out: as subprocess.run, kill it, wait, raise
                    _kill(pid)
                    replies.next()
                    pid = None
                    if out is None:
                        out, err = b"".join(err[0]), b"".join(err[1])
                    raise subprocess.TimeoutExpired(cmd, timeout, output=out, stderr=err)
                returncode = exited["returncode"]
                pid = None
            finally:
                if pid is not None:  # an exception (a pytest-timeout, say): kill it, as run() does
                    _kill(pid)
        return subprocess.CompletedProcess(cmd, returncode, _text(out), _text(err))


class _Fds:
    """The fds a run opened, each closed exactly once (a second close could hit a reused number)."""

    def __init__(self) -> None:
        self.open: set[int] = set()

    def add(self, *fds: int) -> tuple[int, ...] | int:
        self.open.update(fds)
        return fds if len(fds) > 1 else fds[0]

    def close(self, *fds: int | None) -> None:
        for fd in fds:
            if fd in self.open:
                self.open.discard(fd)
                os.close(fd)

    def __enter__(self) -> _Fds:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close(*list(self.open))


class _Replies:
    """The runner's JSON lines on the connection."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buffer = b""

    def next(self, deadline: float | None = None) -> dict | None:
        """The next reply; None if `deadline` (a time.monotonic()) passes first."""
        while b"\n" not in self.buffer:
            if deadline is not None:
                self.conn.settimeout(max(deadline - time.monotonic(), 0.001))
            try:
                chunk = self.conn.recv(4096)
            except TimeoutError:
                return None
            finally:
                self.conn.settimeout(None)
            if not chunk:
                raise RuntimeError("the fork server closed the connection (see its stderr)")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)


def _communicate(fds: _Fds, stdin_w: int | None, data: bytes | None, out_r: int, err_r: int, deadline: float) -> tuple:
    """Feed stdin and read stdout/stderr to EOF, as Popen.communicate does on POSIX.
    Returns (stdout, stderr) bytes, or (None, (stdout chunks, stderr chunks)) past `deadline`."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    offset = 0
    with selectors.DefaultSelector() as selector:
        selector.register(out_r, selectors.EVENT_READ)
        selector.register(err_r, selectors.EVENT_READ)
        if data:
            selector.register(stdin_w, selectors.EVENT_WRITE)
        else:
            fds.close(stdin_w)
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None, (chunks[out_r], chunks[err_r])
            for key, _ in selector.select(remaining):
                if key.fd == stdin_w:
                    try:
                        offset += os.write(stdin_w, data[offset : offset + select.PIPE_BUF])
                    except BrokenPipeError:
                        offset = len(data)  # the child stopped reading; communicate ignores it
                    if offset >= len(data):
                        selector.unregister(stdin_w)
                        fds.close(stdin_w)
                else:
                    chunk = os.read(key.fd, 32768)
                    if chunk:
                        chunks[key.fd].append(chunk)
                    else:
                        selector.unregister(key.fd)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])


def _encoding() -> str:
    return locale.getpreferredencoding(False)  # what text=True uses


def _text(data: bytes) -> str:
    """Decoded as subprocess's text mode does (strict, universal newlines)."""
    return data.decode(_encoding()).replace("\r\n", "\n").replace("\r", "\n")


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
