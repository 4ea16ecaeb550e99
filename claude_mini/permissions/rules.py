"""Permission rules in Claude Code's syntax: `Tool` or `Tool(specifier)`, parsed and matched.

`parse_rule` turns a settings string into a `Rule`; a Bash specifier becomes a `CommandPattern`,
a file tool's a `PathPattern` (gitignore-style, anchored as policy.py's docstring says). Which rule
decides a call, and in what order, is policy.py's business.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pathspec

from claude_mini.base.text import within
from claude_mini.permissions.decisions import RuleError
from claude_mini.shell.bash_reads import literal_prefix

READ_TOOLS = frozenset({"Read", "Grep", "Glob"})
WEB_TOOLS = frozenset({"WebFetch", "WebSearch"})
DOMAIN_PREFIX = "domain:"
EDIT_TOOLS = frozenset({"Write", "Edit", "NotebookEdit"})
KNOWN_TOOLS = (
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "MultiEdit",
    "NotebookEdit",
    "WebFetch",
    "WebSearch",
    "Task",
    "TodoWrite",
    "Skill",
    "Agent",
    "BashOutput",
    "KillShell",
)
_PATH_TOOLS = frozenset({"Read", "Write", "Edit", "Grep", "Glob", "NotebookEdit"})
# Rule tool names that govern a tool: Edit rules cover Write and NotebookEdit, Read rules cover the
# searches.
# `Task` is the Agent tool's old name, still used in Claude Code's settings.
_GOVERNED_BY = {
    "Write": ("Write", "Edit"),
    "NotebookEdit": ("NotebookEdit", "Edit"),
    "Grep": ("Grep", "Read"),
    "Glob": ("Glob", "Read"),
    "Agent": ("Agent", "Task"),
}
# Deny and ask rules only: a `Write(...)` deny or ask also binds Edit (an allow does not widen).
_ALSO_RESTRICTED_BY = {"Edit": ("Write",), "NotebookEdit": ("Write",)}
_RULE = re.compile(r"^(?P<tool>[A-Za-z][A-Za-z0-9_-]*(?:__\*)?)(?:\((?P<spec>.*)\))?$", re.DOTALL)
LEADING_TOOL = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_-]*)")
_MCP_PREFIX = "mcp__"


@dataclass(frozen=True)
class CommandPattern:
    """A Bash rule's specifier, matched against one simple command's words joined by spaces.

    Matching is by literal pieces between the `*`s, found left to right with
    `str.find`: no regular expression, so a rule with many `*` cannot backtrack
    (time grows with the text times the number of pieces, never exponentially).
    """

    raw: str  # the specifier with whitespace collapsed, for a whole-command exact match
    pieces: tuple[str, ...]  # the literal text between `*` wildcards
    open_tail: bool  # `prefix:*` and a trailing ` *`: the words may stop here or go on
    exact: bool
    never: bool = False  # several lines: it can only match a whole command line, never one command

    @classmethod
    def parse(cls, spec: str) -> CommandPattern:
        """Compile `cmd`, `prefix:*` or a `*` wildcard pattern; ValueError says what is wrong."""
        prefix = spec.endswith(":*")
        body = _normalise_command(spec[:-2] if prefix else spec)
        if not body:
            raise ValueError("empty command before :*")
        open_tail = prefix
        if body.endswith(" *"):  # `ls *` also covers a bare `ls`
            body, open_tail = body[:-2], True
        exact = not prefix and "*" not in body and not open_tail
        return cls(collapse_spaces(spec), tuple(body.split("*")), open_tail, exact, never="\n" in spec)

    def matches(self, command_text: str) -> bool:
        """Whether one simple command (words joined by single spaces) matches."""
        if self.never:
            return False
        if _wildcard_match(self.pieces, command_text):
            return True
        return self.open_tail and _wildcard_match((*self.pieces[:-1], self.pieces[-1] + " ", ""), command_text)


def _wildcard_match(pieces: tuple[str, ...], text: str) -> bool:
    """Whether `text` is pieces[0] * pieces[1] * ... * pieces[-1], `*` matching any text.

    Greedy leftmost placement of the middle pieces is exact for `*`-only patterns.
    """
    first, last = pieces[0], pieces[-1]
    if len(pieces) == 1:
        return text == first
    if len(text) < len(first) + len(last) or not text.startswith(first) or not text.endswith(last):
        return False
    position, end = len(first), len(text) - len(last)
    for piece in pieces[1:-1]:
        found = text.find(piece, position, end)
        if found < 0:
            return False
        position = found + len(piece)
    return True


def _normalise_command(text: str) -> str:
    try:
        return " ".join(shlex.split(text))
    except ValueError as exc:
        raise ValueError(f"cannot parse the command ({exc})") from None


@dataclass(frozen=True)
class PathPattern:
    """A file rule's specifier: a gitignore-style glob anchored at a base folder."""

    base: str
    spec: pathspec.GitIgnoreSpec = field(compare=False)
    pattern: str = ""  # the gitignore-style line, relative to `base`

    @classmethod
    def parse(cls, text: str, project_root: Path) -> PathPattern:
        """Compile `//abs`, `~/x`, `/x`, `./x` or `x` (see the module docstring); ValueError if bad."""
        if text.startswith("!"):
            raise ValueError("negated patterns (!) are not supported; write a deny rule instead")
        root = os.path.normpath(os.path.abspath(project_root))
        if text.startswith("//"):
            base, pattern = "/", "/" + text[2:]
        elif text == "~" or text.startswith("~/"):
            base, pattern = os.path.expanduser("~"), "/" + text[2:]
        elif text.startswith("./"):
            base, pattern = root, "/" + text[2:]
        else:
            base, pattern = root, text
        while pattern.lstrip("/").startswith("../"):
            base, pattern = os.path.dirname(base), "/" + pattern.lstrip("/")[3:]
        if not pattern.strip("/"):
            pattern = "**"
        return cls(base, pathspec.GitIgnoreSpec.from_lines([pattern]), pattern)

    def matches(self, path: str, *, is_dir: bool = False) -> bool:
        """Whether absolute `path` matches; for a searched folder, whether files inside it would."""
        rel = os.path.relpath(path, self.base)
        if rel == ".." or rel.startswith("../"):
            return False
        if rel != "." and self.spec.match_file(rel):
            return True
        # Best effort for Grep/Glob: a probe file stands for "something inside this folder".
        return is_dir and self.spec.match_file("x" if rel == "." else rel + "/x")

    def may_match_inside(self, folder: str) -> bool:
        """Whether some file below absolute `folder` could match: for searches that read a whole tree.

        Errs towards yes: a pattern without a slash matches at any depth, and an
        anchored one matches below its literal leading folders.
        """
        rel = os.path.relpath(folder, self.base)
        if rel == ".." or rel.startswith("../"):
            return within(self.base, folder)  # the folder holds everything the rule covers
        if rel == "." or self.matches(folder, is_dir=True):
            return True
        if "/" not in self.pattern.rstrip("/"):
            return True  # `.env`, `*.key`: at any depth
        prefix = literal_prefix(self.pattern.strip("/"))
        return not prefix or within(rel, prefix) or within(prefix, rel)


