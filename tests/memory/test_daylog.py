"""Daily-log mode: append-only logs, their lock, the log-mode policy, consumption markers."""

from __future__ import annotations

import multiprocessing
import os
from datetime import UTC
from pathlib import Path

import pytest

from claude_mini.memory.maintenance.daylog import (
    LogModeGuard,
    append_log,
    bullets_from_reply,
    format_entry,
    log_path,
    mark_consumed,
    unconsumed_logs,
)
from claude_mini.permissions import Allow, Deny, ExtractionPolicy, PolicyChain

T0 = 1_790_000_000.0  # 2026-09-21 14:13:20 UTC
DAY = 86_400.0


def clock_at(when: float):
    return lambda: when


def test_append_creates_the_day_file_with_a_heading_and_timestamped_bullets(tmp_path: Path):
    path = append_log(tmp_path, "The user prefers rebase over merge.", clock_at(T0), tz=UTC)
    assert path == tmp_path / "logs" / "2026" / "09" / "2026-09-21.md"
    append_log(tmp_path, "- staging needs the VPN\n- deploy with make deploy", clock_at(T0 + 60), tz=UTC)
    assert path.read_text() == (
        "# 2026-09-21\n\n"
        "- 14:13 The user prefers rebase over merge.\n"
        "- 14:14 staging needs the VPN\n"
        "- 14:14 deploy with make deploy\n"
    )
    nextday = append_log(tmp_path, "new day", clock_at(T0 + DAY), tz=UTC)
    assert nextday.name == "2026-09-22.md" and path.read_text().count("\n") == 5


def test_format_entry_keeps_multi_line_text_on_one_bullet_and_drops_empty_text():
    assert format_entry("first line\nsecond line", T0, UTC) == "- 14:13 first line second line\n"
    assert format_entry("  \n", T0, UTC) == ""
    assert "<!--" not in format_entry("<!-- dreamed through byte 9 at x -->", T0, UTC)


def test_append_adds_a_missing_final_newline_first(tmp_path: Path):
    path = log_path(tmp_path, T0, UTC)
    path.parent.mkdir(parents=True)
    path.write_text("# 2026-09-21\n\n- 09:00 typed by hand")
    append_log(tmp_path, "after", clock_at(T0), tz=UTC)
    assert path.read_text().endswith("- 09:00 typed by hand\n- 14:13 after\n")


def _append_many(root: str, tag: str, count: int, barrier) -> None:
    barrier.wait()
    for i in range(count):
        append_log(Path(root), f"{tag} line {i}", clock_at(T0), tz=UTC)


def test_two_processes_appending_at_once_lose_no_line(tmp_path: Path):
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), tag, 200, barrier)) for tag in ("p", "q")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    lines = log_path(tmp_path, T0, UTC).read_text().splitlines()
    assert lines[:2] == ["# 2026-09-21", ""]  # one heading, not two
    bullets = lines[2:]
    assert len(bullets) == 400
    for tag in ("p", "q"):
        assert [b for b in bullets if f" {tag} line " in b] == [
            f"- 14:13 {tag} line {i}" for i in range(200)
        ]  # each writer's order kept


def test_unconsumed_logs_and_markers(tmp_path: Path):
    append_log(tmp_path, "old fact", clock_at(T0 - DAY), tz=UTC)
    append_log(tmp_path, "today fact", clock_at(T0), tz=UTC)
    first = unconsumed_logs(tmp_path)
    assert [s.relative(tmp_path) for s in first] == ["logs/2026/09/2026-09-20.md", "logs/2026/09/2026-09-21.md"]
    assert "old fact" in first[0].text and "today fact" in first[1].text
    append_log(tmp_path, "written while dreaming", clock_at(T0 + 60), tz=UTC)
    mark_consumed(first, clock_at(T0 + 120))
    second = unconsumed_logs(tmp_path)
    assert len(second) == 1
    assert "written while dreaming" in second[0].text and "today fact" not in second[0].text
    assert "dreamed through" not in second[0].text
    mark_consumed(second, clock_at(T0 + 180))
    assert unconsumed_logs(tmp_path) == []
    assert "- 14:13 old fact" in log_path(tmp_path, T0 - DAY, UTC).read_text()  # never rewritten


