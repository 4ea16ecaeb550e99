"""The REPL's MCP parts: /mcp's listing, the approval question's answers, prompt arguments,
resource mentions (the demo server over stdio is tests/e2e/test_mcp_repl_e2e.py)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from prompt_toolkit.document import Document

from claude_mini.agent.lifecycle import Lifecycle
from claude_mini.base.notices import NoticeChannel
from claude_mini.commands.mcp import server_report, servers_report
from claude_mini.config import load_config
from claude_mini.mcp_servers.client import McpToolInfo
from claude_mini.mcp_servers.config import ServerSet, ServerSpec, load_servers
from claude_mini.mcp_servers.extras import PromptArg, PromptInfo
from claude_mini.mcp_servers.lifecycle import McpPart, McpSettings
from claude_mini.ui import commands, mcp_approval
from claude_mini.ui.mcp_commands import prompt_arguments
from claude_mini.ui.mentions import ProjectFiles, ReplCompleter, expand_mentions

SECRET = "s3cret-value"


def write_mcp_json(repo: Path, **servers) -> None:
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def stdio(command: str = "python") -> dict:
    return {"command": command, "args": ["server.py"], "env": {"TOKEN": SECRET}}


class FakeConnection:
    """What /mcp reads of a ServerConnection; `reconnect` ends in `then`."""

    def __init__(self, spec: ServerSpec, status: str = "connected", error: str = "", tools=(), then="connected"):
        self.spec, self.status, self.error, self.tools, self.problems = spec, status, error, list(tools), []
        self._client = None
        self.then = then

    async def wait_ready(self) -> None:
        pass

    async def reconnect(self) -> None:
        self.status = self.then
        self.error = "" if self.then == "connected" else "cannot start 'gone': no such command"


def spec(name: str, **kw) -> ServerSpec:
    return ServerSpec(
        name,
        kw.pop("transport", "stdio"),
        command="python",
        args=("server.py",),
        env={"TOKEN": SECRET},
        scope="project",
        file="/p/.mcp.json",
        **kw,
    )


def tool(server: str, name: str, description: str, **annotations) -> McpToolInfo:
    return McpToolInfo(server, name, description, {"type": "object"}, annotations)


def test_mcp_lists_status_scope_transport_tools_and_the_last_error():
    conns = {
        "db": FakeConnection(spec("db"), tools=[tool("db", "query", "Run SQL.")] * 3),
        "api": FakeConnection(
            ServerSpec("api", "http", url="https://x/mcp", headers={"Authorization": SECRET}, scope="user"),
            status="failed",
            error="cannot reach https://x/mcp: refused",
        ),
    }
    lines = servers_report(ServerSet(), conns)
    text = "\n".join(lines)
    assert lines[0] == "MCP servers:"
    assert "  api  failed      user     http" in text and "last error: cannot reach https://x/mcp: refused" in text
    assert "  db   connected   project  stdio  3 tools" in text
    assert SECRET not in text


def test_mcp_says_which_servers_did_not_start_and_why(slash, repo):
    write_mcp_json(repo, pending=stdio())
    out = slash.run("/mcp")
    assert "Not started:" in out and "pending  (project): this folder is not trusted" in out
    assert SECRET not in out


def test_mcp_with_nothing_configured_says_how_to_add_one(slash):
    assert "No MCP servers are configured" in slash.run("/mcp")


def test_mcp_name_lists_its_tools_with_the_first_line_and_the_read_only_hint():
    connection = FakeConnection(
        spec("db"), tools=[tool("db", "query", "Run SQL.\nMore.", readOnlyHint=True), tool("db", "drop", "")]
    )
    lines = server_report(connection, None)
    assert lines[0] == "db: connected · project (/p/.mcp.json) · stdio · python server.py"
    assert "  env: TOKEN=***" in lines
    assert "  mcp__db__query  Run SQL.  (read-only)" in lines and "  mcp__db__drop" in lines
    assert SECRET not in "\n".join(lines)


def with_hook(runtime, *conns: FakeConnection) -> McpPart:
    manager = SimpleNamespace(connections={c.spec.name: c for c in conns}, start=lambda: None)
    hook = McpPart(manager, McpSettings(), NoticeChannel())  # type: ignore[arg-type]
    runtime.agent.lifecycle = Lifecycle([*runtime.lifecycle.parts, hook])
    return hook


def test_reconnect_says_when_the_tools_join(slash):
    hook = with_hook(
        slash.runtime, FakeConnection(spec("db"), status="failed", error="crashed", tools=[tool("db", "q", "")])
    )
    assert "MCP server db connected (1 tool); its tools are in the next request." in slash.run("/mcp reconnect db")
    hook.fixed = True  # the conversation's first request fixed the tool list without db
    out = slash.run("/mcp reconnect db")
    assert "its tools join at the start of the next turn" in out
    hook.listed = {"db"}
    assert "keeps the tool list it started with" in slash.run("/mcp reconnect db")


def test_reconnect_that_fails_says_why_and_an_unknown_name_lists_the_servers(slash):
    with_hook(slash.runtime, FakeConnection(spec("db"), then="failed"))
    assert "✗ MCP server db failed: cannot start 'gone': no such command" in slash.run("/mcp reconnect db")
    assert "No MCP server 'nope' in this session (servers: db)" in slash.run("/mcp reconnect nope")
    assert "No MCP server 'nope' in this session" in slash.run("/mcp nope")


# ---- approval


@pytest.fixture
def pending(isolated_env, repo):
    """A trusted repo whose .mcp.json has two servers nobody answered about yet."""
    write_mcp_json(
        repo,
        alpha=stdio(),
        beta={"type": "http", "url": "https://x/mcp", "headers": {"Authorization": f"Bearer {SECRET}"}},
    )
    return load_config(repo, trust_folder=True)


def local_settings(repo: Path) -> dict:
    return json.loads((repo / ".claude" / "settings.local.json").read_text())


def test_the_question_shows_the_command_or_url_with_secrets_masked(pending):
    alpha, beta = load_servers(pending).pending_approval
    assert mcp_approval.server_lines(alpha)[:3] == [
        "New MCP server found in .mcp.json: alpha",
        "command: python server.py",
        "env: TOKEN=***",
    ]
    assert mcp_approval.server_lines(beta)[1:3] == ["http url: https://x/mcp", "headers: Authorization: ***"]
    assert SECRET not in json.dumps([mcp_approval.server_lines(alpha), mcp_approval.server_lines(beta)])


def test_answers_are_recorded_in_settings_local_json(pending, repo, isolated_env, capsys):
    asked: list[str] = []
    answers = {"alpha": "yes", "beta": "no"}
    mcp_approval.confirm_mcp_servers(pending, ask=lambda s: asked.append(s.name) or answers[s.name])
    assert asked == ["alpha", "beta"]
    assert local_settings(repo) == {"enabledMcpjsonServers": ["alpha"], "disabledMcpjsonServers": ["beta"]}
    assert isolated_env.git_ignore.read_text() == "**/.claude/settings.local.json\n"  # the new file is git-ignored
    assert capsys.readouterr().out.count("your global git ignore") == 1
    found = load_servers(pending)  # the session's settings followed the file
    assert [s.name for s in found.servers] == ["alpha"] and not found.pending_approval
    mcp_approval.confirm_mcp_servers(pending, ask=lambda s: pytest.fail("asked again"))


def test_all_enables_every_project_server_and_asks_no_more(pending, repo):
    asked: list[str] = []
    mcp_approval.confirm_mcp_servers(pending, ask=lambda s: asked.append(s.name) or "all")
    assert asked == ["alpha"]
    assert local_settings(repo) == {"enabledMcpjsonServers": ["alpha"], "enableAllProjectMcpServers": True}
    assert [s.name for s in load_servers(pending).servers] == ["alpha", "beta"]


def test_escape_records_nothing_and_the_servers_stay_off(pending, repo):
    mcp_approval.confirm_mcp_servers(pending, ask=lambda s: None)
    assert not (repo / ".claude" / "settings.local.json").exists()
    assert len(load_servers(pending).pending_approval) == 2


def test_an_unwritable_settings_file_is_one_line(pending, repo, capsys):
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text("{broken")
    mcp_approval.confirm_mcp_servers(pending, ask=lambda s: "yes")
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    assert len(lines) == 2 and all(
        line.startswith("claude-mini: could not record your answer about MCP server") for line in lines
    )
    assert (repo / ".claude" / "settings.local.json").read_text() == "{broken"


# ---- prompt arguments


GREET = PromptInfo("demo", "greet", "", (PromptArg("name", required=True), PromptArg("tone")))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("Ada", {"name": "Ada"}),
        ("Ada warmly and briefly", {"name": "Ada", "tone": "warmly and briefly"}),  # the last takes the rest
        ("tone=dry Ada", {"name": "Ada", "tone": "dry"}),
        ('name="Ada Lovelace" tone=dry', {"name": "Ada Lovelace", "tone": "dry"}),
        ("'Ada Lovelace'", {"name": "Ada Lovelace"}),
        ("x=1", {"name": "x=1"}),  # not a declared argument: a word
        ("it's", {"name": "it's"}),  # an unbalanced quote: plain words
    ],
)
def test_prompt_arguments_by_position_or_name(args, expected):
    assert prompt_arguments(GREET, args) == expected


def test_prompt_arguments_missing_or_too_many_are_one_line():
    with pytest.raises(ValueError, match=r"^/mcp__demo__greet needs name\. Usage: /mcp__demo__greet <name> \[tone\]$"):
        prompt_arguments(GREET, "tone=dry")
    with pytest.raises(ValueError, match="takes no more arguments than none"):
        prompt_arguments(PromptInfo("demo", "plain"), "extra words")


# ---- resource mentions


def test_a_resource_mention_is_not_taken_for_a_file(repo):
    files = ProjectFiles(repo)
    found = expand_mentions(
        "see @demo:demo://readme and @other:x", cwd=repo, project_root=repo, ignored=files.is_ignored, servers={"demo"}
    )
    assert found.warnings == ["@other:x does not exist; sent without it."]


def test_completion_lists_the_listed_resources(repo):
    (repo / "README.md").write_text("# hi\n")
    completer = ReplCompleter(ProjectFiles(repo), resources=lambda: [("demo:demo://readme", "readme")])
    shown = [c.text for c in completer.get_completions(Document("look at @demo:re"), None)]
    assert shown == ["@demo:demo://readme"]
    assert [c.text for c in completer.get_completions(Document("@READ"), None)] == ["@demo:demo://readme", "@README.md"]


def test_a_prompt_command_sends_the_prompt_text(slash, monkeypatch):
    from claude_mini.mcp_servers import extras
    from claude_mini.ui.mcp_commands import register_prompts

    connection = FakeConnection(spec("demo"))
    with_hook(slash.runtime, connection)
    calls = []

    async def get_prompt(conn, name, arguments):
        calls.append((conn, name, arguments))
        return "Say hello to Ada."

    monkeypatch.setattr(extras, "get_prompt", get_prompt)
    table = commands.session_table(slash.runtime)
    register_prompts(table, connection, extras.Listing(None, prompts=[GREET]))  # type: ignore[arg-type]
    try:
        assert slash.run("/mcp__demo__greet Ada") == ""
        assert calls == [(connection, "greet", {"name": "Ada"})] and slash.host.turns == ["Say hello to Ada."]
        assert "needs name" in slash.run("/mcp__demo__greet")
        assert "/mcp__demo__greet <name> [tone]" in slash.run("/help")
    finally:
        register_prompts(table, connection, None)
    assert "Unknown command /mcp__demo__greet" in slash.run("/mcp__demo__greet Ada")