@dataclass(frozen=True)
class Rule:
    """One parsed rule, `Tool` or `Tool(specifier)`, with where it came from."""

    text: str
    tool: str
    specifier: str | None  # None: the whole tool
    source: str
    origin: str | None = None
    command: CommandPattern | None = None
    path: PathPattern | None = None

    @property
    def where(self) -> str:
        """`managed rule Bash(rm:*) in /etc/claude-mini/settings.json`: for messages."""
        return f"{self.source} rule {self.text}" + (f" in {self.origin}" if self.origin else "")

    def governs(self, tool_name: str, *, server: str | None = None, restricting: bool = False) -> bool:
        """Whether this rule applies to `tool_name` (Edit rules govern Write, Read rules the searches,
        `mcp__server` every tool of that server, `server` when the tool list knows it). A deny or ask
        rule (`restricting`) also binds where it leans that way: `Write(...)` binds Edit, and an MCP
        tool of unknown server is covered under every way of splitting its name."""
        names = _GOVERNED_BY.get(tool_name, (tool_name,))
        if restricting:
            names = (*names, *_ALSO_RESTRICTED_BY.get(tool_name, ()))
        return self.tool in names or _covers_server_tool(self.tool, tool_name, server, loose=restricting)


def skill_matches(specifier: str, skill: Any) -> bool:
    """`Skill(pdf)` covers the skill `pdf` (a leading `/` ignored), `Skill(pdf:*)` or `Skill(pdf*)`
    every skill whose name starts with `pdf` (Claude Code's forms). Names are compared without
    case, as skills are found."""
    if not isinstance(skill, str):
        return False
    name, specifier = skill.strip().lstrip("/").lower(), specifier.lower()
    for suffix in (":*", "*"):
        if specifier.endswith(suffix):
            return name.startswith(specifier.removesuffix(suffix))
    return name == specifier


