"""Who may use which tool: modes, allow/ask/deny rules and `can_use_tool`.

A decision (`PermissionPolicy.can_use_tool`) is taken in this order:

    deny rule, any layer        -> Deny   (nothing overrides it: not bypass mode, not flags)
    plan mode                   -> Read/Grep/Glob and read-only Bash, everything else Deny
    ask rule                    -> Ask    (even in acceptEdits)
    bypassPermissions mode      -> Allow
    a read of credentials       -> Ask    (~/.ssh, ~/.aws, /proc/*/environ...: credentials.py; plan
                                           mode asks too, the extraction fork is refused)
    edit of a protected file    -> Ask    (.git/, .claude/settings*.json, .claude/hooks|agents|skills|
                                           commands/, .mcp.json, .envrc, files hook commands name,
                                           claude-mini settings)
    allow rule, any layer       -> Allow  (session rules included)
    the mode's default          -> reads and read-only Bash Allow; acceptEdits allows
                                   Write/Edit inside the project; anything else Ask

Around this policy, the session's chain (chain.py) holds the guards; the innermost is the
sandbox's (sandbox/box.py `SandboxGuard`): the mode's question for a Bash call that will run in
the sandbox becomes Allow (autoAllowBashIfSandboxed). A rule's ask, a protected or credential
ask, a deny and plan mode's refusal are left as they are.

Rules use Claude Code's syntax: `Tool` (the whole tool; `Tool(*)` too) or
`Tool(specifier)`.
- Bash: `Bash(npm run test)` is one exact command, `Bash(git status:*)` a
  prefix ending at a word boundary, `*` inside matches anything (a trailing
  ` *` also matches nothing: `Bash(ls *)` covers `ls`). A line with several
  commands (`a && b`) is allowed only if every command is allowed (by a rule or
  as read-only); deny and ask rules match any command the line might run, even
  inside `$(...)`, `sh -c` or `sudo`, and also any command whose name is only
  known at run time (`$X -rf /`).
- Read/Edit/Write/Grep/Glob: a gitignore-style glob (pathspec). `//abs/path`
  is absolute, `~/x` is in the home folder, and `/x`, `./x` and bare `x` are
  relative to the project root (so a bare `*.md` matches at any depth, as in
  .gitignore). Edit rules also cover Write, and Write deny and ask rules cover
  Edit (Claude Code ignores a `Write(path)` rule; here it binds rather than
  nothing); Read rules also cover Grep and Glob (their search folder). A path
  must match both as written and with symlinks resolved to be allowed, and
  either way to be denied.
- Any other tool name (`WebFetch`, `mcp__x__y`) is accepted; a specifier on it
  matches nothing, since we cannot interpret it. `mcp__server` and `mcp__server__*`
  cover every tool of that MCP server: the server a tool belongs to is what the tool
  list says (`name_mcp_tools`), never a prefix of its name (`mcp__gh` does not cover
  server `gh__x`'s tools). An MCP tool asks in default mode unless allowed;
  one whose readOnlyHint the settings trust (`mcp.trustReadOnlyHints`) runs as reads do.

A Read deny rule also keeps read-only Bash from running unasked when one of its
arguments names a denied path (`cat .env`): it asks instead. This is a best
effort, as in Claude Code: `grep -r x .` still reads everything.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from claude_mini.base import paths
from claude_mini.base.credentials import (
    credential_folders,
    secret_locations_inside,
    secret_read_location,
)
from claude_mini.base.text import within
from claude_mini.permissions.decisions import MODES, Allow, Ask, Decision, Deny, RuleError
from claude_mini.permissions.rules import (
    EDIT_TOOLS,
    LEADING_TOOL,
    READ_TOOLS,
    Rule,
    collapse_spaces,
    known_tool,
    names_match,
    parse_rule,
)
from claude_mini.shell.bash_reads import (
    absolute_path,
    literal_prefix,
    read_targets,
    shows_git_history,
)
from claude_mini.shell.bash_safety import (
    ShellSyntaxError,
    SimpleCommand,
    command_candidates,
    is_read_only_command,
    parse_command,
    read_only_problem,
    runs_arbitrary_code,
)

INDEX_NAME = "MEMORY.md"  # the memory folder's index (memory/store/folder.py), never a folder
SOURCES = ("user", "project", "local", "flags", "managed")  # lowest to highest precedence
# Tools that change nothing outside the harness (a todo list), or only start a subagent whose own
# calls are checked one by one: they run as reads do, in every mode (deny and ask rules still apply).
HARNESS_TOOLS = frozenset({"TodoWrite", "Agent"})
_RISKY_PROGRAMS = frozenset(
    {
        "rm",
        "rmdir",
        "mv",
        "dd",
        "chmod",
        "chown",
        "sudo",
        "curl",
        "wget",
        "kill",
        "pkill",
        "killall",
        "shred",
        "truncate",
        "mkfs",
    }
)
_SETTINGS_NAMES = ("settings.json", "settings.local.json")
# `.claude/<folder>/...` whose files run or steer the agent later (hooks, agent types, skills, commands).
_PROTECTED_CLAUDE_FOLDERS = frozenset({"hooks", "agents", "skills", "commands"})
# Files by name that start programs: MCP servers (.mcp.json) and direnv (.envrc, run on `cd`).
_PROTECTED_NAMES = frozenset({".mcp.json", ".envrc"})
# Programs that run other programs or write files they are told: `Bash(docker run:*)` or `tee:*`
# would allow any command or any file; "don't ask again" offers the exact line instead.
_RUNS_OR_WRITES = frozenset(
    {
        "tee",
        "crontab",
        "at",
        "batch",
        "cp",
        "install",
        "ln",
        "rsync",
        "scp",
        "sftp",
        "patch",
        "unzip",
        "launchctl",
        "aws-vault",
    }
)
_RUNNING_SUBCOMMANDS = {  # `docker run`, `kubectl exec`: the second word runs or writes anything
    "docker": {"run", "exec", "compose", "container", "create", "start", "build", "cp"},
    "podman": {"run", "exec", "compose", "container", "create", "start", "build", "cp"},
    "kubectl": {"exec", "run", "debug", "cp", "apply", "create", "patch", "replace", "attach"},
    "direnv": {"exec"},
    "mise": {"exec", "x"},
    "git": {"-c", "config"},
}
_RUNNERS = frozenset({"run", "exec", "x", "dlx"})  # `npm run test` keeps three words
# Programs whose first word alone says little (`git:*` would allow `git push --force`).
_SUBCOMMAND_PROGRAMS = frozenset(
    {
        "git",
        "npm",
        "yarn",
        "pnpm",
        "bun",
        "uv",
        "pip",
        "pip3",
        "pipx",
        "poetry",
        "cargo",
        "go",
        "docker",
        "podman",
        "kubectl",
        "helm",
        "gh",
        "glab",
        "aws",
        "gcloud",
        "az",
        "terraform",
        "systemctl",
        "apt",
        "apt-get",
        "brew",
        "make",
        "bundle",
        "gem",
        "dotnet",
        "mvn",
        "gradle",
        "conda",
        "deno",
        "rustup",
    }
)
# Where git looks for a repository inside a folder: writing the last of these makes it one.
_GIT_DIR_PARTS = ("HEAD", "objects", "refs", "config")


class Restrictions(Protocol):
    """The session's deny and ask rules as a fork's policy honours them (PermissionPolicy, PolicyChain)."""

    @property
    def cwd(self) -> Path: ...

    def check_restrictions(self, tool_name: str, input: dict[str, Any]) -> Deny | Ask | None: ...


# ---------------------------------------------------------------- requests


@dataclass
class _Request:
    """One tool call, with the paths and commands rules are matched against."""

    tool: str
    input: dict[str, Any]
    cwd: str
    paths: tuple[str, ...] = ()  # absolute, as written (normalised)
    real_paths: tuple[str, ...] = ()  # the same with symlinks resolved
    is_dir: bool = False
    command: str | None = None
    _candidates: list[SimpleCommand] | None = None

    @property
    def all_paths(self) -> tuple[str, ...]:
        return self.paths + self.real_paths

    @property
    def candidates(self) -> list[SimpleCommand]:
        """Every command the Bash line might run (computed once)."""
        if self._candidates is None:
            self._candidates = command_candidates(self.command or "")
        return self._candidates


def _build_request(tool: str, input: Any, cwd: str) -> _Request:
    input = input if isinstance(input, dict) else {}
    req = _Request(tool, input, cwd)
    if tool == "Bash":
        command = input.get("command")
        req.command = command if isinstance(command, str) else None
    elif tool in ("Grep", "Glob"):
        folder = input.get("path") or "."
        if isinstance(folder, str):
            target = absolute_path(folder, cwd)
            if tool == "Glob" and isinstance(input.get("pattern"), str):
                target = _glob_base(target, input["pattern"])
            req.paths, req.is_dir = (target,), True
    elif isinstance(input.get("file_path"), str) and input["file_path"]:
        req.paths = (absolute_path(input["file_path"], cwd),)
    req.real_paths = tuple(_real(p) for p in req.paths)
    return req


def _real(path: str) -> str:
    """`path` with symlinks resolved; as written where a link cannot be read (`/proc/1/root`)."""
    try:
        return os.path.realpath(path)
    except OSError:
        return path


def _glob_base(folder: str, pattern: str) -> str:
    """The folder a Glob really searches: the literal part of the pattern (it may be absolute or use ..)."""
    literal = literal_prefix(pattern)
    if pattern.startswith("/"):
        return os.path.normpath(literal or "/")
    return absolute_path(literal, folder) if literal else folder


def _cwd_of(source: Path | str | Callable[[], Path]) -> str:
    return os.path.abspath(source() if callable(source) else source)


# ---------------------------------------------------------------- the policy


class PermissionPolicy:
    """The session's permission rules and mode; `can_use_tool` is the one question the loop asks.

    `cwd` may be a callable so relative paths resolve where the Bash tool's
    `cd` has moved the session (pass `lambda: ctx.cwd`).
    """

    def __init__(
        self,
        *,
        cwd: Path | Callable[[], Path],
        project_root: Path,
        mode: str = "default",
        protected: Iterable[Path] | None = None,
    ) -> None:
        self._cwd = cwd
        self.project_root = Path(os.path.abspath(project_root))
        self._deny: list[Rule] = []
        self._ask: list[Rule] = []
        self._allow: list[Rule] = []
        self._roots: list[str] = []
        self._edit_dirs: list[str] = []  # folders edited without asking (the auto-memory folder)
        self._read_only_tools: frozenset[str] = frozenset()  # MCP tools whose readOnlyHint is trusted
        self._mcp_servers: dict[str, str] = {}  # MCP tool name -> its server, from the tool list
        self._bypass_disabled = False
        self._bypass_disabled_by: tuple[str, str | None] = ("settings", None)
        self._lockdown: str | None = None  # why every tool is denied (broken managed settings)
        self.errors: list[RuleError] = []  # bad rules and settings, skipped; for the caller to show
        self.add_directory(self.project_root)
        if protected is None:
            home = paths.home_dir()
            protected = [
                home / "settings.json",
                home / "trusted-folders.json",
                paths.managed_dir(),
                *(home / folder for folder in sorted(_PROTECTED_CLAUDE_FOLDERS)),
            ]
        self._protected = {q for p in protected for q in (os.path.abspath(p), os.path.realpath(p))}
        self._mode = "default"
        self.mode = mode

    # ---- building

    @classmethod
    def from_layers(
        cls,
        layers: Sequence[tuple[str, Any] | tuple[str, Any, str | None]],
        *,
        cwd: Path | Callable[[], Path],
        project_root: Path,
        mode: str | None = None,
        protected: Iterable[Path] | None = None,
    ) -> PermissionPolicy:
        """Build from settings layers, lowest precedence first: `[(source, permissions[, origin]), ...]`.

        `permissions` is a settings file's `permissions` object. Bad rules are
        skipped and recorded in `errors` (a bad deny rule denies its whole tool
        instead). `mode` (an explicit --permission-mode) beats every defaultMode.
        """
        policy = cls(cwd=cwd, project_root=project_root, protected=protected)
        default_mode: str | None = None
        for layer in layers:
            source, perms, origin = (*layer, None)[:3]
            if perms is None:
                continue
            if not isinstance(perms, dict):
                policy.errors.append(RuleError("permissions", source, "expected an object", origin))
                continue
            for kind in ("deny", "ask", "allow"):
                policy._load_rules(kind, perms.get(kind), source, origin)
            default_mode = policy._layer_mode(perms, source, origin) or default_mode
            if perms.get("disableBypassPermissionsMode") == "disable":
                policy._bypass_disabled = True
                policy._bypass_disabled_by = (source, origin)
            for folder in perms.get("additionalDirectories") or []:
                if isinstance(folder, str):
                    policy.add_directory(Path(absolute_path(folder, str(policy.project_root))))
        policy._start_in(mode or default_mode or "default")
        return policy

    def _load_rules(self, kind: str, texts: Any, source: str, origin: str | None) -> None:
        if texts is None:
            return
        if not isinstance(texts, list):
            self.errors.append(RuleError(kind, source, f'"{kind}" must be a list of rules', origin))
            return
        for text in texts:
            try:
                rule: Rule | None = parse_rule(text, source=source, project_root=self.project_root, origin=origin)
            except RuleError as exc:
                rule = self._fail_closed(kind, text, exc)
            if rule is not None:
                self._rules(kind).append(rule)

    def _fail_closed(self, kind: str, text: Any, exc: RuleError) -> Rule | None:
        """Record a bad rule; a bad deny rule denies its whole tool rather than nothing."""
        match = LEADING_TOOL.match(text) if isinstance(text, str) else None
        tool = known_tool(match.group(1)) if match else None
        if kind != "deny" or tool is None:
            self.errors.append(exc)
            return None
        problem = f"{exc.problem}; all {tool} use is denied until the rule is fixed"
        self.errors.append(RuleError(exc.rule, exc.source, problem, exc.origin))
        return Rule(text.strip(), tool, None, exc.source, exc.origin)

    def _layer_mode(self, perms: dict[str, Any], source: str, origin: str | None) -> str | None:
        mode = perms.get("defaultMode")
        problem = None
        if mode is not None and mode not in MODES:
            problem = f"unknown mode; use one of {', '.join(MODES)}"
        elif mode == "bypassPermissions" and source == "project":
            # A checked-in file must not switch every check off for whoever clones the repository.
            problem = "bypassPermissions cannot be set by project settings"
        if problem:
            self.errors.append(RuleError(f"defaultMode {mode}", source, problem, origin))
            return None
        return mode

    def _start_in(self, mode: str) -> None:
        if mode == "bypassPermissions" and self._bypass_disabled:
            source, origin = self._bypass_disabled_by
            problem = "bypassPermissions mode is disabled (disableBypassPermissionsMode); starting in default mode"
            self.errors.append(RuleError("bypassPermissions", source, problem, origin))
            mode = "default"
        self.mode = mode

    def _rules(self, kind: str) -> list[Rule]:
        return {"deny": self._deny, "ask": self._ask, "allow": self._allow}[kind]

    def lock_down(self, reason: str) -> None:
        """Deny every tool call from now on, with `reason` (managed settings that cannot be read
        must fail closed, not silently drop the organisation's deny rules)."""
        self._lockdown = reason

    def add_session_allow(self, rule: str, *, source: str = "session", origin: str | None = None) -> Rule:
        """Allow `rule` for the rest of the session ("yes, and don't ask again"), or until
        `remove_rules` drops it (a skill's allowed-tools, source `skill`); RuleError if malformed."""
        parsed = parse_rule(rule, source=source, project_root=self.project_root, origin=origin)
        self._allow.append(parsed)
        return parsed

    def remove_rules(self, gone: Iterable[Rule]) -> None:
        """Drop these rules (/permissions remove: the session's, and those deleted from their file)."""
        dropped = list(gone)
        for rules in (self._deny, self._ask, self._allow):
            rules[:] = [rule for rule in rules if rule not in dropped]

    def add_directory(self, folder: Path) -> None:
        """Treat `folder` as part of the workspace (acceptEdits edits it without asking)."""
        for p in (os.path.abspath(folder), os.path.realpath(folder)):
            if p not in self._roots:
                self._roots.append(p)

    def protect(self, files: Iterable[Path | str]) -> None:
        """Edits of these files (and below these folders) ask in every mode but bypass, and only the
        user answers: the scripts hook commands run (hooks/config.py `named_files`)."""
        for p in files:
            self._protected.update({os.path.abspath(p), os.path.realpath(p)})

    def name_mcp_tools(self, servers: dict[str, str]) -> None:
        """Which server each MCP tool belongs to (tool name -> server name), as the tool list knows
        it: `mcp__server` rules match on it rather than on a prefix of the tool's name."""
        self._mcp_servers = dict(servers)

    def trust_read_only(self, names: set[str] | frozenset[str]) -> None:
        """These (MCP) tools declare themselves read-only and the settings trust such hints: they
        run as reads do (deny and ask rules still apply)."""
        self._read_only_tools = frozenset(names)

    def allow_edits_in(self, folder: Path) -> None:
        """Write/Edit inside `folder` run without asking in every mode but plan (the memory folder,
        as Claude Code does); deny and ask rules still apply."""
        self._edit_dirs.append(os.path.realpath(folder))

    # ---- mode

    @property
    def mode(self) -> str:
        """The current permission mode; the REPL may set it (ValueError for an unknown or disabled mode)."""
        return self._mode

    @mode.setter
    def mode(self, value: str) -> None:
        if value not in MODES:
            raise ValueError(f"unknown permission mode {value!r}; use one of {', '.join(MODES)}")
        if value == "bypassPermissions" and self._bypass_disabled:
            raise ValueError("bypassPermissions mode is disabled by settings (disableBypassPermissionsMode)")
        self._mode = value

    @property
    def available_modes(self) -> tuple[str, ...]:
        """The modes this session may switch to, in Claude Code's cycling order."""
        return tuple(m for m in MODES if not (m == "bypassPermissions" and self._bypass_disabled))

    @property
    def cwd(self) -> Path:
        """Where relative paths in tool inputs resolve."""
        return Path(_cwd_of(self._cwd))

    @property
    def roots(self) -> tuple[Path, ...]:
        """The workspace folders: the project root and additional directories (both spellings)."""
        return tuple(Path(p) for p in self._roots)

    @property
    def deny_rules(self) -> tuple[Rule, ...]:
        """Deny rules, lowest layer first."""
        return tuple(self._deny)

    @property
    def ask_rules(self) -> tuple[Rule, ...]:
        """Ask rules, lowest layer first."""
        return tuple(self._ask)

    @property
    def allow_rules(self) -> tuple[Rule, ...]:
        """Allow rules, lowest layer first, then session rules."""
        return tuple(self._allow)

    # ---- deciding

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Decision:
        """Allow, Deny (with a reason for the model) or Ask (with a reason for the user). Pure and fast."""
        if self._lockdown:
            return Deny(self._lockdown)
        req = _build_request(tool_name, input, _cwd_of(self._cwd))
        restriction = self._restrictions(req)
        if isinstance(restriction, Deny):
            return restriction
        layout = self._memory_layout(req)
        if isinstance(layout, Deny):
            return layout
        if self._mode == "plan":
            return self._plan_decision(req, restriction or _secret_read(req))
        if layout is not None:
            return layout  # asks in every mode, over any allow rule, as an ask rule does
        if self._mode == "bypassPermissions":
            return self._bypass_decision(req, restriction)
        if restriction is not None:
            return restriction
        if secret := _secret_read(req):
            return secret  # over any allow rule: `Bash(cat:*)` or `Read` must not send ~/.ssh unasked
        if req.tool in EDIT_TOOLS and self._is_protected(req):
            return Ask(
                f"{req.paths[0]} is protected: it controls git, claude-mini's settings, or code that "
                "runs later (hooks, MCP servers, agents, skills, commands, direnv); confirm this edit",
                protected=True,
            )
        if self._allowed(req) or self._in_edit_dirs(req):
            return Allow()
        return self._mode_decision(req)

    def _bypass_decision(self, req: _Request, restriction: Ask | None) -> Decision:
        """bypassPermissions skips the mode's questions, never the rules: an ask rule still asks,
        and Bash reading a Read-denied path (which would ask elsewhere) is refused."""
        if restriction is None:
            return Allow()
        if self._first_match(self._ask, req):
            return restriction
        return Deny(f"{restriction.reason}; bypassPermissions mode does not lift Read deny rules")

    def _memory_layout(self, req: _Request) -> Deny | Ask | None:
        """Deny a Write/Edit, or a Bash line, that would break the memory folder's layout; ask
        when a Bash line names the index after a `cd` (where it lands cannot be known)."""
        if req.tool in EDIT_TOOLS:
            found = (memory_layout_problem(p, d) for p in req.real_paths for d in self._edit_dirs if within(p, d))
        elif req.tool == "Bash" and req.command is not None:
            found = (_index_command_problem(c, req.cwd, d) for c in req.candidates for d in self._edit_dirs)
        else:
            return None
        if problem := next((problem for problem in found if problem), None):
            return Deny(problem)
        if req.tool == "Bash" and self._edit_dirs and (doubt := _index_after_cd(req.candidates)):
            return Ask(doubt, protected=True)
        return None

    def _in_edit_dirs(self, req: _Request) -> bool:
        return bool(
            req.tool in EDIT_TOOLS
            and req.real_paths
            and all(any(within(p, d) for d in self._edit_dirs) for p in req.real_paths)
        )

    def check_restrictions(self, tool_name: str, input: dict[str, Any]) -> Deny | Ask | None:
        """Only the deny and ask rules (no mode, no allows): what a wrapping policy must still honour."""
        return self._restrictions(_build_request(tool_name, input, _cwd_of(self._cwd)))

    def read_denied(self, path: str) -> str | None:
        """Why a Read deny rule covers `path`, or None; tools that list files may use it to skip them."""
        lexical = absolute_path(path, _cwd_of(self._cwd))
        both = (lexical, os.path.realpath(lexical))
        for rule in reversed(self._deny):
            if rule.tool != "Read":
                continue
            if rule.specifier is None or (rule.path is not None and any(rule.path.matches(p) for p in both)):
                return f"Denied by {rule.where}"
        return None

    def _restrictions(self, req: _Request) -> Deny | Ask | None:
        if self._lockdown:
            return Deny(self._lockdown)
        if rule := self._first_match(self._deny, req):
            return Deny(f"Denied by {rule.where}{self._dynamic_note(rule, req)}")
        if rule := self._first_match(self._ask, req):
            return Ask(f"{rule.where} asks for confirmation{self._dynamic_note(rule, req)}", by_rule=True)
        if req.tool == "Bash":
            return self._bash_reads_denied(req)
        return None

    def _first_match(self, rules: list[Rule], req: _Request) -> Rule | None:
        # Highest layer first, so a message names the rule that matters most (managed before user).
        server = self._mcp_servers.get(req.tool)
        return next(
            (
                r
                for r in reversed(rules)
                if r.governs(req.tool, server=server, restricting=True) and self._restricts(r, req)
            ),
            None,
        )

    @staticmethod
    def _restricts(rule: Rule, req: _Request) -> bool:
        """Deny/ask matching leans towards matching: any command the line might run, any path form."""
        if rule.specifier is None:
            return True
        if rule.command is not None:
            return req.command is not None and any(c.opaque or rule.command.matches(c.text) for c in req.candidates)
        if rule.path is not None:
            return any(rule.path.matches(p, is_dir=req.is_dir) for p in req.all_paths)
        return names_match(rule, req.input)

    @staticmethod
    def _dynamic_note(rule: Rule, req: _Request) -> str:
        if rule.command is None or any(rule.command.matches(c.text) for c in req.candidates):
            return ""
        why = next((c.opaque for c in req.candidates if c.opaque), "it cannot be known in advance")
        return f" (what this line runs cannot be checked against the rule: {why})"

    def _bash_reads_denied(self, req: _Request) -> Ask | None:
        """Ask before Bash reads a path a Read deny rule covers: arguments that name it, wildcards
        that expand to it, `REV:path` of git, and recursive searches of a folder that may hold it."""
        rules = [r for r in reversed(self._deny) if r.tool == "Read" and r.path is not None]
        if not rules or req.command is None:
            return None
        for target in read_targets(req.candidates, req.cwd, str(self.project_root), req.command):
            both = (target.path, os.path.realpath(target.path))
            if target.anything:
                return Ask(
                    f"{target.shown} could name any file, including those covered by {rules[0].where}; "
                    "reading it with Bash needs approval",
                    by_rule=True,
                )
            if target.recursive:
                if rule := _denied_below(target.path, rules):
                    return Ask(
                        f"{target.shown} is searched recursively and holds files covered by "
                        f"{rule.where}; reading it with Bash needs approval",
                        by_rule=True,
                    )
            elif rule := _covering(rules, *both):
                return Ask(
                    f"{target.shown} is covered by {rule.where}; reading it with Bash needs approval", by_rule=True
                )
        if shows_git_history(req.candidates) and (rule := _tracked_and_denied(req.cwd, rules)):
            return Ask(
                f"git history holds a tracked file covered by {rule.where}; showing it with Bash needs approval",
                by_rule=True,
            )
        return None

    def _plan_decision(self, req: _Request, restriction: Ask | None) -> Decision:
        # A skill only adds text in plan mode: what its allowed-tools would allow, plan mode refuses.
        if (
            req.tool in READ_TOOLS
            or req.tool in self._read_only_tools
            or req.tool in HARNESS_TOOLS
            or req.tool == "Skill"
        ):
            return restriction or Allow()
        if req.tool == "Bash":
            ok, why = is_read_only_command(req.command or "")
            if ok:
                return restriction or Allow()
            return Deny(
                f"Plan mode is read-only and this command is not ({why}). "
                "Present the plan and wait for the user to approve it before changing anything."
            )
        return Deny(f"Plan mode is read-only: {req.tool} is not available until the user approves the plan.")

    def _allowed(self, req: _Request) -> bool:
        rules = [r for r in self._allow if r.governs(req.tool, server=self._mcp_servers.get(req.tool))]
        if req.tool == "Bash":
            return _bash_allowed(req.command, rules)
        # An allow needs the path to match both as written and with symlinks resolved.
        return any(
            r.specifier is None
            or (
                r.path is not None
                and bool(req.paths)
                and all(r.path.matches(p, is_dir=req.is_dir) for p in req.all_paths)
            )
            or names_match(r, req.input)
            for r in rules
        )

    def _mode_decision(self, req: _Request) -> Decision:
        if req.tool in READ_TOOLS or req.tool in self._read_only_tools or req.tool in HARNESS_TOOLS:
            return Allow()
        if req.tool == "Bash":
            ok, why = is_read_only_command(req.command or "")
            return Allow() if ok else Ask(f"This command needs approval: {why}")
        if req.tool in EDIT_TOOLS and self._mode == "acceptEdits":
            return self._accept_edit(req)
        if req.tool in EDIT_TOOLS:
            return Ask(f"{req.tool} needs approval in default mode")
        if req.tool == "Skill":  # the skills part lets the others load without a question
            rule = self.suggest_rule(req.tool, req.input)
            return Ask(
                f"this skill's allowed-tools would let more tools run without asking for the rest of "
                f"the turn; {rule} allows it"
            )
        return Ask(f"{req.tool} needs approval")

    def _accept_edit(self, req: _Request) -> Decision:
        if not req.paths:
            return Ask(f"{req.tool} without a file_path needs approval")
        if all(self._in_workspace(p) for p in req.all_paths):
            return Allow()
        return Ask(f"{req.paths[0]} is outside the project")

    def _in_workspace(self, path: str) -> bool:
        return any(within(path, root) for root in self._roots)

    def _is_protected(self, req: _Request) -> bool:
        """Files whose edit could switch checks off or run code later (.git/config hooks, settings,
        the parts of a bare repository whose config git would obey)."""
        for path in req.all_paths:
            parts = path.split(os.sep)
            if ".git" in parts or (parts[-2:-1] == [".claude"] and parts[-1] in _SETTINGS_NAMES):
                return True
            if parts[-1] in _PROTECTED_NAMES or any(
                a == ".claude" and b in _PROTECTED_CLAUDE_FOLDERS for a, b in zip(parts, parts[1:], strict=False)
            ):
                return True
            if any(within(path, p) for p in self._protected) or completes_git_dir(path):
                return True
        return False

    # ---- helping the UI

    def suggest_rule(self, tool_name: str, input: dict[str, Any]) -> str:
        """A rule that would allow this call next time, for "yes, and don't ask again"."""
        req = _build_request(tool_name, input, _cwd_of(self._cwd))
        if tool_name == "Bash" and req.command:
            return _bash_suggestion(req.command, self.project_root)
        if tool_name in EDIT_TOOLS:
            if not req.paths:
                return "Edit"
            if self._in_workspace(req.paths[0]):
                return "Edit(./**)"
            return f"Edit(/{os.path.dirname(req.paths[0]).rstrip('/')}/**)"  # `//abs/dir/**`
        if tool_name == "Skill" and isinstance(input.get("skill"), str) and input["skill"].strip("/ "):
            return f"Skill({input['skill'].strip('/ ')})"
        return tool_name

    def describe(self) -> str:
        """The mode, the rules with their sources, and any problems: the text of /permissions."""
        lines = [f"Permission mode: {self._mode}"]
        for title, rules in (("Deny", self._deny), ("Ask", self._ask), ("Allow", self._allow)):
            lines.append(f"{title} rules:")
            width = max((len(r.text) for r in rules), default=0)
            lines += [
                f"  {r.text.ljust(width)}  {r.source}" + (f" ({r.origin})" if r.origin else "") for r in reversed(rules)
            ] or ["  (none)"]
        if self.errors:
            lines.append("Problems (these rules are not in effect as written):")
            lines += [f"  {e}" for e in self.errors]
        return "\n".join(lines)


def _secret_read(req: _Request) -> Ask | None:
    """Ask before a read of credentials (credentials.py: `~/.ssh`, `~/.aws`, `/proc/<pid>/environ`...):
    a Read of one, a Grep or Glob of one or of a folder holding one, a Bash line whose arguments name
    one or search a folder holding one. Only the user answers it (a hook's allow does not)."""
    if req.tool in READ_TOOLS:
        # Grep and Glob skip hidden files below their folder (every home credential location is
        # hidden), so only a search of, or inside, a location counts; /proc has no hidden files.
        deep = req.is_dir and any(p == "/proc" or p.startswith("/proc/") for p in req.all_paths)
        folders = credential_folders()
        where = next((w for p in req.all_paths if (w := _secret_in(p, deep, folders))), None)
        shown = req.input.get("file_path") or req.input.get("path") or req.input.get("pattern")
    elif req.tool == "Bash" and req.command is not None:
        where, shown = _bash_secret(req, credential_folders())
    else:
        return None
    if where is None:
        return None
    return Ask(
        f"{shown} reads {where}, which holds credentials; they would be sent to the model. "
        "Confirm only if you mean to share them",
        protected=True,
    )


def _secret_in(path: str, recursive: bool, folders: list[str]) -> str | None:
    """The credential location `path` is in or (searched recursively) holds, or None."""
    if where := secret_read_location(path, folders):
        return where
    if recursive and (inside := secret_locations_inside(path, folders)):
        return inside[0]
    return None


def _bash_secret(req: _Request, folders: list[str]) -> tuple[str | None, str]:
    """The first credential location a Bash line reads by name (`cat ~/.ssh/id_ed25519`, `grep -r x ~`)."""
    home = os.path.expanduser("~")
    # `$HOME/.aws` is the home folder to the shell; the parser leaves the variable as written.
    commands = [
        replace(c, words=tuple(re.sub(r"^\$(?:HOME\b|\{HOME\})", lambda _: home, w) for w in c.words))
        for c in req.candidates
    ]
    for target in read_targets(commands, req.cwd, req.cwd):
        for path in (target.path, _real(target.path)):
            if where := _secret_in(path, target.recursive, folders):
                return where, target.shown
    # Redirection targets (`tr x y < /proc/1/environ`) are not arguments: every word of the line counts.
    for word in _line_words(req.command or ""):
        word = re.sub(r"^\$(?:HOME\b|\{HOME\})", lambda _: home, word)
        if "/" not in word and not word.startswith("~"):
            continue
        path = absolute_path(word, req.cwd)
        if where := _secret_in(path, False, folders) or _secret_in(_real(path), False, folders):
            return where, word
    return None, ""


def _line_words(command: str) -> list[str]:
    """The words of a whole Bash line, operators and redirections split off (quotes removed)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: the plain words still name the file
        return command.split()


def _covering(rules: list[Rule], *paths: str) -> Rule | None:
    """The first path rule that matches one of `paths`."""
    return next((r for r in rules if r.path is not None and any(r.path.matches(p) for p in paths)), None)


# A recursive search of a folder with more entries than this is assumed to reach a denied file.
MAX_WALK_ENTRIES = 20_000


def _denied_below(folder: str, rules: list[Rule]) -> Rule | None:
    """The first Read deny rule that covers a file below `folder` (walked up to MAX_WALK_ENTRIES;
    a bigger tree counts as covered, since it cannot be checked quickly)."""
    candidates = [
        r
        for r in rules
        if r.path is not None and any(r.path.may_match_inside(p) for p in (folder, os.path.realpath(folder)))
    ]
    if not candidates:
        return None
    if not os.path.isdir(folder):
        return candidates[0]
    seen = 0
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in (*files, *dirs):
            seen += 1
            path = os.path.join(here, name)
            if rule := _covering(candidates, path):
                return rule
            if seen > MAX_WALK_ENTRIES:
                return candidates[0]
    return None


def _tracked_and_denied(cwd: str, rules: list[Rule]) -> Rule | None:
    """The first Read deny rule covering a file git tracks at `cwd` (up to MAX_WALK_ENTRIES
    files; more count as covered); None outside a repository."""
    # The neutral environment: the repository's fsmonitor never runs during the check.
    from claude_mini.base.gitrun import run_git

    listed = run_git(cwd, ["ls-files", "-z", "--full-name"], timeout=5)
    top = run_git(cwd, ["rev-parse", "--show-toplevel"], timeout=5)
    if listed is None or top is None or listed.returncode != 0 or top.returncode != 0:
        return None
    names = listed.stdout.split(b"\0")
    if len(names) > MAX_WALK_ENTRIES:
        return rules[0]
    root = os.fsdecode(top.stdout).rstrip("\n")
    for name in names:
        path = os.path.join(root, os.fsdecode(name))
        if name and (rule := _covering(rules, path)):
            return rule
    return None


def completes_git_dir(path: str) -> bool:
    """Whether writing `path` helps make a folder that git would take for a bare repository.

    Git treats a folder holding `HEAD`, `objects/` and `refs/` as a repository and
    runs what its `config` names (core.fsmonitor on `git status`). Writing one of
    those parts where `HEAD` would then sit beside another part is protected, so
    the last piece of such a layout cannot be written without asking.
    """
    folder = os.path.dirname(path)
    name = os.path.basename(path)
    for _ in range(4):  # objects/ab/cdef..., refs/heads/main: the folder is at most a few levels up
        if name in _GIT_DIR_PARTS:
            present = {part for part in _GIT_DIR_PARTS if os.path.lexists(os.path.join(folder, part))}
            present.add(name)
            if "HEAD" in present and len(present) >= 2:
                return True
        folder, name = os.path.dirname(folder), os.path.basename(folder)
        if not name:
            break
    return False


def _bash_allowed(command: str | None, rules: list[Rule]) -> bool:
    """Every command of the line is allowed by a rule or read-only; a bare `Bash` rule allows all."""
    if command is None:
        return False
    if any(r.specifier is None for r in rules):
        return True
    patterns = [r.command for r in rules if r.command is not None]
    if not patterns:
        return False
    if any(p.exact and p.raw == collapse_spaces(command) for p in patterns):
        return True  # a rule that spells out the whole line, even one we cannot parse
    try:
        commands = parse_command(command)
    except ShellSyntaxError:
        return False
    return all(any(p.matches(c.text) for p in patterns) or read_only_problem(c) is None for c in commands)


def _bash_suggestion(command: str, project_root: Path) -> str:
    """`Bash(<prefix or line>)`, always a rule that parses (unbalanced quotes fall back to the program)."""
    rule = f"Bash({_command_rule(command)})"
    try:
        parse_rule(rule, source="session", project_root=project_root)
    except RuleError:
        # Never fall back to a bare `Bash`: that would allow every command for the session.
        words = re.sub(r"[\"'\\()]", " ", command).split()
        if not words:
            return "Bash(true)"
        exact_only = runs_arbitrary_code(words[0]) or words[0] in _RISKY_PROGRAMS or _runs_or_writes(words)
        rule = f"Bash({words[0]})" if exact_only or words[0] in _SUBCOMMAND_PROGRAMS else f"Bash({words[0]}:*)"
    return rule


def _command_rule(command: str) -> str:
    """`git log:*` for `git log --oneline`; the exact line for risky programs or unparseable lines."""
    try:
        commands = parse_command(command)
    except ShellSyntaxError:
        return command
    target = next((c for c in commands if read_only_problem(c)), commands[0]).words
    program = target[0]
    if program in _RISKY_PROGRAMS or _runs_or_writes(target):
        return command  # `rm:*` or `docker run:*` would allow far more than the user just saw
    if runs_arbitrary_code(program):
        # `python:*` or `bash:*` would allow any code; `python -m pytest:*` is as wide as what was seen.
        if len(target) > 2 and target[1] == "-m" and re.fullmatch(r"[\w.]+", target[2]):
            return " ".join(target[:3]) + ":*"
        return command
    words: list[str] = []
    for word in target:
        limit = 3 if len(words) >= 2 and words[1] in _RUNNERS else 2
        looks_like_argument = word.startswith("-") or any(ch in word for ch in "/.=$*?[{~\\")
        if len(words) >= limit or (words and looks_like_argument):
            break
        words.append(word)
    if len(words) == 3 and runs_arbitrary_code(words[2]):
        return command  # `uv run python:*` is `python:*`
    if len(words) == 1 and len(target) > 1 and program in _SUBCOMMAND_PROGRAMS:
        return command  # `git -C x push` must not become `git:*`
    return " ".join(words) + ":*"


def _runs_or_writes(words: Sequence[str]) -> bool:
    """Whether a command runs other programs or writes files it is told (`tee`, `docker run`,
    `kubectl exec`, `aws-vault exec`): no prefix rule for it is narrower than "anything"."""
    program = os.path.basename(words[0]) if words else ""
    if program in _RUNS_OR_WRITES:
        return True
    subcommands = _RUNNING_SUBCOMMANDS.get(program, set())
    return any(word in subcommands for word in words[1:])  # `docker --context x run` too


def exact_command_rule(rule: str, command: Any) -> bool:
    """Whether `rule` (a suggestion) allows only this exact Bash line, for the prompt to say so."""
    return isinstance(command, str) and rule == f"Bash({command.strip()})" and bool(command.strip())


# ---------------------------------------------------------------- the memory folder's layout


def memory_layout_problem(real: str, memory_dir: str) -> str | None:
    """Why an agent may not write `real` (a resolved path inside `memory_dir`), or None.

    The folder holds `.md` topic files (in subfolders too: the store reads them there) and
    MEMORY.md, the index, which must stay a regular file: written as a folder
    (`MEMORY.md/x.md`) it would leave every later start without an index.
    """
    parts = Path(os.path.relpath(real, memory_dir)).parts
    if real == memory_dir or not parts:
        return f"{memory_dir} is the memory folder itself; write a topic file inside it"
    if any(part.lower() == INDEX_NAME.lower() for part in parts[:-1]):
        return (
            f"{INDEX_NAME} in {memory_dir} is the memory index, a file: nothing can be written "
            f"inside it. Write topic files next to it (e.g. {memory_dir}/topic.md)"
        )
    if not parts[-1].endswith(".md"):
        return (
            f"only .md topic files and {INDEX_NAME} may be written in the memory folder "
            f"{memory_dir}; {parts[-1]} is neither"
        )
    return None


def _index_command_problem(command: SimpleCommand, cwd: str, memory_dir: str) -> str | None:
    """Why a shell command would make MEMORY.md a folder: a path below it, or the index itself
    as an argument of anything but a read-only command (mkdir, mv, cp -r and ln -s all could)."""
    index = os.path.join(memory_dir, INDEX_NAME)
    changes = read_only_problem(command) is not None
    for word in command.words[1:]:
        value = word.partition("=")[2] if word.startswith("-") and "=" in word else word
        lexical = absolute_path(value, cwd)
        for path in {lexical, os.path.realpath(lexical)}:
            where = _index_match(path, index)
            if where == "below":
                return (
                    f"{index} is the memory index, a file: this command would make it a folder "
                    f"({word}). Write topic files next to it instead"
                )
            if where == "at" and changes:
                return (
                    f"{index} is the memory index, a file: a shell command may only read it, and "
                    f"this one could replace it or make it a folder ({word}). Change it with Write or Edit"
                )
    return None


def _index_match(path: str, index: str) -> str | None:
    """ "at" if `path` (wildcards allowed, case ignored) names `index`, "below" if a path inside it."""
    parts, want = Path(path.lower()).parts, Path(index.lower()).parts
    if len(parts) < len(want) or not all(fnmatch.fnmatchcase(w, p) for w, p in zip(want, parts, strict=False)):
        return None
    return "below" if len(parts) > len(want) else "at"


def _names_index(part: str) -> bool:
    """Whether a path part names MEMORY.md: its letters say "memory" (a bare `*` or `*.*` does not)
    and, wildcards allowed, it matches the name ("MEMORY.md", "memory.m?", "MEMORY*")."""
    literal = re.sub(r"\[[^\]]*\]|[*?]", "", part).lower()
    return "memory" in literal and fnmatch.fnmatchcase(INDEX_NAME.lower(), part.lower())


def _index_after_cd(candidates: list[SimpleCommand]) -> str | None:
    """Why a line that changes directory and then names MEMORY.md (relative) needs approval."""
    moved = False
    for command in candidates:
        program = os.path.basename(command.words[0]) if command.words else ""
        moved = moved or program in ("cd", "pushd", "popd")
        if not moved or read_only_problem(command) is None or program in ("cd", "pushd", "popd"):
            continue
        for word in command.words[1:]:
            if not os.path.isabs(os.path.expanduser(word)) and any(_names_index(part) for part in Path(word).parts):
                return (
                    f"this line changes directory and then names {word}: whether that is the memory "
                    f"index ({INDEX_NAME}, a file) cannot be known in advance"
                )
    return None


# ---------------------------------------------------------------- forked agents


class ExtractionPolicy:
    """Tool policy of the forked memory-extraction agent (DESIGN.md section 5).

    Read/Grep/Glob anywhere, read-only Bash, Write/Edit only when the real path
    (symlinks followed) is inside the memory dir, every other tool denied. The
    session's deny and ask rules (`base`) still apply; an ask becomes a denial,
    since nobody is there to answer.
    """

    def __init__(
        self,
        memory_dir: Path,
        *,
        base: Restrictions | None = None,
        cwd: Path | Callable[[], Path] | None = None,
    ) -> None:
        self.memory_dir = Path(os.path.realpath(memory_dir))
        self._memory_lexical = os.path.normpath(os.path.abspath(memory_dir))
        self.base = base
        # Relative paths resolve like the tools resolve them; without a cwd they are refused.
        self._cwd: Path | Callable[[], Path] | None = cwd
        if cwd is None and base is not None:
            self._cwd = lambda: base.cwd

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Decision:
        """Allow or Deny (never Ask: a background agent has nobody to ask)."""
        input = input if isinstance(input, dict) else {}
        if self.base is not None:
            verdict = self.base.check_restrictions(tool_name, input)
            if isinstance(verdict, Deny):
                return verdict
            if isinstance(verdict, Ask):
                return Deny(f"{verdict.reason}; memory extraction runs in the background and cannot ask")
        if secret := _secret_read(_build_request(tool_name, input, _cwd_of(self._cwd or os.getcwd()))):
            return Deny(f"{secret.reason}; memory extraction runs in the background and cannot ask")
        if tool_name in READ_TOOLS:
            return Allow()
        if tool_name == "Bash":
            command = input.get("command")
            ok, why = is_read_only_command(command if isinstance(command, str) else "")
            return Allow() if ok else Deny(f"Memory extraction may only run read-only commands: {why}")
        if tool_name in EDIT_TOOLS:
            problem = self._write_problem(input.get("file_path"))
            return Deny(problem) if problem else Allow()
        return Deny(
            f"Memory extraction may not use {tool_name}: it may read and search, "
            f"and write only inside {self.memory_dir}"
        )

    def _write_problem(self, raw: Any) -> str | None:
        """Why writing `raw` would leave the memory dir, or None if it stays inside."""
        mem = str(self.memory_dir)
        if not isinstance(raw, str) or not raw.strip():
            return f"Memory extraction needs a file_path inside {mem}"
        expanded = os.path.expanduser(raw)
        if not os.path.isabs(expanded):
            if self._cwd is None:
                return f"Memory extraction needs an absolute path inside {mem} (got {raw})"
            expanded = os.path.join(_cwd_of(self._cwd), expanded)
        lexical = os.path.normpath(expanded)
        real = os.path.realpath(lexical)
        if not within(real, mem) or real == mem:
            how = self._escape_kind(raw, lexical)
            return f"Memory extraction may only write inside {mem}: {raw} {how} (it resolves to {real})"
        if ".git" in Path(os.path.relpath(real, mem)).parts or completes_git_dir(real):
            return f"Memory extraction may not write git repository files ({raw})"
        return memory_layout_problem(real, mem)

    def _escape_kind(self, raw: str, lexical: str) -> str:
        roots = (self._memory_lexical, str(self.memory_dir))
        if any(within(lexical, root) and lexical != root for root in roots):
            return "follows a symlink out of the memory dir"
        if ".." in Path(raw).parts:
            return "uses .. to leave the memory dir"
        return "is outside the memory dir"
