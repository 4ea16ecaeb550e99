"""Which files a Bash command line may read, for keeping Read deny rules in force there.

`read_targets` looks at the commands `candidates.command_candidates` found and
lists the paths their arguments name: as written, as the shell would expand a
wildcard (`cat .en?`), as git's `REV:path` (`git show HEAD:.env`), and the
folders that recursive readers search (`grep -r x .`, `rg x`, `diff -r a b`,
`git grep x`). Also input redirections (`cat < .env`), `key=value` operands
(`dd if=.env`), paths after a `cd` on the same line (joined to its folder),
folders given to archivers, copiers and encoders (`tar cf - secrets`), and
variables: one assigned on the line (`f=.env; cat $f`) or in the environment is
put in; a word whose expansion cannot be known (`$(..)`, `$1`, `read f`) may name
anything (`ReadTarget.anything`). It is a best effort that errs towards listing
too much: a program that opens a file it is not told about (a script, a config
file) is not seen, which is why Read deny rules are documented as holding for
arguments.
"""

from __future__ import annotations

import glob as globlib
import itertools
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from claude_mini.shell.parse import SimpleCommand
from claude_mini.shell.read_only import has_option

# At most this many paths per wildcard word are checked; more means the whole folder is searched.
MAX_EXPANSIONS = 2_000
_GLOB_CHARS = "*?["
_GREPS = frozenset({"grep", "egrep", "fgrep", "rgrep", "zgrep"})
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "ack-grep", "rgrep"})
_REVISION_PATH = re.compile(r"^(?:[^:/][^:]*)?:(?:[0-3]:)?(?P<path>[^:].*)$")  # HEAD@{1 year ago}:x too
# git subcommands that print file contents from history or the index (not only names).
_GIT_CONTENT_VIEWS = frozenset(
    {
        "show",
        "diff",
        "format-patch",
        "cat-file",
        "archive",
        "whatchanged",
        "diff-tree",
        "diff-index",
        "diff-files",
        "blame",
        "annotate",
        "grep",
    }
)
_GIT_PATCH_OPTIONS = (
    "-p",
    "-u",
    "-U",
    "-L",
    "--patch",
    "--unified",
    "--binary",
    "--cc",
    "-c",
    "--full-diff",
    "-W",
    "--function-context",
    "--raw",
    "--word-diff",
    "--color-words",
)
# Programs that read a whole folder they are given: archivers, copiers, encoders, image builders.
_TREE_READERS = frozenset(
    {
        "tar",
        "bsdtar",
        "gtar",
        "zip",
        "7z",
        "7za",
        "7zr",
        "rar",
        "cpio",
        "pax",
        "ar",
        "cp",
        "rsync",
        "scp",
        "rclone",
        "ln",
        "mv",
        "install",
        "base64",
        "base32",
        "basenc",
        "xxd",
        "od",
        "hexdump",
        "hd",
        "strings",
        "gzip",
        "bzip2",
        "xz",
        "zstd",
        "lz4",
        "gpg",
        "mksquashfs",
        "genisoimage",
        "mkisofs",
        "xorriso",
        "ditto",
        "docker",
        "podman",
        "buildah",
        "kaniko",
        "rdiff",
        "duplicity",
        "restic",
        "borg",
        "aws",
        "gsutil",
        "az",
    }
)
# Programs whose -r/-R walks a folder without reading what the files hold.
_NAMES_ONLY = frozenset(
    {
        "ls",
        "tree",
        "du",
        "find",
        "chmod",
        "chown",
        "chgrp",
        "touch",
        "mkdir",
        "rm",
        "rmdir",
        "setfacl",
        "getfacl",
        "chattr",
        "lsattr",
    }
)
# At most this many folders a line may `cd` into are followed; more make every path unknowable.
_MAX_BASES = 16
# Options that make a program read the files named in another file or on its input.
_FILE_LIST_OPTIONS = ("--files0-from", "--files-from", "--from-file", "--file-list", "-T")


