"""Our message and content types, and their mapping to Anthropic API dicts.

Everything above `llm/` speaks these dataclasses; only `to_api`/`from_api` and
`build_request_body` know the wire format. Cache breakpoints are placed here
(DESIGN.md section 6): last tool, last system block, last message block.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# The X-Claude-Mini-Purpose of every request (DESIGN.md section 4); /cost lists PURPOSES in this order.
Purpose = Literal["main", "recall", "extract", "compact", "dream", "subagent", "webfetch", "websearch"]
PURPOSES: tuple[str, ...] = ("main", "subagent", "recall", "extract", "compact", "dream", "webfetch", "websearch")
EPHEMERAL = {"type": "ephemeral"}


@dataclass
class TextBlock:
    """Plain text from the user, the assistant, or an attachment.

    `citations`: the sources a server tool's answer cites (web search), as the API gave them;
    None for ordinary text.
    """

    text: str
    type: Literal["text"] = "text"
    citations: list[dict[str, Any]] | None = None


@dataclass
class ToolUseBlock:
    """The model asking to run one tool."""

    id: str
    name: str
    input: dict[str, Any]
    type: Literal["tool_use"] = "tool_use"


@dataclass
class ToolResultBlock:
    """What a tool returned, sent back in the next user message."""

    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"


@dataclass
class ThinkingBlock:
    """Extended-thinking output; kept verbatim because the API requires it back."""

    thinking: str
    signature: str = ""
    type: Literal["thinking"] = "thinking"


@dataclass
class ServerBlock:
    """A block of a tool the server runs itself (`server_tool_use`, `web_search_tool_result`):
    kept verbatim, since the API wants it back unchanged in the next request of the same turn.
    Only the web search tool's own requests hold them; the conversation never does, so a
    transcript's such block stays unknown to `block_from_api` (a lone one would break the next request)."""

    data: dict[str, Any]

    @property
    def type(self) -> str:
        return str(self.data.get("type", ""))


SERVER_BLOCK_TYPES = frozenset({"server_tool_use", "web_search_tool_result"})

Block = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | ServerBlock


@dataclass
class Message:
    """One conversation message."""

    role: Literal["user", "assistant"]
    content: list[Block]

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", [TextBlock(text)])

    @property
    def text(self) -> str:
        """The concatenated text blocks (what a person would read)."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_uses(self) -> list[ToolUseBlock]:
        return [b for b in self.content if isinstance(b, ToolUseBlock)]


@dataclass
class Usage:
    """Token counts of one or more responses. `input_tokens` excludes cached tokens."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
        )

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Usage:
        d = d or {}
        return cls(**{k: int(d.get(k) or 0) for k in cls().to_dict()})


@dataclass
class ModelRequest:
    """Everything that decides one request's bytes (and so its cache prefix)."""

    model: str
    system: list[str]
    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int = 32000
    purpose: Purpose = "main"
    output_schema: dict[str, Any] | None = None
    thinking: dict[str, Any] | None = None
    cache: bool = True


def block_to_api(block: Block) -> dict[str, Any]:
    """One content block as the API expects it."""
    if isinstance(block, TextBlock):
        if block.citations:
            return {"type": "text", "text": block.text, "citations": block.citations}
        return {"type": "text", "text": block.text}
    if isinstance(block, ServerBlock):
        return dict(block.data)
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, ToolResultBlock):
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": block.content,
        }
        if block.is_error:
            out["is_error"] = True
        return out
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def block_from_api(d: dict[str, Any]) -> Block:
    """Inverse of `block_to_api`; also used for transcripts."""
    kind = d.get("type")
    if kind == "text":
        return TextBlock(d.get("text", ""), citations=d.get("citations") or None)
    if kind == "tool_use":
        return ToolUseBlock(d["id"], d["name"], d.get("input") or {})
    if kind == "tool_result":
        content = d.get("content", "")
        if isinstance(content, list):
            content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
        return ToolResultBlock(d["tool_use_id"], content, bool(d.get("is_error")))
    if kind == "thinking":
        return ThinkingBlock(d.get("thinking", ""), d.get("signature", ""))
    raise ValueError(f"unknown content block type {kind!r}")


def message_to_api(message: Message) -> dict[str, Any]:
    return {"role": message.role, "content": [block_to_api(b) for b in message.content]}


def message_from_api(d: dict[str, Any]) -> Message:
    content = d.get("content", [])
    if isinstance(content, str):
        return Message(d["role"], [TextBlock(content)])
    return Message(d["role"], [block_from_api(b) for b in content])


def build_request_body(request: ModelRequest) -> dict[str, Any]:
    """The JSON body of a Messages API call, with cache breakpoints placed.

    Breakpoints: the last tool, the last system block and the last block of the
    last message (3 of the 4 the API allows). Forked agents send the parent's
    exact prefix, so their request hits the parent's cache up to its last message.
    """
    tools = [dict(t) for t in request.tools]
    system: list[dict[str, Any]] = [{"type": "text", "text": s} for s in request.system if s]
    messages = [message_to_api(m) for m in request.messages]
    if request.cache:
        if tools:
            tools[-1]["cache_control"] = EPHEMERAL
        if system:
            system[-1]["cache_control"] = EPHEMERAL
        for message in reversed(messages):
            if message["content"]:
                last = message["content"][-1]
                if last.get("type") != "thinking":
                    last["cache_control"] = EPHEMERAL
                break
    body: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_tokens,
        "messages": messages,
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = tools
    if request.thinking:
        body["thinking"] = request.thinking
    if request.output_schema is not None:
        body["output_config"] = {"format": {"type": "json_schema", "schema": request.output_schema}}
    return body