def test_unconsumed_logs_respect_the_budget_at_line_ends(tmp_path: Path):
    for i in range(50):
        append_log(tmp_path, f"fact number {i} " + "x" * 40, clock_at(T0), tz=UTC)
    [piece] = unconsumed_logs(tmp_path, budget=500)
    assert piece.end - piece.start <= 500 and piece.text.endswith("x")
    mark_consumed([piece], clock_at(T0))
    assert "fact number 0 " not in unconsumed_logs(tmp_path)[0].text


def test_bullets_from_reply():
    reply = "Here is what I found:\n- uses uv, not pip\n* CI runs on Fridays\nno bullet"
    assert bullets_from_reply(reply) == ["uses uv, not pip", "CI runs on Fridays"]


# --- the log-mode policy -------------------------------------------------------------------
@pytest.fixture
def policy(tmp_path: Path) -> PolicyChain:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [A](a.md) — a\n")
    inner = ExtractionPolicy(memory, cwd=tmp_path)
    chain = PolicyChain(inner, [LogModeGuard(memory, clock_at(T0), tz=UTC, cwd=tmp_path)])
    chain.memory_dir = Path(os.path.realpath(memory))  # type: ignore[attr-defined]
    return chain


def test_log_mode_denies_index_and_topic_writes(policy: PolicyChain):
    memory = policy.memory_dir
    for tool, path in (
        ("Write", "MEMORY.md"),
        ("Edit", "MEMORY.md"),
        ("Write", "topic.md"),
        ("Write", "logs/2026/09/2026-09-20.md"),
    ):
        decision = policy.can_use_tool(
            tool, {"file_path": str(memory / path), "content": "x", "old_string": "a", "new_string": "b"}
        )
        assert isinstance(decision, Deny) and "daily-log mode" in decision.reason
    assert isinstance(policy.can_use_tool("Read", {"file_path": str(memory / "MEMORY.md")}), Allow)


def test_log_mode_allows_only_appends_to_todays_log(policy: PolicyChain, tmp_path: Path):
    today = policy.memory_dir / "logs" / "2026" / "09" / "2026-09-21.md"
    new = {"file_path": str(today), "content": "# 2026-09-21\n\n- 14:13 a\n"}
    assert isinstance(policy.can_use_tool("Write", new), Allow)
    append_log(policy.memory_dir, "first", clock_at(T0), tz=UTC)
    current = today.read_text()
    assert isinstance(
        policy.can_use_tool("Write", {"file_path": str(today), "content": current + "- 14:20 b\n"}), Allow
    )
    assert isinstance(policy.can_use_tool("Write", {"file_path": str(today), "content": "- 14:20 b\n"}), Deny)
    last = current.splitlines()[-1] + "\n"
    append = {"file_path": str(today), "old_string": last, "new_string": last + "- 14:21 c\n"}
    assert isinstance(policy.can_use_tool("Edit", append), Allow)
    rewrite = {"file_path": str(today), "old_string": "first", "new_string": "changed"}
    assert isinstance(policy.can_use_tool("Edit", rewrite), Deny)
    relative = {"file_path": "memory/logs/2026/09/2026-09-21.md", "content": current + "- x\n"}
    assert isinstance(policy.can_use_tool("Write", relative), Allow)


def test_log_mode_leaves_other_decisions_to_the_wrapped_policy(policy: PolicyChain, tmp_path: Path):
    outside = policy.can_use_tool("Write", {"file_path": str(tmp_path / "src.py"), "content": ""})
    assert isinstance(outside, Deny) and "only write inside" in outside.reason  # ExtractionPolicy
    assert policy.base.base is None  # the chain's base is the ExtractionPolicy, with no session rules
