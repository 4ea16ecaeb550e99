"""End to end: a Read deny rule in the project settings holds for the Grep and Glob tools.

The model asks for searches that would reach `.env`; the tool results it gets
must carry neither the file's name nor its contents, only a count of skipped files.
"""

from __future__ import annotations

import json

from tests.e2e.conftest import text_of, tool_results
from tests.fake_anthropic import Reply

SECRET = "DB_PASSWORD=hunter2-e2e"


def _deny_env(repo) -> None:
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(.env)"]}}))
    (repo / ".env").write_text(SECRET + "\n")
    (repo / "config").mkdir()
    (repo / "config" / ".env").write_text(SECRET + "\n")
    (repo / "settings.py").write_text("DB_PASSWORD = getenv('DB_PASSWORD')\n")


def test_grep_in_every_mode_skips_the_denied_file(run_cli, fake_server, repo):
    _deny_env(repo)
    fake_server.queue(
        Reply.tool("Grep", {"pattern": "DB_PASSWORD", "glob": "**", "output_mode": "content"}),
        Reply.tool("Grep", {"pattern": "hunter2", "glob": "**"}),
        Reply.tool("Grep", {"pattern": "DB_PASSWORD", "glob": ".env", "output_mode": "count"}),
        Reply.tool("Grep", {"pattern": "hunter2", "path": "config", "glob": "**"}),
        Reply.text("done"),
    )
    result = run_cli("-p", "find the database password")
    assert result.returncode == 0, result.stderr
    results = [text_of(block) for block in tool_results(fake_server)]
    assert len(results) == 4
    for text in results:
        assert "hunter2" not in text and ".env" not in text
        assert "skipped because Read deny rules cover" in text
    assert "settings.py" in results[0]


def test_glob_lists_no_denied_name(run_cli, fake_server, repo):
    _deny_env(repo)
    fake_server.queue(
        Reply.tool("Glob", {"pattern": "**/.env"}),
        Reply.tool("Glob", {"pattern": "**/*"}),
        Reply.tool("Glob", {"pattern": "config/.*"}),
        Reply.text("done"),
    )
    assert run_cli("-p", "list the env files").returncode == 0
    results = [text_of(block) for block in tool_results(fake_server)]
    assert len(results) == 3
    assert results[0].startswith("No files found") and "2 files were skipped" in results[0]
    assert "settings.py" in results[1] and ".env" not in "".join(results)
    assert "1 file was skipped" in results[2]


def test_without_a_deny_rule_the_file_is_found(run_cli, fake_server, repo):
    """The control: the same search finds .env when no rule denies it."""
    (repo / ".env").write_text(SECRET + "\n")
    fake_server.queue(Reply.tool("Grep", {"pattern": "hunter2", "glob": "**"}), Reply.text("done"))
    assert run_cli("-p", "find it").returncode == 0
    [found] = [text_of(block) for block in tool_results(fake_server)]
    assert found.endswith("/.env") and "Read deny rules" not in found
