"""The catalogue of programs that run other programs or code, read from their names and options.

Wrappers (`sudo`, `xargs`, `timeout`), launchers (`uv run`, `docker exec`), shells, interpreters
and the options that carry code, programs whose options name a program to run, and the variables
and git settings whose value is a command. The candidate finder (candidates.py) looks inside a
command with it; `runs_arbitrary_code` tells the rule suggestions (permissions/bash.py) that a
prefix rule for a program would allow anything.
"""

from __future__ import annotations

import os
import re

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "ash", "csh", "tcsh"})
KEYWORDS = frozenset(
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "do",
        "done",
        "while",
        "until",
        "!",
        "{",
        "}",
        "case",
        "esac",
    }
)
# Programs that run the command in their arguments, as `wrapper [options] [values] command args`.
# Which options take a value is not needed: every word that could start the command is tried.
WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "pkexec",
        "su",
        "runuser",
        "sg",
        "env",
        "nice",
        "ionice",
        "chrt",
        "taskset",
        "numactl",
        "timeout",
        "stdbuf",
        "xargs",
        "exec",
        "watch",
        "nohup",
        "command",
        "builtin",
        "setsid",
        "unbuffer",
        "flock",
        "strace",
        "ltrace",
        "script",
        "chroot",
        "unshare",
        "nsenter",
        "prlimit",
        "setpriv",
        "firejail",
        "bwrap",
        "systemd-run",
        "fakeroot",
        "proxychains",
        "proxychains4",
        "torsocks",
        "tsocks",
        "cgexec",
        "catchsegv",
        "valgrind",
        "gdb",
        "perf",
        "hyperfine",
        "parallel",
        "entr",
        "caffeinate",
        "dbus-launch",
        "xvfb-run",
        "daemonize",
        "chpst",
        "trickle",
        "cpulimit",
        "nocache",
        "eatmydata",
        "faketime",
        "rlwrap",
        "sshpass",
        "ssh",
        "npx",
        "bunx",
        "pnpx",
        "uvx",
        "pipx",
        "nix-shell",
        "doppler",
        "op",
        "dotenv",
        "with-contenv",
        "tini",
        "dumb-init",
        "gosu",
        "su-exec",
        "chronic",
        "ts",
        "ifne",
        "time",
        "start-stop-daemon",
        "busybox",
        "toybox",
        "setarch",
        "linux32",
        "linux64",
        "i386",
        "x86_64",
        "uname26",
        "ld.so",
    }
)
# Launchers whose second word is a subcommand that runs a command: `uv run curl x`.
RUN_SUBCOMMANDS = {
    "uv": {"run", "tool"},
    "poetry": {"run"},
    "pipenv": {"run"},
    "conda": {"run"},
    "mamba": {"run"},
    "npm": {"exec", "x"},
    "pnpm": {"exec", "dlx"},
    "yarn": {"exec", "dlx"},
    "bun": {"x", "exec"},
    "bundle": {"exec"},
    "pdm": {"run"},
    "hatch": {"run"},
    "rye": {"run"},
    "pixi": {"run"},
    "docker": {"exec", "run"},
    "podman": {"exec", "run"},
    "kubectl": {"exec"},
    "mise": {"exec", "x"},
    "direnv": {"exec"},
    "aws-vault": {"exec"},
    "systemd-nspawn": set(),
    "perf": {"stat", "record", "trace", "mem", "c2c", "kmem", "lock", "sched", "kvm", "top"},
}
# Wrappers whose first operand is theirs, never the command (`ssh HOST cmd`, `chroot DIR cmd`).
OPERAND_FIRST = frozenset(
    {
        "ssh",
        "sg",
        "chroot",
        "flock",
        "taskset",
        "timeout",
        "chrt",
        "faketime",
        "cgexec",
        "sshpass",
        "nix-shell",
        "doppler",
        "op",
        "setarch",
    }
)
# Options of wrappers whose value is a shell command string (`su -c 'cmd'`, `flock -c`, `script -c`).
COMMAND_STRING_OPTIONS = frozenset({"-c", "--command", "-e", "--exec"})
# Wrappers that join their operands into one shell command (`watch 'a | b'`, `ssh host cmd`).
JOINING_WRAPPERS = frozenset({"watch", "ssh", "hyperfine", "parallel", "sg", "su", "runuser"})
# Interpreters whose inline code cannot be read as commands: (short option letters, long options)
# that take code. Letters count inside clusters (`perl -le`, `python -Sc`).
INLINE_CODE: dict[str, tuple[str, tuple[str, ...]]] = {
    "python": ("c", ()),
    "pypy": ("c", ()),
    "perl": ("eE", ()),
    "ruby": ("e", ()),
    "node": ("ep", ("--eval", "--print")),
    "nodejs": ("ep", ("--eval", "--print")),
    "deno": ("", ("eval",)),
    "bun": ("ep", ("--eval", "--print")),
    "php": ("rR", ()),
    "lua": ("e", ()),
    "luajit": ("e", ()),
    "Rscript": ("e", ()),
    "R": ("e", ()),
    "osascript": ("e", ()),
    "tclsh": ("", ()),
    "wish": ("", ()),
    "expect": ("c", ()),
    "jshell": ("", ()),
    "irb": ("", ()),
    "julia": ("e", ("--eval",)),
    "pwsh": ("c", ("-Command", "-command", "-EncodedCommand")),
    "powershell": ("c", ("-Command",)),
    "groovy": ("e", ()),
    "scala": ("e", ()),
    "elixir": ("e", ("--eval",)),
    "erl": ("", ("-eval",)),
    "guile": ("c", ()),
    "racket": ("e", ()),
    "sbcl": ("", ("--eval",)),
    "gdb": ("x", ("-ex", "--eval-command")),
    "vim": ("cS", ("--cmd",)),
    "vi": ("cS", ("--cmd",)),
    "nvim": ("cS", ("--cmd",)),
    "ex": ("cS", ("--cmd",)),
    "emacs": ("", ("--eval", "-eval", "--batch")),
    "socat": ("", ()),
    "nc": ("ec", ()),
    "ncat": ("ec", ("--exec", "--sh-exec", "--lua-exec")),
}
# Options of other programs that run a command or a program they name: `tar --to-command=...`.
RUNS_PROGRAMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "make": ("", ("--eval",)),
    "gmake": ("", ("--eval",)),
    "tar": (
        "IF",
        (
            "--to-command",
            "--checkpoint-action",
            "--use-compress-program",
            "--rsh-command",
            "--info-script",
            "--new-volume-script",
        ),
    ),
    "zip": ("", ("-TT", "--unzip-command")),
    "rsync": ("e", ("--rsh", "--rsync-path")),
    "scp": ("S", ()),
    "sftp": ("S", ()),
    "man": ("PH", ("--pager", "--html")),
    "less": ("", ()),
    "openssl": ("", ("-engine",)),
    "curl": ("", ()),
    "wget": ("", ("--use-askpass",)),
    "mysql": ("", ("--pager",)),
    "psql": ("", ()),
    "sqlite3": ("", ("-cmd",)),
    "dpkg": ("", ()),
    "ffmpeg": ("", ()),
    "convert": ("", ()),
    "aria2c": ("", ("--on-download-complete",)),
}
AWKS = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
AWK_RUNS = re.compile(r"\bsystem\s*\(|\|\s*getline|\bprint[f]?\b[^;}]*\||@\w+\s*\(")
# sed's `e` command (after an address, `!` or flags) and the `e` flag of `s///`.
SED_RUNS = re.compile(r"(?:^|[;{}\n!/0-9$IM])\s*e(?:\s|;|}|$)|s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpIiMm0-9w]*e")
# Variables whose value is a command line something will run: it is looked into like `sh -c`.
COMMAND_VARIABLES = re.compile(
    r"^(EDITOR|VISUAL|PAGER|MANPAGER|BROWSER|SHELL|LESSOPEN|LESSCLOSE|SSH_ASKPASS|GIT_SSH|GIT_SSH_COMMAND"
    r"|GIT_EXTERNAL_DIFF|GIT_ASKPASS|GIT_PROXY_COMMAND|\w+_COMMAND|\w+_EDITOR|\w+_PAGER)$"
)
# Variables that change which code runs without naming a command: the line is unknowable.
CODE_VARIABLES = re.compile(
    r"^(BASH_ENV|ENV|PROMPT_COMMAND|IFS|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|DYLD_\w+|PERL5OPT|RUBYOPT"
    r"|NODE_OPTIONS|GIT_EXEC_PATH|GIT_CONFIG\w*|GIT_DIR|GIT_WORK_TREE|HOME|XDG_CONFIG_HOME|XDG_\w+|MANOPT"
    r"|PATH)\+?="
)
# git global options that take a separate value.
GIT_VALUE_OPTIONS = frozenset(
    {
        "-C",
        "-c",
        "--git-dir",
        "--work-tree",
        "--namespace",
        "--super-prefix",
        "--config-env",
        "--attr-source",
        "--list-cmds",
    }
)
# git settings whose value is a program or script run by git (lower case, `*` for any middle part).
GIT_EXEC_KEYS = re.compile(
    r"^(core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|alternaterefscommand)"
    r"|sequence\.editor|diff\.external|diff\..+\.(textconv|command)|merge\..+\.driver|filter\..+"
    r"|credential(\..+)?\.helper|gpg(\..+)?\.program|pager\..+|include(if\..+)?\.path|uploadpack\..+"
    r"|remote\..+\.(uploadpack|receivepack|proxy)|http\..*proxy|protocol\..+|url\..+|ssh\.variant"
    r"|man\..+\.cmd|web\.browser|browser\..+\.cmd|difftool\..+|mergetool\..+|receive\.procreceive\w*"
    r"|sendemail\..+|imap\..+|instaweb\..+|init\.templatedir|uploadarchive\..+|fetch\..+|submodule\..+"
    r"|.+\.(command|cmd|program|helper|editor|pager|driver|textconv|process|clean|smudge|proxy|hook\w*))$"
)
# git settings whose value is itself a command line (looked into); other GIT_EXEC_KEYS are unknowable.
GIT_COMMAND_KEYS = re.compile(
    r"^(core\.(pager|editor|sshcommand|askpass|gitproxy)|sequence\.editor"
    r"|diff\.external|pager\..+|.+\.(command|cmd|program|helper|editor|pager|driver|textconv|process"
    r"|clean|smudge))$"
)
# git subcommand options whose value is a command git runs (`git rebase --exec 'make'`).
GIT_COMMAND_OPTIONS: dict[str, frozenset[str]] = {
    "rebase": frozenset({"--exec", "-x"}),
    "difftool": frozenset({"-x", "--extcmd"}),
    "ls-remote": frozenset({"--upload-pack", "-u"}),
    "clone": frozenset({"--upload-pack", "-u"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "archive": frozenset({"--exec"}),
    "send-pack": frozenset({"--receive-pack", "--exec"}),
    "fetch-pack": frozenset({"--upload-pack", "--exec"}),
    "grep": frozenset({"-O", "--open-files-in-pager"}),
    "filter-branch": frozenset(
        {
            "--tree-filter",
            "--index-filter",
            "--msg-filter",
            "--env-filter",
            "--commit-filter",
            "--parent-filter",
            "--tag-name-filter",
        }
    ),
}
# git subcommands that run the command in their arguments.
GIT_RUNNING_SUBCOMMANDS = {"bisect": "run", "submodule": "foreach"}
# ssh's options that run a local command, as `-o ProxyCommand=...` (scp, sftp, rsync -e, git too).
SSH_COMMAND_OPTION = re.compile(r"(?i)^(-o)?\s*(proxy|local|knownhosts)command(\s*=|\s+\S)")
BRACE_LIST = re.compile(r"\{[^{}]*(,|\.\.)[^{}]*\}")
# Script operands that are really the command's input: `bash -`, `sh /dev/stdin`, `bash <(...)`.
_STDIN_SCRIPT = re.compile(r"^(-|/dev/stdin|/dev/fd/\d+|/proc/(self|thread-self|\d+)/fd/\d+|[<>]\(.*)$")
# Programs that read commands from their standard input even with a file operand (`ed f <<< '!cmd'`).
STDIN_INTERPRETERS = frozenset(
    {
        "ed",
        "ex",
        "vim",
        "vi",
        "nvim",
        "sqlite3",
        "mysql",
        "psql",
        "gdb",
        "ftp",
        "sftp",
        "dc",
        "tclsh",
        "expect",
        "lua",
        "jshell",
        "irb",
        "R",
        "julia",
        "parallel",
        "sem",
    }
)
# Programs that copy or link a file to their last operand.
COPIERS = frozenset({"cp", "ln", "install", "mv", "rsync", "link", "ditto"})
# A path to an installed program (`/usr/bin/curl`), whose copy is the program under another name.
PROGRAM_PATH = re.compile(r"(^|/)s?bin/[^/]+$")


def runs_arbitrary_code(program: str) -> bool:
    """Whether `program` runs code or commands named in its arguments (shells, interpreters,
    wrappers, find, sed, awk): a rule for it must spell out the whole command."""
    name = os.path.basename(program)
    return (
        name in SHELLS
        or name in WRAPPERS
        or name in AWKS
        or interpreter(name) in INLINE_CODE
        or name in ("find", "sed", "gsed", "eval", "exec", "trap", "source", ".")
    )


def interpreter(name: str) -> str:
    """`python3.11` -> `python`: the interpreter family of a program name."""
    return re.sub(r"[\d.]+$", "", name)


def interpreter_options(words: list[str]) -> list[str]:
    """The words before an interpreter's script (`python -W x -c ...` but not `python app.py -c`):
    a plain word ends them unless it follows a two-letter option, which may take it as a value."""
    out = []
    for i, word in enumerate(words[1:], 1):
        if not word.startswith("-") and not (len(words[i - 1]) == 2 and words[i - 1].startswith("-")):
            break
        out.append(word)
    return out


def is_code_option(word: str, letters: str, long_names: tuple[str, ...]) -> bool:
    """Whether `word` is one of the options that carry code: a short letter (also in a cluster or
    with its value glued on) or a long name (also abbreviated, with or without `=value`)."""
    name = word.split("=", 1)[0]
    if any(name == n or (n.startswith("--") and len(name) > 3 and n.startswith(name)) for n in long_names):
        return True
    if word.startswith("-") and not word.startswith("--") and len(word) > 1:
        cluster = word[1:]  # tested once: per letter it made a long word quadratic
        return word[1] in letters or (cluster.isalpha() and any(ch in letters for ch in cluster))
    return False


def reads_stdin_code(word: str) -> bool:
    """Whether an argument (or an option's `=value`) names standard input: `-`, `/dev/stdin`,
    `/dev/fd//0`, `/proc/thread-self/fd/0`, `<(...)`."""
    value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
    if value.startswith(("<(", ">(")):
        return True
    return bool(_STDIN_SCRIPT.match(re.sub(r"/(\./)+", "/", re.sub(r"/+", "/", value))))
