"""Wiring: from a `Config` to a ready `Agent` (client, tools, policy, prompt, session, lifecycle parts).

Print mode and the REPL both start here, so they behave the same.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from claude_mini.agent.background_shells import part as background_shells_part
from claude_mini.agent.lifecycle import (
    EndReason,
    Lifecycle,
    LoadReason,
    NotificationKind,
    Part,
    PartContext,
    SessionSource,
)
from claude_mini.agent.loop import Agent, AskUser
from claude_mini.agent.plan_mode import part as plan_mode_part
from claude_mini.agent.todos import part as todo_part
from claude_mini.base import paths
from claude_mini.base.notices import NoticeChannel
from claude_mini.command_table import CommandTable
from claude_mini.config import Config
from claude_mini.config.settings_env import apply_settings_env, thinking_budget
from claude_mini.config.watch import SettingsChange, SettingsWatch
from claude_mini.hooks.config import load_hooks, named_files
from claude_mini.hooks.lifecycle import AgentTypeHooks, UserHooksPart
from claude_mini.hooks.lifecycle import part as user_hooks_part
from claude_mini.llm import local
from claude_mini.llm.anthropic_client import AnthropicClient, missing_credentials
from claude_mini.llm.events import ResponseDone
from claude_mini.llm.messages import ModelRequest
from claude_mini.llm.protocol import ModelClient
from claude_mini.llm.retry import RetryPolicy
from claude_mini.mcp_servers.config import load_servers
from claude_mini.mcp_servers.lifecycle import McpPart
from claude_mini.mcp_servers.lifecycle import part as mcp_part
from claude_mini.memory.compact.budget import context_window
from claude_mini.memory.compact.compactor import Compactor
from claude_mini.memory.compact.part import CompactPart
from claude_mini.memory.compact.part import part as compaction_part
from claude_mini.memory.compact.working_state import part as working_state_part
from claude_mini.memory.extract.part import Extractor
from claude_mini.memory.extract.part import part as extraction_part
from claude_mini.memory.instructions import (
    AttachmentTracker,
    InstructionPart,
    InstructionSet,
    instruction_loads,
    load_instructions,
)
from claude_mini.memory.instructions.attachments import part as instructions_part
from claude_mini.memory.maintenance.daylog import LogModeGuard, log_mode_prompt
from claude_mini.memory.maintenance.dream import maybe_auto_dream
from claude_mini.memory.maintenance.forget import gc_message, maybe_auto_gc
from claude_mini.memory.recall.part import part as recall_part
from claude_mini.memory.secrets.guard import SecretGuard
from claude_mini.memory.store import MemoryStore, memory_prompt_section, render_index_for_prompt
from claude_mini.memory.team import team_problem, team_prompt_section, team_tier
from claude_mini.memory.team.guard import TeamWriteCheck
from claude_mini.permissions import Guard, PermissionPolicy, PolicyChain
from claude_mini.prompt import Section, SystemPrompt, build_system_prompt
from claude_mini.rewind.part import FileHistoryPart
from claude_mini.rewind.part import part as file_history_part
from claude_mini.sandbox import Sandbox, sandbox_settings
from claude_mini.sandbox.box import RuleSource, SandboxGuard
from claude_mini.session import Session, SessionNotFound, resume_session
from claude_mini.skills.lifecycle import SkillPart
from claude_mini.skills.lifecycle import part as skills_part
from claude_mini.subagents.lifecycle import SubagentPart
from claude_mini.subagents.lifecycle import part as subagents_part
from claude_mini.tools.background import BackgroundShells
from claude_mini.tools.base import ToolContext
from claude_mini.tools.read_denials import read_denials_of
from claude_mini.tools.registry import default_tools
from claude_mini.tools.web_access import WebAccess, rules_name_host
from claude_mini.tools.web_search import search_availability

# Settings keys applied mid-session by the runtime itself (most others are read where they are
# used, so they apply too); RESTART_KEYS are read once, at start-up.
MCP_KEYS = frozenset({"mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers", "enableAllProjectMcpServers"})
RESTART_KEYS = frozenset({"model", "smallModel", "env", "sandbox", "maxTokens", "useClaudeCodeHome"})

PartFactory = Callable[[PartContext["Runtime"]], Part | None]

PARTS: tuple[PartFactory, ...] = (
    user_hooks_part,
    mcp_part,
    skills_part,
    subagents_part,
    todo_part,
    background_shells_part,
    plan_mode_part,
    file_history_part,
    working_state_part,
    compaction_part,
    instructions_part,
    recall_part,
    extraction_part,
)
"""The lifecycle order, in which every event reaches the parts (`after_compact` in reverse): the
user's hooks first (they may refuse a prompt before recall starts, or a compaction before
extraction flushes), MCP servers (the tool list is fixed before compaction measures the request),
skills, subagents, the todo list, background shells, plan mode's reminder, file checkpoints (after
every part that may rewrite a tool's input), compaction's working state and compaction (it may
replace the conversation before anyone reads it), Layer 1 attachments, recall, extraction. A
feature whose factory returns None has no part."""

NO_MODEL = (
    "No model is configured: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) for the Anthropic API, "
    "or ANTHROPIC_BASE_URL for an Anthropic-compatible server (Ollama, llama.cpp, vLLM, LM Studio), "
    "or use the offline model: {extra_hint}."
)


def needs_credentials(model: str) -> str:
    """The one line for a model that was asked for by name when no API is configured."""
    return (
        f"The model {model} needs the Anthropic API or a compatible server: set ANTHROPIC_API_KEY "
        "(or ANTHROPIC_AUTH_TOKEN), or ANTHROPIC_BASE_URL; --model local uses the offline model."
    )


class SetupError(Exception):
    """The session cannot start (no model, bad resume id); the message says what to do."""


@dataclass
class Runtime:
    """Everything one session runs on, and the one place that switches it to another session.

    Rebuilt pieces (the prompt, the tracker) are swapped here so every holder sees the new one.
    """

    config: Config
    client: ModelClient
    session: Session
    policy: PolicyChain  # the session's permission chain: guards, then the rules
    prompt: SystemPrompt
    agent: Agent
    instructions: InstructionSet
    tracker: AttachmentTracker
    store: MemoryStore
    notices: NoticeChannel
    sandbox: Sandbox | None = None  # Bash's bubblewrap sandbox (None: off in the settings)
    retired_clients: list[ModelClient] = field(default_factory=list)  # replaced by /model; closed in close()
    commands: CommandTable = field(
        default_factory=CommandTable
    )  # the session's slash commands (the front end fills it)
    watch: SettingsWatch | None = None  # the settings files, stat'ed at each turn start

    @property
    def lifecycle(self) -> Lifecycle:
        """The parts observing this session's lifecycle, in `PARTS` order, and their dispatch."""
        return self.agent.lifecycle

    @property
    def extractor(self) -> Extractor | None:
        """Layer 4."""
        return self.lifecycle.find(Extractor)

    @property
    def compactor(self) -> Compactor | None:
        """Layer 5."""
        part = self.lifecycle.find(CompactPart)
        return part.compactor if part is not None else None

    @property
    def skills(self) -> SkillPart | None:
        """Custom commands and skills (None: the project and user have none)."""
        return self.lifecycle.find(SkillPart)

    @property
    def subagents(self) -> SubagentPart | None:
        """The Agent tool's types and children."""
        return self.lifecycle.find(SubagentPart)

    @property
    def file_history(self) -> FileHistoryPart | None:
        """The file checkpoints /rewind restores."""
        return self.lifecycle.find(FileHistoryPart)

    def install(self, lifecycle: Lifecycle) -> None:
        """Put the session's parts in place, and the tools they bring after the built-ins (Skill
        when anything is listed, then Agent): the fixed prefix every fork copies."""
        self.agent.lifecycle = lifecycle
        skills, subagents = lifecycle.find(SkillPart), lifecycle.find(SubagentPart)
        web = self.agent.ctx.web
        tools = [
            *default_tools(web_search=web is not None and web.search.offered),
            *([skills.tool] if skills is not None and skills.tool is not None else []),
            *([subagents.tool] if subagents is not None else []),
        ]
        self.agent.builtin_tools = tools
        self.agent.set_tools(tools)

    async def start(self, *, source: SessionSource, dream: bool) -> None:
        """Session-start maintenance (forgetting, maybe a dream), then `on_session_start`."""
        await session_start_maintenance(self, dream=dream)
        self.announce_instructions("session_start")
        await self.lifecycle.on_session_start(self.agent, source)

    def announce_instructions(self, reason: LoadReason) -> None:
        """Tell the lifecycle which instruction files the system prompt holds now."""
        self.agent.announce_instructions(instruction_loads(self.instructions.files, reason))

    def switch_session(self, session: Session, source: SessionSource) -> None:
        """Put another conversation in place (/clear, /resume) and rebuild the system prompt."""
        self.session = session
        session.report_to(self.notices)
        self.agent.session = session
        self.lifecycle.reset_conversation(self.agent)  # the new conversation has not seen any file
        if self.skills is None:  # a command folder made mid-session: its skills are listed from here
            self.refresh_custom_commands()
        self.rebuild_prompt()
        self.lifecycle.on_session_change(session, source)
        self.announce_instructions("session_start")

    def waiting_for_user(self, kind: NotificationKind, message: str) -> None:
        """Tell the lifecycle the session waits for the user (a permission question, an idle prompt)."""
        self.lifecycle.on_notification(self.agent, kind, message)

    def switch_client(self, client: ModelClient) -> None:
        """Answer with `client` from now on (/model). The old one is closed with the session, not
        now: a fork started on it (a background extraction, a recall prefetch) may still be streaming."""
        if client is not self.client:
            self.retired_clients.append(self.client)
            self.client = self.agent.client = client

    async def close(self, reason: EndReason = "other") -> None:
        """End the session: the parts stop their background work, then the clients close."""
        await self.lifecycle.on_session_end(self.agent, reason)
        for client in (*self.retired_clients, self.client):
            with contextlib.suppress(Exception):
                await client.aclose()
        if self.sandbox is not None:
            await self.sandbox.close()

    async def apply_settings_changes(self) -> list[SettingsChange]:
        """Settings files edited since the last look (a stat each): re-read, and their permissions,
        hooks and MCP servers applied from now on; one line says what changed. Called before
        each input the front end handles (a turn, or /hooks), so nothing changes inside a turn."""
        changes = self.watch.changes() if self.watch is not None else []
        if not changes:
            return []
        keys = {key for change in changes for key in change.keys}
        for change in changes:
            if "permissions" in change.keys:
                layer = next((la for la in self.config.layers if la.path == change.path), None)
                perms = layer.data.get("permissions") if layer is not None else None
                self.policy.rules.reload_file(change.source, perms, str(change.path))
        if "hooks" in keys or "disableAllHooks" in keys:
            self._reload_hooks()
        if keys & MCP_KEYS:
            await self._reload_mcp()
        files = ", ".join(_shown(change.path, self.config.project_root) for change in changes)
        later = sorted(keys & RESTART_KEYS)
        note = f" ({', '.join(later)}: at the next start)" if later else ""
        self.notices.say(f"Settings changed in {files}: {', '.join(sorted(keys))}; applied from now on{note}.")
        return changes

    def refresh_custom_commands(self) -> None:
        """Command and skill files added since the catalog was read (an unknown `/name` typed, a
        /clear): a session that had none gets its skills part now, so `/name` works at once; the
        model's listing of skills follows at /clear (it is part of the cached prefix)."""
        if self.skills is not None:
            self.skills.refresh_typed()
            return
        part = skills_part(self._part_context())
        if part is None:
            return
        parts = self.lifecycle.parts
        at = next((i for i, p in enumerate(parts) if not isinstance(p, (UserHooksPart, McpPart))), len(parts))
        self.agent.lifecycle = Lifecycle((*parts[:at], part, *parts[at:]))

    def _part_context(self) -> PartContext[Runtime]:
        """What a part built mid-session is given, as `build_runtime` gives it at the start."""
        return PartContext(
            config=self.config,
            client=self.client,
            session=self.session,
            notices=self.notices,
            memory_root=self.store.root,
            rules=self.policy.rules,
            policy=self.policy,
            agent=self.agent,
            runtime=self,
            window=context_window(self.config, self.config.model, self.client),
            team_root=None,
        )

    def _reload_hooks(self) -> None:
        """The hooks of the settings as they are now (a hook added to a session that had none gets
        the hooks part it lacked; SessionStart hooks do not run: the session has started)."""
        hook_set = load_hooks(self.config)
        for problem in hook_set.problems:
            self.notices.say(problem, "warning", once=True)
        self.policy.rules.protect(named_files(hook_set, [str(self.config.project_root), str(self.config.cwd)]))
        part = self.lifecycle.find(UserHooksPart)
        if part is not None:
            part.hooks = hook_set
        elif hook_set.commands:  # it replaces the part that ran only subagent types' own hooks
            rest = [p for p in self.lifecycle.parts if not isinstance(p, AgentTypeHooks)]
            self.agent.lifecycle = Lifecycle((user_hooks_part(self._part_context()), *rest))  # first, as in PARTS

    async def _reload_mcp(self) -> None:
        """The MCP servers of the settings as they are now: new ones start, removed ones stop; the
        tool list follows at the next turn start (McpPart.on_turn_start)."""
        part = self.lifecycle.find(McpPart)
        if part is not None:
            await part.manager.update(load_servers(self.config).servers)
            return
        part = mcp_part(self._part_context())
        if part is not None:
            part.fixed = part._waited = True  # the tool list was fixed without them: they join at a turn start
            part.manager.start()
            parts = self.lifecycle.parts
            at = (
                1 if parts and isinstance(parts[0], (UserHooksPart, AgentTypeHooks)) else 0
            )  # PARTS order: hooks, then MCP
            self.agent.lifecycle = Lifecycle((*parts[:at], part, *parts[at:]))

    def rebuild_prompt(self) -> None:
        """Rebuild the system prompt and Layer 1 (after /clear, /compact, /memory edits).

        A new InstructionSet needs a new tracker, so the instruction part is pointed at it.
        """
        self.prompt, self.instructions = make_prompt(self.config, self.store, self.notices)
        self.tracker = AttachmentTracker(self.instructions, self.config.cwd)
        instructions = self.lifecycle.find(InstructionPart)
        if instructions is not None:
            instructions.tracker = self.tracker
        self.agent.system = self.prompt.blocks()


