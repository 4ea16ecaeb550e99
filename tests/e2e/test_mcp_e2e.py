"""End to end: MCP servers in a real `claude-mini -p` session against the fake model.

The demo server (tests/mcp_servers/demo_server.py) over stdio and streamable HTTP; the tool list
the API sees (built-ins, then `mcp__<server>__*` sorted, the same in every request and fork);
permissions; a call timeout; servers that cannot start or were not approved; recall seeing MCP
tools; and a real published server (`mcp-server-time` from PyPI, run with `uvx` as users do).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from tests.e2e.conftest import MCP_CONNECT_WAIT_MS, json_lines, trust_folder
from tests.fake_anthropic import Reply
from tests.mcp_servers.test_client import start_http_server

DEMO = str(Path(__file__).resolve().parents[1] / "mcp_servers" / "demo_server.py")
DEMO_SERVER = {"command": sys.executable, "args": [DEMO]}
DEMO_TOOLS = ["add", "big", "echo", "fail", "pid", "slow", "spawn"]
NO_MEMORY = {"CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
SECRET = "sk-live-do-not-print-4711"


def project(
    repo: Path, home: Path, servers: dict[str, Any], *, approved: list[str] | None = None, **settings: Any
) -> None:
    """A trusted repository whose `.mcp.json` has `servers`, approved (all by default) in
    .claude/settings.local.json, with `settings` in .claude/settings.json."""
    trust_folder(home, repo)
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    (repo / ".claude").mkdir(exist_ok=True)
    names = list(servers) if approved is None else approved
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": names}))
    # The first request waits for servers still connecting: the product's 10 s is too short for a
    # Python server's start on a loaded machine (its tools were missing from the request).
    mcp = {"connectTimeoutMs": MCP_CONNECT_WAIT_MS, **settings.pop("mcp", {})}
    (repo / ".claude" / "settings.json").write_text(json.dumps({"recall": {"strategy": "off"}, "mcp": mcp, **settings}))


def tool_names(request) -> list[str]:
    return [tool["name"] for tool in request.body["tools"]]


def tool_results(fake_server) -> list[dict]:
    """Every tool_result block the model was sent, in order."""
    last = fake_server.requests_for("main")[-1]
    return [
        block
        for message in last.body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def text_of(result: dict) -> str:
    content = result["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def add_call(fake_server, answer: str = "2 + 3 = 5") -> None:
    fake_server.on(Reply.tool("mcp__demo__add", {"a": 2, "b": 3}), purpose="main", times=1)
    fake_server.on(Reply.text(answer), purpose="main", times=1)


def test_a_stdio_server_tool_answers_and_the_tool_list_is_the_same_everywhere(run_cli, fake_server, repo, isolated_env):
    """Auto memory on: the extraction fork after the turn (it states a preference, so the gate lets
    it run) must send the main agent's tool list."""
    project(repo, isolated_env.home, {"demo": DEMO_SERVER})
    add_call(fake_server)
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    result = run_cli("-p", "add 2 and 3 with the demo server; always use it for sums", "--allowedTools", "mcp__demo")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "2 + 3 = 5\n"
    [added] = tool_results(fake_server)
    assert not added.get("is_error") and json.loads(text_of(added)) == {"sum": 5.0}

    first, second = fake_server.requests_for("main")
    names = tool_names(first)
    builtins = [name for name in names if not name.startswith("mcp__")]
    assert builtins and names == builtins + [f"mcp__demo__{tool}" for tool in DEMO_TOOLS]
    add_schema = next(t for t in first.body["tools"] if t["name"] == "mcp__demo__add")
    assert add_schema["description"] == "Add two numbers."
    assert set(add_schema["input_schema"]["properties"]) == {"a", "b"}
    [extract, *_] = fake_server.requests_for("extract")
    assert first.body["tools"] == second.body["tools"] == extract.body["tools"]


def test_a_streamable_http_server_tool_answers(run_cli, fake_server, repo, isolated_env):
    proc, url = start_http_server()
    try:
        project(repo, isolated_env.home, {"web": {"type": "http", "url": url}})
        fake_server.on(Reply.tool("mcp__web__echo", {"text": "over HTTP"}), purpose="main", times=1)
        fake_server.on(Reply.text("It said: over HTTP"), purpose="main", times=1)
        result = run_cli("-p", "echo over HTTP", "--allowedTools", "mcp__web", env=NO_MEMORY)
    finally:
        proc.kill()
        proc.wait()
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It said: over HTTP\n"
    [echoed] = tool_results(fake_server)
    assert not echoed.get("is_error") and text_of(echoed) == "over HTTP"
    assert "mcp__web__echo" in tool_names(fake_server.requests_for("main")[0])


