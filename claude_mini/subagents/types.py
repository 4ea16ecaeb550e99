"""The kinds of subagent the Agent tool can start: two built-ins and Claude Code's agent files.

    load_agent_types(project_root, home, trusted=) -> AgentTypes   one read per file, no model call
    AgentTypes.find(name)                                          case-insensitive
    memory_dir(agent_type, project_root, home)                     its own MEMORY.md folder, or None
    memory_dir_problem(agent_type, folder, project_root, home)     why that folder may not be used

Files (Claude Code's layout and format): `.claude/agents/**/*.md` under the project root and
`agents/**/*.md` under `$CLAUDE_MINI_HOME`, subfolders included. Frontmatter `name` and
`description` are required; optional: `tools` (a comma-separated string or a list; omitted, empty or
`*`: every tool; an entry written as a rule, `Bash(psql:*)`, grants the tool and is the type's allow
rule), `disallowedTools` (names or rules), `model` (`inherit`: the parent's), `memory`,
`permissionMode`, `skills` (loaded into its first message) and `hooks` (settings' format, run only
while it runs); other keys (`color`, `category`, ...) are a --debug line. The body is the type's
system prompt. The name is the
frontmatter's, not the file's. Project beats user on a clash (Claude Code); a built-in's name
cannot be taken (Claude Code would let the file replace the built-in). Bad files are one line
each; the rest loads. Reading, frontmatter and the links-out-of-the-repository rule are the
skills catalog's (`skills.catalog`), so both say the same things about the same mistakes.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

from claude_mini.skills.catalog import (
    NAME,
    NAME_RULE,
    CatalogError,
    FileLoader,
    FrontmatterFields,
    Scope,
    fix_hint,
    read_body,
    split_body,
    split_tool_rules,
)

log = logging.getLogger(__name__)

MemoryScope = Literal["project", "user", "local"]
MEMORY_TOOLS = ("Write", "Edit", "Read")  # added to a `tools:` list when `memory` is set (Claude Code)
# `Read`, `mcp__github__create_issue`, `Bash(psql:*)`
_TOOL_RULE = re.compile(r"(?P<tool>[A-Za-z_*][\w-]*)(?:\((?P<spec>.*)\))?", re.S)
_APPLIED_KEYS = {"name", "description", "tools", "disallowedTools", "model", "memory", "permissionMode"}
_APPLIED_KEYS |= {"skills", "hooks"}
AGENT_MODES = ("default", "acceptEdits", "dontAsk", "bypassPermissions", "plan")


@dataclass(frozen=True)
class AgentType:
    """One kind of subagent the Agent tool can start."""

    name: str
    description: str  # when to use it (listed to the model)
    prompt: str = ""  # its system prompt (the file's body); "" for a fork
    tools: tuple[str, ...] | None = None  # tool names it may use; None: every tool the parent has
    model: str | None = None  # frontmatter `model` (haiku/sonnet/opus or an id); "inherit"/None: the parent's
    memory: MemoryScope | None = None
    source: str = "built-in"  # "built-in", "project", "user"
    path: Path | None = None  # the .md file of a custom type
    fork: bool = False  # runs on the parent's exact prefix (general-purpose)
    read_only: bool = False  # only read-only calls may run (Explore)
    allow: tuple[str, ...] = ()  # rules from `tools` entries written as rules (`Bash(psql:*)`)
    deny: tuple[str, ...] = ()  # `disallowedTools` written as rules
    disallowed: tuple[str, ...] = ()  # `disallowedTools` naming whole tools: removed from its tools
    permission_mode: str | None = None  # `permissionMode`
    skills: tuple[str, ...] = ()  # `skills`: their bodies start its first message
    hooks: dict[str, Any] = field(default_factory=dict, compare=False)  # `hooks`, settings' format


GENERAL_PURPOSE = AgentType(
    "general-purpose",
    "For research and multi-step tasks: searching a codebase, reading many files, making a change "
    "and checking it. It starts as a copy of this conversation with every tool, so the prompt only "
    "needs the task and what to report.",
    fork=True,
)

_EXPLORE_PROMPT = """\
You are a search agent working for another agent. Your job is to find the files and code that \
answer the task you were given, read what matters, and report back.

