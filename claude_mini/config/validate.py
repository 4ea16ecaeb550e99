"""Reading settings one key at a time: each bad value becomes its default and one named problem."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any


class SettingsReader:
    """Reads settings one key at a time; each bad value becomes its default and one problem."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.settings = settings
        self.problems: list[str] = []

    def group(self, name: str) -> Mapping[str, Any]:
        """The `name` object (`recall`, `memory`); anything else counts as empty, said once."""
        value = self.settings.get(name, {})
        if isinstance(value, Mapping):
            return value
        self.problems.append(settings_problem(name, "an object", value, "the defaults"))
        return {}

    def value(
        self,
        group: Mapping[str, Any],
        dotted: str,
        default: Any,
        what: str,
        valid: Callable[[Any], bool],
        *,
        bad: Any = None,
        shown: str | None = None,
    ) -> Any:
        """`group`'s value for the last part of `dotted` if `valid`, else `bad` (or `default`).

        `bad` is the value a wrong setting falls back to when it differs from the unset
        default; `shown` says the default in words when it is not a value.
        """
        key = dotted.rsplit(".", 1)[-1]
        if key not in group:
            return default
        value = group[key]
        if valid(value):
            return value
        fallback = default if bad is None else bad
        self.problems.append(settings_problem(dotted, what, value, shown or _shown_default(fallback)))
        return fallback


def settings_problem(key: str, what: str, value: Any, default: str) -> str:
    """The one line naming a bad setting: `<key> must be <what> (got <value>); using <default>.`"""
    got = repr(value)
    got = got if len(got) <= 120 else got[:119] + "…"
    return f"{key} must be {what} (got {got}); using {default}."


def _shown_default(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value) if isinstance(value, str) else str(value)


def is_number(value: Any) -> bool:
    """A finite int or float (a bool is neither here)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def number_at_least(minimum: float) -> Callable[[Any], bool]:
    """A check for a number >= `minimum`."""
    return lambda value: is_number(value) and value >= minimum


def whole_at_least(minimum: int) -> Callable[[Any], bool]:
    """A check for a whole number >= `minimum`."""
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def positive_number(value: Any) -> bool:
    """A number > 0."""
    return is_number(value) and value > 0


def is_bool(value: Any) -> bool:
    """true or false, never 0 or 1."""
    return isinstance(value, bool)