def _shown(path: Path, project_root: Path) -> str:
    """A settings file as the user knows it: inside the project relative to it, else in full."""
    try:
        return str(path.relative_to(project_root))
    except ValueError:
        return str(path)


def make_client(config: Config, notices: NoticeChannel) -> ModelClient:
    """The model client: the in-process local model (`--model local[:PATH]`, or chosen with a
    notice when no API is configured, no model was asked for and the `local` extra is
    installed), else the Anthropic API or a compatible endpoint.

    A model asked for by name (flag, CLAUDE_MINI_MODEL, settings) is never swapped for the
    offline one: a CI job with a missing secret must fail, not succeed on a 135M model."""
    chosen = local.is_local_model(config.model)
    automatic = not chosen and missing_credentials() and not model_asked_for(config) and local.local_available()
    if chosen or automatic:
        try:
            client = local.open_local_client(config.model if chosen else local.LOCAL)
        except local.LocalModelError as exc:
            raise SetupError(str(exc)) from None
        if automatic:
            notices.say(local.auto_notice(client), "warning", once=True)
            config.model = local.LOCAL
        return client
    if missing_credentials():
        raise SetupError(
            needs_credentials(config.model)
            if model_asked_for(config)
            else NO_MODEL.format(extra_hint=local.extra_hint())
        )
    retry, problems = RetryPolicy.from_env()
    for problem in problems:
        notices.say(problem, "warning", once=True)
    return AnthropicClient(retry=retry)


