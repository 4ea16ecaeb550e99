"""/dream through the fake server: merge, rewrite, failure, interruption, logs, the gate, the lock."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
from datetime import UTC
from pathlib import Path
from types import SimpleNamespace

import pytest

from claude_mini.agent.fork import ForkResult
from claude_mini.agent.loop import Agent
from claude_mini.config import Config
from claude_mini.config.memory_settings import DreamSettings
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.messages import Message, TextBlock
from claude_mini.memory.maintenance.daylog import append_log, unconsumed_logs
from claude_mini.memory.maintenance.dream import (
    DreamBusy,
    DreamState,
    _fork_policy,
    auto_dream_due,
    dream,
    dream_lock,
    load_state,
    maybe_auto_dream,
    record_session,
)
from claude_mini.memory.store import MemoryStore, parse_memory_text
from claude_mini.memory.store.restore import restore
from claude_mini.permissions import Allow, Deny, PermissionPolicy
from claude_mini.session import Session
from claude_mini.tools.base import ToolContext
from claude_mini.tools.registry import default_tools
from tests.fake_anthropic import Reply
from tests.memory.memclock import DAY, HOUR, T0, Clock

# What dream() reads of its parent (the working folder) when a fake stands in for run_fork.
NO_PARENT = SimpleNamespace(ctx=ToolContext(cwd=Path("."), project_root=Path(".")))


@pytest.fixture
def staging(store: MemoryStore) -> Path:
    return store.root / ".dream" / "staging"


def make_agent(cwd: Path, server) -> Agent:
    client = AnthropicClient(base_url=server.base_url, api_key="test")
    ctx = ToolContext(cwd=cwd, project_root=cwd)
    policy = PermissionPolicy(cwd=lambda: ctx.cwd, project_root=cwd)
    return Agent(
        client=client,
        session=Session(cwd),
        tools=default_tools(),
        policy=policy,
        system=["You are a test agent."],
        model="claude-sonnet-4-6",
        ctx=ctx,
    )


def run_dream(tmp_path: Path, server, store: MemoryStore, config=None, **kw):
    async def go():
        agent = make_agent(tmp_path, server)
        try:
            return await dream(agent, store, config, **kw)
        finally:
            await agent.client.aclose()

    return asyncio.run(go())


def live_files(store: MemoryStore) -> dict[str, bytes]:
    """Every file of the memory folder outside .dream (what a failed dream must not change)."""
    return {
        p.relative_to(store.root).as_posix(): p.read_bytes()
        for p in sorted(store.root.rglob("*"))
        if p.is_file() and ".dream" not in p.parts and not p.name.endswith(".lock")
    }


def seed_duplicates(store: MemoryStore, clock: Clock) -> None:
    store.write(
        "a-tests.md",
        name="Run tests first",
        type="feedback",
        description="Run the unit tests with pytest -x before pushing to main",
        body="Use pytest -x.",
        why="CI is slow",
        how_to_apply="before every push",
    )
    clock.now += DAY
    store.write(
        "b-tests.md",
        name="Pytest before push",
        type="feedback",
        description="Always run pytest -x -q before a push to main",
        body="Use pytest -x -q.",
        why="CI takes 20 minutes",
        how_to_apply="every push",
    )
    store.write(
        "deploy.md",
        name="Deploy",
        type="project",
        description="Deploy billing to staging with make deploy ENV=staging",
        body="Needs VPN.",
        why="x",
        how_to_apply="y",
    )
    store.record_use(["a-tests.md"], when=T0)
    store.record_use(["b-tests.md", "b-tests.md"], when=T0 + DAY)
    clock.now += DAY


MERGED = """---
name: Run pytest before pushing
description: Run pytest -x -q before every push to main, since CI takes 20 minutes
type: feedback
replaces: [a-tests.md, b-tests.md]
---