@dataclass(frozen=True)
class ReadTarget:
    """A path a command may read; `recursive` when everything below a folder may be read."""

    path: str  # absolute, normalised
    shown: str  # as the command wrote it, for messages
    recursive: bool = False
    anything: bool = False  # the word's expansion cannot be known: it may name any path


def read_targets(
    commands: Iterable[SimpleCommand], cwd: str, project_root: str, line: str | None = None
) -> Iterator[ReadTarget]:
    """Every path the commands may read (see the module docstring); `line` is the whole command
    line, whose plain assignments (`f=.env`) fill in variables."""
    commands = list(commands)
    variables = _Variables(line or "", commands)
    seen: set[tuple[str, bool]] = set()
    bases = [cwd]  # where relative paths may land: the folder, then each `cd` target on the line
    for command in commands:
        words = command.words
        if not words:
            continue
        program = os.path.basename(words[0])
        found = _command_reads(command, program, bases, project_root, variables)
        for target in found:
            if (target.path, target.recursive) not in seen:  # each path is checked once per line
                seen.add((target.path, target.recursive))
                yield target
        if program not in ("cd", "pushd"):
            continue
        target_dir = _cd_target(words[1:], variables)
        # Candidates are listed once each, so `cd a; cd a` shows one `cd a`: a repeated cd is not followed.
        repeated = len(re.findall(r"(?<![\w./-])(?:cd|pushd)(?![\w./-])", line or "")) > sum(
            os.path.basename(c.words[0]) in ("cd", "pushd") for c in commands if c.words
        )
        if target_dir is None or repeated or len(bases) >= _MAX_BASES:  # where it lands cannot be known
            yield ReadTarget(cwd, " ".join(words)[:200], anything=True)
            return
        bases = list(dict.fromkeys([*bases, *(absolute_path(target_dir, base) for base in bases)]))[:_MAX_BASES]


def _command_reads(
    command: SimpleCommand, program: str, bases: list[str], project_root: str, variables: _Variables
) -> Iterator[ReadTarget]:
    """The paths one command may read, for each folder it may run in."""
    args: list[str] = []
    for word in command.words[1:]:
        values = variables.expand(word) if word in command.expanded else [word]
        if values is None:
            yield ReadTarget(bases[0], word, anything=True)
            continue
        args += values
    inputs = [
        t
        for op, t in command.redirects
        if "<" in op and not op.startswith("<<") and not (op == "<&" and (t.isdigit() or t == "-"))
    ]
    for target in inputs:
        values = variables.expand(target) if target in command.expanded else [target]
        if values is None:
            yield ReadTarget(bases[0], target, anything=True)
        else:
            args += values
    for base in bases:
        yield from _argument_paths(tuple(args), base)
        yield from _recursive_reads(program, tuple(args), base)
        if any(w.split("=", 1)[0] in _FILE_LIST_OPTIONS for w in args):  # names come from elsewhere
            yield ReadTarget(base, ".", recursive=True)
        if program == "git":
            yield from _git_paths(tuple(args), base, project_root)


def _cd_target(args: tuple[str, ...], variables: _Variables) -> str | None:
    """The folder `cd ARGS` moves to, or None when it cannot be known (`cd -`, `cd $(..)`)."""
    operands = [w for w in args if not w.startswith("-") or w == "-"]
    if not operands:
        return "~"
    values = variables.expand(operands[0]) if "$" in operands[0] or "`" in operands[0] else [operands[0]]
    if not values or len(values) != 1 or values[0] == "-":
        return None
    return values[0]


