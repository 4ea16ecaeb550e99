"""JSON text as settings files hold it: parsed without raising, and values named in one-line messages."""

from __future__ import annotations

import json
from typing import Any

from claude_mini.base.text import clip


class _DuplicateKey(ValueError):
    """A JSON object names one key twice (json.loads would keep the last silently)."""


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """object_pairs_hook: the object as a dict, or _DuplicateKey naming the repeated key."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def json_kind(value: Any) -> str:
    """A JSON value's kind in words, for messages about a setting: `a string`, `a list`, `null`."""
    names = {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "true or false",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def json_shown(value: Any, limit: int = 80) -> str:
    """A setting's value as JSON on one short line (ASCII only: no control character gets out)."""
    return clip(json.dumps(value, ensure_ascii=True, default=str), limit)


def parse_json(text: str, *, unique_keys: bool = False) -> tuple[Any, str | None]:
    """(data, None), or (None, why the text is not usable JSON) in words for a one-line message.

    Besides syntax errors, json.loads raises RecursionError on deep nesting (`[[[[...`)
    and ValueError on a huge integer; both are reported, never raised.
    """
    hook = _reject_duplicates if unique_keys else None
    try:
        return json.loads(text, object_pairs_hook=hook), None
    except json.JSONDecodeError as exc:
        return None, f"is not valid JSON (line {exc.lineno}: {exc.msg})"
    except _DuplicateKey as exc:
        return None, f"names the key {json.dumps(str(exc))} twice in one object"
    except RecursionError:
        return None, "is nested too deeply to read"
    except ValueError as exc:
        return None, f"is not usable JSON ({str(exc).split(':')[0]})"
