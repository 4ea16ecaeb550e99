"""End to end: WebFetch and WebSearch through the real CLI against the fake model, with a loopback
web server (a real HTML page, a redirect to another host, a 10 MB body, a binary file, a denied domain,
a loopback address with and without a rule naming it), in -p and in the REPL."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import tool_results
from tests.e2e.test_repl import main_replies, start  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply
from tests.web_server import WebServer

pytestmark = pytest.mark.e2e

RESULTS = [("What's new in Python 3.13", "https://docs.python.org/3/whatsnew/3.13.html")]


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


def user_settings(isolated_env, **settings) -> None:
    (isolated_env.home / "settings.json").write_text(json.dumps(settings))


def tool_names(request) -> list[str]:
    return [tool.get("name") for tool in request.body.get("tools", [])]


def test_webfetch_in_print_mode(run_cli, fake_server, isolated_env, web):
    user_settings(
        isolated_env, permissions={"allow": ["WebFetch(domain:127.0.0.1)"], "deny": ["WebFetch(domain:localhost)"]}
    )
    calls = [
        ("WebFetch", {"url": web.url("/docs"), "prompt": "What is the default timeout?"}),
        ("WebFetch", {"url": web.url("/moved"), "prompt": "Read it"}),
        ("WebFetch", {"url": web.url("/docs", host="localhost"), "prompt": "Read it"}),  # the redirect's target
        ("WebFetch", {"url": web.url("/huge"), "prompt": "What does the page repeat?"}),
        ("WebFetch", {"url": web.url("/file.zip"), "prompt": "Unpack it"}),
        ("WebFetch", {"url": "http://127.0.0.1:9/", "prompt": "Anything?"}),
    ]
    main_replies(fake_server, *[Reply.tool(name, input) for name, input in calls], Reply.text("Read the docs."))
    fake_server.on(Reply.text("It repeats lorem ipsum."), purpose="webfetch")
    result = run_cli("-p", "read the widget docs")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Read the docs."
    page, moved, denied, huge, binary, unreachable = tool_results(fake_server)

    assert not page.get("is_error") and 'trust="untrusted"' in page["content"]
    assert "# Configuring the widget client" in page["content"] and "connect_timeout = 5" in page["content"]
    assert f"to a different host: {web.url('/docs', host='localhost')}" in moved["content"]
    assert denied["is_error"] and "Denied by user rule WebFetch(domain:localhost)" in denied["content"]
    assert "only the first 5,242,880 bytes were read" in huge["content"]
    assert "It repeats lorem ipsum." in huge["content"]
    [side] = fake_server.requests_for("webfetch")
    assert "What does the page repeat?" in side.body["messages"][0]["content"][0]["text"]
    assert binary["is_error"] and "it is application/zip, not a web page or text" in binary["content"]
    assert unreachable["is_error"] and "could not connect" in unreachable["content"]
    for failed in (binary, unreachable):
        assert "\n" not in failed["content"]
    assert web.hits["/huge"] == 1 and "/docs" in web.hits and web.hits["/moved"] == 1


def test_a_loopback_address_needs_a_rule_that_names_it(run_cli, fake_server, isolated_env, web):
    user_settings(isolated_env, permissions={"allow": ["WebFetch"]})  # every host, but none by name
    main_replies(fake_server, Reply.tool("WebFetch", {"url": web.url("/docs"), "prompt": "x"}), Reply.text("ok"))
    assert run_cli("-p", "fetch it").returncode == 0
    [refused] = tool_results(fake_server)
    assert refused["is_error"] and "127.0.0.1 is a loopback address" in refused["content"]
    assert "add WebFetch(domain:127.0.0.1) to permissions.allow" in refused["content"]
    assert not web.hits


def test_websearch_in_print_mode(run_cli, fake_server, isolated_env):
    user_settings(isolated_env, webSearch=True, permissions={"allow": ["WebSearch"]})
    main_replies(
        fake_server,
        Reply.tool("WebSearch", {"query": "python 3.13 release date", "blocked_domains": ["pinterest.com"]}),
        Reply.text("Python 3.13 was released in October 2024.\n\nSources:\n- [What's new](https://docs.python.org)"),
    )
    fake_server.on(
        Reply.web_search("python 3.13 release date", RESULTS, "It came out on 7 October 2024."), purpose="websearch"
    )
    result = run_cli("-p", "when did python 3.13 come out?")
    assert result.returncode == 0, result.stderr
    assert "Sources:" in result.stdout
    assert "WebSearch" in tool_names(fake_server.requests_for("main")[0])
    [search] = fake_server.requests_for("websearch")
    assert search.body["tools"][0]["type"] == "web_search_20250305"
    assert search.body["tools"][0]["blocked_domains"] == ["pinterest.com"]
    [rendered] = tool_results(fake_server)
    assert "1. [What's new in Python 3.13](https://docs.python.org/3/whatsnew/3.13.html)" in rendered["content"]
    assert "It came out on 7 October 2024. [1]" in rendered["content"]


def test_websearch_is_not_offered_by_a_server_that_may_not_run_it(run_cli, fake_server):
    main_replies(fake_server, Reply.text("ok"))
    assert run_cli("-p", "hi").returncode == 0
    names = tool_names(fake_server.requests_for("main")[0])
    assert "WebFetch" in names and "WebSearch" not in names


def test_webfetch_in_the_repl(start, fake_server, isolated_env, web):  # noqa: F811
    main_replies(
        fake_server,
        Reply.tool("WebFetch", {"url": web.url("/docs"), "prompt": "What is the default timeout?"}),
        Reply.text("The default connect timeout is 10 seconds."),
        Reply.tool("WebFetch", {"url": web.url("/docs"), "prompt": "And retries?"}),
        Reply.text("Retries default to 2."),
    )
    term = start()
    term.ready()
    term.submit("/status")
    term.expect(r"Web search:\s+not offered: http://127\.0\.0\.1:\d+ may not run")
    term.ready()
    term.submit("/context")
    term.expect(r"Tools: (\d+) definitions")
    counted = int(term.child.match.group(1))
    term.ready()
    term.submit("what is the default timeout?")
    term.expect(r"Fetch http://127\.0\.0\.1:\d+/docs\?")
    term.expect(r"don't ask again in this project for WebFetch\(domain:127\.0\.0\.1\)")
    term.child.send("a")
    term.expect("The default connect timeout is 10 seconds.")
    term.ready()
    term.submit("and retries?")  # the saved rule names the host: no question, and the page is cached
    term.expect("Retries default to 2.")
    assert term.output.getvalue().count("WebFetch needs approval") == 1
    assert web.hits["/docs"] == 1
    sent = tool_names(fake_server.requests_for("main")[0])
    assert counted == len(sent) and "WebFetch" in sent  # /context counts the web tools' definitions
    first, second = tool_results(fake_server)
    assert "connect_timeout = 5" in first["content"] and "And retries?" in second["content"]


def test_websearch_in_the_repl(start, fake_server, isolated_env):  # noqa: F811
    user_settings(isolated_env, webSearch=True)
    main_replies(
        fake_server,
        Reply.tool("WebSearch", {"query": "python 3.13 release date"}),
        Reply.text("Released on 7 October 2024 [What's new](https://docs.python.org/3/whatsnew/3.13.html)."),
    )
    fake_server.on(
        Reply.web_search("python 3.13 release date", RESULTS, "It came out on 7 October 2024."), purpose="websearch"
    )
    term = start()
    term.ready()
    term.submit("/status")
    term.expect(r"Web search:\s+offered \(the webSearch setting is true\)")
    term.ready()
    term.submit("when did python 3.13 come out?")
    term.expect(r"Search the web for 'python 3\.13 release date'\?")
    term.child.send("y")
    term.expect(r"Released on 7 October 2024")
    term.ready()
    [rendered] = tool_results(fake_server)
    assert "It came out on 7 October 2024. [1]" in rendered["content"]
    assert fake_server.requests_for("websearch")[0].body["tools"][0]["type"] == "web_search_20250305"


def test_hook_matchers_and_subagent_tool_lists_written_for_claude_code(run_cli, fake_server, isolated_env, web):
    """A PreToolUse hook matching `WebFetch` and an agent type with `tools: WebFetch, Read` work as written."""
    hook = {"type": "command", "command": "echo 'web fetches are off in this repository' >&2; exit 2"}
    user_settings(
        isolated_env,
        permissions={"allow": ["WebFetch(domain:127.0.0.1)"]},
        hooks={"PreToolUse": [{"matcher": "WebFetch|WebSearch", "hooks": [hook]}]},
    )
    agents = isolated_env.home / "agents"
    agents.mkdir()
    (agents / "researcher.md").write_text(
        "---\nname: researcher\ndescription: Reads documentation on the web\ntools: WebFetch, Read\n---\nRead docs.\n"
    )
    task = {"description": "Read the docs", "prompt": "Read the widget docs.", "subagent_type": "researcher"}
    main_replies(fake_server, Reply.tool("Agent", task), Reply.text("The hook stopped the fetch."))
    fake_server.on(Reply.tool("WebFetch", {"url": web.url("/docs"), "prompt": "timeouts"}), purpose="subagent")
    fake_server.on(Reply.text("Could not fetch: the hook refused."), purpose="subagent")
    result = run_cli("-p", "read the docs with the researcher", env={"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"})
    assert result.returncode == 0, result.stderr
    first, second = fake_server.requests_for("subagent")
    assert sorted(tool_names(first)) == ["Read", "WebFetch"]
    [blocked] = [b for b in second.body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert blocked["is_error"] and "web fetches are off in this repository" in blocked["content"]
    assert not web.hits