class _Variables:
    """What `$NAME` stands for on one line: a plain assignment on the line (`f=.env`), else the
    environment the Bash tool passes on. A name the line binds another
    way (`read f`, `for f in`, `printf -v f`, `mapfile f`) and every other expansion is unknown."""

    _ASSIGNED = re.compile(r"(?:^|[\s;&|(])([A-Za-z_]\w*)=('[^']*'|\"[^\"$`]*\"|[^\s;&|()<>$`'\"]*)(?=$|[\s;&|)])")
    _SIMPLE = re.compile(r"\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\}|([?$#!-]))")

    def __init__(self, line: str, commands: list[SimpleCommand]) -> None:
        self.values: dict[str, list[str]] = {}
        for match in self._ASSIGNED.finditer(line):
            self.values.setdefault(match[1], []).append(match[2].strip("'\""))
        # Names bound by anything but a plain assignment: every bare word that is a name.
        self.unknown = {w for c in commands for w in c.words[1:] if re.fullmatch(r"[A-Za-z_]\w*", w)}
        self.unknown |= {n for n in re.findall(r"(?:^|[\s;&|(])([A-Za-z_]\w*)\+?=", line) if n not in self.values}
        self.unknown |= set(re.findall(r"(?<!\w)([A-Za-z_]\w*)\+=", line))  # `f+=x` appends

    def expand(self, word: str) -> list[str] | None:
        """The words `word` may become, or None when an expansion in it cannot be known."""
        if "`" in word or "$(" in word or "<(" in word or ">(" in word:
            return None
        results = [""]
        position = 0
        for match in self._SIMPLE.finditer(word):
            values = self._lookup(match[1] or match[2] or match[3])
            if values is None:
                return None
            head = word[position : match.start()]
            results = [r + head + v for r in results for v in values][:16]
            position = match.end()
        tail = word[position:]
        if "$" in tail.rstrip("$"):  # `${x:-y}`, `$'..'`, `$1`, `${!x}`: not a plain name
            return None
        return [r + tail for r in results]

    def _lookup(self, name: str) -> list[str] | None:
        if name in "?$#!-":
            return ["0"]  # numbers and flags, never a path
        if name in self.unknown:
            return None
        if name in self.values:
            return self.values[name]
        # Unset here may still be set where the command runs (a BASH_ENV file, a sandbox's env).
        return [os.environ[name]] if name in os.environ else None


def shows_git_history(commands: Iterable[SimpleCommand]) -> bool:
    """Whether a command prints file contents from git's history or index (`git show HEAD`,
    `git log -p`, `git diff A B`): a tracked file a rule denies could appear in it."""
    for command in commands:
        words = [w for w in command.words[1:] if not w.startswith("-")]
        if os.path.basename(command.words[0]) != "git" or not words:
            continue
        sub = words[0]
        if sub in _GIT_CONTENT_VIEWS or (
            sub == "log"
            and any(
                w.split("=", 1)[0] in _GIT_PATCH_OPTIONS or w.startswith(("--patch", "-U", "-L")) for w in command.words
            )
        ):
            return True
        if sub == "stash" and "show" in words:
            return True
    return False


def _argument_paths(args: tuple[str, ...], cwd: str) -> Iterator[ReadTarget]:
    for word in args:
        values = [word]
        if "=" in word and not word.startswith("-"):
            values.append(word.split("=", 1)[1])  # `dd if=.env`, `make FILE=.env`
        if word.startswith("-"):
            values = [word.split("=", 1)[1]] if "=" in word else []
            if not word.startswith("--") and len(word) > 2:
                values.append(word[2:])  # a short option's glued value: `file -f.env`
        for value in values:
            yield from _value_paths(value, cwd)


def _value_paths(value: str, cwd: str) -> Iterator[ReadTarget]:
    if not value or value.startswith("-"):
        return
    yield ReadTarget(absolute_path(value, cwd), value)
    if any(ch in value for ch in _GLOB_CHARS) or "{" in value:
        yield from _expansions(value, cwd)


