"""Custom commands and skills as a part of the session lifecycle (`runtime.skills`).

    catalog      the commands and skills on disk (`catalog.load_catalog`), read at start and /clear
    listing      what the Skill tool's description lists, fixed per conversation (prompt cache)
    invoked      the skills loaded so far, by the model (Skill tool) or the user (`/name`)

A typed `/name args` becomes the user's message through `expand_typed`; the model's Skill
call through `invoke_for_model`. Either way the entry's `allowed-tools` are allow rules
(source `skill`) for the rest of that turn only, and a typed entry's `model` answers that
turn. `!` snippets in a body go through the permission check like any Bash call.

After a compaction the bodies are not put back (they cost thousands of tokens each, and
most are done with): one attachment names the skills invoked so far, so the model can load
one again with the Skill tool. A command or skill added mid-session can be typed at once (an
unknown `/name` reads the folders again); it is said once and listed to the model from the
next /clear or session: the listing is part of the cached prefix.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from claude_mini.agent.lifecycle import Part, PartContext, SessionSource, ToolVerdict
from claude_mini.agent.loop import run_tool
from claude_mini.base import paths
from claude_mini.base.text import estimate_tokens, one_line
from claude_mini.config.models import model_named
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.permissions import Allow, Ask, Deny, PermissionPolicy, Rule, RuleError
from claude_mini.skills.catalog import (
    Catalog,
    CatalogError,
    Listing,
    PromptCommand,
    build_listing,
    listing_budget,
    load_catalog,
    names_on_disk,
)
from claude_mini.skills.expand import ExpansionError, expand_body
from claude_mini.skills.report import listing_line
from claude_mini.skills.tool import SkillTool
from claude_mini.tools.base import ToolError, ToolResult

if TYPE_CHECKING:
    from claude_mini.agent.loop import Agent
    from claude_mini.base.notices import NoticeChannel
    from claude_mini.config import Config
    from claude_mini.session import Session

MAX_PROBLEMS_SAID = 10  # at start-up; `claude-mini context --lint` lists every one
COMPACT_NOTE = (
    "Skills loaded earlier in this session (their text was left out of the summary to "
    "save room): {names}. If the work still needs one, load it again with the Skill tool."
)
_BEFORE_NAMES, _AFTER_NAMES = COMPACT_NOTE.split("{names}")
_COMPACT_NAMES = re.compile(re.escape(_BEFORE_NAMES) + r"(.*?)" + re.escape(_AFTER_NAMES))
_COMMAND_NAME = re.compile(r"<command-name>/([^<\s]+)</command-name>")


def command_message(entry: PromptCommand, args: str, body: str) -> str:
    """The user message for a typed `/name args`: Claude Code's command tags, then the text."""
    tags = [f"<command-message>{entry.name}</command-message>", f"<command-name>/{entry.name}</command-name>"]
    if args.strip():
        tags.append(f"<command-args>{args.strip()}</command-args>")
    return "\n".join(tags) + "\n\n" + body


