"""The read-only Bash check (strict, deny by default) and the lenient command finder."""

from __future__ import annotations

import pytest

from claude_mini.shell.candidates import command_candidates
from claude_mini.shell.parse import ShellSyntaxError, parse_command
from claude_mini.shell.read_only import is_read_only_command

READ_ONLY = [
    "[ -f package.json ] && cat package.json || true",
    "test -d src && ls src || false",
    "git status",
    "ls -la && git log --oneline -5",
    "grep -rn foo src | head",
    "cat a.txt | wc -l",
    "ls 2>&1 | head",
    "ls 2>/dev/null",
    "ls >/dev/null 2>&1",
    "pwd; echo done",
    "ls\ngit status",
    "ls &&\n  git status",
    "ls \\\n  -la",
    "find . -name '*.py' -type f",
    "find src -maxdepth 2",
    "grep -rn 'a$' src",
    'grep "foo$" src',
    'echo "it\'s; fine && really"',
    "echo 'no $(expansion) in `single` quotes'",
    "ls   # a comment with rm -rf /",
    "ls a#b",
    "wc -l *.py",
    "sort -k2 -n file.txt",
    "uniq -c counts.txt",
    "uniq a 2>/dev/null",
    "rg -n TODO src",
    "tree -L 2",
    "date +%s",
    "diff a b",
    "git diff HEAD~1 -- src",
    "git --no-pager log -3",
    "git show HEAD:README.md",
    "git blame -L 1,5 file.py",
    "git branch",
    "git branch -a -v",
    "git branch --list 'feat*'",
    "git tag -l",
    "git remote -v",
    "git config --get user.name",
    "git config --list --show-origin",
    "git stash list",
    "git grep -n foo",
    "git rev-parse --show-toplevel",
    "git ls-files",
]

NOT_READ_ONLY = [
    ("ls > out.txt", "redirection"),
    ("echo x >> log", "redirection"),
    ("ls &> out", "redirection"),
    ("cat < input.txt", "input redirection"),
    ("cat <<EOF\nhi\nEOF", "here-document"),
    ("cat <<< hi", "here-document"),
    ("rm -rf x", "`rm` is not on the read-only list"),
    ("git commit -m x", "git commit"),
    ("git push", "git push"),
    ("echo $(whoami)", "command substitution"),
    ('echo "$(whoami)"', "command substitution"),
    ("echo `whoami`", "backticks"),
    ("cat <(ls)", "process substitution"),
    ("ls; rm x", "`rm`"),
    ("ls && rm x", "`rm`"),
    ("ls || rm x", "`rm`"),
    ("ls\nrm x", "`rm`"),
    ("cat a | sh", "shells"),
    ("cat a | bash", "shells"),
    ("find . -delete", "-delete"),
    ("find . -exec rm {} \\;", "-exec"),
    ("find . -execdir ls \\;", "-execdir"),
    ("find . -fprint out", "-fprint"),
    ("find . \\\n-delete", "find -delete"),  # a line continuation cannot hide an option
    ("find . \\; -o -delete", "find -delete"),  # an escaped operator is a word, not a separator
    ("find . -name *.py", "unquoted wildcard"),
    ("sort -o out in", "sort -o"),
    ("sort -no out in", "sort -o"),
    ("sort --out=x in", "sort -o"),
    ("sort --compress-program=sh in", "compress-program"),
    ("uniq in out", "second file"),
    ("uniq in 2 >/dev/null", "second file"),  # `2` is an argument here, not a descriptor
    ("sed -i s/a/b/ f", "sed"),
    ("sed -n 1p f", "sed"),
    ("awk '{print}' f", "awk"),
    ("xargs rm", "xargs"),
    ("env rm x", "env"),
    ("eval ls", "eval"),
    ("exec ls", "exec"),
    ("(ls)", "subshells"),
    ("{ ls; }", "`{`"),
    ("ls &", "background"),
    ("ls & rm x", "background"),
    ("echo $HOME", "expansion $HOME"),
    ("echo ${X:-y}", "expansion ${X:-y}"),
    ("echo $'\\x41'", "expansion"),
    ("FOO=1 ls", "setting variables"),
    ("LD_PRELOAD=x.so ls", "setting variables"),
    ("/bin/ls", "bare name"),
    ("./ls", "bare name"),
    ("cd /tmp && ls", "cd"),
    ("echo 'unterminated", "unbalanced quotes"),
    ("ls \\", "backslash"),
    ("ls |", "ends with an operator"),
    ("&& ls", "needs a command"),
    ("", "empty"),
    ("git -C /tmp/x status", "git option -C"),
    ("git -c core.pager=sh log", "git option -c"),
    ("git branch -D main", "may change"),
    ("git branch newbranch", "would create"),
    ("git tag v1", "would create"),
    ("git remote add o url", "git remote"),
    ("git config user.name x", "can change settings"),
    ("git config --unset user.name", "not a reading option"),
    ("git diff --output=patch", "writes a file"),
    ("git log --outp=x", "writes a file"),
    ("git grep -O foo", "another program"),
    ("git stash", "git stash list"),
    ("git log -- *.py", "unquoted wildcard"),
    ("rg --pre=sh x", "runs another program"),
    ("tree -o out.txt", "tree -o"),
    ("file -C -m magic", "file -C"),
    ("date -s 2020-01-01", "date -s"),
    ("python -c 'print(1)'", "`python`"),
]