def model_asked_for(config: Config) -> bool:
    """Whether a main model was named (a flag, CLAUDE_MINI_MODEL or a settings file)."""
    import os

    return bool(config.settings.get("model") or os.environ.get("CLAUDE_MINI_MODEL"))


def _added_claude_md() -> bool:
    """Whether the added folders' CLAUDE.md files are read: off, as in Claude Code, unless its
    variable (or ours) is 1."""
    import os

    names = ("CLAUDE_MINI_ADDITIONAL_DIRECTORIES_CLAUDE_MD", "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD")
    return any(os.environ.get(name) == "1" for name in names)


def make_prompt(config: Config, store: MemoryStore, notices: NoticeChannel) -> tuple[SystemPrompt, InstructionSet]:
    """The session's system prompt: built-in sections, Layer 1 instructions, Layer 2 memory index."""
    instructions = load_instructions(
        config.cwd,
        excludes=config.get("claudeMdExcludes") or (),
        trusted=config.trusted,
        claude_code_home=config.claude_code_home,
        added=config.additional_directories() if _added_claude_md() else (),
    )
    earlier = {n.text for n in notices.said("warning")}  # a rebuild does not repeat them
    for warning in instructions.warnings:
        if warning not in earlier:
            notices.say(warning, "warning")
    sections = [Section("instructions", instructions.render(), ", ".join(f.path for f in instructions.files))]
    if config.auto_memory:
        team = team_tier(config)
        if team is not None:  # position is precedence: after the instructions, before the private index
            text = team_prompt_section(team, lambda line: notices.say(line, "warning", once=True))
            sections.append(Section("team memory", text, str(team.index_path)))
        sections.append(Section("memory", _memory_section(config, store, team is not None), str(store.index_path)))
    prompt = build_system_prompt(
        config.cwd,
        extra=sections,
        append=config.append_system_prompt,
        replace=config.system_prompt,
        added=config.additional_directories(),
    )
    return prompt, instructions


