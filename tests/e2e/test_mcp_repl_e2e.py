"""End to end: MCP in the REPL (a pseudo-terminal, pexpect) with the demo server over
stdio: /mcp, the approval question, a prompt as a slash command, a resource mention."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e import test_repl
from tests.e2e.conftest import wait_for_mcp_servers
from tests.e2e.test_repl import main_replies, wait_until
from tests.fake_anthropic import Reply

start = test_repl.start  # the fixture: a trusted repo, auto-memory off
DEMO = Path(__file__).resolve().parent.parent / "mcp_servers" / "demo_server.py"


def write_demo(repo: Path, *, approved: bool) -> None:
    """`.mcp.json` with the demo server (env value TOKEN must never be printed); approved or not."""
    entry = {"command": sys.executable, "args": [str(DEMO)], "env": {"DEMO_TOKEN": "s3cret-value"}}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"demo": entry}}))
    wait_for_mcp_servers(repo)
    if approved:
        (repo / ".claude").mkdir(exist_ok=True)
        (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["demo"]}))


def tool_names(request) -> list[str]:
    return [tool["name"] for tool in request.body.get("tools", [])]


def test_mcp_lists_the_connected_server_and_its_tools(start, fake_server, repo):
    write_demo(repo, approved=True)
    main_replies(fake_server, Reply.text("answered"))
    term = start()
    term.ready()
    term.submit("hi")  # the first request waits for the server: connected after it
    term.expect("answered")
    term.ready()
    term.submit("/mcp")
    term.expect(r"demo\s+connected\s+project\s+stdio\s+7 tools")
    term.ready()
    term.submit("/mcp demo")
    term.expect(r"mcp__demo__echo\s+Say the text back\.\s+\(read-only\)")
    term.expect(r"Prompts: /mcp__demo__greet")
    term.expect(r"Resources: @demo:demo://readme")
    assert "s3cret-value" not in term.output.getvalue()
    term.ready()
    term.submit("/mcp reconnect demo")
    term.expect(r"MCP server demo connected \(7 tools\); this conversation keeps the tool list it started with")


def test_the_approval_question_starts_the_server_and_its_tools_reach_the_first_request(start, fake_server, repo):
    write_demo(repo, approved=False)
    main_replies(fake_server, Reply.text("hello there"))
    term = start()
    term.expect("New MCP server found in .mcp.json: demo")
    term.expect(r"command: .*demo_server\.py")
    term.expect(r"env: DEMO_TOKEN=\*\*\*")
    term.child.send("y")
    term.ready()
    term.submit("hi")
    term.expect("hello there")
    [request] = fake_server.requests_for("main")
    assert "mcp__demo__echo" in tool_names(request)
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert settings["enabledMcpjsonServers"] == ["demo"]
    assert "s3cret-value" not in term.output.getvalue()
    term.submit("/exit")
    assert term.exit_status() == 0
    again = start()  # answered once: not asked again
    again.ready()
    again.submit("/exit")
    again.exit_status()
    assert "New MCP server found" not in again.output.getvalue()


def test_no_records_the_refusal_and_the_server_does_not_start(start, fake_server, repo):
    write_demo(repo, approved=False)
    main_replies(fake_server, Reply.text("no tools"))
    term = start()
    term.expect("New MCP server found in .mcp.json: demo")
    term.child.send("n")
    term.ready()
    term.submit("hi")
    term.expect("no tools")
    [request] = fake_server.requests_for("main")
    assert not [name for name in tool_names(request) if name.startswith("mcp__")]
    assert json.loads((repo / ".claude" / "settings.local.json").read_text())["disabledMcpjsonServers"] == ["demo"]
    term.submit("/mcp")
    term.expect(r"demo  \(project\): disabled")


def test_a_prompt_command_and_a_resource_mention(start, fake_server, repo):
    write_demo(repo, approved=True)
    main_replies(fake_server, Reply.text("Hello, Ada!"), Reply.text("read it"))
    term = start()
    term.ready()
    term.submit("/mcp__demo__greet Ada")  # waits for the server if it is still connecting
    term.expect("Hello, Ada!")
    term.ready()
    term.submit("/help")
    term.expect(r"/mcp__demo__greet <name>\s+Greet someone\. \(MCP prompt of demo\)")
    first = fake_server.requests_for("main")[0].body["messages"][-1]
    assert "Say hello to Ada." in json.dumps(first)
    term.ready()
    term.submit("what does @demo:demo://readme say? and @demo:demo://nothing")
    term.expect(r"@demo:demo://nothing was not attached")
    term.expect("read it")
    wait_until(lambda: len(fake_server.requests_for("main")) == 2)
    sent = json.dumps(fake_server.requests_for("main")[1].body["messages"][-1])
    assert '<attached-resource server=\\"demo\\" uri=\\"demo://readme\\">\\nThis is the demo server.' in sent
    assert "does not exist" not in term.output.getvalue()  # not taken for a file


def test_the_approval_of_an_mcp_call_shows_every_argument_and_the_description(start, fake_server, repo):
    write_demo(repo, approved=True)
    main_replies(fake_server, Reply.tool("mcp__demo__add", {"a": 2, "b": 40.5}), Reply.text("It is 42.5."))
    term = start()
    term.ready()
    term.submit("add them")
    term.expect(r"a: .{0,12}2")  # the name is bold
    term.expect(r"b: .{0,12}40\.5")
    term.expect("Add two numbers.")
    term.expect(r"Allow mcp__demo__add\?")
    term.child.send("1")
    term.expect("It is 42.5.")
