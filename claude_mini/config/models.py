"""The model ids a session starts with, and the families a file's `model:` may name."""

from __future__ import annotations

DEFAULT_MODEL = "claude-sonnet-4-6"
DEFAULT_SMALL_MODEL = "claude-haiku-4-5"
# The families a command's, skill's or agent file's `model:`, `--model`, the `model` setting and
# `/model` may name, as Claude Code's do; each maps to the family's current id.
MODEL_ALIASES = {"haiku": DEFAULT_SMALL_MODEL, "sonnet": DEFAULT_MODEL, "opus": "claude-opus-4-6"}


def model_named(name: str | None) -> str | None:
    """The model id a name stands for: an alias's id (`opus`, `Sonnet`), an id as written, None for none."""
    if not name:
        return None
    return MODEL_ALIASES.get(name.strip().lower(), name)


def alias_of(model: str) -> str | None:
    """The alias that names `model`, if one does (shown beside the id in /model)."""
    return next((alias for alias, target in MODEL_ALIASES.items() if target == model), None)


DEFAULT_MAX_TOKENS = 32000
