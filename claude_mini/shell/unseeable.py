"""Commands that run something their text does not show, and why.

`/proc/self/exe`, the dynamic loader, shells the candidate finder does not model, `hash -p`,
`enable -f`, editors' `+cmd`, interpreter options whose value becomes code, and (GIT_COMMANDS)
git subcommands that may be aliases. Such a command matches every Bash deny and ask rule.
"""

from __future__ import annotations

import os
import re

from claude_mini.shell.runners import SHELLS, interpreter, interpreter_options

# Shells the candidate finder does not model (their options and syntax differ): any use is unknowable.
_UNMODELLED_SHELLS = frozenset(
    {
        "rbash",
        "rksh",
        "rzsh",
        "yash",
        "posh",
        "lksh",
        "oksh",
        "pdksh",
        "loksh",
        "hush",
        "msh",
        "bosh",
        "elvish",
        "xonsh",
        "nu",
        "nush",
        "ion",
        "osh",
        "ysh",
        "oil",
        "es",
        "rc",
        "scsh",
        "closh",
        "murex",
        "sash",
        "jsh",
        "bsh",
        "ksh93",
        "zsh-static",
        "bash-static",
        "busybox-sh",
        "dash-static",
        "mksh-static",
        "gitsh",
        "sheldon",
    }
)
# Names ending in `sh` that are not shells (a name like `rbash` we do not know is taken for one).
_NOT_SHELLS = frozenset(
    {
        "ssh",
        "mosh",
        "autossh",
        "hash",
        "trash",
        "flash",
        "push",
        "refresh",
        "publish",
        "finish",
        "fresh",
        "crash",
        "stash",
        "splash",
        "wash",
        "flush",
        "mesh",
        "ush",
    }
)
# The dynamic loader: `ld-linux-x86-64.so.2 /usr/bin/curl` runs curl under another name.
_LOADER = re.compile(r"^ld(-[\w.+-]*)?\.so(\.[\w.]+)?$|^ld64\.so\.\d+$")
# `/proc/self/exe`, `/proc/1/exe`: whatever program that process runs (this shell: bash).
_PROC_EXE = re.compile(r"^/proc/[^/]+/(exe|root/.*|cwd/.*|fd/\d+|map_files/.*)$")
# Programs that run commands read from input or a file, later or elsewhere (no command on the line).
_RUNS_INPUT_LATER = {
    "at": "at runs commands read from its input or a file",
    "batch": "batch runs commands read from its input or a file",
    "crontab": "crontab installs commands that run later",
}
# Editors whose `+cmd` and `-c cmd` run ex commands (`+'!curl x'`); `+N` and `+/pattern` only move.
_VIM_FAMILY = frozenset(
    {"vim", "vi", "nvim", "ex", "view", "rvim", "gvim", "vimdiff", "evim", "nvi", "elvis", "vile", "exim"} - {"exim"}
)
_HARMLESS_PLUS = re.compile(r"^\+(\d*|/.*|\?.*)$")
_PAGERS = frozenset({"less", "more", "most"})
# git's own commands (and common installed ones); another name may be an alias from git's configuration.
GIT_COMMANDS = frozenset(
    {
        "add",
        "am",
        "annotate",
        "apply",
        "archive",
        "bisect",
        "blame",
        "branch",
        "bundle",
        "cat-file",
        "check-attr",
        "check-ignore",
        "check-mailmap",
        "check-ref-format",
        "checkout",
        "checkout-index",
        "cherry",
        "cherry-pick",
        "citool",
        "clean",
        "clone",
        "column",
        "commit",
        "commit-graph",
        "commit-tree",
        "config",
        "count-objects",
        "credential",
        "describe",
        "diagnose",
        "diff",
        "diff-files",
        "diff-index",
        "diff-tree",
        "difftool",
        "fast-export",
        "fast-import",
        "fetch",
        "fetch-pack",
        "filter-branch",
        "fmt-merge-msg",
        "for-each-ref",
        "for-each-repo",
        "format-patch",
        "fsck",
        "gc",
        "get-tar-commit-id",
        "grep",
        "gui",
        "hash-object",
        "help",
        "hook",
        "http-backend",
        "index-pack",
        "init",
        "instaweb",
        "interpret-trailers",
        "log",
        "ls-files",
        "ls-remote",
        "ls-tree",
        "mailinfo",
        "mailsplit",
        "maintenance",
        "merge",
        "merge-base",
        "merge-file",
        "merge-index",
        "merge-tree",
        "mergetool",
        "mktag",
        "mktree",
        "multi-pack-index",
        "mv",
        "name-rev",
        "notes",
        "pack-objects",
        "pack-redundant",
        "pack-refs",
        "patch-id",
        "prune",
        "prune-packed",
        "pull",
        "push",
        "range-diff",
        "read-tree",
        "rebase",
        "reflog",
        "remote",
        "repack",
        "replace",
        "request-pull",
        "rerere",
        "reset",
        "restore",
        "rev-list",
        "rev-parse",
        "revert",
        "rm",
        "send-email",
        "send-pack",
        "shortlog",
        "show",
        "show-branch",
        "show-index",
        "show-ref",
        "sparse-checkout",
        "stage",
        "stash",
        "status",
        "stripspace",
        "submodule",
        "switch",
        "symbolic-ref",
        "tag",
        "unpack-file",
        "unpack-objects",
        "update-index",
        "update-ref",
        "update-server-info",
        "var",
        "verify-commit",
        "verify-pack",
        "verify-tag",
        "version",
        "whatchanged",
        "worktree",
        "write-tree",
        "lfs",
        "flow",
        "filter-repo",
        "annex",
        "crypt",
        "secret",
        "absorb",
    }
)
# perl's `-M`/`-m` value becomes `use VALUE;`: only a module name (with an import list) is read as such.
_PERL_MODULE = re.compile(r"^-[mM]-?[A-Za-z_][\w:]*(=[\w,:.]*)?$")
_PERL_DEBUGGER = re.compile(r"^-d(t)?(:[\w:]+(=[\w,]*)?)?$")
# python's -X options that only tune the interpreter (others, like presite=, import code).
_PYTHON_X = re.compile(
    r"^(dev|utf8(=\d)?|importtime(=\d)?|faulthandler|tracemalloc(=\d+)?|showrefcount"
    r"|warn_default_encoding|no_debug_ranges|frozen_modules(=on|=off)?|int_max_str_digits=\d+"
    r"|perf|perf_jit|cpu_count=\w+|gil=\d|pycache_prefix=[^;]*|context_aware_warnings(=\d)?"
    r"|thread_inherit_context(=\d)?|disable_remote_debug|lazy_imports(=\w+)?)$"
)


