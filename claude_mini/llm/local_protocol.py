"""How a plain chat model speaks the Messages API: chat turns, JSON actions, output schemas.

A GGUF model run in-process (`llm/local.py`) has no tool-use or structured-output
protocol of its own, only a chat template. This module maps our requests onto it:

- system blocks and messages become chat turns of plain text; tool results are
  text in a user turn, earlier tool calls are shown as the JSON actions below;
- with tools, the model must answer with ONE JSON action, enforced by a grammar
  built from `action_schema` (so even a 135M model produces a valid call):

      {"action": "text", "text": "..."}
      {"action": "tool", "name": "<one of the tool names>", "input": {...that tool's schema}}

- with `output_schema`, the answer is constrained to that schema instead.

Pure functions only: no llama_cpp import, so it is tested without the model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from claude_mini.llm.messages import (
    MediaBlock,
    Message,
    ModelRequest,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)

ACTION_RULES = """\
# How to reply
Reply with one JSON object, in one of two forms.
1. To answer in words: {"action": "text", "text": "..."}
   Example: the user says "hi" -> {"action": "text", "text": "Hi! How can I help?"}
2. To use a tool: {"action": "tool", "name": "...", "input": {...}}
   Example: the user says "show me main.py" -> {"action": "tool", "name": "Read", "input": {"file_path": "main.py"}}
Use a tool only when the user asks about files or commands. After a tool result, answer in words."""
# Small models loop: after this many tool calls in one user turn, or right after a call
# repeated the one before it, the grammar only allows a text answer.
MAX_TOOL_CALLS_PER_TURN = 8

SCHEMA_RULE = "Reply with exactly one JSON object matching this JSON schema, and nothing else:\n{schema}"

# The opening of a text action as the grammar lets it be written (at most one space between tokens).
TEXT_ACTION_START = re.compile(r'\s*\{\s*"action"\s*:\s*"text"\s*,\s*"text"\s*:\s*"')
SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


@dataclass
class Action:
    """What a constrained reply asked for: `kind` "text" (with `text`) or "tool" (`name`, `input`)."""

    kind: str
    text: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Grammar schemas


def action_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A JSON schema whose instances are a text answer or one valid call of one of `tools`."""
    text = _object({"action": {"const": "text"}, "text": {"type": "string"}})
    calls = [
        _object({"action": {"const": "tool"}, "name": {"const": tool["name"]}, "input": _input_schema(tool)})
        for tool in tools
    ]
    return {"oneOf": [text, *calls]}


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def _input_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema; an object schema without properties accepts `{}` only.

    llama.cpp's schema converter turns a bare `{"type": "object"}` into "any JSON
    object", which a small model fills with noise; a tool without declared
    arguments takes none.
    """
    schema = dict(tool.get("input_schema") or {})
    if not schema.get("properties"):
        return {"type": "object", "properties": {}, "additionalProperties": False}
    return schema


def reply_schema(request: ModelRequest) -> dict[str, Any] | None:
    """The grammar's schema: the output schema, else tool actions (text only when looping), else none."""
    if request.output_schema is not None:
        return request.output_schema
    if not request.tools:
        return None
    return action_schema(request.tools if tools_allowed(request.messages) else [])


def tools_allowed(messages: list[Message]) -> bool:
    """False when the model must answer in words: too many calls this turn, or a repeated call."""
    calls: list[tuple[str, str]] = []
    for message in reversed(messages):
        if message.role == "user" and not any(isinstance(b, ToolResultBlock) for b in message.content):
            break  # the user's own message starts the turn
        calls += [(b.name, _dumps(b.input)) for b in reversed(message.tool_uses)]
    if len(calls) >= MAX_TOOL_CALLS_PER_TURN:
        return False
    return not (len(calls) >= 2 and calls[0] == calls[1])


# ---------------------------------------------------------------------------
# Requests as chat turns


def system_text(request: ModelRequest) -> str:
    """The system turn: the request's system blocks, then how to reply (tools or schema)."""
    parts = [s for s in request.system if s]
    if request.output_schema is not None:
        parts.append(SCHEMA_RULE.format(schema=json.dumps(request.output_schema)))
    elif request.tools:
        parts.append(ACTION_RULES)
        parts.append(describe_tools(request.tools))
    return "\n\n".join(parts)


def describe_tools(tools: list[dict[str, Any]]) -> str:
    """A compact tool list: first paragraph of each description and its arguments.

    Full descriptions are written for large models; a small context and a small
    model are better served by the gist (the grammar enforces the arguments anyway).
    """
    lines = ["# Tools"]
    for tool in tools:
        summary = (tool.get("description") or "").strip().split("\n\n", 1)[0]
        lines.append(f"## {tool['name']}\n{summary}")
        schema = tool.get("input_schema") or {}
        required = set(schema.get("required") or ())
        for name, prop in (schema.get("properties") or {}).items():
            need = "required" if name in required else "optional"
            kind = prop.get("type", "any")
            lines.append(f"- {name} ({kind}, {need}): {prop.get('description', '')}".rstrip(": "))
    return "\n".join(lines)


