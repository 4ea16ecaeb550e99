"""The chain's rule: guards in outermost first, a Deny or Ask stops the way in, afters on the way out."""

from __future__ import annotations

from typing import Any

from claude_mini.permissions import Allow, Ask, Decision, Deny, Guard, PolicyChain


class Recorder(Guard):
    def __init__(self, name: str, log: list[str], *, stop: Deny | Ask | None = None) -> None:
        self.name, self.log, self.stop = name, log, stop

    def view(self, tool_name: str, input: dict[str, Any]) -> dict[str, Any]:
        return {**input, "seen": [*input.get("seen", []), self.name]}

    def before(self, tool_name: str, input: dict[str, Any]) -> Deny | Ask | None:
        self.log.append(f"before {self.name}")
        return self.stop

    def after(self, tool_name: str, input: dict[str, Any], decision: Decision) -> Decision:
        self.log.append(f"after {self.name} {type(decision).__name__}")
        return decision


class Base:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def can_use_tool(self, tool_name: str, input: dict[str, Any]) -> Decision:
        self.log.append(f"base sees {input['seen']}")
        return Ask("mode")


def test_guards_run_in_then_out_around_the_base() -> None:
    log: list[str] = []
    chain = PolicyChain(Base(log), [Recorder("a", log), Recorder("b", log)])
    assert isinstance(chain.can_use_tool("Bash", {}), Ask)
    assert log == ["before a", "before b", "base sees ['a', 'b']", "after b Ask", "after a Ask"]


def test_a_deny_stops_the_way_in_and_outer_guards_still_see_it() -> None:
    log: list[str] = []
    chain = PolicyChain(Base(log), [Recorder("a", log), Recorder("b", log, stop=Deny("no"))])
    assert chain.can_use_tool("Bash", {}) == Deny("no")
    assert log == ["before a", "before b", "after b Deny", "after a Deny"]


def test_with_guards_adds_outside_and_for_fork_drops_guards_without_a_fork_form(tmp_path) -> None:
    log: list[str] = []

    class SessionOnly(Recorder):
        def for_fork(self, cwd):
            return None

    chain = PolicyChain(Base(log), [Recorder("a", log), SessionOnly("s", log)])
    assert [g.name for g in chain.with_guards(Recorder("child", log)).guards] == ["child", "a", "s"]
    fork = chain.for_fork(type("AllowAll", (), {"can_use_tool": lambda self, t, i: Allow()})(), tmp_path)
    assert [g.name for g in fork.guards] == ["a"] and isinstance(fork.can_use_tool("Read", {}), Allow)
