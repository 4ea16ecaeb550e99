"""The fork server behind `run_cli` gives a run what a fresh `python -m` process would get.

A probe module reports what a program can see of its process; the same run through the
fork server and as a real subprocess must report the same, and must end the same way.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.e2e.conftest import cli_env

PROBE = r"""
import json, locale, os, signal, sys, tempfile, threading, time, warnings

def stream(s):
    return {"type": type(s).__name__, "encoding": s.encoding, "errors": s.errors,
            "line_buffering": s.line_buffering, "write_through": s.write_through,
            "mode": s.mode, "name": s.name, "buffer": type(s.buffer).__name__,
            "raw": getattr(getattr(s.buffer, "raw", s.buffer), "name", None),
            "isatty": s.isatty(), "seekable": s.seekable(), "newlines": s.newlines}

def report():
    main = sys.modules["__main__"]
    return {
        "argv": sys.argv, "orig_argv": sys.orig_argv, "path": sys.path, "cwd": os.getcwd(),
        "env": dict(os.environ), "main": sorted(vars(main)), "main_file": main.__file__,
        "main_spec": main.__spec__.name, "name": __name__,
        "stdio": [stream(s) for s in (sys.stdin, sys.stdout, sys.stderr)],
        "dunder_stdio": [sys.__stdin__ is sys.stdin, sys.__stdout__ is sys.stdout,
                         sys.__stderr__ is sys.stderr],
        "fds": sorted(os.listdir("/proc/self/fd")),
        "fd_inheritable": [os.get_inheritable(fd) for fd in (0, 1, 2)],
        "signals": {s.name: str(signal.getsignal(s)) for s in signal.valid_signals()
                    if isinstance(s, signal.Signals)},
        "blocked": sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "pgrp_is_parent_pgrp": os.getpgrp() == os.getpgid(os.getppid()),
        "umask": os.umask(0o22), "flags": str(sys.flags), "threads": threading.active_count(),
        "locale": locale.getlocale(), "tzname": time.tzname, "tempdir": tempfile.tempdir,
        "warnings": [str(f) for f in warnings.filters],
        "dont_write_bytecode": sys.dont_write_bytecode,
        "stdin": sys.stdin.read(),
    }

how = sys.argv[1]
if how == "report":
    print(json.dumps(report()))
elif how == "exit-message":
    sys.exit("leaving with a message")
elif how == "raise":
    print("before the error")
    raise ValueError("boom")
elif how == "unflushed":
    sys.stdout.write("no newline, flushed at exit")
    sys.stderr.write("err")
    os.environ.clear()
elif how == "thread":
    import atexit
    atexit.register(lambda: print("atexit ran", flush=True))
    threading.Thread(target=lambda: (time.sleep(0.2), print("thread finished"))).start()
    sys.exit(3)
elif how == "interrupt":
    raise KeyboardInterrupt
elif how == "killed":
    os.kill(os.getpid(), signal.SIGTERM)
"""


@pytest.fixture
def probe(tmp_path, isolated_env, fork_server):
    """`probe(how, input)`: the probe's (real subprocess, fork server) results for `how`."""
    (tmp_path / "probe.py").write_text(PROBE)
    env = cli_env(isolated_env.home, isolated_env.managed, "http://127.0.0.1:9")

    def run(how: str, input: str | None = None):
        real = subprocess.run(
            [sys.executable, "-m", "probe", how],
            cwd=tmp_path,
            env=env,
            input=input,
            capture_output=True,
            text=True,
            timeout=30,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
        forked = fork_server.run([how], cwd=tmp_path, env=env, input=input, timeout=30, module="probe")
        return real, forked

    return run


@pytest.mark.parametrize("input", [None, "typed on stdin\r\nline two\n"])
def test_a_forked_run_sees_the_process_a_fresh_one_would(probe, input):
    real, forked = probe("report", input)
    assert real.returncode == 0, real.stderr
    assert (forked.returncode, forked.stderr) == (real.returncode, real.stderr)
    assert forked.stdout == real.stdout
    assert forked.args == real.args


@pytest.mark.parametrize("how", ["exit-message", "raise", "unflushed", "thread", "interrupt", "killed"])
def test_a_forked_run_ends_as_a_fresh_one_would(probe, how):
    real, forked = probe(how)
    assert forked.returncode == real.returncode
    assert forked.stdout == real.stdout
    tail = real.stderr.splitlines()[-1:]  # a traceback's frames differ; its last line does not
    assert forked.stderr.splitlines()[-1:] == tail
    assert ("Traceback" in forked.stderr) == ("Traceback" in real.stderr)


@pytest.mark.parametrize(
    "sleeper",
    [
        "print('started', flush=True)\ntime.sleep(60)\n",
        "print('started', flush=True)\nos.close(1)\nos.close(2)\ntime.sleep(60)\n",  # output closed, not exited
    ],
)
def test_a_run_past_its_timeout_is_killed(fork_server, tmp_path, isolated_env, sleeper):
    (tmp_path / "sleeper.py").write_text("import os, time\n" + sleeper)
    env = cli_env(isolated_env.home, isolated_env.managed, "http://127.0.0.1:9")
    with pytest.raises(subprocess.TimeoutExpired) as timed_out:
        fork_server.run([], cwd=tmp_path, env=env, input=None, timeout=1, module="sleeper")
    assert timed_out.value.output == b"started\n"
