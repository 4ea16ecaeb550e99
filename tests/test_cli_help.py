"""The fast --help text must be what typer renders for the current flags."""

from pathlib import Path

from claude_mini.cli import render_help


def test_saved_help_is_current():
    saved = (Path(__file__).resolve().parent.parent / "claude_mini" / "cli_help.txt").read_text()
    assert saved == render_help(), "flags changed: run `uv run python scripts/update_help.py`"
