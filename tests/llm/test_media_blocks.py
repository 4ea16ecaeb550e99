"""Images and PDFs in messages: the wire format, a transcript's round trip, their counted cost,
and the offline model's words where it cannot see them."""

from __future__ import annotations

from claude_mini.llm.local_protocol import render_message
from claude_mini.llm.messages import (
    IMAGE_MAX_TOKENS,
    MediaBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    media_tokens,
    message_from_api,
    message_to_api,
)

IMAGE = MediaBlock("image", "image/png", "aGVsbG8=", 120, "shot.png")
PDF = MediaBlock("document", "application/pdf", "JVBERi0=", 4000, "spec.pdf")


def test_a_user_image_and_a_tool_result_pdf_on_the_wire_and_back():
    message = Message("user", [TextBlock("look"), IMAGE, ToolResultBlock("t1", "Read spec.pdf", media=[PDF])])
    sent = message_to_api(message)
    assert sent["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "aGVsbG8="},
    }
    assert sent["content"][2]["content"][1]["type"] == "document"
    back = message_from_api(sent)
    image, result = back.content[1], back.content[2]
    assert isinstance(image, MediaBlock) and image.data == IMAGE.data and image.tokens == IMAGE_MAX_TOKENS
    assert isinstance(result, ToolResultBlock) and result.content == "Read spec.pdf"
    assert [m.media_type for m in result.media] == ["application/pdf"]


def test_counted_cost_is_the_blocks_tokens_not_their_base64():
    message = Message("user", [TextBlock("look"), IMAGE, ToolResultBlock("t1", "x", media=[PDF])])
    assert media_tokens(message) == 4120
    assert "aGVsbG8=" not in str(message_to_api(message, media=False))


def test_the_offline_model_is_told_it_cannot_see_them():
    text = render_message(Message("user", [TextBlock("what is in it?"), IMAGE]), {}, as_actions=False)
    assert "what is in it?" in text
    assert "an image (shot.png) was attached here, but this local model cannot see images" in text
    result = render_message(
        Message("user", [ToolResultBlock("t1", "Read spec.pdf", media=[PDF])]), {"t1": "Read"}, True
    )
    assert "[Result of Read]\nRead spec.pdf" in result and "a PDF document (spec.pdf)" in result
