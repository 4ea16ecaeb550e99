"""The guards around a policy, in one explicit chain built once by the runtime.

A `PolicyChain` holds a base policy (the session's `PermissionPolicy`, or a fork's
`ExtractionPolicy`) and its guards, outermost first. A call goes in through the guards and
comes back out through them (`through_guards`):

    in, outermost first   each guard may rewrite what the policy inside sees (`view`, a subagent
                          judges its own folder), then say Deny or Ask (`before`): that stops the
                          way in, nothing inside is asked
    the base policy       decides in the order of policy.py's docstring
    out, innermost first  each guard entered sees the decision and may replace it (`after`: a
                          subagent's own memory folder, extraction keeping a file's old bytes)

The session's chain: secret guard (with the team-write check), then the log-mode guard when
`memory.mode` is log, then the sandbox's guard (its `after` turns the mode's question for a
sandboxed Bash call into Allow), over the rules. A fork gets `for_fork(base, cwd)`: each guard's fork
form (the log-mode guard has none) over the fork's base. A subagent adds its child guard with
`with_guards`, outside the parent's. What the UI reads and changes of the session's rules is
an explicit method here, delegated to the `PermissionPolicy`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from claude_mini.permissions.decisions import Ask, Decision, Deny, ToolPolicy
from claude_mini.permissions.policy import PermissionPolicy
from claude_mini.permissions.rules import Rule


class Guard(Protocol):
    """One check around a policy. Subclass it for the defaults (each does nothing)."""

    def view(self, tool_name: str, input: dict[str, Any]) -> dict[str, Any]:
        """The input as the guards and policy inside this one see it (default: unchanged)."""
        return input

    def before(self, tool_name: str, input: dict[str, Any]) -> Deny | Ask | None:
        """A Deny or Ask that stops the call before anything inside is asked, else None."""
        return None

    def after(self, tool_name: str, input: dict[str, Any], decision: Decision) -> Decision:
        """The decision on the way back out (default: unchanged)."""
        return decision

    def for_fork(self, cwd: Path) -> Guard | None:
        """This guard for a forked agent working in `cwd`, or None where it does not bind a fork
        (default: the same guard)."""
        return self


def through_guards(
    guards: Sequence[Guard], tool_name: str, input: dict[str, Any], decide: Callable[[dict[str, Any]], Decision]
) -> Decision:
    """The chain's rule: guards[0] is outermost. Each guard, outermost first, views the input and
    may stop the call with its `before` (a Deny or an Ask); otherwise the next one is asked, and
    `decide` (the base policy) last. The decision then goes back out through every guard that was
    entered, innermost first, each `after` seeing the input as that guard viewed it."""
    if not guards:
        return decide(input)
    guard, inner = guards[0], guards[1:]
    seen = guard.view(tool_name, input)
    decision = guard.before(tool_name, seen) or through_guards(inner, tool_name, seen, decide)
    return guard.after(tool_name, seen, decision)


class PolicyChain:
    """A policy and its guards: what the agent loop, forks and subagents ask (`can_use_tool`),
    and the session's rules for the UI (mode, rules, suggestions), delegated by name."""

    def __init__(
        self, base: ToolPolicy, guards: Iterable[Guard] = (), *, rules: PermissionPolicy | None = None
    ) -> None:
        self.base = base  # what decides once the guards let a call through
        self.guards = tuple(guards)  # outermost first
        # The session's rules, for the UI (the session's chain: the base itself); a fork built
        # without a session (a dream run on its own) has none.
        self._rules = rules

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Decision:
        """The decision for one call, through every guard (see `through_guards`)."""
        input = input if isinstance(input, dict) else {}
        return through_guards(self.guards, tool_name, input, lambda seen: self.base.can_use_tool(tool_name, seen))

    def for_fork(self, base: ToolPolicy, cwd: Path) -> PolicyChain:
        """A forked agent's chain: `base` (e.g. ExtractionPolicy) under each guard's fork form."""
        guards = [fork for guard in self.guards if (fork := guard.for_fork(cwd)) is not None]
        return PolicyChain(base, guards, rules=self._rules)

    def with_guards(self, *guards: Guard) -> PolicyChain:
        """This chain with `guards` added outside the others (a subagent's child guard, a journal)."""
        return PolicyChain(self.base, (*guards, *self.guards), rules=self._rules)

    def _viewed(self, tool_name: str, input: dict[str, Any]) -> dict[str, Any]:
        for guard in self.guards:
            input = guard.view(tool_name, input)
        return input

    # ---- the session's rules, for the UI, subcommands and tools

    @property
    def rules(self) -> PermissionPolicy:
        """The session's PermissionPolicy (RuntimeError for a fork built without a session)."""
        if self._rules is None:
            raise RuntimeError("this policy chain has no session rules (a fork built on its own)")
        return self._rules

    @property
    def mode(self) -> str:
        """The session's permission mode."""
        return self.rules.mode

    @mode.setter
    def mode(self, value: str) -> None:
        self.rules.mode = value

    @property
    def available_modes(self) -> tuple[str, ...]:
        """The modes the session may switch to."""
        return self.rules.available_modes

    @property
    def deny_rules(self) -> tuple[Rule, ...]:
        """Deny rules, lowest layer first."""
        return self.rules.deny_rules

    @property
    def ask_rules(self) -> tuple[Rule, ...]:
        """Ask rules, lowest layer first."""
        return self.rules.ask_rules

    @property
    def allow_rules(self) -> tuple[Rule, ...]:
        """Allow rules, lowest layer first, then session rules."""
        return self.rules.allow_rules

    def suggest_rule(self, tool_name: str, input: dict[str, Any]) -> str:
        """A rule that would allow this call next time, judged as the rules see the call."""
        return self.rules.suggest_rule(tool_name, self._viewed(tool_name, input))

    def add_session_allow(self, rule: str, *, source: str = "session", origin: str | None = None) -> Rule:
        """Allow `rule` for the rest of the session (RuleError if malformed)."""
        return self.rules.add_session_allow(rule, source=source, origin=origin)

    def add_rule(self, kind: str, rule: str, *, source: str = "session", origin: str | None = None) -> Rule:
        """Add an allow, ask or deny rule from now on (RuleError if malformed)."""
        return self.rules.add_rule(kind, rule, source=source, origin=origin)

    def remove_rules(self, gone: Iterable[Rule]) -> None:
        """Drop these rules from the session."""
        self.rules.remove_rules(gone)

    def read_denied(self, path: str) -> str | None:
        """Why a Read deny rule covers `path`, or None."""
        return self.rules.read_denied(path)

    @property
    def cwd(self) -> Path:
        """Where the session's relative paths resolve."""
        return self.rules.cwd

    def check_restrictions(self, tool_name: str, input: dict[str, Any]) -> Deny | Ask | None:
        """Only the session's deny and ask rules: what a fork's policy must still honour."""
        return self.rules.check_restrictions(tool_name, input)

    def describe(self) -> str:
        """The text of /permissions."""
        return self.rules.describe()
