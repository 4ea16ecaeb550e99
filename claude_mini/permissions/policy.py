"""Who may use which tool: modes, allow/ask/deny rules and `can_use_tool`.

A decision (`PermissionPolicy.can_use_tool`) is taken in this order:

    deny rule, any layer        -> Deny   (nothing overrides it: not bypass mode, not flags)
    ExitPlanMode                -> Ask in plan mode (the user approves the plan), else Deny
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

This class holds the order, the rules and the modes; each step's own test lives beside it:
a Bash line's (which commands its rules match, what it reads, what runs unasked, the rule
"don't ask again" offers) in bash.py, credential reads in secret_reads.py, protected files in
protected.py, the memory folder's layout (refused in every mode) in memory_folder.py, and the
call as the rules see it in request.py. The extraction fork's policy is extraction.py's.

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
- WebFetch: `WebFetch(domain:example.com)` is the host of the URL, exactly;
  `domain:*.example.com` its subdomains. Any other specifier on WebFetch is a bad rule.
  WebFetch and WebSearch ask unless allowed, also in plan mode (they change nothing here).
- Any other tool name (`mcp__x__y`) is accepted; a specifier on it
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

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from claude_mini.base.text import within
from claude_mini.permissions.bash import bash_allowed, bash_reads_denied, bash_suggestion, dynamic_note
from claude_mini.permissions.decisions import EXIT_PLAN_TOOL, MODES, Allow, Ask, Decision, Deny, RuleError
from claude_mini.permissions.memory_folder import memory_layout_decision
from claude_mini.permissions.protected import default_protected, is_protected
from claude_mini.permissions.request import ToolRequest, build_request, cwd_of
from claude_mini.permissions.rules import (
    DOMAIN_PREFIX,
    EDIT_TOOLS,
    LEADING_TOOL,
    READ_TOOLS,
    WEB_TOOLS,
    Rule,
    known_tool,
    names_match,
    parse_rule,
    url_host,
)
from claude_mini.permissions.secret_reads import secret_read
from claude_mini.shell.bash_reads import absolute_path
from claude_mini.shell.read_only import is_read_only_command

SOURCES = ("user", "project", "local", "flags", "managed")  # lowest to highest precedence
# Tools that change nothing outside the harness (a todo list, the session's own background shells:
# read one, end one), or only start a subagent whose own calls are checked one by one: they run as
# reads do, in every mode (deny and ask rules still apply).
HARNESS_TOOLS = frozenset({"TodoWrite", "Agent", "BashOutput", "KillShell"})


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
        # bypassPermissions joins the Shift-Tab cycle only in a session that started in it (as
        # Claude Code's --dangerously-skip-permissions): a press too many must not switch checks off.
        self.bypass_in_cycle = mode == "bypassPermissions"
        self._bypass_disabled_by: tuple[str, str | None] = ("settings", None)
        self._lockdown: str | None = None  # why every tool is denied (broken managed settings)
        self.errors: list[RuleError] = []  # bad rules and settings, skipped; for the caller to show
        self.add_directory(self.project_root)
        if protected is None:
            protected = default_protected()
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
        self.bypass_in_cycle = mode == "bypassPermissions"

    def _rules(self, kind: str) -> list[Rule]:
        return {"deny": self._deny, "ask": self._ask, "allow": self._allow}[kind]

    def lock_down(self, reason: str) -> None:
        """Deny every tool call from now on, with `reason` (managed settings that cannot be read
        must fail closed, not silently drop the organisation's deny rules)."""
        self._lockdown = reason

    def add_session_allow(self, rule: str, *, source: str = "session", origin: str | None = None) -> Rule:
        """Allow `rule` for the rest of the session ("yes, and don't ask again"), or until
        `remove_rules` drops it (a skill's allowed-tools, source `skill`); RuleError if malformed."""
        return self.add_rule("allow", rule, source=source, origin=origin)

    def add_rule(self, kind: str, rule: str, *, source: str = "session", origin: str | None = None) -> Rule:
        """Add an allow, ask or deny rule from now on (/permissions, a rule saved to a settings
        file); RuleError if malformed. A rule already there from the same file is not added twice."""
        parsed = parse_rule(rule, source=source, project_root=self.project_root, origin=origin)
        rules = self._rules(kind)
        if not any(r.text == parsed.text and r.source == source and r.origin == origin for r in rules):
            rules.append(parsed)
        return parsed

    def remove_rules(self, gone: Iterable[Rule]) -> None:
        """Drop these rules (/permissions remove: the session's, and those deleted from their file)."""
        dropped = list(gone)
        for rules in (self._deny, self._ask, self._allow):
            rules[:] = [rule for rule in rules if rule not in dropped]

    def reload_file(self, source: str, perms: Any, origin: str) -> tuple[list[str], list[str]]:
        """The rules of one settings file, edited during the session, in place of its old ones:
        (rules added, rules removed), as text. Session rules and other files' rules stay."""
        before = {rule.text for rule in (*self._deny, *self._ask, *self._allow) if rule.origin == origin}
        self.remove_rules([rule for rule in (*self._deny, *self._ask, *self._allow) if rule.origin == origin])
        if isinstance(perms, dict):
            for kind in ("deny", "ask", "allow"):
                self._load_rules(kind, perms.get(kind), source, origin)
        after = {rule.text for rule in (*self._deny, *self._ask, *self._allow) if rule.origin == origin}
        return sorted(after - before), sorted(before - after)

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
        """The modes Shift-Tab cycles through, in Claude Code's order: bypassPermissions only when
        the session started in it and settings do not disable it."""
        return tuple(
            m for m in MODES if m != "bypassPermissions" or (self.bypass_in_cycle and not self._bypass_disabled)
        )

    @property
    def cwd(self) -> Path:
        """Where relative paths in tool inputs resolve."""
        return Path(cwd_of(self._cwd))

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
        req = build_request(tool_name, input, cwd_of(self._cwd))
        restriction = self._restrictions(req)
        if isinstance(restriction, Deny):
            return restriction
        layout = memory_layout_decision(req, self._edit_dirs)
        if isinstance(layout, Deny):
            return layout
        if req.tool == EXIT_PLAN_TOOL:
            return self._plan_exit(restriction)
        if self._mode == "plan":
            return self._plan_decision(req, restriction or secret_read(req))
        if layout is not None:
            return layout  # asks in every mode, over any allow rule, as an ask rule does
        if self._mode == "bypassPermissions":
            return self._bypass_decision(req, restriction)
        if restriction is not None:
            return restriction
        if secret := secret_read(req):
            return secret  # over any allow rule: `Bash(cat:*)` or `Read` must not send ~/.ssh unasked
        if req.tool in EDIT_TOOLS and is_protected(req.all_paths, self._protected):
            return Ask(
                f"{req.paths[0]} is protected: it controls git, claude-mini's settings, or code that "
                "runs later (hooks, MCP servers, agents, skills, commands, direnv); confirm this edit",
                protected=True,
            )
        if self._allowed(req) or self._in_edit_dirs(req):
            return Allow()
        return self._mode_decision(req)

    def _bypass_decision(self, req: ToolRequest, restriction: Ask | None) -> Decision:
        """bypassPermissions skips the mode's questions, never the rules: an ask rule still asks,
        and Bash reading a Read-denied path (which would ask elsewhere) is refused."""
        if restriction is None:
            return Allow()
        if self._first_match(self._ask, req):
            return restriction
        return Deny(f"{restriction.reason}; bypassPermissions mode does not lift Read deny rules")

    def _in_edit_dirs(self, req: ToolRequest) -> bool:
        return bool(
            req.tool in EDIT_TOOLS
            and req.real_paths
            and all(any(within(p, d) for d in self._edit_dirs) for p in req.real_paths)
        )

    def check_restrictions(self, tool_name: str, input: dict[str, Any]) -> Deny | Ask | None:
        """Only the deny and ask rules (no mode, no allows): what a wrapping policy must still honour."""
        return self._restrictions(build_request(tool_name, input, cwd_of(self._cwd)))

    def read_denied(self, path: str) -> str | None:
        """Why a Read deny rule covers `path`, or None; tools that list files may use it to skip them."""
        lexical = absolute_path(path, cwd_of(self._cwd))
        both = (lexical, os.path.realpath(lexical))
        for rule in reversed(self._deny):
            if rule.tool != "Read":
                continue
            if rule.specifier is None or (rule.path is not None and any(rule.path.matches(p) for p in both)):
                return f"Denied by {rule.where}"
        return None

    def _restrictions(self, req: ToolRequest) -> Deny | Ask | None:
        if self._lockdown:
            return Deny(self._lockdown)
        if rule := self._first_match(self._deny, req):
            return Deny(f"Denied by {rule.where}{dynamic_note(rule, req)}")
        if rule := self._first_match(self._ask, req):
            return Ask(f"{rule.where} asks for confirmation{dynamic_note(rule, req)}", by_rule=True)
        if req.tool == "Bash":
            return bash_reads_denied(req, self._deny, str(self.project_root))
        return None

    def _first_match(self, rules: list[Rule], req: ToolRequest) -> Rule | None:
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
    def _restricts(rule: Rule, req: ToolRequest) -> bool:
        """Deny/ask matching leans towards matching: any command the line might run, any path form."""
        if rule.specifier is None:
            return True
        if rule.command is not None:
            return req.command is not None and any(c.opaque or rule.command.matches(c.text) for c in req.candidates)
        if rule.path is not None:
            return any(rule.path.matches(p, is_dir=req.is_dir) for p in req.all_paths)
        return names_match(rule, req.input)

    def _plan_decision(self, req: ToolRequest, restriction: Ask | None) -> Decision:
        # A skill only adds text in plan mode: what its allowed-tools would allow, plan mode refuses.
        if (
            req.tool in READ_TOOLS
            or req.tool in self._read_only_tools
            or req.tool in HARNESS_TOOLS
            or req.tool == "Skill"
        ):
            return restriction or Allow()
        if req.tool in WEB_TOOLS:  # they only read, from the web: the mode's question, as outside plan mode
            return restriction or (Allow() if self._allowed(req) else self._mode_decision(req))
        if req.tool == "Bash":
            ok, why = is_read_only_command(req.command or "")
            if ok:
                return restriction or Allow()
            return Deny(
                f"Plan mode is read-only and this command is not ({why}). "
                "Present the plan and wait for the user to approve it before changing anything."
            )
        return Deny(f"Plan mode is read-only: {req.tool} is not available until the user approves the plan.")

    def _plan_exit(self, restriction: Ask | None) -> Decision:
        """ExitPlanMode: in plan mode the user approves the plan (no rule or mode does it for them);
        outside it there is no plan to approve and the model goes on."""
        if self._mode != "plan":
            return Deny("Plan mode is not on: there is no plan to approve. Go on with the task.")
        return restriction or Ask("the plan needs your approval before anything changes", protected=True)

    def _allowed(self, req: ToolRequest) -> bool:
        rules = [r for r in self._allow if r.governs(req.tool, server=self._mcp_servers.get(req.tool))]
        if req.tool == "Bash":
            return bash_allowed(req.command, rules)
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

    def _mode_decision(self, req: ToolRequest) -> Decision:
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

    def _accept_edit(self, req: ToolRequest) -> Decision:
        if not req.paths:
            return Ask(f"{req.tool} without a file_path needs approval")
        if all(self._in_workspace(p) for p in req.all_paths):
            return Allow()
        return Ask(f"{req.paths[0]} is outside the project")

    def _in_workspace(self, path: str) -> bool:
        return any(within(path, root) for root in self._roots)

    # ---- helping the UI

    def suggest_rule(self, tool_name: str, input: dict[str, Any]) -> str:
        """A rule that would allow this call next time, for "yes, and don't ask again"."""
        req = build_request(tool_name, input, cwd_of(self._cwd))
        if tool_name == "Bash" and req.command:
            return bash_suggestion(req.command, self.project_root)
        if tool_name in EDIT_TOOLS:
            if not req.paths:
                return "Edit"
            if self._in_workspace(req.paths[0]):
                return "Edit(./**)"
            return f"Edit(/{os.path.dirname(req.paths[0]).rstrip('/')}/**)"  # `//abs/dir/**`
        if tool_name == "WebFetch" and (host := url_host(input.get("url"))):
            return f"WebFetch({DOMAIN_PREFIX}{host})"
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
