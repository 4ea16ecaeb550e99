"""Lone surrogates: JSON can spell one (`"\\udc1b"`), no encoder takes one. A reply
carrying them must reach the transcript, the terminal and the next request as U+FFFD, never crash."""

from __future__ import annotations

import json
import re

import pytest

from claude_mini.llm.messages import Message, TextBlock, ToolUseBlock
from claude_mini.llm.stream_assembly import encodable
from claude_mini.session import Session, load_messages, transcript_line
from tests.fake_anthropic import Reply
from tests.llm.test_anthropic_client import collect, done, request, streamed_text

LONE = ["\udc1b", "a\ud800b", "\udfff\ud83d", "caf\u00e9 \U0001f600 \udc9b", "\ud83d\ude00"]


def fffd(text: str) -> str:
    return re.sub("[\ud800-\udfff]", "\ufffd", text)


@pytest.mark.parametrize("text", LONE)
def test_transcript_lines_encode_and_read_back(text):
    line = transcript_line({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}})
    line.encode("utf-8")  # the append failed here: surrogates not allowed
    assert json.loads(line)["message"]["content"][0]["text"] == json.loads(json.dumps(text))


def test_transcript_lines_keep_readable_text_as_is():
    line = transcript_line({"text": "caf\u00e9 \u65e5\u672c \U0001f600"})
    assert "caf\u00e9 \u65e5\u672c \U0001f600" in line and line.endswith("}\n")


@pytest.mark.parametrize("text", LONE)
def test_a_session_saves_and_resumes_a_message_with_a_lone_surrogate(tmp_path, isolated_env, text):
    session = Session(tmp_path)
    session.add_message(Message.user("hi"))
    session.add_message(Message("assistant", [TextBlock(text)]))
    session.record_system("notice", text=text)
    [user, assistant] = load_messages(session.transcript.path)
    assert assistant.content[0].text == json.loads(json.dumps(text))


@pytest.mark.parametrize("text", LONE)
def test_the_client_hands_on_replies_without_lone_surrogates(fake_server, text):
    fake_server.queue(Reply.text(text))
    events, _ = collect(fake_server)
    assert streamed_text(events) == fffd(text) == done(events).message.content[0].text
    done(events).message.content[0].text.encode("utf-8")


@pytest.mark.parametrize("value", ["\udc1b", "x\ud800", "\\udc1b"])
def test_tool_input_has_no_lone_surrogates_in_values_or_keys(fake_server, value):
    fake_server.queue(Reply.tool("Read", {"file_path": value, "k" + value: [value, {"n": value}]}))
    events, _ = collect(fake_server, request())
    [call] = [b for b in done(events).message.content if isinstance(b, ToolUseBlock)]
    json.dumps(call.input, ensure_ascii=False).encode("utf-8")
    assert call.input["file_path"] == fffd(value)


def test_encodable_leaves_valid_text_alone():
    for text in ("", "plain", "caf\u00e9", "\U0001f600", "\ufffd"):
        assert encodable(text) is text
