"""hooks/config.py: Claude Code's `hooks` key from every settings layer, matchers, trust and policy."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from claude_mini.config import load_config
from claude_mini.hooks.config import (
    DEFAULT_TIMEOUT,
    NOT_FIRED_WHY,
    SESSION_END_TIMEOUT,
    UNTRUSTED_WHY,
    HookCommand,
    hooks_report,
    load_hooks,
    matcher_matches,
)


def command(text: str, **extra) -> dict:
    return {"type": "command", "command": text, **extra}


def on(event: str, *handlers: dict, matcher: str | None = None) -> dict:
    group: dict = {"hooks": list(handlers)}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def files(isolated_env, repo):
    """Writers for the user, project, local and managed settings of the repo."""
    where = {
        "user": isolated_env.home / "settings.json",
        "project": repo / ".claude" / "settings.json",
        "local": repo / ".claude" / "settings.local.json",
        "managed": isolated_env.managed / "settings.json",
    }
    return lambda source, data: write(where[source], data)


def hooks_in(repo, *, trusted: bool = True):
    return load_hooks(load_config(repo, trust_folder=trusted))


def test_every_layer_is_read_with_its_file_timeout_and_status_message(files, repo):
    user = files(
        "user", {"hooks": on("PreToolUse", command("fmt", timeout=5, statusMessage="Formatting"), matcher="Edit|Write")}
    )
    project = files("project", {"hooks": on("SessionStart", command("echo hi"))})
    local = files("local", {"hooks": on("Stop", command("notify"))})
    managed = files("managed", {"hooks": on("PostToolUse", command("audit"), matcher="*")})
    hooks = hooks_in(repo)
    assert hooks.commands == [
        HookCommand("PreToolUse", "Edit|Write", "fmt", 5.0, "user", str(user), "Formatting"),
        HookCommand("SessionStart", "", "echo hi", 600.0, "project", str(project)),
        HookCommand("Stop", "", "notify", 600.0, "local", str(local)),
        HookCommand("PostToolUse", "*", "audit", 600.0, "managed", str(managed)),
    ]
    assert hooks.ignored == [] and hooks.problems == []


@pytest.mark.parametrize(
    ("matcher", "value", "expected"),
    [
        ("", "Bash", True),
        ("*", "Bash", True),
        ("  ", "Read", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("bash", "Bash", False),
        ("Bash|Edit", "Edit", True),
        ("Bash|Edit", "Write", False),
        ("startup, resume", "resume", True),
        (" startup ", "startup", True),  # `,` lists, items trimmed
        ("resume startup", "startup", False),  # a space does not separate
        ("tartu|x-y", "startup", False),  # `-` keeps it a list of exact names
        ("^Bash", "BashOutput", True),
        ("Ed.t", "Edit", True),
        ("dit$", "Edit", True),  # searched
        ("^Bash$", "BashOutput", False),
        ("mcp__memory__.*", "mcp__memory__store", True),
        ("mcp__memory", "mcp__memory__store", False),
        ("Notebook.*", "Edit", False),
    ],
)
def test_matchers_follow_claude_code(matcher, value, expected):
    assert matcher_matches(matcher, value) is expected


def test_an_event_without_a_matcher_value_runs_every_matcher():
    assert HookCommand("UserPromptSubmit", "Bash", "x", 60, "user", "f").matches(None)


def test_for_event_picks_matching_hooks_and_runs_identical_commands_once(files, repo):
    files(
        "user",
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [command("check"), command("log")]},
                    {"matcher": "*", "hooks": [command("check")]},
                    {"matcher": "Edit", "hooks": [command("fmt")]},
                ],
                "SessionStart": [{"matcher": "startup|clear", "hooks": [command("ctx")]}],
            }
        },
    )
    files("project", {"hooks": on("PreToolUse", command("log", timeout=3))})
    hooks = hooks_in(repo)
    bash = hooks.for_event("PreToolUse", "Bash")
    assert [(h.command, h.source) for h in bash] == [("check", "user"), ("log", "user")]
    assert [h.command for h in hooks.for_event("PreToolUse", "Edit")] == ["check", "fmt", "log"]
    assert [h.command for h in hooks.for_event("SessionStart", "clear")] == ["ctx"]
    assert hooks.for_event("SessionStart", "resume") == [] and hooks.for_event("Stop") == []


def test_untrusted_folder_hooks_are_listed_as_ignored(files, repo):
    files("user", {"hooks": on("Stop", command("mine"))})
    files("project", {"hooks": on("PreToolUse", command("theirs"), matcher="Bash")})
    files("local", {"hooks": on("SessionStart", command("local one"))})
    hooks = hooks_in(repo, trusted=False)
    assert [h.command for h in hooks.commands] == ["mine"]
    assert [(h.command, h.source, h.why) for h in hooks.ignored] == [
        ("theirs", "project", UNTRUSTED_WHY),
        ("local one", "local", UNTRUSTED_WHY),
    ]
    config = load_config(repo)  # config/untrusted.py still drops them before anyone merges them
    assert list(config.ignored.values()) == [["hooks PreToolUse"], ["hooks SessionStart"]]
    assert "PreToolUse" not in config.settings["hooks"]


def test_a_folder_trusted_in_the_record_runs_its_hooks(files, repo, isolated_env):
    from tests.e2e.conftest import trust_folder

    files("project", {"hooks": on("Stop", command("theirs"))})
    trust_folder(isolated_env.home, repo)
    assert [h.command for h in load_hooks(load_config(repo)).commands] == ["theirs"]


def test_allow_managed_hooks_only_runs_only_managed_hooks(files, repo):
    files("user", {"hooks": on("Stop", command("mine"))})
    files("project", {"hooks": on("Stop", command("theirs"))})
    managed = files("managed", {"allowManagedHooksOnly": True, "hooks": on("Stop", command("org"))})
    hooks = hooks_in(repo)
    assert [h.command for h in hooks.commands] == ["org"]
    assert [h.command for h in hooks.ignored] == ["mine", "theirs"]
    assert all(
        h.why == f"allowManagedHooksOnly is true in the managed settings {managed}: only managed hooks run"
        for h in hooks.ignored
    )


def test_disable_all_hooks_in_managed_settings_disables_every_hook(files, repo):
    files("user", {"hooks": on("Stop", command("mine"))})
    files("managed", {"disableAllHooks": True, "hooks": on("Stop", command("org"))})
    hooks = hooks_in(repo)
    assert hooks.commands == [] and [h.command for h in hooks.ignored] == ["mine", "org"]
    assert all(h.why.startswith("disableAllHooks is true in the managed settings") for h in hooks.ignored)


def test_disable_all_hooks_elsewhere_cannot_disable_managed_hooks(files, repo):
    files("user", {"hooks": on("Stop", command("mine"))})
    local = files("local", {"disableAllHooks": True})
    files("managed", {"hooks": on("Stop", command("org"))})
    hooks = hooks_in(repo)
    assert [h.command for h in hooks.commands] == ["org"]
    [mine] = hooks.ignored
    assert mine.command == "mine" and mine.why.startswith(f"disableAllHooks is true in {local}")


def test_an_untrusted_folder_cannot_disable_the_users_hooks(files, repo):
    files("user", {"hooks": on("Stop", command("mine"))})
    files("project", {"disableAllHooks": True})
    assert [h.command for h in hooks_in(repo, trusted=False).commands] == ["mine"]


def test_a_broken_managed_file_stops_every_other_hook(files, repo, isolated_env):
    files("user", {"hooks": on("Stop", command("mine"))})
    (isolated_env.managed / "settings.json").write_text("{not json")
    hooks = hooks_in(repo)
    assert hooks.commands == [] and "managed settings file cannot be used" in hooks.ignored[0].why


def test_a_managed_policy_that_is_not_true_or_false_fails_closed(files, repo):
    files("user", {"hooks": on("Stop", command("mine"))})
    files("managed", {"allowManagedHooksOnly": "yes"})
    hooks = hooks_in(repo)
    assert hooks.commands == [] and "allowManagedHooksOnly" in hooks.ignored[0].why
    [problem] = hooks.problems
    assert "must be true or false" in problem and "read as true" in problem


def test_other_handler_types_and_events_claude_mini_does_not_fire_are_listed(files, repo):
    files(
        "user",
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "hooks": [
                            {"type": "prompt", "prompt": "Is this safe?"},
                            {"type": "http", "url": "http://localhost:1/h"},
                            command("if-hook", **{"if": "Bash(git push*)"}),
                        ]
                    }
                ],
                "PermissionRequest": [{"matcher": "Bash", "hooks": [command("approve")]}],
            }
        },
    )
    hooks = hooks_in(repo)
    assert hooks.commands == [] and hooks.problems == []
    assert [(h.event, h.command, h.why) for h in hooks.ignored] == [
        ("PreToolUse", "Is this safe?", "type prompt is not supported by claude-mini"),
        ("PreToolUse", "http://localhost:1/h", "type http is not supported by claude-mini"),
        (
            "PreToolUse",
            "if-hook",
            'its "if" condition is not supported by claude-mini; drop it and test the input in the command',
        ),
        ("PermissionRequest", "approve", NOT_FIRED_WHY),
    ]


def test_each_malformed_entry_is_one_problem_and_the_rest_of_the_file_works(files, repo):
    user = files(
        "user",
        {
            "hooks": {
                "PreTooluse": [{"hooks": [command("typo")]}],
                "Stop": {"hooks": [command("not a list")]},
                "SessionStart": [
                    "not an object",
                    {"matcher": 5, "hooks": [command("m")]},
                    {"matcher": "Bash(", "hooks": [command("bad regex")]},
                    {"matcher": "startup"},
                ],
                "PreToolUse": [
                    {
                        "matcher": "Bash",
                        "hooks": [
                            {"command": "no type"},
                            {"type": "shell", "command": "x"},
                            {"type": "command"},
                            command("t0", timeout=0),
                            command("ts", timeout="5"),
                            command("tb", timeout=True),
                            command("good", timeout=2.5),
                        ],
                    }
                ],
            }
        },
    )
    hooks = hooks_in(repo)
    assert [(h.command, h.timeout) for h in hooks.commands] == [("good", 2.5)]
    assert len(hooks.problems) == 12
    assert all(
        f" in {user}: it " in p and p.endswith("The file's other hooks still apply; fix the entry to use it.")
        for p in hooks.problems
    )
    text = "\n".join(hooks.problems)
    for expected in (
        "hooks.PreTooluse in",
        "did you mean PreToolUse?",
        "hooks.Stop in",
        "hooks.SessionStart.0 in",
        "hooks.SessionStart.2 in",
        "not a valid regular expression",
        "hooks.SessionStart.3 in",
        "hooks.PreToolUse.0.hooks.0 in",
        'has no "type"',
        'unknown type "shell"',
        'needs "command"',
        'has the timeout "5"',
        "has the timeout true",
    ):
        assert expected in text, expected


def test_session_end_hooks_get_a_short_default_timeout_and_keep_a_written_one(files, repo):
    files(
        "user",
        {
            "hooks": {
                "SessionEnd": [{"hooks": [command("quick"), command("slow", timeout=30)]}],
                "Stop": [{"hooks": [command("notify")]}],
            }
        },
    )
    assert [(h.command, h.timeout) for h in hooks_in(repo).commands] == [
        ("quick", SESSION_END_TIMEOUT),
        ("slow", 30.0),
        ("notify", DEFAULT_TIMEOUT),
    ]
    assert SESSION_END_TIMEOUT == 5.0


def test_a_command_with_a_nul_is_one_problem_and_the_rest_of_the_file_works(files, repo):
    user = files("user", {"hooks": on("PreToolUse", command("exit 2 \u0000"), command("guard"), matcher="Bash")})
    hooks = hooks_in(repo)
    assert [h.command for h in hooks.commands] == ["guard"]
    assert hooks.problems == [
        f"Skipped hooks.PreToolUse.0.hooks.0 in {user}: it has a NUL character in its "
        "command, which no shell can run. The file's other hooks still apply; fix the "
        "entry to use it."
    ]


def test_hooks_that_is_not_an_object_is_one_problem(files, repo):
    files("user", {"hooks": ["PreToolUse"]})
    files("project", {"hooks": on("Stop", command("theirs"))})
    hooks = hooks_in(repo)
    assert [h.command for h in hooks.commands] == ["theirs"]
    [problem] = hooks.problems
    assert problem.startswith("Skipped hooks in ") and "not a list" in problem


def test_to_json_has_a_stable_shape(files, repo):
    files("user", {"hooks": {**on("Stop", command("mine")), **on("Setup", command("setup"))}})
    data = hooks_in(repo).to_json()
    assert list(data) == ["hooks", "ignored", "problems"]
    assert list(data["hooks"][0]) == [
        "event",
        "matcher",
        "command",
        "timeout",
        "source",
        "file",
        "status_message",
        "once",
        "async",
    ]
    assert list(data["ignored"][0]) == ["event", "matcher", "command", "source", "file", "why"]
    json.dumps(data)


def render(lines: list[str]) -> str:
    console = Console(file=StringIO(), width=200, color_system=None)
    for line in lines:
        console.print(line, markup=False, highlight=False)
    return console.file.getvalue()


def test_the_report_groups_by_event_then_lists_what_does_not_run_and_the_problems(files, repo):
    user = files(
        "user",
        {
            "hooks": {
                **on("Stop", command("notify")),
                **on("PreToolUse", command("check", timeout=5), matcher="Bash"),
                "Nope": [],
            }
        },
    )
    project = files("project", {"hooks": on("PreToolUse", command("fmt"), matcher="Edit|Write")})
    config = load_config(repo)
    lines = hooks_report(load_hooks(config), config)
    assert lines == [
        "Hooks that run here (2):",
        "  PreToolUse",
        f"    Bash  check  (5 s; user: {user})",
        "  Stop",
        f"    *  notify  (600 s; user: {user})",
        "Hooks that do not run (1):",
        f"  PreToolUse  Edit|Write  fmt  (project: {project}): {UNTRUSTED_WHY}",
        "Problems (1):",
        f"  Skipped hooks.Nope in {user}: it is not a hook event (events are names like PreToolUse or "
        "SessionStart). The file's other hooks still apply; fix the entry to use it.",
    ]


def test_the_report_shows_control_characters_escaped(files, repo):
    files("user", {"hooks": on("Stop", command("printf 'a'\n\x1b]0;owned\x07 # \u202e"))})
    config = load_config(repo)
    text = render(hooks_report(load_hooks(config), config))
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "printf 'a'\\n\\x1b]0;owned\\x07 # \\u202e" in text


def test_no_hooks_is_one_line_saying_where_to_add_them(repo, isolated_env):
    config = load_config(repo)
    assert hooks_report(load_hooks(config), config) == [
        f'No hooks. Add them under "hooks" in {isolated_env.home / "settings.json"} (all your projects) '
        f"or {repo.resolve() / '.claude' / 'settings.json'} (this project), in Claude Code's format."
    ]
