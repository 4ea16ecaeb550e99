"""The model ids a session starts with, and the families a file's `model:` may name."""

from __future__ import annotations

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_SMALL_MODEL = "claude-haiku-4-5"
# The families a command's, skill's or agent file's `model:` may name, as Claude Code's files do.
MODEL_ALIASES = {"haiku": DEFAULT_SMALL_MODEL, "sonnet": DEFAULT_MODEL, "opus": "claude-opus-4-6"}


def model_named(name: str | None) -> str | None:
    """The model id a file's `model:` names: an alias's id, an id as written, None for none."""
    return MODEL_ALIASES.get(name.lower(), name) if name else None


DEFAULT_MAX_TOKENS = 32000
