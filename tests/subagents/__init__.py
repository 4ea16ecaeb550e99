"""Tests of claude_mini.subagents."""