class SkillPart(Part):
    """The session's commands and skills: listing, invocation, turn-scoped permissions, compaction."""

    def __init__(
        self,
        config: Config,
        rules: PermissionPolicy,
        notices: NoticeChannel,
        window: int,
        catalog: Catalog | None = None,
        agent: Agent | None = None,
    ) -> None:
        self.config = config
        self.rules = rules  # the rules themselves (allowed-tools are added here for one turn)
        self.notices = notices
        self.window = window  # the context window the listing's budget is a share of
        self.home = paths.home_dir()
        self.invoked: dict[str, int] = {}  # name -> tokens of its text, last invoked last
        self.agent = agent  # the main agent: a typed command may run its `!` lines before the session start ends
        self._turn_rules: list[Rule] = []
        self._armed: tuple[str, str | None] | None = None  # (message, model) of a typed command
        self._models: tuple[str, str] | None = None  # (the session's model, the command's) for this turn
        self._load(catalog if catalog is not None else self.read_catalog())

    def read_catalog(self) -> Catalog:
        """The commands and skills on disk now (a project's links out of the repository only when trusted)."""
        return load_catalog(
            self.config.project_root, self.home, trusted=self.config.trusted, claude_code=self.config.claude_code_home
        )

    def refresh_typed(self) -> None:
        """Read the catalog again for what the user types (a command file added mid-session works
        at once); the model's listing and the Skill tool stay this conversation's until /clear."""
        self.catalog = self.read_catalog()

    def _load(self, catalog: Catalog) -> None:
        """Take `catalog` for this conversation: its listing, and the Skill tool if it lists anything;
        its problems and an over-budget listing are said (once each)."""
        self.catalog = catalog
        self.listing: Listing = build_listing(catalog.listed(), listing_budget(self.window))
        self.tool: SkillTool | None = SkillTool(self, self.listing) if catalog.listed() else None
        self._listed_names = catalog.names()  # what this listing was built from
        # The files found then (a file that would not load is one of them, not "new" later).
        self._on_disk = names_on_disk(
            self.config.project_root, self.home, trusted=self.config.trusted, claude_code=self.config.claude_code_home
        )
        self._told: set[str] = set()  # names found mid-conversation and said once
        for problem in self.catalog.problems[:MAX_PROBLEMS_SAID]:
            self.notices.say(problem, "warning", once=True)
        if len(self.catalog.problems) > MAX_PROBLEMS_SAID:
            self.notices.say(
                f"… and {len(self.catalog.problems) - MAX_PROBLEMS_SAID:,} more problems with custom "
                "commands and skills: `claude-mini context --lint` lists them all.",
                "warning",
                once=True,
            )
        if self.listing.shortened:
            names = ", ".join(self.listing.shortened)
            self.notices.say(
                f"The skill listing is over its budget of {self.listing.budget:,} characters: "
                f"listed by name only: {names}. Shorten descriptions, or set "
                "SLASH_COMMAND_TOOL_CHAR_BUDGET.",
                "warning",
                once=True,
            )

    # -- the session

    async def on_session_start(self, agent: Agent, source: SessionSource) -> None:
        self.agent = agent
        if source == "resume":
            self.invoked = dict.fromkeys(invoked_in(agent.session.messages), 0)

    def on_session_change(self, session: Session, source: SessionSource) -> None:
        """/clear or /resume: a new conversation, so a new listing may be built (new skills join)."""
        self._end_turn()
        self.invoked = dict.fromkeys(invoked_in(session.messages), 0) if source == "resume" else {}
        before = self._listed_names
        self._load(self.read_catalog())
        added = sorted(self._listed_names - before)
        if self.agent is not None:
            self._put_tool(self.agent)
        if added:
            self.notices.say(
                f"Skills and commands added since the last listing are listed now: "
                f"{', '.join('/' + name for name in added)}."
            )

    def _put_tool(self, agent: Agent) -> None:
        """The Skill tool (this listing's) after the built-ins, or none; MCP tools stay after them."""
        builtins = [t for t in agent.builtin_tools if t.name != SkillTool.name]
        agent.builtin_tools = builtins + ([self.tool] if self.tool is not None else [])
        others = [t for name, t in agent.tools.items() if name != SkillTool.name and all(t is not b for b in builtins)]
        agent.set_tools([*agent.builtin_tools, *others])

    # -- one turn

    async def on_turn_start(self, agent: Agent, text: str) -> None:
        self.agent = agent
        armed, self._armed = self._armed, None
        if armed is None or not text.startswith(armed[0]):  # the UI may append @file attachments
            self._end_turn()
            armed = None
        elif armed[1] is not None:
            self._use_model(agent, armed[1])
        await self._tell_new_entries()

    def after_turn(self, agent: Agent) -> None:
        """However the turn ended (an error, Esc, a hook's refusal too): its grants and model go.
        After `on_turn_end`, so the extraction fork took the turn's model with its prefix."""
        self._end_turn()

    def _end_turn(self) -> None:
        """Drop this turn's allowed-tools rules and put the session's model back (unless the user
        chose another one meanwhile: /model wins)."""
        if self._turn_rules:
            self.rules.remove_rules(self._turn_rules)
            self._turn_rules = []
        models, self._models = self._models, None
        if models is not None and self.agent is not None and self.agent.model == models[1]:
            self.agent.model = models[0]

    def _use_model(self, agent: Agent, model: str) -> None:
        if agent.client.provider == "local":
            self.notices.say(
                f"The offline model answers every turn; the command's model {model} was not used.", once=True
            )
            return
        self._models = (agent.model, model)
        agent.model = model

    async def _tell_new_entries(self) -> None:
        """A skill or command added since the listing was built: said once, listed from /clear."""
        on_disk = await asyncio.to_thread(
            names_on_disk,
            self.config.project_root,
            self.home,
            trusted=self.config.trusted,
            claude_code=self.config.claude_code_home,
        )
        added = sorted(on_disk - self._on_disk - self._listed_names - self._told)
        if added:
            self._told |= set(added)
            self.notices.say(
                f"New since this conversation started: {', '.join('/' + n for n in added)}. "
                "The model sees it from the next /clear or session (the skill listing is "
                "part of the prompt cache)."
            )

    async def before_tool(self, agent: Agent, call: ToolUseBlock) -> ToolVerdict | None:
        """A Skill call names its skill by its own name (so `Skill(name)` rules judge it however the
        model spelled it); a deny or ask rule on any other name of the skill binds too. One that
        would not widen permissions then runs without a question (it only reads text); one whose
        skill has allowed-tools is left to the rules."""
        if call.name != SkillTool.name:
            return None
        try:
            entry = self.entry_for_model(call.input.get("skill"))
        except ToolError:
            return None  # the call fails on its own, with the reason
        canonical = {**call.input, "skill": entry.name}
        for alias in entry.aliases:
            restriction = self.rules.check_restrictions(SkillTool.name, {**call.input, "skill": alias})
            if restriction is not None:
                return ToolVerdict(restriction, canonical)
        return ToolVerdict(None if self._grants(entry) else Allow(), canonical)

    # -- invoking

    def entry_for_model(self, name: Any) -> PromptCommand:
        """The listed entry the model named; ToolError says why there is none."""
        if not isinstance(name, str) or not name.strip().lstrip("/"):
            raise ToolError("`skill` must be the name of a listed skill.")
        entry = self.catalog.find(name.strip())
        if entry is None or entry.name not in {e.name for e in self.listing_entries()}:
            listed = ", ".join(e.name for e in self.listing_entries()) or "none"
            if entry is not None and entry.disable_model_invocation:
                raise ToolError(
                    f"The skill {entry.name} can only be run by the user (/{entry.name}); ask them to run it."
                )
            raise ToolError(f"Unknown skill: {name.strip()}. Listed skills: {listed}.")
        return entry

    def listing_entries(self) -> list[PromptCommand]:
        """The entries this conversation's listing names (a newer file waits for /clear)."""
        return self.catalog.listed() if self.tool is not None else []

    async def invoke_for_model(self, entry: PromptCommand, args: str) -> str:
        """The Skill tool's result: the skill's folder and its expanded text."""
        assert self.agent is not None, "a tool runs inside a turn"
        grants = self._grant(entry)
        try:
            text = await self._expand(entry, args)
        except (ExpansionError, CatalogError) as exc:
            self._revoke(grants)
            raise ToolError(str(exc)) from None
        self._mark_invoked(entry, text)
        return text

    async def expand_typed(self, entry: PromptCommand, args: str) -> str:
        """The user message for a typed `/name args`; arms the entry's allowed-tools and model
        for the turn that sends it. ExpansionError or CatalogError: nothing is armed or sent."""
        self._end_turn()
        grants = self._grant(entry)
        try:
            text = command_message(entry, args, await self._expand(entry, args))
        except BaseException:
            self._revoke(grants)
            raise
        self._mark_invoked(entry, text)
        # An untrusted repository does not choose what you pay (config/untrusted.py ignores its `model` too).
        model = model_named(entry.model) if entry.scope == "user" or self.config.trusted else None
        self._armed = (text, model)
        return text

    async def _expand(self, entry: PromptCommand, args: str) -> str:
        body = await asyncio.to_thread(entry.body)
        session_id = self.agent.session.id if self.agent is not None else ""
        text = await expand_body(
            body,
            args,
            run_shell=lambda cmd: self._run_snippet(entry, cmd),
            skill_dir=entry.directory if entry.kind == "skill" else None,
            session_id=session_id,
        )
        if entry.kind == "skill":
            return f"This skill's folder, where the files it mentions are: {entry.directory}\n\n{text}"
        return text

    async def _run_snippet(self, entry: PromptCommand, command: str) -> str:
        """One `!` snippet, vetted as the model's own Bash call would be (the user's PreToolUse hooks,
        then the rules; the session's question where it can ask); its output, or ExpansionError."""
        agent = self.agent
        assert agent is not None
        if entry.scope == "project" and not self.config.trusted:
            # A cloned repository's command must not run shell lines (`!cat ~/.aws/credentials`) the
            # moment it is typed or the model loads it: the line is left out, the rest is sent.
            return (
                f"[`!{one_line(command, 200)}` was not run: this folder is not trusted, so its commands' "
                "and skills' `!` lines do not run. Trust the folder (run claude-mini here and answer "
                "yes, or pass --trust-folder) to run them.]"
            )
        call, decision = await agent.vet(ToolUseBlock(f"snippet-{entry.name}", "Bash", {"command": command}))
        where = f"/{entry.name}: `!{command}`"
        if isinstance(decision, ToolResult):
            raise ExpansionError(f"{where} was not run ({decision.content}); nothing was sent.")
        if isinstance(decision, Deny):
            raise ExpansionError(f"{where} was not run ({decision.reason}); nothing was sent.")
        if isinstance(decision, Ask):
            if agent.ask_user is None:
                raise ExpansionError(
                    f"{where} needs permission ({decision.reason}) and this session cannot "
                    f"ask; nothing was sent.{self._allow_hint(call)}"
                )
            answer = await agent.ask_user(call, decision.reason)
            if not answer.allow:
                raise ExpansionError(f"{where} was declined; nothing was sent.")
        bash = agent.tools.get("Bash")
        if bash is None:
            raise ExpansionError(f"{where} cannot run: this session has no Bash tool; nothing was sent.")
        # A copy of the context: a `cd` in a snippet must not move the session.
        result = await run_tool(bash, call, dataclasses.replace(agent.ctx))
        if result.is_error:
            last = result.content.strip().splitlines()[-1] if result.content.strip() else "no output"
            raise ExpansionError(f"{where} failed ({last}); nothing was sent.")
        return "" if result.content == "(no output)" else result.content

    def _allow_hint(self, call: ToolUseBlock) -> str:
        """How the user allows such a line ahead of time; none for a line that substitutes or
        redirects (a rule for it would allow what an argument smuggled in)."""
        rule = self.rules.suggest_rule(call.name, call.input)
        if any(mark in rule for mark in ("$(", "`", ";", "|", "&", ">", "<", "\n")):
            return " It cannot be allowed ahead of time: it substitutes, chains or redirects."
        return f" Allow it with --allowedTools '{rule}' or the command's allowed-tools."

    def _grants(self, entry: PromptCommand) -> bool:
        """Whether the entry's allowed-tools would count (a project's need a trusted folder)."""
        return bool(entry.allowed_tools) and (entry.scope == "user" or self.config.trusted)

    def _grant(self, entry: PromptCommand) -> list[Rule]:
        """Add the entry's allowed-tools not granted this turn already as allow rules for the rest of
        the turn; returns what this load added."""
        if entry.allowed_tools and not self._grants(entry):
            self.notices.say(
                f"The allowed-tools of {entry.path} were not applied: this folder is not "
                "trusted (the rest of it was used).",
                "warning",
                once=True,
            )
            return []
        held = {rule.text for rule in self._turn_rules}
        added: list[Rule] = []
        for text in entry.allowed_tools:
            if text.strip() not in held:
                with contextlib.suppress(RuleError):  # the catalog named a bad rule when it read the file
                    added.append(self.rules.add_session_allow(text, source="skill", origin=str(entry.path)))
        self._turn_rules += added
        return added

    def _revoke(self, rules: Sequence[Rule]) -> None:
        """Drop the grants one load added (it failed); those of earlier loads this turn stay."""
        self.rules.remove_rules(rules)
        self._turn_rules = [r for r in self._turn_rules if r not in rules]

    def _mark_invoked(self, entry: PromptCommand, text: str) -> None:
        self.invoked.pop(entry.name, None)
        self.invoked[entry.name] = estimate_tokens(text)

    # -- compaction and reports

    def compact_attachments(self, agent: Agent) -> list[str]:
        """The names of the skills invoked so far that the model may load again (not their text)."""
        names = [name for name in self.invoked if name in {e.name for e in self.listing_entries()}]
        return [COMPACT_NOTE.format(names=", ".join(names))] if names else []

    def context_report(self) -> list[str]:
        """/context: the listing and its cost, what was shortened, and the skills invoked."""
        lines = [listing_line(self.catalog, self.listing) + "; /skills lists them"]
        if self.listing.shortened:
            lines.append(f"  listed by name only (over budget): {', '.join(self.listing.shortened)}")
        if self.invoked:
            shown = ", ".join(
                f"{name} ({tokens:,} tokens)" if tokens else f"{name} (before the resume)"
                for name, tokens in self.invoked.items()
            )
            lines.append(f"  invoked this session: {shown}")
        return lines