def _memory_section(config: Config, store: MemoryStore, team: bool = False) -> str:
    """Layer 2's prompt section; in daily-log mode the index is read-only and saving means appending."""
    if not config.memory.log_mode:
        return memory_prompt_section(store, team=team)

    index, _ = render_index_for_prompt(store.index_text())
    return f"# Memory\n{log_mode_prompt(store.root)}\n\nMEMORY.md:\n{index or '(empty)'}\n"


def make_policy(config: Config, ctx: ToolContext) -> PermissionPolicy:
    """Permission rules from every settings layer; relative paths follow the session's `cd`.

    The layers are already trust-filtered (config/untrusted.py); a broken managed file locks every
    tool (its reason is in config.warnings once, from load_config).
    """
    policy = PermissionPolicy.from_layers(
        config.permission_layers(),
        mode=config.permission_mode,
        cwd=lambda: ctx.cwd,
        project_root=config.project_root,
    )
    if config.managed_error:
        policy.lock_down(config.managed_error)

    # The scripts hook commands run are protected files: an edit of one is code that runs later.
    policy.protect(named_files(load_hooks(config), [str(config.project_root), str(config.cwd)]))
    return policy


def make_chain(
    config: Config, rules: PermissionPolicy, store: MemoryStore, ctx: ToolContext, sandbox: Sandbox | None = None
) -> PolicyChain:
    """The session's permission chain, built once: the secret guard (with the team folder's check),
    the log-mode guard when `memory.mode` is log, the sandbox's guard (autoAllowBashIfSandboxed),
    then the rules (permissions/chain.py)."""
    guards: list[Guard] = [SecretGuard(store.root, cwd=lambda: ctx.cwd, team=TeamWriteCheck(lambda: team_tier(config)))]
    if config.memory.log_mode:
        guards.append(LogModeGuard(store.root, cwd=lambda: ctx.cwd))
    if sandbox is not None:
        guards.append(SandboxGuard(sandbox))
    return PolicyChain(rules, guards, rules=rules)


