"""Regenerate claude_mini/cli_help.txt, the --help text printed without importing typer."""

from pathlib import Path

from claude_mini.cli import render_help

target = Path(__file__).resolve().parent.parent / "claude_mini" / "cli_help.txt"
target.write_text(render_help())
print(f"wrote {target}")