def invoked_in(messages: Sequence[Message]) -> list[str]:
    """The skills a conversation shows as invoked, in order: Skill calls that succeeded, typed
    commands, and the names a compaction kept (so a resumed session still knows them)."""
    failed = {b.tool_use_id for m in messages for b in m.content if isinstance(b, ToolResultBlock) and b.is_error}
    names: list[str] = []
    for message in messages:
        for block in message.content:
            found: list[str] = []
            if isinstance(block, ToolUseBlock) and block.name == SkillTool.name and block.id not in failed:
                skill = block.input.get("skill") if isinstance(block.input, dict) else None
                found = [skill.strip().lstrip("/")] if isinstance(skill, str) else []
            elif isinstance(block, TextBlock):
                found = _COMMAND_NAME.findall(block.text)
                for match in _COMPACT_NAMES.findall(block.text):
                    found += [name.strip() for name in match.split(",")]
            for name in filter(None, found):
                if name in names:
                    names.remove(name)
                names.append(name)
    return names


def part(ctx: PartContext[object]) -> SkillPart | None:
    """The session's skills part, or None when there is no command or skill at all (nothing listed,
    nothing to type, no Skill tool)."""
    config = ctx.config
    catalog = load_catalog(
        config.project_root, paths.home_dir(), trusted=config.trusted, claude_code=config.claude_code_home
    )
    if not catalog.entries and not catalog.problems:
        return None
    return SkillPart(config, ctx.rules, ctx.notices, ctx.window, catalog, agent=ctx.agent)