def make_web_access(runtime: Runtime, rules: PermissionPolicy, sandbox: Sandbox | None) -> WebAccess:
    """What WebFetch and WebSearch need of the session: side requests on the current client, their
    cost in the session's ledger, and which hosts a rule names (tools/web_access.py)."""

    async def ask_model(request: ModelRequest) -> ResponseDone:
        done = await runtime.client.complete(request)
        runtime.session.costs.add(request.purpose, done.model or request.model, done.billed)
        return done

    def names_host(host: str) -> bool:
        return rules_name_host(rules.allow_rules, host) or (sandbox is not None and sandbox.names_host(host))

    client = runtime.client
    base_url = client.base_url if isinstance(client, AnthropicClient) else None
    search = search_availability(runtime.config.get("webSearch"), client.provider, base_url)
    return WebAccess(ask_model, lambda: runtime.config.small_model, lambda: runtime.agent.model, names_host, search)


def make_sandbox(config: Config, policy: PermissionPolicy, notices: NoticeChannel) -> Sandbox | None:
    """The session's Bash sandbox from the `sandbox` settings (None when they turn it off); where
    bwrap cannot run, one line says so and names the package, and Bash runs as before."""
    settings = sandbox_settings(config.settings, [(layer.source, layer.data) for layer in config.layers])
    for problem in settings.problems:
        notices.say(problem, "warning", once=True)
    if not settings.enabled:
        return None
    sandbox = Sandbox(
        settings,
        RuleSource(deny=lambda: policy.deny_rules, allow=lambda: policy.allow_rules, roots=lambda: policy.roots),
        project_root=config.project_root,
        notices=notices,
    )
    if not sandbox.availability.works:
        then = (
            "Bash will refuse to run (sandbox.failIfUnavailable)"
            if settings.fail_if_unavailable
            else "Bash runs unsandboxed, checked by the permission rules only"
        )
        notices.say(f"Sandbox not available: {sandbox.availability.problem}. {then}.", "warning", once=True)
    return sandbox