Run `pytest -x -q` before every push to main. (Changed: the newer note adds -q.)
**Why:** CI takes 20 minutes.
**How to apply:** before every push.
"""


def script_merge(server, store: MemoryStore, staging: Path) -> None:
    server.on(
        Reply.tools(
            [
                ("Read", {"file_path": str(store.root / "a-tests.md")}),
                ("Read", {"file_path": str(store.root / "b-tests.md")}),
            ]
        ),
        purpose="dream",
    )
    server.on(Reply.tool("Write", {"file_path": str(staging / "run-tests.md"), "content": MERGED}), purpose="dream")
    server.on(
        Reply.text("Merged a-tests.md and b-tests.md into run-tests.md; the newer note (pytest -x -q) wins."),
        purpose="dream",
    )


# --- a merge, and restore undoes it ---------------------------------------------------------
def test_dream_merges_two_duplicates_archives_them_and_restore_undoes_it(tmp_path, fake_server, store, clock, staging):
    seed_duplicates(store, clock)
    before = live_files(store)
    index_before = store.index_text()
    script_merge(fake_server, store, staging)

    report = run_dream(tmp_path, fake_server, store)

    requests = fake_server.requests_for("dream")
    assert len(requests) == 3
    assert requests[0].headers["x-claude-mini-purpose"] == "dream"
    task = requests[0].body["messages"][-1]["content"][-1]["text"]
    assert str(staging) in task and "a-tests.md ~ b-tests.md (up to" in task
    assert "## MEMORY.md\n- [Run tests first](a-tests.md)" in task
    assert report.ok and report.written == ["run-tests.md"]
    assert {a.filename for a in report.archived} == {"a-tests.md", "b-tests.md"}
    assert "newer note" in report.message() and "1 written, 2 archived" in report.message()

    assert not store.exists("a-tests.md") and not store.exists("b-tests.md")
    merged = parse_memory_text((store.root / "run-tests.md").read_text())
    assert merged.ok
    assert merged.frontmatter["replaces"] == ["archive/a-tests.md", "archive/b-tests.md"]
    assert [e.filename for e in store.index_entries()] == ["deploy.md", "run-tests.md"]
    assert {(e.original, e.successor) for e in store.archive_entries()} == {
        ("a-tests.md", "run-tests.md"),
        ("b-tests.md", "run-tests.md"),
    }
    assert store.usage()["run-tests.md"] == {"count": 3, "last_used": T0 + DAY}
    assert not staging.exists()
    assert load_state(store.root, clock()).last_dream == clock()

    result = restore(store, "run-tests.md")
    assert sorted(live for _, live in result.restored) == ["a-tests.md", "b-tests.md"]
    after = live_files(store)
    for name in ("a-tests.md", "b-tests.md", "deploy.md"):
        assert after[name] == before[name]  # byte for byte
    assert sorted(store.index_text().splitlines()) == sorted(index_before.splitlines())
    assert not store.exists("run-tests.md")


def test_a_rewrite_in_place_keeps_the_old_version_restorable(tmp_path, fake_server, store, clock, staging):
    store.write(
        "vague.md",
        name="Notes",
        type="reference",
        description="misc notes",
        body="Dashboards live at grafana.internal/billing.",
    )
    old = (store.root / "vague.md").read_bytes()
    better = (
        "---\nname: Billing dashboards\ndescription: Where the billing Grafana dashboards "
        "live (grafana.internal/billing)\ntype: reference\n---\n\n"
        "Dashboards live at grafana.internal/billing.\n"
    )
    fake_server.on(Reply.tool("Read", {"file_path": str(store.root / "vague.md")}), purpose="dream")
    fake_server.on(Reply.tool("Write", {"file_path": str(staging / "vague.md"), "content": better}), purpose="dream")
    fake_server.on(Reply.text("Rewrote the description of vague.md."), purpose="dream")

    report = run_dream(tmp_path, fake_server, store)

    assert report.ok and report.written == ["vague.md"]
    live = parse_memory_text((store.root / "vague.md").read_text())
    assert live.frontmatter["description"].startswith("Where the billing Grafana")
    assert live.frontmatter["replaces"] == ["archive/vague.md"]
    assert (store.archive_dir / "vague.md").read_bytes() == old
    [line] = store.index_text().splitlines()
    assert line.startswith("- [Billing dashboards](vague.md) — Where the billing Grafana")
    restore(store, "vague")
    assert (store.root / "vague.md").read_bytes() == old


# --- failures leave every memory as it was ----------------------------------------------------
def test_a_failing_model_request_leaves_memory_untouched(tmp_path, fake_server, store, clock, staging):
    seed_duplicates(store, clock)
    before = live_files(store)
    fake_server.on(
        Reply.tool("Write", {"file_path": str(staging / "run-tests.md"), "content": MERGED}), purpose="dream"
    )
    fake_server.on(Reply.error(400, "prompt is broken"), purpose="dream")

    report = run_dream(tmp_path, fake_server, store)

    assert not report.ok and "model request failed" in report.error
    assert "Every memory was left as it was" in report.message()
    assert live_files(store) == before
    assert not staging.exists()
    state = load_state(store.root, clock())
    assert state.last_attempt == clock() and state.last_dream is None


def test_an_interrupted_dream_leaves_memory_untouched(tmp_path, fake_server, store, clock, staging):
    seed_duplicates(store, clock)
    before = live_files(store)
    fake_server.on(
        Reply.tool("Write", {"file_path": str(staging / "run-tests.md"), "content": MERGED}), purpose="dream"
    )
    fake_server.on(Reply.text("never sent").hang(), purpose="dream")

    async def go():
        agent = make_agent(tmp_path, fake_server)
        task = asyncio.create_task(dream(agent, store))
        while not (staging / "run-tests.md").exists():
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await agent.client.aclose()

    asyncio.run(asyncio.wait_for(go(), 30))
    assert live_files(store) == before
    assert not staging.exists()
    with dream_lock(store.root):  # released
        pass


def test_a_fork_cut_off_at_its_turn_limit_changes_nothing(tmp_path, fake_server, store, clock, staging):
    seed_duplicates(store, clock)
    before = live_files(store)
    fake_server.on(
        Reply.tool("Write", {"file_path": str(staging / "run-tests.md"), "content": MERGED}), purpose="dream"
    )
    fake_server.on(Reply.tool("Read", {"file_path": str(store.root / "deploy.md")}), purpose="dream")
    config = Config(cwd=tmp_path, project_root=tmp_path, settings={"memory": {"dreamMaxTurns": 2}})

    report = run_dream(tmp_path, fake_server, store, config)

    assert not report.ok and "after 2 turns" in report.error
    assert live_files(store) == before


def test_bad_staged_files_are_skipped_and_the_rest_committed(tmp_path, fake_server, store, clock, staging):
    seed_duplicates(store, clock)
    broken = "no frontmatter at all\n"
    ghost = MERGED.replace("[a-tests.md, b-tests.md]", "[ghost.md, a-tests.md]")
    fake_server.on(
        Reply.tools(
            [
                ("Write", {"file_path": str(staging / "broken.md"), "content": broken}),
                ("Write", {"file_path": str(staging / "run-tests.md"), "content": ghost}),
                ("Write", {"file_path": str(store.root / "deploy.md"), "content": "overwritten"}),
            ]
        ),
        purpose="dream",
    )
    fake_server.on(Reply.text("done"), purpose="dream")

    report = run_dream(tmp_path, fake_server, store)

    assert report.ok and report.written == ["run-tests.md"]
    assert [a.filename for a in report.archived] == ["a-tests.md"]
    assert any(s.startswith("broken.md: no frontmatter") for s in report.skipped)
    assert any("ghost.md, which is not a live memory" in s for s in report.skipped)
    assert "Needs VPN" in (store.root / "deploy.md").read_text()  # the live write was denied
    denied = fake_server.requests_for("dream")[1].body["messages"][-1]["content"][2]
    assert denied["is_error"] and "only write inside" in denied["content"]


def test_the_fork_policy_allows_only_the_staging_folder(store, staging, tmp_path):
    staging.mkdir(parents=True)
    policy = _fork_policy(staging, store.root, None, None)
    assert isinstance(policy.can_use_tool("Write", {"file_path": str(staging / "x.md"), "content": "ok"}), Allow)
    for target in (store.root / "MEMORY.md", store.root / "a.md", store.archive_dir / "a.md", tmp_path / "src.py"):
        assert isinstance(policy.can_use_tool("Write", {"file_path": str(target), "content": "x"}), Deny)
    secret = {"file_path": str(staging / "x.md"), "content": "key sk-ant-api03-" + "a" * 90}
    assert isinstance(policy.can_use_tool("Write", secret), Deny)
    assert isinstance(policy.can_use_tool("Read", {"file_path": str(store.index_path)}), Allow)


# --- daily logs ---------------------------------------------------------------------------------
def test_dream_distils_daily_logs_and_marks_them_consumed(tmp_path, fake_server, store, clock, staging):
    append_log(store.root, "The user deploys on Tuesdays only", clock, tz=UTC)
    append_log(store.root, "Staging needs the VPN", clock, tz=UTC)
    distilled = (
        "---\nname: Deploy days\ndescription: Deploys to production happen on Tuesdays "
        "only; staging needs the VPN\ntype: project\n---\n\nTuesdays only.\n"
        "**Why:** team rule\n**How to apply:** plan releases\n"
    )
    fake_server.on(
        Reply.tool("Write", {"file_path": str(staging / "deploy-days.md"), "content": distilled}), purpose="dream"
    )
    fake_server.on(Reply.text("Distilled 2 log entries into deploy-days.md."), purpose="dream")
    config = Config(cwd=tmp_path, project_root=tmp_path, settings={"memory": {"mode": "log"}})

    report = run_dream(tmp_path, fake_server, store, config)

    task = fake_server.requests_for("dream")[0].body["messages"][-1]["content"][-1]["text"]
    assert "## Daily-log entries not yet distilled" in task
    assert "The user deploys on Tuesdays only" in task
    assert report.ok and report.logs == ["logs/2026/09/2026-09-21.md"]
    assert "1 daily log(s) distilled" in report.message()
    assert store.exists("deploy-days.md")
    assert "replaces" not in parse_memory_text((store.root / "deploy-days.md").read_text()).frontmatter
    assert unconsumed_logs(store.root) == []
    assert "Staging needs the VPN" in (store.root / "logs/2026/09/2026-09-21.md").read_text()


# --- the auto-dream gate and the lock --------------------------------------------------------------
def test_the_gate_needs_24_hours_and_5_sessions():
    state = DreamState(first_seen=T0)
    assert "waiting for 24 h" in auto_dream_due(state, T0 + 23 * HOUR)
    assert "0 sessions" in auto_dream_due(state, T0 + 25 * HOUR)
    state.sessions = [f"s{i}" for i in range(5)]
    assert auto_dream_due(state, T0 + 25 * HOUR) is None
    state.last_dream = T0 + 25 * HOUR
    assert auto_dream_due(state, T0 + 30 * HOUR) is not None
    state.last_attempt, state.last_dream = T0 + 40 * HOUR, T0 + 25 * HOUR
    assert auto_dream_due(state, T0 + 50 * HOUR) is not None  # a failed try also waits 24 h
    assert auto_dream_due(state, T0 + 64 * HOUR) is None


def test_record_session_counts_each_session_once(store):
    for sid in ("a", "b", "a", "c"):
        state = record_session(store.root, sid, T0)
    assert state.sessions == ["a", "b", "c"]
    (store.root / ".dream" / "state.json").write_text("{broken")
    assert record_session(store.root, "d", T0 + 1).sessions == ["d"]  # rebuilt, logged


class FakeFork:
    """Stands in for run_fork: counts calls, optionally waits, answers with a short text."""

    def __init__(self, gate: asyncio.Event | None = None) -> None:
        self.calls = 0
        self.gate = gate

    async def __call__(self, parent, prompt, *, purpose, policy, max_turns) -> ForkResult:
        self.calls += 1
        if self.gate is not None:
            await self.gate.wait()
        return ForkResult(purpose, messages=[Message("assistant", [TextBlock("Nothing to do.")])])


def test_auto_dream_honours_its_gate_and_resets_it(store, clock):
    fork = FakeFork()
    config = Config(cwd=Path("."), project_root=Path("."))

    def session(sid: str):
        return asyncio.run(maybe_auto_dream(NO_PARENT, store, config, sid, clock=clock, run=fork))

    for i in range(4):
        clock.now = T0 + i * 10 * HOUR
        assert session(f"s{i}") is None  # too early and too few
    clock.now = T0 + 40 * HOUR
    report = session("s4")  # the fifth session, 40 h after the first one
    assert report is not None and report.ok and fork.calls == 1
    assert load_state(store.root, clock()).sessions == []
    clock.now += 30 * HOUR
    assert session("s5") is None and fork.calls == 1  # 24 h passed, but 1 session only
    off = Config(cwd=Path("."), project_root=Path("."), settings={"memory": {"autoDream": False}})
    assert asyncio.run(maybe_auto_dream(NO_PARENT, store, off, "x", clock=clock, run=fork)) is None
    assert DreamSettings.from_config(off).auto_dream is False


def test_two_sessions_never_dream_at_once(store, clock):
    state_ready = DreamState(first_seen=T0 - 2 * DAY, sessions=[f"s{i}" for i in range(5)])
    (store.root / ".dream").mkdir(parents=True)
    (store.root / ".dream" / "state.json").write_text(json.dumps(state_ready.__dict__))
    gate = asyncio.Event()
    fork = FakeFork(gate)
    config = Config(cwd=Path("."), project_root=Path("."))

    async def go():
        first = asyncio.create_task(maybe_auto_dream(NO_PARENT, store, config, "a", clock=clock, run=fork))
        await asyncio.sleep(0.05)
        second = await maybe_auto_dream(NO_PARENT, store, config, "b", clock=clock, run=fork)
        with pytest.raises(DreamBusy, match="another claude-mini session"):
            await dream(NO_PARENT, store, run=fork)
        gate.set()
        return await first, second

    first, second = asyncio.run(go())
    assert first is not None and second is None and fork.calls == 1
    assert asyncio.run(maybe_auto_dream(NO_PARENT, store, config, "c", clock=clock, run=fork)) is None
    assert fork.calls == 1  # the gate was re-checked: the dream just ran


def _hold_lock(root: str, ready, release) -> None:
    with dream_lock(Path(root)):
        ready.set()
        release.wait(30)


def test_the_lock_excludes_another_process_and_dies_with_it(store):
    ctx = multiprocessing.get_context("fork")
    ready, release = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(str(store.root), ready, release))
    proc.start()
    assert ready.wait(30)
    with pytest.raises(DreamBusy, match=f"process {proc.pid}"), dream_lock(store.root):
        pass
    proc.kill()
    proc.join(30)
    with dream_lock(store.root):  # the OS released the dead holder's lock
        pass


# --- the /dream command (claude_mini/ui/dream_commands.py) ------------------------------------------
def test_dream_command_reports_and_rebuilds_the_prompt(tmp_path, fake_server, store, clock, staging):
    from claude_mini.ui.dream_commands import run_dream_command, status_lines

    seed_duplicates(store, clock)
    script_merge(fake_server, store, staging)
    said: list[str] = []
    rebuilt: list[bool] = []

    async def go():
        agent = make_agent(tmp_path, fake_server)
        runtime = SimpleNamespace(
            agent=agent, store=store, config=None, policy=agent.policy, rebuild_prompt=lambda: rebuilt.append(True)
        )
        await run_dream_command(runtime, said.append)
        with dream_lock(store.root):
            await run_dream_command(runtime, said.append)
        await agent.client.aclose()

    asyncio.run(go())
    assert said[0].startswith("Dreaming:")
    assert said[1].startswith("Merged a-tests.md and b-tests.md")
    assert said[2].startswith("Dream done: 1 written, 2 archived")
    assert said[3] == "The system prompt was rebuilt with the new MEMORY.md." and rebuilt == [True]
    assert "another claude-mini session is consolidating" in said[-1]
    status = status_lines(store, None, clock.now + HOUR)
    assert status[0] == f"Last dream: {'2026-09-23T14:13:20Z'}; sessions since: 0."
    assert "waiting for 24 h" in status[1]


def test_a_memory_changed_while_dreaming_is_kept_and_pins_survive_a_merge(store, clock, staging):
    seed_duplicates(store, clock)
    store.write(
        "pinned-deploy.md",
        name="Deploy",
        type="project",
        body="Use the VPN.",
        description="Deploy billing to staging, pinned by the user on purpose",
        extra_frontmatter={"pinned": True},
    )
    pinned_merge = (
        "---\nname: Deploying billing\ndescription: Deploy billing to staging with "
        "make deploy ENV=staging over the VPN\ntype: project\n"
        "replaces: [deploy.md, pinned-deploy.md]\n---\n\nmake deploy, VPN first.\n"
    )

    async def fork(parent, prompt, *, purpose, policy, max_turns) -> ForkResult:
        (staging / "run-tests.md").write_text(MERGED)
        (staging / "deploy-billing.md").write_text(pinned_merge)
        clock.now += 60
        store.write(
            "b-tests.md",
            name="Pytest before push",
            type="feedback",
            body="now -x -q -n4",
            description="Always run pytest -x -q -n4 before a push to main (changed)",
        )
        return ForkResult(purpose, messages=[Message("assistant", [TextBlock("Merged.")])])

    report = asyncio.run(dream(NO_PARENT, store, run=fork))

    assert report.ok and sorted(report.written) == ["deploy-billing.md", "run-tests.md"]
    assert "-n4" in (store.root / "b-tests.md").read_text()  # the newer version stays live
    assert any(s.startswith("b-tests.md: it changed while dreaming") for s in report.skipped)
    merged = parse_memory_text((store.root / "run-tests.md").read_text()).frontmatter
    assert merged["replaces"] == ["archive/a-tests.md"]
    billing = parse_memory_text((store.root / "deploy-billing.md").read_text()).frontmatter
    assert billing["pinned"] is True
    assert billing["replaces"] == ["archive/deploy.md", "archive/pinned-deploy.md"]
