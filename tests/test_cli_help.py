"""The fast --help text must be what typer renders for the current flags."""

import re
from pathlib import Path

from typer.testing import CliRunner

from claude_mini.cli import render_help
from claude_mini.subcommands.app import sub_app


def test_saved_help_is_current():
    saved = (Path(__file__).resolve().parent.parent / "claude_mini" / "cli_help.txt").read_text()
    assert saved == render_help(), "flags changed: run `uv run python scripts/update_help.py`"


def test_no_help_shows_python_types():
    runner = CliRunner()
    for args in (["memory", "add"], ["memory", "forget"], ["mcp", "add"], ["context"], ["hooks", "list"]):
        out = runner.invoke(sub_app, [*args, "--help"], prog_name="claude-mini").output
        assert "Options:" in out and not re.search(r"<(list\[)?(str|int|path)\]?>", out), (args, out)
    add = runner.invoke(sub_app, ["memory", "add", "--help"]).output
    assert "-t, --type TYPE" in add and "TEXT..." in add  # values named as the root names them
    assert "<" not in render_help().split("Options:")[0].split("Arguments:")[1]