@pytest.mark.parametrize("cmd", READ_ONLY)
def test_read_only_commands_are_allowed(cmd: str) -> None:
    ok, reason = is_read_only_command(cmd)
    assert ok, reason


@pytest.mark.parametrize(("cmd", "expected"), NOT_READ_ONLY)
def test_other_commands_are_refused_with_a_reason(cmd: str, expected: str) -> None:
    ok, reason = is_read_only_command(cmd)
    assert not ok
    assert expected in reason


def test_allowed_reason_names_the_programs() -> None:
    assert is_read_only_command("ls && git status") == (True, "only read-only commands: ls, git")


def test_parse_splits_on_operators_and_removes_quotes() -> None:
    commands = parse_command("git log --format='%h %s' -3 | head -n 2; echo \"a && b\"")
    assert [c.words for c in commands] == [
        ("git", "log", "--format=%h %s", "-3"),
        ("head", "-n", "2"),
        ("echo", "a && b"),
    ]


def test_parse_keeps_escaped_and_quoted_operators_as_words() -> None:
    assert parse_command("echo \\; '|' \"&&\" a\\>b")[0].words == ("echo", ";", "|", "&&", "a>b")


def test_parse_drops_descriptor_redirections_but_keeps_spaced_digits() -> None:
    assert parse_command("ls 2>&1")[0].words == ("ls",)
    assert parse_command("ls 2 >/dev/null")[0].words == ("ls", "2")


def test_parse_marks_only_unquoted_wildcards() -> None:
    command = parse_command("ls *.py '*.md' src/[ab]")[0]
    assert command.globbed == frozenset({1, 3})


def test_parse_refuses_with_shell_syntax_error() -> None:
    with pytest.raises(ShellSyntaxError, match="command substitution"):
        parse_command("ls $(pwd)")


def candidates(cmd: str) -> list[str]:
    return [c.text for c in command_candidates(cmd)]


@pytest.mark.parametrize(
    "cmd",
    [
        "rm -rf x",
        "ls && rm -rf x",
        "ls | rm -rf x",
        "echo $(rm -rf x)",
        'echo "$(rm -rf x)"',
        "echo `rm -rf x`",
        "cat <(rm -rf x)",
        "sudo -u root rm -rf x",
        "bash -c 'rm -rf x'",
        "sh -ec 'ls; rm -rf x'",
        "eval 'rm -rf x'",
        "xargs -n1 rm -rf x",
        "find . -exec rm -rf x \\;",
        "timeout 5 rm -rf x",
        "env -S 'rm -rf x'",
        "FOO=1 rm -rf x",
        "/bin/rm -rf x",
        "r''m -rf x",
        "if true; then rm -rf x; fi",
        "ls > out; rm -rf x",
        "nohup nice -n 5 rm -rf x &",
    ],
)
def test_candidates_find_hidden_commands(cmd: str) -> None:
    assert "rm -rf x" in candidates(cmd)


def test_candidates_keep_the_wrapper_too() -> None:
    assert candidates("sudo rm x") == ["sudo rm x", "rm x"]


def test_candidates_keep_a_computed_command_name() -> None:
    assert candidates("$CMD -rf x") == ["$CMD -rf x"]
    assert candidates("$(echo rm) -rf x")[-1] == "$(echo rm) -rf x"


def test_candidates_survive_unbalanced_quotes() -> None:
    assert candidates("rm -rf 'x") == ["rm -rf x"]


def test_candidates_do_not_split_quoted_operators() -> None:
    assert candidates("echo 'a; rm -rf x'") == ["echo a; rm -rf x"]