def open_session(config: Config, *, resume: str | None = None, continue_: bool = False) -> Session:
    """A new session, or the resumed one (`--resume ID` / `--continue`)."""
    if resume or continue_:
        try:
            return resume_session(config.cwd, resume)
        except SessionNotFound as exc:
            raise SetupError(str(exc)) from None
    return Session(config.cwd)


def build_runtime(
    config: Config,
    *,
    notices: NoticeChannel | None = None,
    client: ModelClient | None = None,
    session: Session | None = None,
    ask_user: AskUser | None = None,
) -> Runtime:
    """Assemble a session's runtime; the UI injects its notice channel, tests a client or session.

    The agent and the runtime come first; then every feature builds its part from one
    `PartContext`, in `PARTS` order, and the runtime installs them as the agent's lifecycle.
    """
    notices = notices or NoticeChannel()
    for problem in apply_settings_env(config.layers):  # before anything starts a process or reads one
        notices.say(problem, "warning", once=True)
    client = client or make_client(config, notices)
    for problem in (*config.memory.problems, *config.checkpoints.problems):  # each has its default; said once
        notices.say(problem, "warning", once=True)
    team = team_tier(config) if config.auto_memory else None  # the repository's team memory
    team_warning = team_problem(config)  # a memory.teamDir that leaves the repository
    if team_warning:
        notices.say(team_warning, "warning", once=True)
    session = session or Session(config.cwd)
    session.report_to(notices)  # a resume's skipped lines, a failed transcript write
    ctx = ToolContext(cwd=config.cwd, project_root=config.project_root, shells=BackgroundShells())
    rules = make_policy(config, ctx)  # the rules themselves (MCP's trusted read-only hints go here)
    for error in rules.errors:  # rules that could not be read: each skipped, said once
        notices.say(str(error), "warning", once=True)
    ctx.read_denials = read_denials_of(rules)  # Grep and Glob skip the files Read rules deny
    sandbox = make_sandbox(config, rules, notices)
    ctx.sandbox = sandbox
    store = MemoryStore(paths.memory_dir(config.cwd), warn=lambda text: notices.say(text, "warning"))
    if config.auto_memory:
        rules.allow_edits_in(store.root)  # the main agent saves memories without a prompt
    policy = make_chain(config, rules, store, ctx, sandbox)
    prompt, instructions = make_prompt(config, store, notices)
    agent = Agent(
        client=client,
        session=session,
        tools=default_tools(),
        policy=policy,
        system=prompt.blocks(),
        model=config.model,
        ctx=ctx,
        max_tokens=config.max_tokens,
        max_turns=config.max_turns,
        ask_user=ask_user,
    )
    agent.thinking = thinking_budget(config.max_tokens)  # MAX_THINKING_TOKENS, from settings `env` too
    tracker = AttachmentTracker(instructions, config.cwd)
    runtime = Runtime(
        config, client, session, policy, prompt, agent, instructions, tracker, store, notices, sandbox=sandbox
    )
    ctx.web = make_web_access(runtime, rules, sandbox)
    parts = PartContext(
        config=config,
        client=client,
        session=session,
        notices=notices,
        memory_root=store.root,
        rules=rules,
        policy=policy,
        agent=agent,
        runtime=runtime,
        window=context_window(config, config.model, client),
        team_root=team.root if team is not None else None,
    )
    runtime.install(Lifecycle(part for factory in PARTS if (part := factory(parts))))
    runtime.watch = SettingsWatch(config)
    return runtime


async def session_start_maintenance(runtime: Runtime, *, dream: bool) -> None:
    """Forgetting at session start: archive low scorers near the index limits, then maybe dream.

    Both are no-ops when nothing is due; the dream runs only where a session lasts
    (the REPL), never in print mode.
    """
    import asyncio

    if not runtime.config.auto_memory:
        return
    archived = await asyncio.to_thread(maybe_auto_gc, runtime.store, runtime.config)
    if archived:
        runtime.notices.say(gc_message(archived))
        runtime.rebuild_prompt()
    if dream:
        report = await maybe_auto_dream(
            runtime.agent, runtime.store, runtime.config, runtime.session.id, base_policy=runtime.policy
        )
        if report is not None:
            runtime.notices.say(report.message())
