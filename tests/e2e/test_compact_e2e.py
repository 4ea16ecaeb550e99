"""End to end: auto-compaction through the fake server with a small context window."""

from __future__ import annotations

import json
import re

from claude_mini.agent.fork import strip_cache_control
from claude_mini.base import paths
from tests.e2e.conftest import trust_folder
from tests.fake_anthropic import Reply

SUMMARY = "<analysis>private thinking</analysis>\n<summary>SUMMARY-TEXT: the user wants big.txt summarised.</summary>"


def _setup(repo, window=20_000):
    (repo / ".claude" / "rules").mkdir(parents=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"contextWindow": window}))
    trust_folder(paths.home_dir(), repo)  # untrusted, contextWindow is ignored
    (repo / ".claude" / "rules" / "txt.md").write_text('---\npaths: "**/*.txt"\n---\nTXT-RULE: keep lines short.\n')
    (repo / "big.txt").write_text("".join(f"line {i:05d} of the big file with some words\n" for i in range(1500)))


def test_auto_compact_extracts_then_summarises_and_restores(run_cli, fake_server, repo):
    _setup(repo)
    fake_server.on(Reply.text("Nothing worth saving."), purpose="extract", times=None)
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    fake_server.queue(Reply.tool("Read", {"file_path": "big.txt"}), Reply.text("done"))
    result = run_cli("-p", "please summarise big.txt")
    assert result.returncode == 0, result.stderr
    assert "Compacting the conversation (over the auto-compact threshold of 12,500: " in result.stderr
    assert "Compacted" in result.stderr
    purposes = [r.purpose for r in fake_server.requests]
    assert purposes[:4] == ["main", "extract", "compact", "main"]
    first_main, _, compact_request, second_main = fake_server.requests[:4]
    assert compact_request.headers["x-claude-mini-purpose"] == "compact"
    assert compact_request.body["system"] == first_main.body["system"]
    assert compact_request.body["tools"] == first_main.body["tools"]
    sent = strip_cache_control(compact_request.body["messages"])
    assert sent[0] == strip_cache_control(first_main.body["messages"][0])
    assert sent[1]["content"][0]["name"] == "Read" and sent[2]["content"][0]["type"] == "tool_result"
    assert "detailed summary" in sent[-1]["content"][-1]["text"]
    messages = second_main.body["messages"]
    assert len(messages) == 1 and messages[0]["role"] == "user"
    text = json.dumps(messages[0])
    assert "SUMMARY-TEXT" in text and "private thinking" not in text
    assert "please summarise big.txt" in text  # the latest request, verbatim
    assert "line 00000 of the big file" in text and "[... cut" in text  # restored, within budget
    assert "TXT-RULE" in text  # the rule that was active is re-attached
    assert len(text) < 40_000


def test_a_rule_re_attached_by_compaction_is_not_attached_again(run_cli, fake_server, repo):
    _setup(repo, window=24_000)  # room after the compaction for one more (short) read
    fake_server.on(Reply.text("Nothing worth saving."), purpose="extract", times=None)
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    fake_server.queue(
        Reply.tool("Read", {"file_path": "big.txt"}),
        Reply.tool("Read", {"file_path": "big.txt", "limit": 3}),
        Reply.text("done"),
    )
    result = run_cli("-p", "please summarise big.txt")
    assert result.returncode == 0, result.stderr
    assert len(fake_server.requests_for("compact")) == 1
    last = json.dumps(fake_server.requests_for("main")[-1].body["messages"])
    assert last.count("TXT-RULE") == 1  # in the compaction's restore, not again on the next read


