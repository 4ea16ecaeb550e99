"""bubblewrap: whether it runs here, and the command line that confines one shell.

The layout inside, in mount order (a later mount covers an earlier one):

    /                 the host's root, read-only
    /dev, /proc       fresh (a new PID namespace: only the sandbox's own processes are seen)
    /tmp              an empty tmpfs (other users' sockets and files are not there: tmux, X11,
                      ssh-agent), where only what the bridge needs to start is shown again
    writable roots    the project, additional directories, the session's temp folder, allowWrite
    protected files   read-only again inside a writable root (.git/config, .git/hooks, settings...)
    masks             credential folders, the claude-mini home, what Read deny rules cover:
                      an empty read-only file over a file, an empty read-only tmpfs over a folder
    extra binds       the memory folder, writable for the extraction fork only

The network namespace is always new: the only way out is the domain proxy (proxy.py), reached
through a Unix socket in the session's temp folder by the bridge (bridge.py) inside.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass, field

PACKAGE_HINT = (
    "install the bubblewrap package (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"
)
_PROBE_TIMEOUT_SECONDS = 15.0


@dataclass(frozen=True)
class Availability:
    """Whether bwrap can confine a command here; `problem` says why not, in one line."""

    path: str | None
    works: bool
    problem: str = ""
    version: str = ""


@functools.lru_cache(maxsize=4)
def probe(program: str = "bwrap") -> Availability:
    """Run bwrap once with the namespaces the sandbox uses (cached for the process)."""
    path = shutil.which(program)
    if path is None:
        return Availability(None, False, f"bwrap was not found on PATH; {PACKAGE_HINT}")
    true = shutil.which("true") or "/bin/true"
    argv = [
        path,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        "--",
        true,
    ]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_PROBE_TIMEOUT_SECONDS, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(path, False, f"{path} could not start: {exc}")
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        return Availability(
            path,
            False,
            f"{path} cannot create its namespaces here ({why}); unprivileged user namespaces may be switched off",
        )
    return Availability(path, True, version=_version(path))


def _version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.strip()


@dataclass
class Layout:
    """What one sandboxed command may see and write (absolute, real paths)."""

    visible: list[str] = field(default_factory=list)  # read-only again under the empty /tmp
    writable: list[str] = field(default_factory=list)
    read_only: list[str] = field(default_factory=list)  # inside writable roots
    masked_files: list[str] = field(default_factory=list)
    masked_dirs: list[str] = field(default_factory=list)
    extra_writable: list[str] = field(default_factory=list)  # bound after the masks
    empty_file: str = ""  # an empty file to bind over masked files


def command_line(bwrap: str, layout: Layout, cwd: str, argv: list[str]) -> list[str]:
    """The full bwrap argv that runs `argv` in `cwd` inside `layout`."""
    out = [
        bwrap,
        "--die-with-parent",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
    ]
    for path in existing(layout.visible):
        out += ["--ro-bind", path, path]
    for path in existing(layout.writable):
        out += ["--bind", path, path]
    for path in existing(layout.read_only):
        out += ["--ro-bind", path, path]
    for path in existing(layout.masked_files):
        out += ["--ro-bind", layout.empty_file, path]
    masked = existing(layout.masked_dirs)
    for path in masked:
        out += ["--tmpfs", path]
    for path in existing(layout.extra_writable):  # may lie inside a mask: bound before it turns read-only
        out += ["--bind", path, path]
    for path in masked:
        out += ["--remount-ro", path]
    out += ["--chdir", cwd, "--", *argv]
    return out


def existing(paths: list[str]) -> list[str]:
    """Each path once, in order, if it exists (bwrap cannot mount over what is not there)."""
    return [p for p in dict.fromkeys(paths) if os.path.lexists(p)]