def test_an_is_error_result_reaches_the_model_as_an_error_tool_result(run_cli, fake_server, repo, isolated_env):
    project(repo, isolated_env.home, {"demo": DEMO_SERVER})
    fake_server.on(Reply.tool("mcp__demo__fail", {}), purpose="main", times=1)
    fake_server.on(Reply.text("The tool failed."), purpose="main", times=1)
    result = run_cli("-p", "try the failing tool", "--allowedTools", "mcp__demo", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    [failed] = tool_results(fake_server)
    assert failed["is_error"] is True and "the demo tool failed on purpose" in text_of(failed)


@pytest.mark.parametrize(
    ("flags", "settings", "outcome"),
    [
        ([], {}, "refused"),
        (["--allowedTools", "mcp__demo"], {}, "ran"),
        (["--allowedTools", "mcp__demo"], {"permissions": {"deny": ["mcp__demo__add"]}}, "denied"),
    ],
    ids=["default-mode-asks", "allowed-by-server-rule", "deny-wins"],
)
def test_permission_rules_apply_to_mcp_tools_by_name(
    run_cli, fake_server, repo, isolated_env, flags, settings, outcome
):
    project(repo, isolated_env.home, {"demo": DEMO_SERVER}, **settings)
    add_call(fake_server, "done")
    result = run_cli("-p", "add 2 and 3", *flags, env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    [added] = tool_results(fake_server)
    if outcome == "ran":
        assert not added.get("is_error") and json.loads(text_of(added)) == {"sum": 5.0}
    elif outcome == "refused":  # print mode cannot ask, so what would ask is refused
        assert added["is_error"] and "cannot ask" in text_of(added) and "mcp__demo__add" in text_of(added)
    else:
        assert added["is_error"] and "Denied by project rule mcp__demo__add" in text_of(added)


@pytest.mark.parametrize("trusted", [True, False], ids=["hints-trusted", "hints-not-trusted"])
def test_read_only_hints_let_a_tool_run_unasked_only_where_a_setting_trusts_them(
    run_cli, fake_server, repo, isolated_env, trusted
):
    project(repo, isolated_env.home, {"demo": DEMO_SERVER}, mcp={"trustReadOnlyHints": trusted})
    fake_server.on(Reply.tool("mcp__demo__echo", {"text": "hinted"}), purpose="main", times=1)
    add_call(fake_server, "done")  # add has no readOnlyHint: it asks either way
    result = run_cli("-p", "echo, then add", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    echoed, added = tool_results(fake_server)
    assert (text_of(echoed) == "hinted") is trusted and bool(echoed.get("is_error")) is not trusted
    assert added["is_error"] and "cannot ask" in text_of(added)


def test_a_call_that_times_out_is_one_error_result_and_the_session_goes_on(
    run_cli, fake_server, repo, isolated_env, tmp_path
):
    marker = tmp_path / "slow.marker"
    project(repo, isolated_env.home, {"demo": DEMO_SERVER})
    fake_server.on(Reply.tool("mcp__demo__slow", {"seconds": 300, "marker": str(marker)}), purpose="main", times=1)
    add_call(fake_server, "The slow one timed out; 2 + 3 = 5.")
    # MCP_TOOL_TIMEOUT is not a CLAUDE_MINI_ variable, so this run is a real subprocess.
    result = run_cli(
        "-p",
        "be slow, then add",
        "--allowedTools",
        "mcp__demo",
        env={**NO_MEMORY, "MCP_TOOL_TIMEOUT": "500"},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The slow one timed out; 2 + 3 = 5.\n"
    timed_out, added = tool_results(fake_server)
    assert timed_out["is_error"] and "0.5 s" in text_of(timed_out), text_of(timed_out)
    assert not added.get("is_error") and json.loads(text_of(added)) == {"sum": 5.0}
    assert marker.read_text() == "cancelled"  # the server was told to stop the call


def test_a_server_whose_command_does_not_exist_is_one_line_and_the_answer_comes(
    run_cli, fake_server, repo, isolated_env
):
    project(repo, isolated_env.home, {"demo": DEMO_SERVER, "gone": {"command": "/no/such/mcp-server"}})
    fake_server.on(Reply.text("Answered anyway."), purpose="main", times=1)
    result = run_cli("-p", "hello there", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Answered anyway.\n"
    lines = [line for line in result.stderr.splitlines() if "gone" in line]
    assert len(lines) == 1 and "/no/such/mcp-server" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
    names = tool_names(fake_server.requests_for("main")[0])
    assert "mcp__demo__add" in names and not any(name.startswith("mcp__gone__") for name in names)


def test_an_unapproved_project_server_is_not_started_and_its_tools_are_absent(
    run_cli, fake_server, repo, isolated_env, tmp_path
):
    started = tmp_path / "started"
    spy = {"command": sys.executable, "args": ["-c", f"open({str(started)!r}, 'w')"]}
    project(repo, isolated_env.home, {"demo": DEMO_SERVER, "spy": spy}, approved=["demo"])
    fake_server.on(Reply.text("Hi."), purpose="main", times=1)
    result = run_cli("-p", "hello there", env=NO_MEMORY)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "spy" in line]
    assert len(lines) == 1 and "approval" in lines[0], result.stderr
    assert not started.exists()
    names = tool_names(fake_server.requests_for("main")[0])
    assert "mcp__demo__add" in names and not any(name.startswith("mcp__spy__") for name in names)


def test_secrets_in_env_and_headers_are_never_printed(run_cli, fake_server, repo, isolated_env):
    project(
        repo,
        isolated_env.home,
        {
            "demo": {**DEMO_SERVER, "env": {"DEMO_TOKEN": SECRET}},
            "api": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": f"Bearer {SECRET}"}},
        },
    )
    outputs = [
        run_cli("mcp", "list"),
        run_cli("mcp", "list", "--json"),
        run_cli("mcp", "list", "--check"),
        run_cli("mcp", "list", "--check", "--json"),
        run_cli("mcp", "get", "demo"),
        run_cli("mcp", "get", "api"),
    ]
    for result in outputs:
        assert result.returncode == 0, result.stderr
        assert SECRET not in result.stdout + result.stderr
    assert "demo: " in outputs[2].stdout and "connected" in outputs[2].stdout  # --check really connected
    assert "DEMO_TOKEN=***" in outputs[4].stdout


def test_recall_lists_an_mcp_tool_used_in_the_last_turn(run_cli, fake_server, repo, isolated_env):
    """The recall side model's 'recently used tools' includes mcp__* names."""
    project(repo, isolated_env.home, {"demo": DEMO_SERVER})
    (repo / ".claude" / "settings.json").write_text(json.dumps({"recall": {"strategy": "model"}}))
    added = run_cli(
        "memory",
        "add",
        "--type",
        "reference",
        "The demo MCP server's add tool takes two numbers a and b and returns their sum.",
    )
    assert added.returncode == 0, added.stderr
    # A second, unrelated memory: the first turn's local pass sends the one above, and a
    # manifest with nothing left to offer makes no recall request.
    other = run_cli("memory", "add", "--type", "project", "Release notes go in CHANGELOG.md under Unreleased.")
    assert other.returncode == 0, other.stderr
    fake_server.on(Reply.json({"selected_memories": []}), purpose="recall", times=None)
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    add_call(fake_server)
    first = run_cli("-p", "add 2 and 3 with the demo server", "--allowedTools", "mcp__demo")
    assert first.returncode == 0, first.stderr
    [before] = fake_server.requests_for("recall")
    assert "Recently used tools: none" in json.dumps(before.body)
    fake_server.on(Reply.text("Use add again."), purpose="main", times=1)
    second = run_cli("-p", "-c", "how do I add more numbers with the demo server?", "--allowedTools", "mcp__demo")
    assert second.returncode == 0, second.stderr
    after = fake_server.requests_for("recall")[-1]
    assert after is not before and "Recently used tools: mcp__demo__add" in json.dumps(after.body)


# --- a real published server ----------------------------------------------------------------

TIME_SERVER = "mcp-server-time"


@pytest.fixture(scope="session")
def uvx_time_server() -> dict[str, Any]:
    """`mcp-server-time` from PyPI, installed into uv's own cache (kept across runs, so a second
    run is fast); skips only when the registry cannot be reached."""
    uvx = shutil.which("uvx")
    assert uvx, "uvx is needed for this test (pip install uv)"
    warm = [uvx, "--from", TIME_SERVER, "python", "-c", "pass"]
    if subprocess.run([*warm[:1], "--offline", *warm[1:]], capture_output=True).returncode != 0:
        installed = subprocess.run(warm, capture_output=True, text=True, timeout=300)
        if installed.returncode != 0:
            said = installed.stderr.strip().splitlines() or ["no output"]
            if any(word in installed.stderr.lower() for word in ("failed to fetch", "connect", "dns", "timed out")):
                pytest.skip(f"cannot reach the package registry to install {TIME_SERVER}: {said[0]} ({said[-1]})")
            raise AssertionError(f"uvx could not install {TIME_SERVER}: {installed.stderr}")
    return {"command": uvx, "args": [TIME_SERVER, "--local-timezone", "UTC"]}


def test_a_real_published_server_from_pypi_answers_with_the_real_time(
    run_cli, fake_server, repo, isolated_env, uvx_time_server
):
    project(repo, isolated_env.home, {"time": uvx_time_server})
    fake_server.on(Reply.tool("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}), purpose="main", times=1)
    fake_server.on(Reply.text("It is the time above in Tokyo."), purpose="main", times=1)
    before = datetime.now(ZoneInfo("Asia/Tokyo")).replace(microsecond=0)
    result = run_cli(
        "-p",
        "What time is it in Tokyo?",
        "--allowedTools",
        "mcp__time",
        "--output-format",
        "stream-json",
        env=NO_MEMORY,
        timeout=120,
    )
    after = datetime.now(ZoneInfo("Asia/Tokyo"))
    assert result.returncode == 0, result.stderr
    assert json_lines(result.stdout)[-1]["result"] == "It is the time above in Tokyo."
    names = tool_names(fake_server.requests_for("main")[0])
    assert [n for n in names if n.startswith("mcp__")] == ["mcp__time__convert_time", "mcp__time__get_current_time"]
    [answer] = tool_results(fake_server)
    assert not answer.get("is_error"), text_of(answer)
    got = json.loads(text_of(answer))
    assert got["timezone"] == "Asia/Tokyo"
    when = datetime.fromisoformat(got["datetime"])
    assert when.utcoffset() == ZoneInfo("Asia/Tokyo").utcoffset(when.replace(tzinfo=None))
    assert before <= when <= after  # the server's real clock, not a canned value
    assert got["day_of_week"] == when.strftime("%A")


RAW = str(Path(__file__).resolve().parents[1] / "mcp_servers" / "raw_server.py")


def test_one_bad_tool_schema_skips_that_tool_and_keeps_the_server(run_cli, fake_server, repo, isolated_env):
    """A server listing one tool with an input schema the SDK cannot read (and two more
    bad ones) keeps its good tool, which the model calls; each bad tool is one line on stderr."""
    project(repo, isolated_env.home, {"raw": {"command": sys.executable, "args": [RAW], "env": {"RAW_BAD_TOOLS": "1"}}})
    fake_server.on(Reply.tool("mcp__raw__good", {"x": "hi"}), purpose="main", times=1)
    fake_server.on(Reply.text("It said hi."), purpose="main", times=1)
    result = run_cli("-p", "call the good tool", "--allowedTools", "mcp__raw", env=NO_MEMORY)
    assert result.returncode == 0 and result.stdout == "It said hi.\n", result.stderr
    first = fake_server.requests_for("main")[0]
    assert [n for n in tool_names(first) if n.startswith("mcp__")] == ["mcp__raw__good"]
    [answered] = tool_results(fake_server)
    assert not answered.get("is_error") and text_of(answered) == "good: hi"
    problems = [line for line in result.stderr.splitlines() if "MCP server raw" in line]
    assert len(problems) == 3 and "failed" not in result.stderr, result.stderr
    assert any(
        "tool 'listy' skipped: its input schema is not valid (type: Input should be 'object')" in line
        for line in problems
    )
    assert any("tool 'bare' skipped: it has no input schema" in line for line in problems)
    assert any("tool 'typo' skipped: its input schema is not valid JSON schema" in line for line in problems)