def _covers_server_tool(rule_tool: str, tool_name: str, server: str | None, *, loose: bool = False) -> bool:
    """`mcp__github` and `mcp__github__*` cover `mcp__github__create_issue` of server `github`.

    Server names may hold `__`, so a name alone does not say where the server ends: with the
    tool list's `server` the rule's server must be exactly it. Without it, a `loose` (deny or
    ask) rule covers the tool under any split, and an allow rule only when the name has one.
    """
    if not rule_tool.startswith(_MCP_PREFIX) or not tool_name.startswith(_MCP_PREFIX):
        return False
    wanted = rule_tool.removeprefix(_MCP_PREFIX).removesuffix("__*")
    if server is not None:
        return wanted == server and tool_name.startswith(f"{_MCP_PREFIX}{server}__")
    splits = _server_splits(tool_name)
    return wanted in splits if loose else splits == [wanted]


def _server_splits(tool_name: str) -> list[str]:
    """Every server name `mcp__<server>__<tool>` could be read with (both parts non-empty)."""
    rest = tool_name.removeprefix(_MCP_PREFIX)
    return [rest[:i] for i in range(1, len(rest) - 2) if rest[i : i + 2] == "__" and rest[:i] and rest[i + 2 :]]


def parse_rule(text: Any, *, source: str, project_root: Path, origin: str | None = None) -> Rule:
    """Parse one rule in Claude Code's syntax; RuleError names the rule, its source and the problem."""
    if not isinstance(text, str):
        raise RuleError(repr(text), source, "a rule must be a string", origin)
    stripped = text.strip()
    match = _RULE.match(stripped)
    if not match:
        raise RuleError(text, source, _shape_problem(stripped), origin)
    tool, spec = match["tool"], match["spec"]
    if tool not in KNOWN_TOOLS and (known := known_tool(tool)):
        problem = f"unknown tool {tool}; tool names are case-sensitive (did you mean {known}?)"
        raise RuleError(text, source, problem, origin)
    if spec is not None:
        spec = spec.strip()
        if not spec:
            raise RuleError(text, source, f"empty parentheses; write {tool} for the whole tool", origin)
    if spec is None or spec == "*":
        return Rule(stripped, tool, None, source, origin)
    try:
        if tool == "Bash":
            return Rule(stripped, tool, spec, source, origin, command=CommandPattern.parse(spec))
        if tool in _PATH_TOOLS:
            return Rule(stripped, tool, spec, source, origin, path=PathPattern.parse(spec, project_root))
        if tool == "WebFetch" and not (spec.startswith(DOMAIN_PREFIX) and spec[len(DOMAIN_PREFIX) :].strip()):
            raise ValueError(f"WebFetch rules name a host: WebFetch({DOMAIN_PREFIX}example.com)")
    except ValueError as exc:
        raise RuleError(text, source, str(exc), origin) from None
    return Rule(stripped, tool, spec, source, origin)


def _shape_problem(text: str) -> str:
    if not text:
        return "the rule is empty"
    if text.startswith("("):
        return "missing tool name before '('"
    if "(" in text and not text.endswith(")"):
        return "missing closing ')'"
    if ")" in text and "(" not in text:
        return "')' without '('"
    return "expected Tool or Tool(specifier), e.g. Bash(git status:*)"


def known_tool(name: str) -> str | None:
    """The known tool name `name` spells with other letter case, if any."""
    return next((known for known in KNOWN_TOOLS if known.lower() == name.lower()), None)


def names_match(rule: Rule, input: dict[str, Any]) -> bool:
    """`Skill(name)` and `Agent(type)` (or `Task(type)`) rules: the skill, or the agent type asked for
    (general-purpose when the call names none); `WebFetch(domain:host)`: the host of the URL."""
    if rule.specifier is None:
        return False
    if rule.tool == "WebFetch":
        host = url_host(input.get("url"))
        return host is not None and domain_matches(host, rule.specifier.removeprefix(DOMAIN_PREFIX))
    if rule.tool == "Skill":
        return skill_matches(rule.specifier, input.get("skill"))
    if rule.tool in ("Agent", "Task"):
        return skill_matches(rule.specifier, input.get("subagent_type") or "general-purpose")
    return False


def url_host(url: Any) -> str | None:
    """The host a URL names, lower case without a trailing dot (None: not a URL with a host)."""
    if not isinstance(url, str):
        return None
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return None
    return host.rstrip(".") if host else None


def domain_matches(host: str, pattern: str) -> bool:
    """`example.com` matches itself only, `*.example.com` its subdomains, `*` every host: the form
    of `WebFetch(domain:...)` rules and of the sandbox's network domain lists alike."""
    host, pattern = host.lower().rstrip("."), pattern.strip().lower().rstrip(".")
    if pattern == "*" or pattern == host:
        return True
    return pattern.startswith("*.") and host.endswith(pattern[1:])


def collapse_spaces(text: str) -> str:
    """`text` with runs of spaces and tabs made one space, ends stripped."""
    # Spaces and tabs only: a newline separates commands and must not become a space.
    return re.sub(r"[ \t]+", " ", text.strip())
