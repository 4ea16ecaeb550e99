"""End to end: `claude-mini hooks list [--json]` and the REPL's `/hooks` list every hook
with the file it comes from, and say why the ones that do not run do not."""

from __future__ import annotations

import json

import pytest

from claude_mini.hooks.config import NOT_FIRED_WHY, UNTRUSTED_WHY
from tests.e2e.conftest import trust_folder
from tests.e2e.test_repl import start  # noqa: F401 - the fixture

PROJECT_HOOKS = {
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./block-rm.sh", "timeout": 10}]}],
        "PermissionRequest": [{"hooks": [{"type": "command", "command": "./approve.sh"}]}],
    }
}
USER_HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}


@pytest.fixture
def settings(repo, isolated_env):
    """The repo's .claude/settings.json and the user's settings, both with hooks."""
    (repo / ".claude").mkdir()
    project = repo / ".claude" / "settings.json"
    project.write_text(json.dumps(PROJECT_HOOKS))
    user = isolated_env.home / "settings.json"
    user.write_text(json.dumps(USER_HOOKS))
    return {"project": str(project.resolve()), "user": str(user)}


def listed(result) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_hooks_list_json_in_a_trusted_folder(run_cli, repo, isolated_env, settings):
    trust_folder(isolated_env.home, repo)
    data = listed(run_cli("hooks", "list", "--json"))
    assert data == {
        "hooks": [
            {
                "event": "Stop",
                "matcher": "",
                "command": "notify-send done",
                "timeout": 600.0,
                "source": "user",
                "file": settings["user"],
                "status_message": "",
                "once": False,
                "async": False,
            },
            {
                "event": "PreToolUse",
                "matcher": "Bash",
                "command": "./block-rm.sh",
                "timeout": 10.0,
                "source": "project",
                "file": settings["project"],
                "status_message": "",
                "once": False,
                "async": False,
            },
        ],
        "ignored": [
            {
                "event": "PermissionRequest",
                "matcher": "",
                "command": "./approve.sh",
                "source": "project",
                "file": settings["project"],
                "why": NOT_FIRED_WHY,
            }
        ],
        "problems": [],
    }


def test_hooks_list_json_in_an_untrusted_folder(run_cli, settings):
    data = listed(run_cli("hooks", "list", "--json"))
    assert [hook["command"] for hook in data["hooks"]] == ["notify-send done"]
    assert [(hook["command"], hook["why"]) for hook in data["ignored"]] == [
        ("./block-rm.sh", UNTRUSTED_WHY),
        ("./approve.sh", NOT_FIRED_WHY),
    ]
    trusted = listed(run_cli("hooks", "list", "--json", "--trust-folder"))
    assert [hook["command"] for hook in trusted["hooks"]] == ["notify-send done", "./block-rm.sh"]


def test_hooks_list_prints_the_listing_and_the_problems(run_cli, repo, isolated_env, settings):
    broken = {"hooks": {"PreTooluse": [{"hooks": [{"type": "command", "command": "x"}]}]}}
    (repo / ".claude" / "settings.local.json").write_text(json.dumps(broken))
    trust_folder(isolated_env.home, repo)
    result = run_cli("hooks", "list")
    assert result.returncode == 0 and result.stderr == ""
    local = str((repo / ".claude" / "settings.local.json").resolve())
    assert result.stdout.splitlines() == [
        "Hooks that run here (2):",
        "  PreToolUse",
        f"    Bash  ./block-rm.sh  (10 s; project: {settings['project']})",
        "  Stop",
        f"    *  notify-send done  (600 s; user: {settings['user']})",
        "Hooks that do not run (1):",
        f"  PermissionRequest  *  ./approve.sh  (project: {settings['project']}): {NOT_FIRED_WHY}",
        "Problems (1):",
        f"  Skipped hooks.PreTooluse in {local}: it is not a hook event (did you mean PreToolUse?). "
        "The file's other hooks still apply; fix the entry to use it.",
    ]


def test_hooks_list_without_hooks_says_where_to_add_them(run_cli, repo, isolated_env):
    result = run_cli("hooks", "list")
    assert result.returncode == 0
    assert result.stdout == (
        f'No hooks. Add them under "hooks" in {isolated_env.home / "settings.json"} '
        f"(all your projects) or {repo.resolve() / '.claude' / 'settings.json'} "
        "(this project), in Claude Code's format.\n"
    )


def test_slash_hooks_lists_them_in_the_repl_and_help_names_it(start, settings):  # noqa: F811
    term = start()
    term.ready()
    term.submit("/hooks")
    term.expect(r"Hooks that run here \(2\):")
    # The settings file's path is long (and longer under xdist): it wraps anywhere, so only the
    # words around it are matched.
    term.expect(r"Bash  ./block-rm.sh  \(10 s; project:")
    term.expect(r"PermissionRequest  \*  ./approve.sh  \(project:")
    term.expect(r"not\s+fired\s+by\s+claude-mini")
    term.ready()
    term.submit("/help")
    term.expect(r"/hooks\s+List the hooks from the settings files")
    term.ready()
    term.submit("/exit")
    assert term.exit_status() == 0
