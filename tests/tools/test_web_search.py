"""WebSearch through the real SDK against the fake server: the server tool in the request, the
server's blocks kept by the stream assembly and sent back after a pause, links and citations rendered;
and when the tool is offered at all."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.events import ResponseDone
from claude_mini.llm.messages import ModelRequest, ServerBlock, block_from_api, block_to_api
from claude_mini.llm.retry import RetryPolicy
from claude_mini.tools.base import ToolContext, ToolError
from claude_mini.tools.web_access import SearchAvailability, WebAccess
from claude_mini.tools.web_search import SERVER_TOOL_TYPE, WebSearchTool, search_availability
from tests.fake_anthropic import FakeAnthropic, Reply

RESULTS = [
    ("Release notes 3.13", "https://docs.python.org/3/whatsnew/3.13.html"),
    ("PEP 719", "https://peps.python.org/pep-0719/"),
]


def search(server: FakeAnthropic, tmp_path: Path, input: dict) -> str:
    client = AnthropicClient(base_url=server.base_url, api_key="test", retry=RetryPolicy(max_attempts=1))

    async def ask(request: ModelRequest) -> ResponseDone:
        return await client.complete(request)

    async def go() -> str:
        try:
            return (await WebSearchTool().call(input, ctx)).content
        finally:
            await client.aclose()

    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    ctx.web = WebAccess(
        ask, lambda: "small", lambda: "claude-sonnet-4-6", lambda h: False, SearchAvailability(True, "")
    )
    return asyncio.run(go())


def test_the_request_carries_the_server_tool_and_the_result_renders(tmp_path):
    with FakeAnthropic() as server:
        server.on(Reply.web_search("python 3.13 release", RESULTS, "Python 3.13 came out in October 2024."))
        text = search(server, tmp_path, {"query": "python 3.13 release", "allowed_domains": ["python.org"]})
        [request] = server.requests_for("websearch")
    assert request.body["tools"] == [
        {"type": SERVER_TOOL_TYPE, "name": "web_search", "max_uses": 8, "allowed_domains": ["python.org"]}
    ]
    assert request.body["model"] == "claude-sonnet-4-6"
    assert 'Web search results for "python 3.13 release" (1 search).' in text
    assert "1. [Release notes 3.13](https://docs.python.org/3/whatsnew/3.13.html)" in text
    assert "2. [PEP 719](https://peps.python.org/pep-0719/)" in text
    assert "Python 3.13 came out in October 2024. [1]" in text
    assert 'trust="untrusted"' in text


def test_a_paused_turn_sends_the_server_blocks_back_unchanged(tmp_path):
    with FakeAnthropic() as server:
        server.on(Reply.web_search("q1", RESULTS[:1], "First part.").with_stop_reason("pause_turn"))
        server.on(Reply.text("Second part."))
        text = search(server, tmp_path, {"query": "q1 and more"})
        first, second = server.requests_for("websearch")
    sent = second.body["messages"][1]
    assert sent["role"] == "assistant"
    kinds = [block["type"] for block in sent["content"]]
    assert kinds == ["server_tool_use", "web_search_tool_result", "text"]
    assert sent["content"][0] == {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "q1"},
    }
    result = sent["content"][1]
    assert result["tool_use_id"] == "srvtoolu_1" and result["content"][0]["encrypted_content"] == "enc-0"
    assert sent["content"][2]["citations"][0]["url"] == RESULTS[0][1]
    assert "First part. [1]" in text and "Second part." in text


def test_cited_text_survives_the_transcript_round_trip():
    cited = {"type": "text", "text": "x", "citations": [{"type": "web_search_result_location", "url": "u"}]}
    assert block_to_api(block_from_api(cited)) == cited
    assert block_to_api(ServerBlock({"type": "server_tool_use", "id": "s"})) == {"type": "server_tool_use", "id": "s"}


def test_bad_input_and_an_endpoint_without_search(tmp_path):
    tool, ctx = WebSearchTool(), ToolContext(cwd=tmp_path, project_root=tmp_path)
    for input, expected in (
        ({"query": "x"}, "at least 2 characters"),
        ({"query": "ok", "allowed_domains": ["a.org"], "blocked_domains": ["b.org"]}, "not both"),
        ({"query": "ok", "blocked_domains": "b.org"}, "must be a list"),
    ):
        with pytest.raises(ToolError, match=expected):
            tool.validate(input, ctx)
    with pytest.raises(ToolError, match="not available here"):
        asyncio.run(tool.call({"query": "ok"}, ctx))


def test_when_web_search_is_offered():
    assert search_availability(None, "anthropic", "https://api.anthropic.com").offered
    other = search_availability(None, "anthropic", "http://127.0.0.1:8080")
    assert not other.offered and '"webSearch": true' in other.why
    assert search_availability(True, "anthropic", "http://127.0.0.1:8080").offered
    assert not search_availability(False, "anthropic", "https://api.anthropic.com").offered
    assert "offline model" in search_availability(True, "local", None).why
    assert "webSearch is 'yes', not true or false: ignored" in search_availability("yes", "anthropic", None).why
