"""Layer 5 pieces that need no model: thresholds, summary cleaning, round dropping, file restore."""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini.config import load_config
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from claude_mini.memory.compact import compactor
from claude_mini.memory.compact.budget import compact_threshold, context_window
from claude_mini.memory.compact.compactor import clean_summary, drop_oldest_round, latest_user_request, restore_files


@pytest.fixture
def config(tmp_path):
    return load_config(tmp_path)


def test_default_threshold_leaves_room_for_output_and_margin(config):
    assert context_window(config, "claude-sonnet-4-6") == 200_000
    assert compact_threshold(config, 200_000, 32_000) == 200_000 - 20_000 - 13_000
    assert compact_threshold(config, 200_000, 8_000) == 200_000 - 8_000 - 13_000


def test_a_small_window_keeps_proportional_reserves(config):
    assert compact_threshold(config, 40_000, 32_000) == 25_000  # was 7,000: reserves capped at 3/8
    assert compact_threshold(config, 36_000, 32_000) == 22_500
    assert compact_threshold(config, 8_192, 32_000) == 8_192 - 3_072
    assert compact_threshold(config, 8_192, 1_000) == 8_192 - 3_072
    assert compact_threshold(config, 100_000, 1_000) == 100_000 - 1_000 - 13_000


SWEEP = [*range(1, 3_000), *range(3_000, 300_001, 97)]  # every small window, then a stride


@pytest.mark.parametrize("max_tokens", [1_000, 8_000, 32_000])
def test_threshold_is_monotonic_and_at_least_half_the_window(config, max_tokens):
    previous = 0
    for window in SWEEP:
        threshold = compact_threshold(config, window, max_tokens)
        assert threshold >= previous, (window, threshold, previous)
        assert window // 2 <= threshold <= window
        previous = threshold


def test_a_user_fraction_may_go_below_half_and_stays_monotonic(config):
    config.settings["autoCompactThreshold"] = 0.3
    assert compact_threshold(config, 40_000, 32_000) == 12_000
    config.settings["autoCompactThreshold"] = 0.95
    assert compact_threshold(config, 8_000, 32_000) == 6_000  # room for the answer: a quarter
    thresholds = [compact_threshold(config, w, 32_000) for w in SWEEP]
    assert thresholds == sorted(thresholds)


def test_the_status_line_warns_only_near_the_threshold(config):
    from types import SimpleNamespace

    from claude_mini.ui.context_usage import compact_warning

    def warning(window: int, used: int) -> str | None:
        config.settings["contextWindow"] = window
        threshold = compact_threshold(config, window, 32_000)
        compactor = SimpleNamespace(auto_enabled=True, threshold=threshold, window=window, used=lambda: used)
        return compact_warning(SimpleNamespace(compactor=compactor))  # type: ignore[arg-type]

    assert warning(16_000, 2_000) is None  # 10,000 to go in a 16k window: not nearly full
    assert warning(16_000, 9_000) == "auto-compact in 1k"
    assert warning(200_000, 140_000) is None
    assert warning(200_000, 150_000) == "auto-compact in 17k"


def test_the_clients_window_counts_when_no_setting_says(config):
    class Local:
        context_window = 8_192

    assert context_window(config, "local", Local()) == 8_192
    assert context_window(config, "claude-sonnet-4-6", object()) == 200_000
    config.settings["contextWindow"] = 30_000
    assert context_window(config, "local", Local()) == 30_000


def test_threshold_setting_moves_it_down_and_up(config, monkeypatch):
    config.settings["autoCompactThreshold"] = 0.5
    assert compact_threshold(config, 200_000, 32_000) == 100_000
    config.settings["autoCompactThreshold"] = 0.95
    assert compact_threshold(config, 200_000, 32_000) == 180_000  # above the default, room for output kept
    monkeypatch.setenv("CLAUDE_MINI_AUTOCOMPACT_PCT", "60")
    assert compact_threshold(config, 200_000, 32_000) == 120_000


def test_context_window_setting_overrides(config):
    config.settings["contextWindow"] = 30_000
    assert context_window(config, "claude-sonnet-4-6") == 30_000


def test_clean_summary_removes_analysis():
    assert clean_summary("<analysis>private</analysis>\n<summary>\nKept.\n</summary>") == "Kept."
    assert clean_summary("Plain summary.") == "Plain summary."
    assert clean_summary("<analysis>only thinking</analysis>") == ""
    assert clean_summary("<analysis>never closed") == ""


def _round(n: int) -> list[Message]:
    return [
        Message.user(f"request {n}"),
        Message("assistant", [ToolUseBlock(f"t{n}", "Read", {"file_path": "x"})]),
        Message("user", [ToolResultBlock(f"t{n}", "data")]),
        Message("assistant", [TextBlock(f"answer {n}")]),
    ]


def test_drop_oldest_round_keeps_whole_rounds():
    messages = _round(1) + _round(2) + _round(3)
    shorter = drop_oldest_round(messages)
    assert shorter[0].text == "request 2" and len(shorter) == 8
    assert drop_oldest_round(_round(1)) is None


def test_latest_user_request_skips_tool_results_and_reminders():
    messages = _round(1) + [
        Message("user", [TextBlock("fix the bug"), TextBlock("<system-reminder>\nx\n</system-reminder>")])
    ]
    messages += _round(9)[1:]
    assert latest_user_request(messages) == "fix the bug"


def test_restore_files_newest_first_within_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(compactor, "RESTORE_FILE_TOKENS", 100)
    files = {}
    for i in range(7):
        path = tmp_path / f"f{i}.txt"
        path.write_text(f"file {i}\n" * (10 if i != 5 else 200))
        files[path] = 0.0
    (tmp_path / "f6.txt").unlink()  # deleted since it was read: skipped
    (tmp_path / "f4.txt").write_bytes(b"\0binary")  # became binary: skipped
    restored = restore_files(files)
    names = [Path(p).name for p, _ in restored]
    assert names == ["f5.txt", "f3.txt", "f2.txt", "f1.txt", "f0.txt"]
    assert "[... cut" in restored[0][1] and len(restored[0][1]) < 500
    small = restore_files(files, total_budget=30)
    assert [Path(p).name for p, _ in small] == ["f5.txt"] and len(small[0][1]) < 200