def _expansions(word: str, cwd: str) -> Iterator[ReadTarget]:
    """What the shell could expand a wildcard word to, hidden files included."""
    from claude_mini.base.braces import expand_braces

    try:
        patterns = expand_braces(word)
    except ValueError:
        patterns = [word]
    for pattern in patterns:
        if "[" in pattern or re.search(r"\{[^{}]*\.\.", pattern):
            # bash classes (`[[:alpha:]]`, `[^x]`) and ranges (`{a..z}`) Python's glob does not know:
            # count the word as a search of the folder it starts in.
            yield ReadTarget(absolute_path(literal_prefix(pattern) or ".", cwd), pattern, recursive=True)
        matches = globlib.iglob(os.path.expanduser(pattern), root_dir=cwd, recursive=True, include_hidden=True)
        found = list(itertools.islice(matches, MAX_EXPANSIONS + 1))
        if len(found) > MAX_EXPANSIONS:  # too many to list: stand for the folder the pattern starts in
            yield ReadTarget(absolute_path(literal_prefix(pattern) or ".", cwd), pattern, recursive=True)
            continue
        for match in found:
            yield ReadTarget(absolute_path(match, cwd), match)
        if pattern != word and not found:
            yield ReadTarget(absolute_path(pattern, cwd), pattern)


def literal_prefix(pattern: str) -> str:
    """The folders of a glob before its first wildcard part (`src/a/*.py` -> `src/a`), or ''."""
    literal = []
    for part in pattern.split("/"):
        if any(ch in part for ch in "*?[{"):
            break
        literal.append(part)
    return "/".join(literal)


def _git_paths(args: tuple[str, ...], cwd: str, project_root: str) -> Iterator[ReadTarget]:
    """`HEAD:path`, `:path`, `:0:path`: relative to the repository root, or to cwd with ./ or ../."""
    for word in args:
        if "://" in word or word.startswith("-"):
            continue
        match = _REVISION_PATH.match(word)
        if not match:
            continue
        path = match["path"]
        base = cwd if path.startswith(("./", "../")) else project_root
        yield ReadTarget(absolute_path(path, base), word)


def _recursive_reads(program: str, args: tuple[str, ...], cwd: str) -> Iterator[ReadTarget]:
    """Folders that grep -r, rg, ag, ack, diff -r and git grep read everything below."""
    default = "."  # what a search without a folder operand reads
    if program == "git":
        rest = [w for w in args if not w.startswith("-")]
        if not rest or rest[0] not in ("grep", "diff"):
            return
        default = "." if rest[0] == "grep" else ""  # git diff of folders reads them (--no-index)
        args = args[args.index(rest[0]) + 1 :]
    elif program == "diff":
        default = ""  # diff reads the files of the folders it compares, -r or not
    elif program in _GREPS:
        # -r, -R, -d recurse / --directories=recurse (abbreviated too): any -d counts, the safe side
        recursive = has_option(args, "rRd", "--recursive", "--dereference-recursive", "--directories")
        if not recursive and program != "rgrep":
            return
    elif program in _TREE_READERS or (program not in _NAMES_ONLY and has_option(args, "rR", "--recursive")):
        default = ""  # an archiver or copier reads the folders it is given, whole
    elif program not in _ALWAYS_RECURSIVE:
        return
    folders = [w for w in args if not w.startswith("-") and os.path.isdir(absolute_path(w, cwd))]
    for folder in folders or ([default] if default else []):
        yield ReadTarget(absolute_path(folder, cwd), folder, recursive=True)


def absolute_path(path: str, cwd: str) -> str:
    """`path` made absolute against `cwd` with `~` expanded: what ToolContext.resolve gives a tool.

    The shell's `~+` (and, as a best guess, `~-`) and `/proc/self/cwd` name the
    shell's folder, which is `cwd`, not this process's.
    """
    path = re.sub(r"/(\./)+", "/", re.sub(r"/+", "/", path))  # `/proc//self/./cwd` is `/proc/self/cwd`
    for alias in ("~+", "~-", "/proc/self/cwd", "/proc/thread-self/cwd"):
        if path == alias or path.startswith(alias + "/"):
            path = cwd + path[len(alias) :]
            break
    return os.path.normpath(os.path.join(cwd, os.path.expanduser(path)))