def test_a_small_window_compacts_only_when_nearly_full_and_ends_under_its_threshold(run_cli, fake_server, repo):
    _setup(repo, window=16_000)  # a local model's size: threshold 16,000 - 4,000 - 2,000
    fake_server.on(Reply.text("Nothing worth saving."), purpose="extract", times=None)
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    fake_server.queue(Reply.text("hi"))
    assert run_cli("-p", "hello").returncode == 0
    assert fake_server.requests_for("compact") == []  # a short conversation is left alone
    fake_server.queue(Reply.tool("Read", {"file_path": "big.txt"}), Reply.text("done"))
    result = run_cli("-p", "please summarise big.txt")
    assert result.returncode == 0, result.stderr
    found = re.search(r"Compacted: ([\d,]+) → ([\d,]+) tokens", result.stderr)
    before, after = (int(x.replace(",", "")) for x in found.groups())
    assert before > 10_000 > after
    assert len(fake_server.requests_for("compact")) == 1


def test_a_40k_window_half_full_is_not_compacted(run_cli, fake_server, repo):
    _setup(repo, window=40_000)  # threshold 25,000 (it was 7,000, below a 36k window's 22,500)
    fake_server.on(Reply.text("Nothing worth saving."), purpose="extract", times=None)
    fake_server.queue(Reply.tool("Read", {"file_path": "big.txt"}), Reply.text("done"))
    result = run_cli("-p", "please summarise big.txt")
    assert result.returncode == 0, result.stderr
    assert fake_server.requests_for("compact") == [] and "Compact" not in result.stderr
    assert len(json.dumps(fake_server.requests_for("main")[-1].body)) > 60_000  # over 15,000 tokens


def test_resume_after_compaction_starts_from_the_boundary(run_cli, fake_server, repo, isolated_env):
    _setup(repo)
    fake_server.on(Reply.text("Nothing."), purpose="extract", times=None)
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    fake_server.queue(Reply.tool("Read", {"file_path": "big.txt"}), Reply.text("done"))
    assert run_cli("-p", "please summarise big.txt").returncode == 0
    transcript = next(isolated_env.home.glob("projects/*/*.jsonl"))
    kinds = [json.loads(line)["type"] for line in transcript.read_text().splitlines()]
    assert "compact_boundary" in kinds
    fake_server.queue(Reply.text("continuing"))
    resumed = run_cli("-c", "-p", "what next?")
    assert resumed.returncode == 0 and resumed.stdout.strip() == "continuing"
    messages = fake_server.requests_for("main")[-1].body["messages"]
    assert "SUMMARY-TEXT" in json.dumps(messages[0])
    assert messages[-1]["content"][-1]["text"].startswith("what next?") or "what next?" in json.dumps(messages[-1])


def test_three_failures_trip_the_breaker(run_cli, fake_server, repo):
    _setup(repo)
    fake_server.on(Reply.text("Nothing."), purpose="extract", times=None)
    fake_server.on(Reply.text("<analysis>only thinking, no summary</analysis>"), purpose="compact", times=None)
    read = Reply.tool("Read", {"file_path": "big.txt"})
    fake_server.queue(read, read, read, read, read, Reply.text("done"))
    result = run_cli("-p", "read it many times")
    assert result.returncode == 0, result.stderr
    assert len(fake_server.requests_for("compact")) == 3
    assert "Auto-compact is off for this session" in result.stderr
    assert len(fake_server.requests_for("main")) == 6


def test_too_long_compaction_drops_the_oldest_round(run_cli, fake_server, repo):
    _setup(repo)
    fake_server.on(Reply.text("Nothing."), purpose="extract", times=None)
    fake_server.queue(Reply.text("first answer"))
    assert run_cli("-p", "first small question").returncode == 0
    fake_server.on(Reply.error(400, "prompt is too long: 250000 tokens > 200000 maximum"), purpose="compact", times=1)
    fake_server.on(Reply.text(SUMMARY), purpose="compact", times=None)
    fake_server.queue(Reply.tool("Read", {"file_path": "big.txt"}), Reply.text("done"))
    result = run_cli("-c", "-p", "now summarise big.txt")
    assert result.returncode == 0, result.stderr
    too_long, ok = fake_server.requests_for("compact")[:2]
    assert too_long.body["messages"][0]["content"][0]["text"] == "first small question"
    assert ok.body["messages"][0]["content"][0]["text"] == "now summarise big.txt"
    assert len(ok.body["messages"]) == len(too_long.body["messages"]) - 2
