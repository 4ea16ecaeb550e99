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
MEDIA_KINDS = ("image", "document")
# The API scales an image down until it fits 1568 px a side and about this many tokens.
IMAGE_MAX_TOKENS = 1600


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
class MediaBlock:
    """An image or a PDF the model sees as itself, not as text: base64 data and its media type.

    `kind` is the API's block type (`image` or `document`); `tokens` is what it costs in the
    context (DESIGN.md budgets read it instead of the base64's length); `label` names it for
    people and for models that cannot see it (a path, `pasted image`).
    """

    kind: Literal["image", "document"]
    media_type: str
    data: str
    tokens: int = 0
    label: str = ""
    type: Literal["media"] = "media"


@dataclass
class ToolResultBlock:
    """What a tool returned, sent back in the next user message; `media` follow its text
    (an image or a PDF that Read returned)."""

    tool_use_id: str
    content: str
    is_error: bool = False
    type: Literal["tool_result"] = "tool_result"
    media: list[MediaBlock] = field(default_factory=list)


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

Block = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock | ServerBlock | MediaBlock


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


def block_to_api(block: Block, *, media: bool = True) -> dict[str, Any]:
    """One content block as the API expects it; `media=False` leaves images and PDFs' data out
    (for counting tokens: their cost is `MediaBlock.tokens`, not their base64's length)."""
    if isinstance(block, TextBlock):
        if block.citations:
            return {"type": "text", "text": block.text, "citations": block.citations}
        return {"type": "text", "text": block.text}
    if isinstance(block, ServerBlock):
        return dict(block.data)
    if isinstance(block, ToolUseBlock):
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    if isinstance(block, MediaBlock):
        source = {"type": "base64", "media_type": block.media_type, "data": block.data if media else ""}
        return {"type": block.kind, "source": source}
    if isinstance(block, ToolResultBlock):
        out: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": block.tool_use_id,
            "content": block.content,
        }
        if block.media:
            out["content"] = [
                {"type": "text", "text": block.content},
                *(block_to_api(m, media=media) for m in block.media),
            ]
        if block.is_error:
            out["is_error"] = True
        return out
    return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}


def media_from_api(d: dict[str, Any]) -> MediaBlock:
    """An `image` or `document` block read back (a transcript); its cost estimated from its size."""
    source = d.get("source") or {}
    data, media_type = source.get("data"), source.get("media_type")
    if source.get("type") != "base64" or not isinstance(data, str) or not data or not isinstance(media_type, str):
        raise ValueError(f"an {d.get('type')} block without base64 data")
    kind: Literal["image", "document"] = "document" if d.get("type") == "document" else "image"
    return MediaBlock(kind, media_type, data, media_tokens_guess(kind, data))


def media_tokens_guess(kind: str, data: str) -> int:
    """What an image or PDF costs when only its base64 is known: an image at most the ~1,600 tokens
    the API scales every image down to; a PDF about 1,500 tokens per 50 KB (a page's text and image)."""
    if kind == "image":
        return IMAGE_MAX_TOKENS
    return max(1500, len(data) * 3 // 4 // 50_000 * 1500)


def media_tokens(message: Message) -> int:
    """The context cost of the images and PDFs in `message` (in tool results too)."""
    total = 0
    for block in message.content:
        if isinstance(block, MediaBlock):
            total += block.tokens
        elif isinstance(block, ToolResultBlock):
            total += sum(m.tokens for m in block.media)
    return total


def block_from_api(d: dict[str, Any]) -> Block:
    """Inverse of `block_to_api`; also used for transcripts."""
    kind = d.get("type")
    if kind == "text":
        return TextBlock(d.get("text", ""), citations=d.get("citations") or None)
    if kind == "tool_use":
        return ToolUseBlock(d["id"], d["name"], d.get("input") or {})
    if kind == "tool_result":
        content = d.get("content", "")
        media: list[MediaBlock] = []
        if isinstance(content, list):
            media = [media_from_api(c) for c in content if isinstance(c, dict) and c.get("type") in MEDIA_KINDS]
            content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
        return ToolResultBlock(d["tool_use_id"], content, bool(d.get("is_error")), media=media)
    if kind in MEDIA_KINDS:
        return media_from_api(d)
    if kind == "thinking":
        return ThinkingBlock(d.get("thinking", ""), d.get("signature", ""))
    raise ValueError(f"unknown content block type {kind!r}")


def message_to_api(message: Message, *, media: bool = True) -> dict[str, Any]:
    """One message as the API expects it (`media=False`: see `block_to_api`)."""
    return {"role": message.role, "content": [block_to_api(b, media=media) for b in message.content]}


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