def chat_turns(request: ModelRequest) -> list[dict[str, str]]:
    """System + messages as `{"role", "content"}` text turns for the model's chat template."""
    as_actions = bool(request.tools) and request.output_schema is None
    names = {b.id: b.name for m in request.messages for b in m.content if isinstance(b, ToolUseBlock)}
    turns = [{"role": "system", "content": system_text(request)}]
    for message in request.messages:
        content = render_message(message, names, as_actions)
        if turns[-1]["role"] == message.role and len(turns) > 1:
            turns[-1]["content"] += "\n\n" + content  # templates expect alternating roles
        else:
            turns.append({"role": message.role, "content": content})
    return turns


def render_message(message: Message, names: dict[str, str], as_actions: bool) -> str:
    """One message as text. Assistant turns are shown as the actions the model would write."""
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            if message.role == "assistant" and as_actions:
                parts.append(_dumps({"action": "text", "text": block.text}))
            elif block.text:
                parts.append(block.text)
        elif isinstance(block, ToolUseBlock):
            parts.append(_dumps({"action": "tool", "name": block.name, "input": block.input}))
        elif isinstance(block, ToolResultBlock):
            parts.append(render_tool_result(block, names.get(block.tool_use_id, "tool")))
            parts += [unseen(m) for m in block.media]
        elif isinstance(block, MediaBlock):
            parts.append(unseen(block))
    return "\n".join(parts)


def unseen(block: MediaBlock) -> str:
    """What a model without vision reads where an image or a PDF was: it says so instead of guessing."""
    what = "an image" if block.kind == "image" else "a PDF document"
    name = f" ({block.label})" if block.label else ""
    return (
        f"[{what}{name} was attached here, but this local model cannot see images or documents: "
        "tell the user so, and offer to work from a text description instead]"
    )


def render_tool_result(block: ToolResultBlock, name: str) -> str:
    """A tool result as the user turn shows it."""
    label = "Error from" if block.is_error else "Result of"
    return f"[{label} {name}]\n{block.content}"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


# ---------------------------------------------------------------------------
# Reading the reply


def parse_action(raw: str, tool_names: set[str]) -> Action | None:
    """The action in a constrained reply, or None when it is not one (the caller shows raw text).

    `strict=False`: the grammar allows raw control characters (newlines) inside strings.
    """
    try:
        value = json.loads(raw, strict=False)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    if value.get("action") == "text" and isinstance(value.get("text"), str):
        return Action("text", text=value["text"])
    if value.get("action") == "tool" and value.get("name") in tool_names:
        args = value.get("input")
        return Action("tool", name=value["name"], input=args if isinstance(args, dict) else {})
    return None


class TextActionStream:
    """Decodes the `text` of a text action while its JSON is still being generated.

    Feed the whole output so far; get back the newly decoded characters. Anything
    that is not a text action yields nothing (tool calls are shown when complete).
    """

    def __init__(self) -> None:
        self.start: int | None = None  # where the string value begins in the raw output
        self.pos = 0  # how far the raw value is decoded
        self.closed = False

    def feed(self, raw: str) -> str:
        if self.start is None:
            match = TEXT_ACTION_START.match(raw)
            if match is None:
                return ""
            self.start = self.pos = match.end()
        out: list[str] = []
        while not self.closed and self.pos < len(raw):
            char = raw[self.pos]
            if char == '"':
                self.closed = True
                break
            if char != "\\":
                out.append(char)
                self.pos += 1
                continue
            decoded, width = _escape(raw, self.pos)
            if width == 0:
                break  # an escape cut in the middle: wait for more output
            out.append(decoded)
            self.pos += width
        return "".join(out)


def _escape(raw: str, pos: int) -> tuple[str, int]:
    """The character of the escape at `raw[pos]` and its length, or ("", 0) if incomplete."""
    if pos + 1 >= len(raw):
        return "", 0
    kind = raw[pos + 1]
    if kind in SIMPLE_ESCAPES:
        return SIMPLE_ESCAPES[kind], 2
    if kind != "u" or pos + 6 > len(raw):
        return ("", 0) if kind == "u" else (kind, 2)
    code = _hex(raw[pos + 2 : pos + 6])
    if code is None:
        return raw[pos + 1], 2  # not a valid escape: keep it literally
    if 0xD800 <= code < 0xDC00:  # a surrogate pair needs the second half
        if pos + 12 > len(raw):
            return "", 0
        low = _hex(raw[pos + 8 : pos + 12]) if raw[pos + 6 : pos + 8] == "\\u" else None
        if low is not None and 0xDC00 <= low < 0xE000:
            return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)), 12
        return "\ufffd", 6
    return chr(code), 6


def _hex(digits: str) -> int | None:
    try:
        return int(digits, 16)
    except ValueError:
        return None