This task is read-only. You cannot create, edit, move or delete files, and you must not try: no \
writing through shell redirection, no commands that change the repository or the system (git \
commit, checkout or reset, rm, mv, package installs). Use Bash only for read-only commands such \
as ls, git log, git diff, git show, wc.

How to work:
- Find files by name with Glob and search their contents with Grep; Read a file once you know it \
matters.
- Run independent searches together in one response: they run at the same time.
- Be quick. Stop as soon as you can answer; search more widely only when the task asks for \
thoroughness.

Your final message is all the other agent sees. Give absolute file paths (with line numbers where \
they help) and what you found at each, briefly. Quote code only when the exact text matters. If \
something could not be found, say where you looked."""

EXPLORE = AgentType(
    "Explore",
    "A fast read-only search agent: finds files and code by name, pattern or keyword, reads them, and "
    "answers with file paths and findings. It cannot change files. Say how thorough it should be.",
    prompt=_EXPLORE_PROMPT,
    tools=("Read", "Grep", "Glob", "Bash"),
    read_only=True,
)

BUILT_INS = (GENERAL_PURPOSE, EXPLORE)


@dataclass
class AgentTypes:
    """Every type the Agent tool may start, one per name, and what was wrong on the way."""

    types: list[AgentType]  # built-ins first, then custom sorted by name
    problems: list[str]  # one line per bad file or clash; the rest still loads

    def __post_init__(self) -> None:
        self._by_name = {t.name.lower(): t for t in reversed(self.types)}  # the first of a name wins

    def find(self, name: str) -> AgentType | None:
        """The type called `name`, case-insensitive."""
        return self._by_name.get(name.strip().lower())


class _AgentLoader(FileLoader):
    """Finds and parses agent files; `kind` (links out of the repository) and `problems` are the catalog's."""

    def files(self, folder: Path, scope: Scope) -> list[Path]:
        """Each `**/*.md` under `folder` in path order; linked folders followed once."""
        self.looked_at = 0
        too_many = "; the rest were not read. Keep agent files in a smaller tree."
        return [path for path, _ in self.markdown_files(folder, scope, too_many)]

    def parse_agent(self, path: Path, scope: Scope) -> AgentType | None:
        """The type one file defines, or None (and a line) when it cannot be loaded."""
        label = f"Agent {self.shown(path)}"
        try:
            text = read_body(path)
        except CatalogError as exc:
            self.problems.append(f"{label} {exc}; skipped. {fix_hint('command', str(exc))}")
            return None
        meta, body, problem = split_body(text, label)
        if problem:
            self.problems.append(f"{label}: {problem}; skipped. Fix the YAML.")
            return None
        if meta is None:
            self.problems.append(
                f"{label} has no frontmatter; skipped. Start it with a `---` block holding `name` and `description`."
            )
            return None
        fields = FrontmatterFields(meta, label, self.problems, self.root)
        if meta.get("name") is None or meta["name"] == "":
            self.problems.append(
                f"{label} has no `name`; skipped. Add `name:` with the name the Agent tool should use for it."
            )
            return None
        name = fields.text("name", "skipped")  # a list or a mapping: the line is said
        if name and not NAME.fullmatch(name):
            self.problems.append(
                f"{label}: `name` {name!r} cannot be an agent name ({NAME_RULE}); skipped. Fix the frontmatter."
            )
        if not name or not NAME.fullmatch(name):
            return None
        description = self._description(meta, label)
        tools = self._tools(meta.get("tools"), label)
        if description is None or tools is False:
            return None
        names, allow = tools if tools is not None else (None, ())
        memory = self._memory(meta.get("memory"), label)
        if memory is not None and names is not None:
            names = (*names, *(t for t in MEMORY_TOOLS if t not in names))
        disallowed, deny = self._rule_list(meta.get("disallowedTools"), "disallowedTools", label)
        self._unapplied(meta, label)
        return AgentType(
            name,
            description,
            prompt=body.strip(),
            tools=names,
            model=fields.model(),
            memory=memory,
            source=scope,
            path=path,
            allow=allow,
            deny=deny,
            disallowed=disallowed,
            permission_mode=self._mode(meta.get("permissionMode"), label),
            skills=_names(meta.get("skills")),
            hooks=self._hooks(meta.get("hooks"), label),
        )

    def _description(self, meta: dict[str, Any], label: str) -> str | None:
        """The required `description`; a literal `\\n` in it is a line break (as Claude Code reads it)."""
        value = meta.get("description")
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and str(value).strip():
            return str(value).replace("\\n", "\n").strip()
        what = "has no `description`" if value is None or value == "" else "has a `description` that is not text"
        self.problems.append(f"{label} {what}; skipped. Add one line saying when to use it.")
        return None

    def _tools(self, value: object, label: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None | Literal[False]:
        """`tools` as (names, allow rules): None is every tool (omitted, empty or `*`, as Claude Code
        reads it); an entry written as a rule grants its tool with the rule as the type's allow rule;
        False (and a line) when it is not a string or a list of strings."""
        if value is None:
            return None
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else None
        if items is None or not all(isinstance(i, str) for i in items):
            self.problems.append(
                f"{label}: `tools` is {_what(value)}, not a comma-separated string or "
                "a list of tool names; skipped, since it would get every tool. Fix the frontmatter."
            )
            return False
        names, allow = self._rule_list(items, "tools", label)
        if not names or "*" in names:
            return None
        return names, allow

    def _rule_list(self, value: object, key: str, label: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(tool names, rules) of a list or comma-separated string; `Bash(psql:*)` names Bash and is a rule."""
        if value is None:
            return (), ()
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        names: list[str] = []
        rules: list[str] = []
        for entry in (r for item in items if isinstance(item, str) for r in split_tool_rules(item)):
            m = _TOOL_RULE.fullmatch(entry)
            if m is None:
                self.problems.append(
                    f"{label}: `{key}` entry {entry!r} is not a tool name or rule; it is left out, "
                    "the others still apply. Fix the frontmatter."
                )
                continue
            names.append(m["tool"])
            if m["spec"] is not None:
                rules.append(entry)
        if not isinstance(value, (str, list)):
            self.problems.append(f"{label}: `{key}` is {_what(value)}, not a list; ignored. Fix the frontmatter.")
        return tuple(dict.fromkeys(names)), tuple(dict.fromkeys(rules))

    def _mode(self, value: object, label: str) -> str | None:
        """`permissionMode`: one of Claude Code's modes; anything else is a line and the session's mode."""
        if value is None or value in AGENT_MODES:
            return value
        self.problems.append(
            f"{label}: `permissionMode` is {_what(value)}, not one of {', '.join(AGENT_MODES)}; "
            "it runs in the session's mode. Fix the frontmatter."
        )
        return None

    def _hooks(self, value: object, label: str) -> dict[str, Any]:
        """`hooks` in the settings' format (`{"PreToolUse": [{"matcher": ..., "hooks": [...]}]}`)."""
        if value is None or isinstance(value, dict):
            return value or {}
        self.problems.append(f"{label}: `hooks` is {_what(value)}, not a mapping; ignored. Fix the frontmatter.")
        return {}

    def _memory(self, value: object, label: str) -> MemoryScope | None:
        """`memory: project|user|local`; anything else is a line and no memory."""
        if value is None:
            return None
        scope = value.strip().lower() if isinstance(value, str) else None
        for known in get_args(MemoryScope):
            if scope == known:
                return cast(MemoryScope, known)
        self.problems.append(
            f"{label}: `memory` is {_what(value)}, not project, user or local; loaded without memory. "
            "Fix the frontmatter."
        )
        return None

    def _unapplied(self, meta: dict[str, Any], label: str) -> None:
        """Keys claude-mini does not apply (`color`, `category`, `displayName` other tools add, typos):
        a --debug line, never a reason to skip the agent."""
        keys = [k for k in meta if k not in _APPLIED_KEYS]
        if keys:
            log.debug("%s: keys not applied by claude-mini: %s", label, ", ".join(keys))


def _names(value: object) -> tuple[str, ...]:
    """A list, or a comma- or space-separated string, of names."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(n for item in items if isinstance(item, str) for n in split_tool_rules(item))


def _what(value: object) -> str:
    """A frontmatter value as a message names it: `'global'`, `a number`, `a mapping`."""
    if isinstance(value, str):
        return repr(value)
    kinds = {bool: "true or false", int: "a number", float: "a number", dict: "a mapping", list: "a list"}
    return kinds.get(type(value), f"a {type(value).__name__}")


def _resolve(found: list[AgentType], loader: _AgentLoader) -> list[AgentType]:
    """One type per name: built-ins keep theirs, then project before user, then path order; a line per loser."""
    owner: dict[str, AgentType] = {t.name.lower(): t for t in BUILT_INS}
    kept = []
    for agent_type in found:
        assert agent_type.path is not None  # every custom type has its file
        label = f"Agent {loader.shown(agent_type.path)}"
        other = owner.setdefault(agent_type.name.lower(), agent_type)
        if other is agent_type:
            kept.append(agent_type)
        elif other.path is None:
            loader.problems.append(
                f"{label} is named {agent_type.name!r}, which is a built-in type; skipped. "
                "Rename it (its `name`) to use it."
            )
        else:
            why = (
                "a project one comes before a user one"
                if other.source != agent_type.source
                else "it comes first in path order"
            )
            loader.problems.append(
                f"{label} has the same name as {loader.shown(other.path)} "
                f"({agent_type.name!r}); {why}, so that one is used and this one is skipped. "
                "Rename one to keep both."
            )
    return sorted(kept, key=lambda t: t.name.lower())


def load_agent_types(
    project_root: Path, home: Path, *, trusted: bool = False, claude_code: Path | None = None
) -> AgentTypes:
    """Built-ins, `.claude/agents/**/*.md` (project), `home/agents/**/*.md` (user), then Claude Code's
    `~/.claude/agents` (user, when `claude_code` is given), one line per bad file or clash. A
    project's links that leave the repository are followed only when `trusted`."""
    loader = _AgentLoader(project_root, trusted)
    project = project_root / ".claude" / "agents"
    same_folder = os.path.realpath(project_root / ".claude") == os.path.realpath(home)
    folders: list[tuple[Path, Scope]] = [] if same_folder else [(project, "project")]
    folders.append((home / "agents", "user"))
    if claude_code is not None:
        folders.append((claude_code / "agents", "user"))
    found = []
    for folder, scope in folders:
        for path in loader.files(folder, scope):
            agent_type = loader.parse_agent(path, scope)
            if agent_type is not None:
                found.append(agent_type)
    custom = _resolve(found, loader)
    return AgentTypes([*BUILT_INS, *custom], loader.problems)


def memory_dir(agent_type: AgentType, project_root: Path, home: Path) -> Path | None:
    """project: <project>/.claude/agent-memory/<name>/; user: <home>/agent-memory/<name>/;
    local: <project>/.claude/agent-memory-local/<name>/ (Claude Code's folders); None without memory."""
    if agent_type.memory is None:
        return None
    parent = {
        "project": project_root / ".claude" / "agent-memory",
        "user": home / "agent-memory",
        "local": project_root / ".claude" / "agent-memory-local",
    }[agent_type.memory]
    return parent / agent_type.name.replace(":", "-")


def memory_dir_problem(agent_type: AgentType, folder: Path, project_root: Path, home: Path) -> str | None:
    """Why a type's memory folder may not be used, trusted folder or not, else None.

    It must be a real folder (or not exist yet) exactly where `memory_dir` puts it: writes there
    run without a question, so a committed `.claude/agent-memory/<name> -> ../..` (or a link at
    `.claude` or `agent-memory`) would hand the child the whole repository, or any folder.
    """
    base = home if agent_type.memory == "user" else project_root
    expected = os.path.join(os.path.realpath(base), os.path.relpath(folder, base))
    real = os.path.realpath(folder)
    if real != expected:
        return f"it is a symbolic link (or lies in one) to {real}, not a real folder"
    if os.path.lexists(folder) and not os.path.isdir(folder):
        return "it is not a folder"
    return None
