"""Runs inside the sandbox: a local HTTP proxy port that leads to claude-mini's domain proxy.

    python -I -S bridge.py SOCKET -- bash -c SCRIPT

The sandbox has its own network namespace, so nothing inside can reach the host's network.
This script listens on 127.0.0.1 inside it, points the usual proxy variables there, runs the
command, and carries each connection over the Unix socket SOCKET (bound into the sandbox) to
the proxy outside, which decides per domain. It exits with the command's status.

Standard library only, no site-packages (`-S`): it starts in a few milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_CHUNK = 65536


def main(argv: list[str]) -> int:
    """Listen, start the command with the proxy variables set, relay until it exits."""
    if len(argv) < 3 or argv[1] != "--":
        print("usage: bridge.py SOCKET -- COMMAND...", file=sys.stderr)
        return 2
    socket_path, command = argv[0], argv[2:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    env = dict(os.environ)
    proxy = f"http://127.0.0.1:{listener.getsockname()[1]}"
    env.update(dict.fromkeys(PROXY_VARIABLES, proxy))
    for name in ("NO_PROXY", "no_proxy"):  # everything goes through the proxy, localhost included
        env.pop(name, None)
    pid = os.fork()
    if pid == 0:
        listener.close()
        try:
            os.execvpe(command[0], command, env)
        except OSError as exc:
            print(f"bridge: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
            os._exit(127)
    threading.Thread(target=_accept, args=(listener, socket_path), daemon=True).start()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):  # die the same way, so the caller reports the signal
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    return os.waitstatus_to_exitcode(status)


def _accept(listener: socket.socket, socket_path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_connect, args=(client, socket_path), daemon=True).start()


def _connect(client: socket.socket, socket_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError:
        client.close()
        upstream.close()
        return
    threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()
    _pump(client, upstream)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy until `source` ends, then end `sink`'s writing side (a half-close, as TCP allows)."""
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
