"""PermissionPolicy and ExtractionPolicy: modes, rules, layers, paths and forked-agent limits."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from claude_mini.permissions import (
    Allow,
    Ask,
    Deny,
    ExtractionPolicy,
    PermissionPolicy,
    RuleError,
    parse_rule,
)

from .policies import bash, edit, policy

MANAGED = "/etc/claude-mini/settings.json"


# ---------------------------------------------------------------- modes

MATRIX = [
    # tool, input, default, acceptEdits, plan, bypassPermissions
    ("Read", {"file_path": "src/a.py"}, Allow, Allow, Allow, Allow),
    ("Grep", {"pattern": "x"}, Allow, Allow, Allow, Allow),
    ("Glob", {"pattern": "**/*.py"}, Allow, Allow, Allow, Allow),
    ("Bash", bash("git status"), Allow, Allow, Allow, Allow),
    ("Bash", bash("npm install"), Ask, Ask, Deny, Allow),
    ("Edit", edit("src/a.py"), Ask, Allow, Deny, Allow),
    ("Write", {"file_path": "src/new.py", "content": ""}, Ask, Allow, Deny, Allow),
    ("Write", {"file_path": "/tmp/elsewhere.txt", "content": ""}, Ask, Ask, Deny, Allow),
    ("WebFetch", {"url": "https://example.com"}, Ask, Ask, Ask, Allow),  # it only reads: plan mode asks too
    ("WebSearch", {"query": "pytest fixtures"}, Ask, Ask, Ask, Allow),
]


@pytest.mark.parametrize(("tool", "input", "default", "accept", "plan", "bypass"), MATRIX)
def test_mode_matrix(root: Path, tool: str, input: dict, default: type, accept: type, plan: type, bypass: type) -> None:
    p = policy(root)
    expectations = {"default": default, "acceptEdits": accept, "plan": plan, "bypassPermissions": bypass}
    for mode, expected in expectations.items():
        p.mode = mode
        assert type(p.can_use_tool(tool, input)) is expected, (mode, tool, input)


def test_plan_mode_denial_tells_the_model_why(root: Path) -> None:
    p = policy(root, mode="plan")
    assert "Plan mode is read-only" in p.can_use_tool("Edit", edit("src/a.py")).reason
    reason = p.can_use_tool("Bash", bash("rm -rf build")).reason
    assert "Plan mode is read-only" in reason and "`rm`" in reason


def test_plan_mode_ignores_bash_allow_rules(root: Path) -> None:
    p = policy(root, ("user", {"allow": ["Bash(npm test:*)"]}), mode="plan")
    assert isinstance(p.can_use_tool("Bash", bash("npm test")), Deny)


def test_unknown_and_disabled_modes_are_refused(root: Path) -> None:
    p = policy(root, ("managed", {"disableBypassPermissionsMode": "disable"}))
    with pytest.raises(ValueError, match="unknown permission mode"):
        p.mode = "yolo"
    with pytest.raises(ValueError, match="disabled"):
        p.mode = "bypassPermissions"
    assert p.available_modes == ("default", "acceptEdits", "plan")


def test_disabled_bypass_falls_back_to_default_with_a_message(root: Path) -> None:
    p = policy(root, ("managed", {"disableBypassPermissionsMode": "disable"}), mode="bypassPermissions")
    assert p.mode == "default"
    assert any("disabled" in str(e) for e in p.errors)


def test_default_mode_comes_from_the_highest_layer_unless_given(root: Path) -> None:
    layers = [("user", {"defaultMode": "plan"}), ("local", {"defaultMode": "acceptEdits"})]
    assert policy(root, *layers).mode == "acceptEdits"
    assert policy(root, *layers, mode="default").mode == "default"
    assert policy(root).mode == "default"


def test_project_settings_cannot_turn_on_bypass(root: Path) -> None:
    p = policy(root, ("project", {"defaultMode": "bypassPermissions"}))
    assert p.mode == "default"
    assert "cannot be set by project settings" in str(p.errors[0])


def test_bad_default_mode_is_reported(root: Path) -> None:
    p = policy(root, ("user", {"defaultMode": "everything"}))
    assert p.mode == "default"
    assert "unknown mode" in str(p.errors[0])


# ---------------------------------------------------------------- rule parsing


@pytest.mark.parametrize(
    ("text", "tool", "specifier"),
    [
        ("Read", "Read", None),
        ("Bash", "Bash", None),
        ("Bash(*)", "Bash", None),
        ("Bash(git status:*)", "Bash", "git status:*"),
        ("Bash(npm run test)", "Bash", "npm run test"),
        ("Bash(echo $(date))", "Bash", "echo $(date)"),
        ("Edit(src/**)", "Edit", "src/**"),
        ("Write(*.md)", "Write", "*.md"),
        ("Read(./secrets/**)", "Read", "./secrets/**"),
        ("Read(~/x)", "Read", "~/x"),
        ("Read(//abs/path/**)", "Read", "//abs/path/**"),
        ("  Grep  ", "Grep", None),
        ("WebFetch(domain:example.com)", "WebFetch", "domain:example.com"),
        ("mcp__github__create_issue", "mcp__github__create_issue", None),
    ],
)
def test_rules_parse(root: Path, text: str, tool: str, specifier: str | None) -> None:
    rule = parse_rule(text, source="user", project_root=root)
    assert (rule.tool, rule.specifier) == (tool, specifier)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("Bash(", "missing closing ')'"),
        ("Bash(git status:*", "missing closing ')'"),
        ("(ls)", "missing tool name"),
        ("Bash)", "')' without '('"),
        ("Bash()", "empty parentheses"),
        ("bash(ls)", "did you mean Bash"),
        ("Bash(:*)", "empty command"),
        ("Bash(echo 'open:*)", "cannot parse"),
        ("Read(!secrets)", "negated"),
        ("Bash git", "expected Tool or Tool(specifier)"),
        (42, "must be a string"),
    ],
)
def test_bad_rules_raise_rule_error_naming_rule_and_source(root: Path, text: Any, problem: str) -> None:
    with pytest.raises(RuleError) as info:
        parse_rule(text, source="project", project_root=root, origin="/p/.claude/settings.json")
    message = str(info.value)
    assert problem in message
    assert "project settings (/p/.claude/settings.json)" in message
    assert info.value.source == "project"


def test_bad_rules_are_skipped_and_recorded(root: Path) -> None:
    p = policy(root, ("user", {"allow": ["Bash(", "Edit"]}))
    assert [r.text for r in p.allow_rules] == ["Edit"]
    assert 'Bad permission rule "Bash(" in user settings' in str(p.errors[0])


def test_a_bad_deny_rule_fails_closed_for_its_tool(root: Path) -> None:
    p = policy(root, ("managed", {"deny": ["Bash(rm -rf:*"]}, MANAGED))
    assert isinstance(p.can_use_tool("Bash", bash("ls")), Deny)
    assert isinstance(p.can_use_tool("Read", {"file_path": "a"}), Allow)
    assert "all Bash use is denied" in str(p.errors[0])


def test_non_list_rules_are_reported(root: Path) -> None:
    p = policy(root, ("user", {"allow": "Bash"}), ("local", ["not", "a", "dict"]))
    assert len(p.errors) == 2
    assert p.allow_rules == ()


# ---------------------------------------------------------------- precedence


def test_deny_beats_allow_in_any_layer(root: Path) -> None:
    p = policy(root, ("user", {"deny": ["Bash(git push:*)"]}), ("managed", {"allow": ["Bash"]}))
    decision = p.can_use_tool("Bash", bash("git push origin main"))
    assert decision == Deny("Denied by user rule Bash(git push:*)")
    assert isinstance(p.can_use_tool("Bash", bash("git pull")), Allow)


def test_managed_deny_beats_flags_allow_and_bypass(root: Path) -> None:
    p = policy(
        root,
        ("flags", {"allow": ["Bash", "Bash(rm:*)"]}),
        ("managed", {"deny": ["Bash(rm:*)"]}, MANAGED),
        mode="bypassPermissions",
    )
    expected = Deny("Denied by managed rule Bash(rm:*) in /etc/claude-mini/settings.json")
    assert p.can_use_tool("Bash", bash("rm -rf build")) == expected
    assert p.can_use_tool("Bash", bash("ls && sudo rm -rf /")) == expected
    assert p.can_use_tool("Bash", bash("echo $(rm x)")) == expected
    assert isinstance(p.can_use_tool("Bash", bash("make clean")), Allow)


def test_deny_reason_names_the_highest_layer(root: Path) -> None:
    p = policy(root, ("user", {"deny": ["Bash(rm:*)"]}), ("managed", {"deny": ["Bash(rm:*)"]}, MANAGED))
    assert "managed rule" in p.can_use_tool("Bash", bash("rm x")).reason


def test_deny_rules_catch_commands_named_at_run_time(root: Path) -> None:
    p = policy(root, ("managed", {"deny": ["Bash(rm:*)"]}), mode="bypassPermissions")
    decision = p.can_use_tool("Bash", bash("$X -rf /"))
    assert isinstance(decision, Deny)
    assert "only known when it runs" in decision.reason


def test_ask_rules_ask_in_accept_edits_and_in_bypass(root: Path) -> None:
    p = policy(root, ("project", {"ask": ["Edit(src/**)"], "allow": ["Edit"]}), mode="acceptEdits")
    decision = p.can_use_tool("Edit", edit(root / "src/a.py"))
    assert decision == Ask("project rule Edit(src/**) asks for confirmation", by_rule=True)
    assert isinstance(p.can_use_tool("Edit", edit(root / "README.md")), Allow)
    p.mode = "bypassPermissions"
    assert p.can_use_tool("Edit", edit(root / "src/a.py")) == decision
    assert isinstance(p.can_use_tool("Edit", edit(root / "README.md")), Allow)


def test_ask_beats_allow(root: Path) -> None:
    p = policy(root, ("user", {"allow": ["Bash"], "ask": ["Bash(git push:*)"]}))
    assert isinstance(p.can_use_tool("Bash", bash("git push")), Ask)
    assert isinstance(p.can_use_tool("Bash", bash("make")), Allow)


# ---------------------------------------------------------------- Bash rules


@pytest.mark.parametrize(
    ("rule", "cmd", "allowed"),
    [
        ("Bash(npm run test)", "npm run test", True),
        ("Bash(npm run test)", "npm run test --watch", False),
        ("Bash(git status:*)", "git status --short", True),
        ("Bash(git status:*)", "git status", True),
        ("Bash(git status:*)", "git statusx", False),
        ("Bash(git commit:*)", "git commit -m 'a b'", True),
        ("Bash(git commit:*)", "git commit -m x && git push", False),
        ("Bash(git commit:*)", "git commit -m x && git status", True),  # the rest is read-only
        ("Bash(git commit:*)", "git commit -m $(cat msg)", False),
        ("Bash(git commit:*)", "git commit -m x > log", False),
        ("Bash(make *)", "make", True),
        ("Bash(make *)", "make build", True),
        ("Bash(make *)", "makeself", False),
        ("Bash(git * main)", "git push origin main", True),
        ("Bash(npm test)", "npm  test", True),
        ("Bash(./run.sh > out.txt)", "./run.sh > out.txt", True),  # a whole line spelled out
        ("Bash", "anything at all | sh", True),
    ],
)
def test_bash_allow_rules(root: Path, rule: str, cmd: str, allowed: bool) -> None:
    p = policy(root, ("local", {"allow": [rule]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Allow) is allowed


def test_read_deny_rules_keep_bash_from_reading_unasked(root: Path) -> None:
    p = policy(root, ("project", {"deny": ["Read(./secrets/**)", "Read(.env)"]}))
    decision = p.can_use_tool("Bash", bash("cat secrets/key.pem"))
    assert isinstance(decision, Ask)
    assert "project rule Read(./secrets/**)" in decision.reason
    assert isinstance(p.can_use_tool("Bash", bash("grep -n x --file=.env src")), Ask)
    assert isinstance(p.can_use_tool("Bash", bash("cat src/a.py")), Allow)


# ---------------------------------------------------------------- path rules


@pytest.mark.parametrize(
    ("rule", "tool", "path", "matches"),
    [
        ("Edit(src/**)", "Edit", "src/deep/a.py", True),
        ("Edit(src/**)", "Edit", "lib/src/a.py", False),
        ("Edit(src/**)", "Write", "src/new.py", True),  # Edit rules cover Write
        ("Write(*.md)", "Write", "docs/deep/x.md", True),  # bare globs match at any depth
        ("Write(*.md)", "Edit", "x.md", True),  # a Write deny binds Edit too
        ("Edit(/src/*.py)", "Edit", "src/a.py", True),  # `/` is the project root
        ("Edit(./src/*.py)", "Edit", "src/a/b.py", False),
        ("Read(./secrets/**)", "Read", "secrets/k", True),
        ("Read(./secrets/**)", "Grep", "secrets", True),  # Read rules cover searches inside
        ("Read(./secrets/**)", "Glob", ".", False),
        ("Read(//etc/**)", "Read", "/etc/passwd", True),
        ("Read(//etc/**)", "Read", "etc/passwd", False),
        ("Read(../other/**)", "Read", "../other/x", True),
    ],
)
def test_path_rules(root: Path, rule: str, tool: str, path: str, matches: bool) -> None:
    p = policy(root, ("project", {"deny": [rule]}))
    input = {"pattern": "x", "path": path} if tool in ("Grep", "Glob") else edit(path)
    assert isinstance(p.can_use_tool(tool, input), Deny) is matches


def test_home_rules(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    p = policy(root, ("user", {"deny": ["Read(~/.ssh/**)"]}))
    assert isinstance(p.can_use_tool("Read", {"file_path": "~/.ssh/id_rsa"}), Deny)
    assert isinstance(p.can_use_tool("Read", {"file_path": str(tmp_path / "home/.ssh/config")}), Deny)
    assert isinstance(p.can_use_tool("Read", {"file_path": "~/notes"}), Allow)


def test_glob_patterns_reaching_out_are_checked_where_they_search(root: Path) -> None:
    p = policy(root, ("user", {"deny": ["Read(//etc/**)"]}))
    assert isinstance(p.can_use_tool("Glob", {"pattern": "/etc/*.conf"}), Deny)
    assert isinstance(p.can_use_tool("Glob", {"pattern": "**/*.py"}), Allow)


def test_symlinks_deny_either_way_and_allow_only_both_ways(root: Path) -> None:
    (root / "link").symlink_to(root / "secrets")
    (root / "src/out").symlink_to(root.parent)
    p = policy(root, ("project", {"deny": ["Read(secrets/**)"], "allow": ["Edit(src/**)"]}))
    assert isinstance(p.can_use_tool("Read", {"file_path": "link/key"}), Deny)
    assert isinstance(p.can_use_tool("Edit", edit("src/a.py")), Allow)
    assert isinstance(p.can_use_tool("Edit", edit("src/out/x.py")), Ask)


def test_relative_paths_follow_a_moving_cwd(root: Path) -> None:
    where = {"cwd": root}
    p = PermissionPolicy.from_layers(
        [("user", {"deny": ["Edit(src/**)"]})], cwd=lambda: where["cwd"], project_root=root
    )
    assert isinstance(p.can_use_tool("Edit", edit("a.py")), Ask)
    where["cwd"] = root / "src"
    assert isinstance(p.can_use_tool("Edit", edit("a.py")), Deny)


# ---------------------------------------------------------------- acceptEdits and protected files


def test_accept_edits_stays_inside_the_project_and_extra_directories(root: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    p = policy(root, ("user", {"additionalDirectories": [str(extra)]}), mode="acceptEdits")
    assert isinstance(p.can_use_tool("Write", {"file_path": str(extra / "a"), "content": ""}), Allow)
    decision = p.can_use_tool("Edit", edit("../elsewhere.py"))
    assert isinstance(decision, Ask) and "outside the project" in decision.reason


@pytest.mark.parametrize(
    "path", [".git/config", ".git/hooks/pre-commit", ".claude/settings.json", ".claude/settings.local.json"]
)
def test_protected_files_always_ask(root: Path, path: str) -> None:
    p = policy(root, ("user", {"allow": ["Edit", "Edit(./**)"]}), mode="acceptEdits")
    assert isinstance(p.can_use_tool("Edit", edit(path)), Ask)
    p.mode = "bypassPermissions"
    assert isinstance(p.can_use_tool("Edit", edit(path)), Allow)


def test_user_settings_file_is_protected(root: Path, isolated_env: Any) -> None:
    p = policy(root, ("user", {"allow": ["Edit"]}))
    assert isinstance(p.can_use_tool("Write", {"file_path": str(isolated_env.home / "settings.json")}), Ask)
    assert isinstance(p.can_use_tool("Write", {"file_path": str(isolated_env.home / "notes.md")}), Allow)


# ---------------------------------------------------------------- session rules and UI helpers


def test_session_allow(root: Path) -> None:
    p = policy(root)
    assert isinstance(p.can_use_tool("Bash", bash("npm test -- -x")), Ask)
    rule = p.add_session_allow(p.suggest_rule("Bash", bash("npm test -- -x")))
    assert rule.source == "session" and rule.text == "Bash(npm test:*)"
    assert isinstance(p.can_use_tool("Bash", bash("npm test")), Allow)
    with pytest.raises(RuleError):
        p.add_session_allow("Bash(")


def test_session_allow_does_not_beat_deny(root: Path) -> None:
    p = policy(root, ("managed", {"deny": ["Bash(curl:*)"]}))
    p.add_session_allow("Bash")
    assert isinstance(p.can_use_tool("Bash", bash("curl x | sh")), Deny)


@pytest.mark.parametrize(
    ("tool", "input", "rule"),
    [
        ("Bash", bash("git log --oneline -5"), "Bash(git log:*)"),
        ("Bash", bash("npm run test -- --watch"), "Bash(npm run test:*)"),
        ("Bash", bash("pytest tests/agent -q"), "Bash(pytest:*)"),
        ("Bash", bash("ls && make build"), "Bash(make build:*)"),
        ("Bash", bash("./scripts/check.sh"), "Bash(./scripts/check.sh:*)"),
        ("Bash", bash("rm -rf build"), "Bash(rm -rf build)"),
        ("Bash", bash("echo $(date)"), "Bash(echo $(date))"),
        ("Edit", edit("src/a.py"), "Edit(./**)"),
        ("Write", {"file_path": "/tmp/x/y.txt"}, "Edit(//tmp/x/**)"),
        ("WebFetch", {"url": "u"}, "WebFetch"),
    ],
)
def test_suggest_rule(root: Path, tool: str, input: dict, rule: str) -> None:
    p = policy(root)
    assert p.suggest_rule(tool, input) == rule
    p.add_session_allow(rule)
    assert isinstance(p.can_use_tool(tool, input), Allow)


@pytest.mark.parametrize(
    ("cmd", "rule"), [("echo 'unterminated", "Bash(echo:*)"), ("'", "Bash(true)"), ("   ", "Bash(true)")]
)
def test_suggest_rule_always_parses_and_is_never_all_of_bash(root: Path, cmd: str, rule: str) -> None:
    p = policy(root)
    assert p.suggest_rule("Bash", bash(cmd)) == rule
    p.add_session_allow(rule)


def test_whole_line_rules_do_not_treat_newlines_as_spaces(root: Path) -> None:
    p = policy(root, ("user", {"allow": ["Bash(make\nmake install)"]}))
    assert isinstance(p.can_use_tool("Bash", bash("make\nmake install")), Allow)
    assert isinstance(p.can_use_tool("Bash", bash("make make install")), Ask)


def test_describe_lists_rules_with_sources_and_problems(root: Path) -> None:
    p = policy(root, ("user", {"allow": ["Read", "Bash("]}), ("managed", {"deny": ["Bash(rm:*)"]}, MANAGED))
    p.add_session_allow("Bash(npm test:*)")
    text = p.describe()
    assert "Permission mode: default" in text
    assert f"Bash(rm:*)  managed ({MANAGED})" in text
    assert "Ask rules:\n  (none)" in text
    assert "Bash(npm test:*)  session" in text
    assert 'Bad permission rule "Bash("' in text


def test_read_denied_helper(root: Path) -> None:
    p = policy(root, ("project", {"deny": ["Read(./secrets/**)"]}, "/p/s.json"))
    assert p.read_denied("secrets/x") == "Denied by project rule Read(./secrets/**) in /p/s.json"
    assert p.read_denied("src/x") is None


def test_malformed_inputs_do_not_crash(root: Path) -> None:
    p = policy(root, ("user", {"deny": ["Bash(rm:*)", "Edit(src/**)"]}))
    assert isinstance(p.can_use_tool("Bash", {}), Ask)
    assert isinstance(p.can_use_tool("Edit", {"file_path": 3}), Ask)
    assert isinstance(p.can_use_tool("Edit", "nonsense"), Ask)  # type: ignore[arg-type]


# ---------------------------------------------------------------- ExtractionPolicy


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    folder = tmp_path / "home/projects/key/memory"
    folder.mkdir(parents=True)
    return folder


def test_extraction_reads_anything_and_writes_only_memory(memory: Path, root: Path) -> None:
    p = ExtractionPolicy(memory)
    assert isinstance(p.can_use_tool("Read", {"file_path": "/etc/hosts"}), Allow)
    assert isinstance(p.can_use_tool("Grep", {"pattern": "x", "path": "/"}), Allow)
    assert isinstance(p.can_use_tool("Write", {"file_path": str(memory / "new_topic.md")}), Allow)
    assert isinstance(p.can_use_tool("Write", {"file_path": str(memory / "sub/dir/new.md")}), Allow)
    assert isinstance(p.can_use_tool("Edit", edit(memory / "MEMORY.md")), Allow)


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("{mem}/../escape.md", "uses .. to leave"),
        ("{root}/src/a.py", "is outside"),
        ("/etc/passwd", "is outside"),
        ("{mem}", "is outside"),
        ("{mem}/out/x.md", "follows a symlink out"),
        ("{mem}/dangling.md", "follows a symlink out"),
        ("", "needs a file_path"),
        ("relative.md", "needs an absolute path"),
        ("{mem}/repo/.git/config", ".git"),
    ],
)
def test_extraction_write_escapes_are_denied(memory: Path, root: Path, target: str, why: str) -> None:
    (memory / "out").symlink_to(root)
    (memory / "dangling.md").symlink_to(root / "not-yet.md")
    p = ExtractionPolicy(memory)
    decision = p.can_use_tool("Write", {"file_path": target.format(mem=memory, root=root), "content": "x"})
    assert isinstance(decision, Deny)
    assert why in decision.reason


def test_extraction_memory_dir_reached_through_a_symlink(memory: Path, tmp_path: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(memory)
    p = ExtractionPolicy(alias)
    assert isinstance(p.can_use_tool("Write", {"file_path": str(memory / "a.md")}), Allow)
    assert isinstance(p.can_use_tool("Write", {"file_path": str(alias / "a.md")}), Allow)


def test_extraction_relative_paths_use_the_cwd(memory: Path) -> None:
    p = ExtractionPolicy(memory, cwd=memory)
    assert isinstance(p.can_use_tool("Write", {"file_path": "topic.md"}), Allow)
    assert isinstance(p.can_use_tool("Write", {"file_path": "../topic.md"}), Deny)


def test_extraction_bash_and_other_tools(memory: Path) -> None:
    p = ExtractionPolicy(memory)
    assert isinstance(p.can_use_tool("Bash", bash("git log --oneline -5")), Allow)
    decision = p.can_use_tool("Bash", bash(f"echo x > {memory}/a.md"))
    assert isinstance(decision, Deny) and "read-only" in decision.reason
    decision = p.can_use_tool("WebFetch", {"url": "u"})
    assert isinstance(decision, Deny) and "may not use WebFetch" in decision.reason


def test_extraction_respects_the_session_deny_and_ask_rules(memory: Path, root: Path) -> None:
    base = policy(
        root,
        ("managed", {"deny": ["Read(./secrets/**)", "Bash(git log:*)"]}, MANAGED),
        ("user", {"ask": ["Grep"], "allow": ["Bash", "Edit"]}),
        mode="bypassPermissions",
    )
    p = ExtractionPolicy(memory, base=base)
    assert p.can_use_tool("Read", {"file_path": "secrets/k"}) == Deny(
        f"Denied by managed rule Read(./secrets/**) in {MANAGED}"
    )
    assert isinstance(p.can_use_tool("Bash", bash("git log")), Deny)
    decision = p.can_use_tool("Grep", {"pattern": "x"})
    assert isinstance(decision, Deny) and "cannot ask" in decision.reason
    # The base's allow rules and bypass mode do not widen what extraction may do.
    assert isinstance(p.can_use_tool("Edit", edit(root / "src/a.py")), Deny)
    assert isinstance(p.can_use_tool("Bash", bash("make")), Deny)
    # Relative paths resolve against the base policy's cwd.
    assert isinstance(p.can_use_tool("Write", {"file_path": os.path.relpath(memory / "a.md", root)}), Allow)


def test_memory_folder_edits_need_no_prompt_but_deny_rules_win(tmp_path):
    memory = tmp_path / "home" / "memory"
    memory.mkdir(parents=True)
    policy = PermissionPolicy.from_layers(
        [("project", {"deny": ["Write(//**/secret.md)"]})], cwd=tmp_path, project_root=tmp_path
    )
    policy.allow_edits_in(memory)
    assert isinstance(policy.can_use_tool("Write", {"file_path": str(memory / "a.md"), "content": "x"}), Allow)
    assert isinstance(policy.can_use_tool("Write", {"file_path": str(memory / "secret.md"), "content": "x"}), Deny)
    assert isinstance(policy.can_use_tool("Write", {"file_path": str(tmp_path / "b.md"), "content": "x"}), Ask)
    assert isinstance(policy.can_use_tool("Write", {"file_path": str(memory / ".." / "b.md"), "content": "x"}), Ask)
    policy.mode = "plan"
    assert isinstance(policy.can_use_tool("Write", {"file_path": str(memory / "a.md"), "content": "x"}), Deny)


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_no_agent_makes_memory_md_a_folder_or_writes_other_files_in_the_memory_folder(
    tmp_path: Path, memory: Path, mode: str
) -> None:
    main = PermissionPolicy.from_layers(
        [("user", {"allow": ["Bash", "Write", "Edit"]})], cwd=tmp_path, project_root=tmp_path, mode=mode
    )
    main.allow_edits_in(memory)
    fork = ExtractionPolicy(memory, cwd=memory)
    for p in (main, fork):
        for target in ("MEMORY.md/x.md", "MEMORY.md/sub/y.md", "memory.md/z.md"):
            decision = p.can_use_tool("Write", {"file_path": str(memory / target), "content": "x"})
            assert isinstance(decision, Deny) and "the memory index, a file" in decision.reason, (p, target)
        decision = p.can_use_tool("Write", {"file_path": str(memory / "notes.txt"), "content": "x"})
        assert isinstance(decision, Deny) and "only .md topic files" in decision.reason
        assert isinstance(p.can_use_tool("Write", {"file_path": str(memory / "MEMORY.md"), "content": "x"}), Allow)
        assert isinstance(
            p.can_use_tool("Write", {"file_path": str(memory / "team/deploy.md"), "content": "x"}), Allow
        )  # topic files in subfolders: the store reads them there
    for command in (f"mkdir {memory}/MEMORY.md", f"mkdir -p {memory}/MEMORY.md/sub", f"touch {memory}/MEMORY.md/x.md"):
        decision = main.can_use_tool("Bash", bash(command))
        assert isinstance(decision, Deny) and "is the memory index, a file" in decision.reason, command
    assert isinstance(main.can_use_tool("Bash", bash(f"mkdir -p {memory}/team")), Allow)
    assert isinstance(main.can_use_tool("Write", {"file_path": str(tmp_path / "notes.txt"), "content": "x"}), Allow)


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_no_shell_command_but_a_read_replaces_the_memory_index(tmp_path: Path, memory: Path, mode: str) -> None:
    main = PermissionPolicy.from_layers([("user", {"allow": ["Bash"]})], cwd=tmp_path, project_root=tmp_path, mode=mode)
    main.allow_edits_in(memory)
    (tmp_path / "d").mkdir()
    for command in (
        f"mv d {memory}/MEMORY.md",
        f"cp -r d {memory}/MEMORY.md",
        f"ln -s {tmp_path}/d {memory}/MEMORY.md",
        f"cd {tmp_path} && mv d {memory}/memory.md",
        f"mv d {memory}/MEMORY.m?",
        f"cp -r --target-directory={memory}/MEMORY.md d",
        f"rm -f {memory}/MEMORY.md",
    ):
        decision = main.can_use_tool("Bash", bash(command))
        assert isinstance(decision, Deny) and "may only read it" in decision.reason, command
    for command in (
        f"cd {memory} && mkdir MEMORY.md",
        f"cd {memory}; mv {tmp_path}/d memory.md",
        f"cd {memory} && mv {tmp_path}/d MEMORY.m?",
    ):
        decision = main.can_use_tool("Bash", bash(command))
        assert isinstance(decision, Ask) and "cannot be known" in decision.reason, command
    for command in (
        f"cat {memory}/MEMORY.md",
        f"cd {memory} && cat MEMORY.md",
        f"mv d {memory}/topic.md",
        f"rm -rf {tmp_path}/*",
        "cd src && git add *",
        "cd build && cp * ../out",
        'cd x && git commit -m "*"',
        "cd x && find . -name '*' -delete",
        "cd x && rm *.*",
    ):
        assert isinstance(main.can_use_tool("Bash", bash(command)), Allow), command


# ---- MCP tools


def test_mcp_tools_ask_unless_a_server_or_tool_rule_allows_them(root: Path) -> None:
    p = policy(
        root,
        ("user", {"allow": ["mcp__github", "mcp__jira__*", "mcp__time__now"], "deny": ["mcp__github__delete_repo"]}),
    )
    assert isinstance(p.can_use_tool("mcp__github__create_issue", {"title": "x"}), Allow)
    assert isinstance(p.can_use_tool("mcp__jira__search", {}), Allow)
    assert isinstance(p.can_use_tool("mcp__time__now", {}), Allow)
    assert isinstance(p.can_use_tool("mcp__github__delete_repo", {}), Deny)  # deny wins, as always
    assert isinstance(p.can_use_tool("mcp__time__convert", {}), Ask)  # another tool of that server
    assert isinstance(p.can_use_tool("mcp__githubber__x", {}), Ask)  # not a prefix match on names
    assert isinstance(p.can_use_tool("mcp__other__x", {}), Ask)


def test_a_trusted_read_only_hint_runs_as_a_read_does_even_in_plan_mode(root: Path) -> None:
    p = policy(root, ("user", {"ask": ["mcp__db__peek"]}), mode="plan")
    p.trust_read_only({"mcp__db__query", "mcp__db__peek"})
    assert isinstance(p.can_use_tool("mcp__db__query", {"sql": "select 1"}), Allow)
    assert isinstance(p.can_use_tool("mcp__db__peek", {}), Ask)  # an ask rule still asks
    assert isinstance(p.can_use_tool("mcp__db__drop", {}), Deny)  # plan mode: not read-only


# ---------------------------------------------------------------- Skill rules


def test_skill_rules_name_one_skill_or_a_prefix(root):
    p = policy(root, ("user", {"allow": ["Skill(release-notes)", "Skill(deploy:*)"], "deny": ["Skill(danger)"]}))
    assert isinstance(p.can_use_tool("Skill", {"skill": "release-notes"}), Allow)
    assert isinstance(p.can_use_tool("Skill", {"skill": "/release-notes"}), Allow)
    assert isinstance(p.can_use_tool("Skill", {"skill": "deploy-staging"}), Allow)
    assert isinstance(p.can_use_tool("Skill", {"skill": "release"}), Ask)
    denied = p.can_use_tool("Skill", {"skill": "danger"})
    assert isinstance(denied, Deny) and "Skill(danger)" in denied.reason
    asked = p.can_use_tool("Skill", {"skill": "other"})
    assert isinstance(asked, Ask) and "Skill(other) allows it" in asked.reason
    assert p.suggest_rule("Skill", {"skill": "/other"}) == "Skill(other)"


def test_a_skill_rule_in_the_wrong_case_is_refused(root):
    with pytest.raises(RuleError, match="did you mean Skill"):
        parse_rule("skill(x)", source="user", project_root=root)


# ---------------------------------------------------------------- plan mode's way out and the cycle


def test_exit_plan_mode_asks_the_user_only_in_plan_mode(root: Path) -> None:
    plan = {"plan": "1. Edit app.py"}
    asked = policy(root, mode="plan").can_use_tool("ExitPlanMode", plan)
    assert isinstance(asked, Ask) and asked.user_only  # no hook's allow approves a plan
    for mode in ("default", "acceptEdits", "bypassPermissions"):
        refused = policy(root, mode=mode).can_use_tool("ExitPlanMode", plan)
        assert isinstance(refused, Deny) and "not on" in refused.reason
    denied = policy(root, ("managed", {"deny": ["ExitPlanMode"]}), mode="plan").can_use_tool("ExitPlanMode", plan)
    assert isinstance(denied, Deny)


def test_bypass_joins_the_cycle_only_in_a_session_started_in_it(root: Path) -> None:
    assert policy(root).available_modes == ("default", "acceptEdits", "plan")
    started = policy(root, mode="bypassPermissions")
    assert started.available_modes == ("default", "acceptEdits", "plan", "bypassPermissions")
    from_settings = policy(root, ("local", {"defaultMode": "bypassPermissions"}))
    assert "bypassPermissions" in from_settings.available_modes


def test_rules_added_later_bind_and_are_not_doubled(root: Path) -> None:
    p = policy(root)
    p.add_rule("deny", "Read(.env)", source="local", origin="/x/settings.local.json")
    p.add_rule("deny", "Read(.env)", source="local", origin="/x/settings.local.json")
    assert [r.text for r in p.deny_rules] == ["Read(.env)"]
    assert isinstance(p.can_use_tool("Read", {"file_path": ".env"}), Deny)
    with pytest.raises(RuleError):
        p.add_rule("allow", "Bash(unclosed", source="local")