def unseeable(words: list[str]) -> str | None:
    """Why the command `words` runs something its text does not show, or None: `/proc/self/exe`,
    the dynamic loader, shells we do not model, `hash -p`, `enable -f`, unknown interpreter
    options, editors' `+cmd`, git aliases. Such a command matches every deny and ask rule."""
    path = re.sub(r"/(\./)+", "/", re.sub(r"/+", "/", words[0]))
    name = os.path.basename(path)
    if _PROC_EXE.match(path):
        return f"{words[0]} runs the program of a process (/proc), which the line does not name"
    if len(name) < 200 and _LOADER.match(name):  # a longer name is no loader (and is not scanned)
        return f"{name} is the dynamic loader, which runs the program it is given (loader)"
    shell = interpreter(name)
    if shell in _UNMODELLED_SHELLS or (
        re.fullmatch(r"[a-z]{1,6}sh", shell) and shell not in SHELLS and shell not in _NOT_SHELLS
    ):
        return f"{name} is a shell the check does not model"
    if name in _RUNS_INPUT_LATER:
        return _RUNS_INPUT_LATER[name]
    args = words[1:]
    if name == "hash" and any(w.startswith("-") and "p" in w for w in args):
        return "hash -p makes a name run another program"
    if name == "enable" and any(w.startswith("-") and "f" in w for w in args):
        return "enable -f loads a builtin from a shared object"
    return _option_problem(name, args)


def _option_problem(name: str, args: list[str]) -> str | None:
    """Options of editors, pagers and interpreters that run code the line does not show."""
    if name in _VIM_FAMILY and (
        bad := next((w for w in args if w.startswith("+") and not _HARMLESS_PLUS.match(w)), None)
    ):
        return f"{name} {bad} runs an editor command"
    if name in _PAGERS and any(w.startswith("+") and "!" in w for w in args):
        return f"{name} +! runs a shell command"
    if name == "parallel" and not next((w for w in args if not w.startswith("-")), ":::").strip(":"):
        return "parallel without a command runs its arguments or input as commands"
    base = interpreter(name)
    if base == "perl":
        bad = next(
            (
                w
                for w in interpreter_options([name, *args])
                if w[:2] in ("-M", "-m", "-d") and not (_PERL_MODULE.match(w) or _PERL_DEBUGGER.match(w))
            ),
            None,
        )
        return f"perl {bad} is an option whose value becomes code" if bad else None
    if base in ("python", "pypy"):
        return _python_option_problem(name, args)
    if base in ("node", "nodejs", "bun", "deno") and any("data:" in w for w in args):
        return f"{name} loads code from a data: URL"
    return None


def _python_option_problem(name: str, args: list[str]) -> str | None:
    """An -X option python does not merely tune itself with (`-X presite=mod` imports code)."""
    for i, word in enumerate(args):
        if not word.startswith("-") or word in ("-c", "-m") or word.startswith(("-c", "-m")):
            return None  # the script, the module or the code: the interpreter's options end here
        value = None
        if word == "-X":
            value = args[i + 1] if i + 1 < len(args) else ""
        elif word.startswith("-X"):
            value = word[2:]
        if value is not None and not _PYTHON_X.match(value):
            return f"{name} -X {value} is an interpreter option the check does not know"
    return None
