"""mcp_servers/config.py: Claude Code's MCP files and scopes, expansion, trust, approval, precedence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini.config import load_config
from claude_mini.config.edit import SettingsEditError
from claude_mini.mcp_servers.config import (
    DISABLED_WHY,
    MASK,
    UNTRUSTED_WHY,
    ServerSpec,
    approve,
    expand,
    load_servers,
)

STDIO = {"command": "npx", "args": ["-y", "db-server"], "env": {"DB_TOKEN": "s3cret"}}
HTTP = {"type": "http", "url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer s3cret"}}


def write(path: Path, data) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


@pytest.fixture
def files(isolated_env, repo):
    """Writers for .mcp.json and the user, local and managed settings of the repo."""
    where = {
        "project": repo / ".mcp.json",
        "user": isolated_env.home / "settings.json",
        "local": repo / ".claude" / "settings.local.json",
        "shared": repo / ".claude" / "settings.json",
        "managed": isolated_env.managed / "settings.json",
    }
    return lambda source, data: write(where[source], data)


def servers(data: dict) -> dict:
    return {"mcpServers": data}


def load(repo, trusted=True, environ=None):
    return load_servers(load_config(repo, trust_folder=trusted), environ=environ or {})


def names(specs) -> list[tuple[str, str]]:
    return [(spec.name, spec.scope) for spec in specs]


# ---- the formats


def test_stdio_and_http_servers_of_every_scope(files, repo):
    files("project", servers({"db": STDIO, "api": HTTP, "events": {"type": "sse", "url": "https://e/sse"}}))
    files("user", servers({"time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]}}))
    files("local", {"enableAllProjectMcpServers": True, **servers({"mine": {"command": "./mine"}})})
    found = load(repo)
    assert names(found.servers) == [
        ("api", "project"),
        ("db", "project"),
        ("events", "project"),
        ("mine", "local"),
        ("time", "user"),
    ]
    by_name = {spec.name: spec for spec in found.servers}
    assert by_name["db"] == ServerSpec(
        "db",
        "stdio",
        command="npx",
        args=("-y", "db-server"),
        env={"DB_TOKEN": "s3cret"},
        scope="project",
        file=str(repo.resolve() / ".mcp.json"),
    )
    assert (by_name["api"].transport, by_name["api"].url, dict(by_name["api"].headers)) == (
        "http",
        HTTP["url"],
        HTTP["headers"],
    )
    assert by_name["events"].transport == "sse"
    assert by_name["mine"].file == str(repo.resolve() / ".claude" / "settings.local.json")
    assert by_name["time"].args == ("mcp-server-time",)
    assert found.problems == [] and found.ignored == [] and found.pending_approval == []


@pytest.mark.parametrize(
    "entry, problem",
    [
        ("npx db", "must be an object, not a string"),
        ({"args": ["x"]}, 'needs "command"'),
        ({"command": "  "}, 'needs "command"'),
        ({"type": "http"}, 'needs "url"'),
        ({"type": "ws", "url": "ws://x"}, 'has the type "ws"'),
        ({"command": "x", "args": "-y db"}, '"args" that is not a list of strings'),
        ({"command": "x", "args": [1]}, '"args" that is not a list of strings'),
        (
            {"command": "x", "env": {"TOKEN": "s3cret", "PORT": 8080}},
            '"env" that is not an object of strings (PORT is a number)',
        ),
        (
            {"type": "sse", "url": "https://x", "headers": ["Authorization: x"]},
            '"headers" that is not an object of strings (a list)',
        ),
    ],
)
def test_a_bad_entry_is_one_problem_and_the_others_still_start(files, repo, entry, problem):
    files("project", servers({"bad": entry, "good": STDIO}))
    files("local", {"enabledMcpjsonServers": ["bad", "good"]})
    found = load(repo)
    assert names(found.servers) == [("good", "project")]
    [line] = found.problems
    assert line.startswith('Skipped MCP server "bad" in ') and problem in line
    assert "s3cret" not in line  # a value of env or headers is never shown


@pytest.mark.parametrize(
    "text, problem",
    [
        ("{not json", "is not valid JSON"),
        ("[1, 2]", "is not a JSON object"),
        (json.dumps({"mcpServers": ["db"]}), "mcpServers in"),
    ],
)
def test_a_broken_mcp_json_is_one_problem(files, repo, text, problem):
    files("project", text)
    files("user", servers({"time": {"command": "uvx"}}))
    found = load(repo)
    assert names(found.servers) == [("time", "user")]
    [line] = found.problems
    assert problem in line and ".mcp.json" in line


# ---- ${VAR} expansion


@pytest.mark.parametrize(
    "text, expected",
    [
        ("${HOME_DIR}/bin", "/home/me/bin"),
        ("${UNSET:-fallback}", "fallback"),
        ("${EMPTY:-fallback}", "fallback"),  # as a shell's :- (unset or empty)
        ("${HOME_DIR:-fallback}", "/home/me"),
        ("${EMPTY}", ""),
        ("$HOME_DIR and ${not-a-name}", "$HOME_DIR and ${not-a-name}"),  # only ${NAME} is a variable
        ("${A:-x}${B:-y}", "xy"),
    ],
)
def test_expand(text, expected):
    missing: list[str] = []
    assert expand(text, {"HOME_DIR": "/home/me", "EMPTY": ""}, missing) == expected
    assert missing == []


def test_expansion_in_command_args_env_url_and_headers(files, repo):
    files(
        "user",
        servers(
            {
                "db": {"command": "${BIN:-npx}", "args": ["--db", "${DB_URL}"], "env": {"TOKEN": "${TOKEN}"}},
                "api": {
                    "type": "http",
                    "url": "${API_URL:-https://default/mcp}",
                    "headers": {"Authorization": "Bearer ${TOKEN}"},
                },
            }
        ),
    )
    found = load(repo, environ={"DB_URL": "postgres://x", "TOKEN": "t0k"})
    db, api = found.servers[1], found.servers[0]
    assert (db.command, db.args, dict(db.env)) == ("npx", ("--db", "postgres://x"), {"TOKEN": "t0k"})
    assert (api.url, dict(api.headers)) == ("https://default/mcp", {"Authorization": "Bearer t0k"})
    assert db.redacted()["args"] == ["--db", "${DB_URL}"]  # listed as written, not with the value


def test_a_missing_variable_skips_the_server_with_one_line_naming_it(files, repo):
    files(
        "user",
        servers(
            {"db": {"command": "npx", "args": ["${DB_URL}", "${A}"], "env": {"X": "${A}"}}, "time": {"command": "uvx"}}
        ),
    )
    found = load(repo, environ={})
    assert names(found.servers) == [("time", "user")]
    [line] = found.problems
    assert 'Skipped MCP server "db"' in line and "DB_URL, A," in line and "${NAME:-default}" in line
    assert "Claude Code would start it with the literal text in their place; claude-mini does not" in line


# ---- trust and approval


def test_an_untrusted_folder_starts_only_user_servers(files, repo):
    files("project", servers({"db": STDIO}))
    files("local", {"enableAllProjectMcpServers": True, **servers({"mine": {"command": "./mine"}})})
    files("user", servers({"time": {"command": "uvx"}}))
    found = load(repo, trusted=False)
    assert names(found.servers) == [("time", "user")]
    assert [(s.name, s.scope, s.why) for s in found.ignored] == [
        ("db", "project", UNTRUSTED_WHY),
        ("mine", "local", UNTRUSTED_WHY),
    ]
    assert found.pending_approval == []


def test_approval_states(files, repo):
    files("project", servers({"a": STDIO, "b": STDIO, "c": STDIO, "d": STDIO}))
    files("local", {"enabledMcpjsonServers": ["a", "c"], "disabledMcpjsonServers": ["c"]})
    files("user", {"enabledMcpjsonServers": ["b"]})
    found = load(repo)
    assert names(found.servers) == [("a", "project"), ("b", "project")]
    assert [(s.name, s.why) for s in found.ignored] == [("c", DISABLED_WHY)]  # disabled wins
    assert names(found.pending_approval) == [("d", "project")]


def test_enable_all_project_servers_and_the_highest_layer_deciding_it(files, repo):
    files("project", servers({"a": STDIO, "off": STDIO}))
    files("user", {"enableAllProjectMcpServers": True})
    files("local", {"disabledMcpjsonServers": ["off"]})
    found = load(repo)
    assert names(found.servers) == [("a", "project")] and [s.name for s in found.ignored] == ["off"]
    files("shared", {"enableAllProjectMcpServers": False})  # the project's settings outrank the user's
    assert names(load(repo).pending_approval) == [("a", "project")]


def test_bad_approval_settings_are_problems(files, repo):
    files("project", servers({"a": STDIO}))
    files("local", {"enabledMcpjsonServers": "a", "enableAllProjectMcpServers": "yes"})
    found = load(repo)
    assert names(found.pending_approval) == [("a", "project")]
    assert len(found.problems) == 2 and all("ignored" in line for line in found.problems)


def test_approve_writes_the_local_settings_and_keeps_other_keys(files, repo):
    files("project", servers({"a": STDIO, "b": STDIO}))
    local = files("local", {"permissions": {"allow": ["Read"]}, "disabledMcpjsonServers": ["a"]})
    config = load_config(repo, trust_folder=True)
    approve(config, ["a", "b"], approved=True)
    data = json.loads(local.read_text())
    assert data == {
        "permissions": {"allow": ["Read"]},
        "disabledMcpjsonServers": [],
        "enabledMcpjsonServers": ["a", "b"],
    }
    assert local.read_text().startswith('{\n  "permissions"')  # pretty-printed
    assert names(load_servers(config, environ={}).servers) == [("a", "project"), ("b", "project")]
    approve(config, ["b"], approved=False)
    assert json.loads(local.read_text())["enabledMcpjsonServers"] == ["a"]
    assert json.loads(local.read_text())["disabledMcpjsonServers"] == ["b"]
    found = load_servers(config, environ={})  # this session follows the file
    assert names(found.servers) == [("a", "project")] and [s.why for s in found.ignored] == [DISABLED_WHY]


def test_approve_creates_the_file_and_this_session_sees_it(files, repo):
    files("project", servers({"a": STDIO}))
    config = load_config(repo, trust_folder=True)
    assert names(load_servers(config, environ={}).pending_approval) == [("a", "project")]
    approve(config, ["a"], approved=True)
    local = repo / ".claude" / "settings.local.json"
    assert json.loads(local.read_text()) == {"enabledMcpjsonServers": ["a"]}
    assert names(load_servers(config, environ={}).servers) == [("a", "project")]
    assert config.get("enabledMcpjsonServers") == ["a"]


def test_approve_leaves_a_broken_file_alone(files, repo):
    local = files("local", "{broken")
    config = load_config(repo, trust_folder=True)
    with pytest.raises(SettingsEditError, match="left unchanged"):
        approve(config, ["a"], approved=True)
    assert local.read_text() == "{broken"


# ---- one name in several scopes


def test_local_wins_over_project_which_wins_over_user(files, repo):
    files("project", servers({"db": STDIO, "api": HTTP}))
    files("local", {"enableAllProjectMcpServers": True, **servers({"db": {"command": "./my-db"}})})
    files("user", servers({"db": {"command": "user-db"}, "api": {"command": "user-api"}}))
    found = load(repo)
    assert names(found.servers) == [("api", "project"), ("db", "local")]
    assert [(s.name, s.scope) for s in found.ignored] == [("api", "user"), ("db", "project"), ("db", "user")]
    assert all("overridden by the" in s.why for s in found.ignored)


def test_a_server_that_does_not_start_hides_no_other(files, repo):
    files("project", servers({"db": STDIO}))
    files("user", servers({"db": {"command": "user-db"}}))
    found = load(repo)  # the project's db waits for approval: the user's starts meanwhile
    assert names(found.servers) == [("db", "user")] and names(found.pending_approval) == [("db", "project")]
    found = load(repo, trusted=False)
    assert names(found.servers) == [("db", "user")] and [s.why for s in found.ignored] == [UNTRUSTED_WHY]


def test_a_pending_project_server_hidden_by_a_local_one_is_not_asked_about(files, repo):
    files("project", servers({"db": STDIO}))
    files("local", servers({"db": {"command": "./my-db"}}))
    found = load(repo)
    assert names(found.servers) == [("db", "local")] and found.pending_approval == []
    assert "overridden by the local server" in found.ignored[0].why


# ---- redaction


def test_redacted_masks_env_and_header_values_and_keeps_names(files, repo):
    files("project", servers({"db": STDIO, "api": HTTP}))
    files("local", {"enableAllProjectMcpServers": True})
    found = load(repo)
    shown = json.dumps(found.to_json())
    assert "s3cret" not in shown
    api, db = found.servers
    assert db.redacted() == {
        "name": "db",
        "scope": "project",
        "file": db.file,
        "transport": "stdio",
        "command": "npx",
        "args": ["-y", "db-server"],
        "env": {"DB_TOKEN": MASK},
    }
    assert api.redacted()["headers"] == {"Authorization": MASK}
    assert "s3cret" not in repr(found.ignored) + repr([s.redacted() for s in found.ignored])


def test_a_spec_built_in_code_is_redacted_too():
    spec = ServerSpec("x", "http", url="https://x", headers={"Authorization": "Bearer s3cret"})
    assert spec.redacted()["headers"] == {"Authorization": MASK}


def test_an_untrusted_folder_cannot_approve_or_add_servers_through_its_settings(files, repo):
    """config.untrusted_part drops every MCP key of the repository's settings files (none is on
    its allow-list); disabledMcpjsonServers would only narrow, but nothing starts there anyway."""
    keys = {
        "mcpServers": {"x": {"command": "x"}},
        "enableAllProjectMcpServers": True,
        "enabledMcpjsonServers": ["x"],
        "disabledMcpjsonServers": ["y"],
    }
    files("local", keys)
    files("shared", keys)
    config = load_config(repo)
    assert not config.trusted and not any(key in config.settings for key in keys)
    for dropped in config.ignored.values():
        assert set(keys) <= set(dropped)
