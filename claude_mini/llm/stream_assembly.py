"""Assembling one streamed attempt: the SDK's raw events mapped to ours, and the final message built.

Blocks of tools the server runs (`server_tool_use`, `web_search_tool_result`) are kept verbatim as
`ServerBlock`s, and a text block's `citations_delta`s as its citations: the web search tool reads
them, and a paused turn (`pause_turn`) sends them back unchanged.

A reply's text may carry lone surrogates (JSON can spell them); `encodable` replaces them
so the transcript, stdout and the next request can encode it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from claude_mini.llm.events import BlockDone, ResponseDone, StreamEvent, TextDelta, ToolInputDelta, ToolUseStart
from claude_mini.llm.messages import (
    SERVER_BLOCK_TYPES,
    Block,
    Message,
    ServerBlock,
    TextBlock,
    ThinkingBlock,
    ToolUseBlock,
    Usage,
)
from claude_mini.llm.retry import StreamFailure
from claude_mini.llm.sdk_errors import describe


@dataclass
class _Part:
    """One content block while it streams. `text` holds text, thinking or tool input JSON."""

    kind: str
    text: str = ""
    id: str = ""
    name: str = ""
    signature: str = ""
    raw: dict[str, Any] | None = None  # a server block as it started
    citations: list[dict[str, Any]] | None = None


class Assembler:
    """Maps one attempt's raw SDK events to ours and builds its final message."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.parts: dict[int, _Part] = {}
        self.blocks: dict[int, Block] = {}
        self.usage: dict[str, int] = {}
        self.stop_reason: str | None = None

    def feed(self, event: Any) -> list[StreamEvent]:
        """Our events for one raw event; `StreamFailure` when the event is malformed.

        The SDK builds events without validating them, so a server's `"text": null` or a
        missing field shows up here, as a TypeError or AttributeError of this pure code.
        """
        kind = getattr(event, "type", "")
        handler = getattr(self, f"_on_{kind}", None)
        try:
            return handler(event) if handler else []
        except (TypeError, AttributeError, KeyError, ValueError) as err:
            raise StreamFailure(f"malformed {kind} event from the server ({describe(err)})", "malformed") from err

    def _on_message_start(self, event: Any) -> list[StreamEvent]:
        self.usage.update(_usage_fields(event.message.usage))
        self.model = event.message.model or self.model
        return []

    def _on_content_block_start(self, event: Any) -> list[StreamEvent]:
        block, index = event.content_block, event.index
        if block.type == "text":
            part = self.parts[index] = _Part("text", text=encodable(block.text or ""))
            return [TextDelta(part.text, index)] if part.text else []
        if block.type == "tool_use":
            self.parts[index] = _Part("tool_use", id=block.id, name=block.name)
            return [ToolUseStart(block.id, block.name, index)]
        if block.type == "thinking":
            self.parts[index] = _Part("thinking", text=block.thinking or "", signature=block.signature or "")
        elif block.type in SERVER_BLOCK_TYPES:
            self.parts[index] = _Part("server", raw=_as_dict(block))
        else:
            self.parts[index] = _Part(block.type)  # other kinds: not represented in Message
        return []

    def _on_content_block_delta(self, event: Any) -> list[StreamEvent]:
        part, delta, index = self.parts.get(event.index), event.delta, event.index
        if part is None:
            return []
        if delta.type == "text_delta":
            piece = encodable(delta.text)
            part.text += piece
            return [TextDelta(piece, index)] if piece else []
        if delta.type == "input_json_delta":
            part.text += delta.partial_json
            if part.kind == "server":
                return []
            return [ToolInputDelta(part.id, delta.partial_json)] if delta.partial_json else []
        if delta.type == "citations_delta":
            part.citations = [*(part.citations or []), _as_dict(delta.citation)]
        if delta.type == "thinking_delta":
            part.text += encodable(delta.thinking)
        elif delta.type == "signature_delta":
            part.signature = delta.signature
        return []

    def _on_content_block_stop(self, event: Any) -> list[StreamEvent]:
        part = self.parts.get(event.index)
        block = _to_block(part) if part else None
        if block is None:
            return []
        self.blocks[event.index] = block
        return [BlockDone(block, event.index)]

    def _on_message_delta(self, event: Any) -> list[StreamEvent]:
        self.stop_reason = getattr(event.delta, "stop_reason", None) or self.stop_reason
        self.usage.update(_usage_fields(getattr(event, "usage", None)))
        return []

    def finish(self) -> ResponseDone:
        """The attempt's response; a stream that never said why it stopped is a failure.

        `message_delta` (with stop_reason) follows the last content block, so once it
        arrived the message is complete even if `message_stop` was lost.
        """
        if self.stop_reason is None:
            raise StreamFailure("the response stream ended early", "incomplete")
        for index, part in self.parts.items():  # blocks that never got content_block_stop
            if index not in self.blocks and (block := _to_block(part)) is not None:
                self.blocks[index] = block
        content = [self.blocks[i] for i in sorted(self.blocks)]
        message = Message("assistant", content)
        return ResponseDone(message, self.stop_reason, Usage.from_dict(self.usage), self.model)


def _to_block(part: _Part) -> Block | None:
    if part.kind == "text":
        return TextBlock(encodable(part.text), citations=part.citations)
    if part.kind == "server" and part.raw is not None:
        raw = dict(part.raw)
        if raw.get("type") == "server_tool_use" and part.text.strip():
            raw["input"] = _parse_input(part.text)  # the input streamed as JSON deltas
        return ServerBlock(raw)
    if part.kind == "thinking":
        return ThinkingBlock(encodable(part.text), part.signature)
    if part.kind == "tool_use":
        return ToolUseBlock(part.id, part.name, _parse_input(encodable(part.text)))
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def encodable(text: str) -> str:
    """`text` with lone surrogates replaced by U+FFFD, as a UTF-8 decoder would.

    JSON can spell them (`"\\udc1b"`), so a reply can carry them, and no encoder takes
    them: the transcript, stdout and the next request would all fail.
    """
    return _SURROGATE.sub("\ufffd", text) if _SURROGATE.search(text) else text


def _encodable_value(value: Any) -> Any:
    """A decoded JSON value with `encodable` applied to every string in it, keys too."""
    if isinstance(value, str):
        return encodable(value)
    if isinstance(value, dict):
        return {encodable(k): _encodable_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encodable_value(v) for v in value]
    return value


def _parse_input(raw: str) -> dict[str, Any]:
    """A tool call's input; broken JSON is kept visible so the tool's validation reports it."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
        if _SURROGATE_ESCAPE.search(raw):
            value = _encodable_value(value)
    except (ValueError, RecursionError):  # RecursionError: nested too deeply
        return {"_invalid_json": raw}
    return value if isinstance(value, dict) else {"_invalid_json": raw}


def _as_dict(value: Any) -> dict[str, Any]:
    """An SDK object (or a dict) as the plain JSON dict the API sent, unset fields left out."""
    if isinstance(value, dict):
        return dict(value)
    dumped = value.model_dump(mode="json", exclude_none=True)
    return dumped if isinstance(dumped, dict) else {}


def _usage_fields(usage: Any) -> dict[str, int]:
    """The usage counts an SDK object carries (None fields are absent, not zero)."""
    names = Usage().to_dict()
    return {n: int(v) for n in names if (v := getattr(usage, n, None)) is not None}
