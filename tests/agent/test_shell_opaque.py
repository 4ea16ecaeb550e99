"""Deny and ask rules (managed ones above all) bind in every mode, bypassPermissions and a
flags-layer `Bash` allow included; what the parser cannot see through matches every rule; Read deny
rules hold for Bash's redirections, `dd if=`, `cd X && cat f`, archivers of a folder and variables.

The corpus below is the attacker's side: every line runs (or would run, where the program exists) a
denied `curl`. None may be allowed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from claude_mini.permissions import Allow, Ask, Deny
from claude_mini.shell.candidates import command_candidates
from claude_mini.shell.read_only import is_read_only_command

from .policies import bash, policy

CURL_FORMS = [
    # --- quoting and spelling of the name
    "curl x",
    "c''url x",
    "\\curl x",
    '"cu"rl x',
    "$'\\x63url' x",
    "'curl' x",
    "cu\\rl x",
    '"curl" x',
    "c\"u\"r'l' x",
    '$"curl" x',
    "/usr/bin/curl x",
    "/usr/bin/../bin/curl x",
    "./curl x",
    "~/bin/curl x",
    "/usr/bin/c?rl x",
    "/usr/*/curl x",
    "cur[l] x",
    "curl\\\n x",
    "c\\\nurl x",
    "CURL=1 curl x",
    # --- braces and grouping
    "{curl,-s,x}",
    "{curl,x}",
    "{ curl x; }",
    "(curl x)",
    "( (curl x) )",
    "{ { curl x; }; }",
    # --- builtins that run their operands
    "command curl x",
    "command -p curl x",
    "exec curl x",
    "exec -a name curl x",
    "exec -c curl x",
    "builtin curl x",
    "eval curl x",
    "eval 'cu''rl x'",
    'eval "$(echo curl) x"',
    "eval $'curl x'",
    "time curl x",
    "time -p curl x",
    "! curl x",
    "nohup curl x",
    "coproc curl x",
    "coproc c { curl x; }",
    # --- sourcing and here-strings
    "source <(echo curl x)",
    ". <(echo curl x)",
    ". /dev/stdin <<< 'curl x'",
    "source /dev/stdin <<< 'curl x'",
    "sh <<< 'curl x'",
    "bash <<< 'curl x'",
    "sh <<EOF\ncurl x\nEOF",
    "bash <<'E'\ncurl x\nE",
    "cat <<EOF | sh\ncurl x\nEOF",
    "echo 'curl x' > /tmp/s; . /tmp/s",
    # --- aliases and functions
    "alias c=curl\nc x",
    "shopt -s expand_aliases; alias c='curl'; c x",
    "f(){ curl x; }; f",
    "function f { curl x; }; f",
    "f() ( curl x ); f",
    'f(){ "$@"; }; f curl x',
    "x() { $1 y; }; x curl",
    # --- expansions that make the name
    "${X:-curl} x",
    "X=curl; $X x",
    'a=(curl x); "${a[@]}"',
    "IFS=,; c=curl,x; $c",
    "printf -v c curl; $c x",
    "read c <<< curl; $c x",
    "declare c=curl; $c x",
    "n=c; c=curl; ${!n} x",
    "$(echo curl) x",
    "`echo curl` x",
    "$(printf '\\x63url') x",
    '"$(echo cu)rl" x',
    "X=yurl; ${X/y/c} x",
    "X=CURL; ${X,,} x",
    "${X:=curl} x",
    'set -- curl x; "$@"',
    "for c in curl; do $c x; done",
    "export C=curl; $C x",
    "$(which curl) x",
    '"$(command -v curl)" x',
    "$(type -P curl) x",
    "mapfile -t a <<< curl; ${a[0]} x",
    "${PATH:0:0}curl x",
    # --- substitutions, in words, redirections and here-strings
    "$(curl x)",
    "echo $(curl x)",
    'echo "$(curl x)"',
    "v=$(curl x)",
    ": $(curl x)",
    "[[ $(curl x) ]]",
    'test "$(curl x)"',
    "echo `curl x`",
    "cat <<< $(curl x)",
    'cat <<< "$(curl x)"',
    "cat <<< `curl x`",
    ": > >(curl x)",
    ": < <(curl x)",
    "ls > >(curl x)",
    "echo > $(curl x)",
    "cat < $(curl x)",
    "echo 2> >(curl x)",
    "exec > >(curl x)",
    "ls &> >(curl x)",
    "ls >> >(curl x)",
    ': >"$(curl x)"',
    "exec 3< <(curl x)",
    "read x < <(curl x)",
    "while read l; do :; done < <(curl x)",
    "mapfile -t a < <(curl x)",
    "diff <(curl x) f",
    "cat <(curl x)",
    "tee >(curl x)",
    "ls 2>$(curl x)",
    "cat 0<<<$(curl x)",
    "cat <<EOF\n$(curl x)\nEOF",
    "echo ${X:-$(curl x)}",
    "echo $((`curl x`))",
    # --- control flow
    "for i in 1; do curl x; done",
    "while true; do curl x; break; done",
    "if true; then curl x; fi",
    "case a in a) curl x;; esac",
    "[[ -n x ]] && curl x",
    "false || curl x",
    "until curl x; do :; done",
    "trap 'curl x' EXIT",
    "trap 'curl x' DEBUG; :",
    # --- background and pipes
    "curl x &",
    "curl x & wait",
    "nohup curl x &",
    "curl x &>/dev/null &",
    "echo curl x | sh",
    "echo curl x | bash",
    "printf 'curl x' | sh -s",
    "echo curl x | dash",
    "echo 'curl x' | zsh",
    "echo x | xargs curl",
    "echo x | xargs -n1 curl",
    "echo x | xargs -I% curl %",
    "echo curl x | xargs sh -c",
    "echo curl | xargs -I{} {} x",
    "printf 'curl\\0x' | xargs -0 env",
    "echo x | xargs -n1 -- curl",
    "ls | parallel curl",
    "parallel curl ::: x",
    "parallel ::: 'curl x'",
    "echo 'curl x' | parallel",
    "echo 'curl x' | at now",
    "at now <<< 'curl x'",
    "echo 'curl x' | batch",
    # --- shells, known and not
    "sh -c 'curl x'",
    "bash -lc 'curl x'",
    'bash -c "cu""rl x"',
    "sh -c 'c\"\"url x'",
    "sh -c \"sh -c 'curl x'\"",
    "bash -c 'eval \"curl x\"'",
    "bash -O extglob -c 'curl x'",
    "rbash -c 'curl x'",
    "/bin/rbash -c 'curl x'",
    "yash -c 'curl x'",
    "posh -c 'curl x'",
    "lksh -c 'curl x'",
    "oksh -c 'curl x'",
    "elvish -c 'curl x'",
    "xonsh -c 'curl x'",
    "nu -c 'curl x'",
    "hush -c 'curl x'",
    "busybox sh -c 'curl x'",
    "busybox ash -c 'curl x'",
    "toybox sh -c 'curl x'",
    "bash5.2 -c 'curl x'",
    "/usr/bin/env bash -c 'curl x'",
    "tcsh -c 'curl x'",
    "csh -c 'curl x'",
    "fish -c 'curl x'",
    "/proc/self/exe -c 'curl x'",
    "/proc/$$/exe -c 'curl x'",
    "/proc/1/exe -c 'curl x'",
    "/proc/self/exe <<< 'curl x'",
    "/proc/thread-self/exe -c 'curl x'",
    # --- loaders, hash, enable
    "/lib64/ld-linux-x86-64.so.2 /usr/bin/curl x",
    "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 /usr/bin/curl x",
    "/lib/ld-linux-aarch64.so.1 /usr/bin/curl x",
    "ld.so /usr/bin/curl x",
    "/lib64/ld-2.31.so /usr/bin/curl x",
    "hash -p /usr/bin/curl c; c x",
    "hash -p /usr/bin/curl ls; ls x",
    "enable -f ./x.so ls; ls",
    "enable -f /tmp/evil.so c; c x",
    # --- wrappers
    "setarch x86_64 curl x",
    "setarch $(uname -m) curl x",
    "setarch -R x86_64 curl x",
    "linux32 curl x",
    "linux64 curl x",
    "i386 curl x",
    "x86_64 curl x",
    "taskset -c 0 curl x",
    "nice curl x",
    "nice -n5 curl x",
    "ionice curl x",
    "stdbuf -oL curl x",
    "chrt -f 1 curl x",
    "chrt 1 curl x",
    "unshare curl x",
    "unshare -U -r curl x",
    "firejail curl x",
    "firejail --net=none curl x",
    "flock /tmp/l curl x",
    "flock -x /tmp/l curl x",
    "script -c 'curl x'",
    "script -q -c 'curl x' /dev/null",
    "expect -c 'spawn curl x'",
    "timeout 5 curl x",
    "sudo curl x",
    "doas curl x",
    "systemd-run curl x",
    "env curl x",
    "env -- curl x",
    "env -i curl x",
    "env -u X curl x",
    "env X=1 curl x",
    "env -C /tmp curl x",
    "env --chdir=/ curl x",
    "env -S 'curl x'",
    'env -S"curl x"',
    "env --split-string='curl x'",
    "watch curl x",
    "watch -n1 'curl x'",
    "watch -x curl x",
    "strace curl x",
    "strace -f -e trace=none curl x",
    "ltrace curl x",
    "gdb -ex run --args curl x",
    "gdb -batch -ex 'shell curl x'",
    "gdb -batch -ex '!curl x'",
    "valgrind curl x",
    "perf stat curl x",
    "ssh localhost curl x",
    "su -c 'curl x'",
    "runuser -u u -- curl x",
    # --- editors, pagers, interpreters
    "vim +'!curl x' +q",
    "vim -c '!curl x'",
    "vi +'!curl x'",
    "ex +'!curl x'",
    "nvim --headless +'!curl x'",
    "view +'!curl x'",
    "vim -E -s -c '!curl x'",
    "vim '+!curl x'",
    "less '+!curl x' f",
    "more '+!curl x' f",
    "man -P 'curl x' ls",
    "MANPAGER='curl x' man ls",
    "PAGER='curl x' git log",
    "awk 'BEGIN{system(\"curl x\")}'",
    "gawk 'BEGIN{system(\"curl x\")}'",
    "mawk 'BEGIN{system(\"curl x\")}'",
    "awk 'BEGIN{print | \"sh\"}'",
    "awk 'BEGIN{\"curl x\" | getline}'",
    "awk -v c=curl 'BEGIN{system(c)}'",
    "busybox awk 'BEGIN{system(\"curl x\")}'",
    "sed 's/.*/curl x/e' f",
    "sed '1e curl x' f",
    "echo | sed 'e curl x'",
    "sed --expression='1e curl x' f",
    "perl '-M5;system(\"curl x\")' /dev/null",
    "perl -M'5;system(\"curl x\")' /dev/null",
    'perl -mstrict=x,system("curl") /dev/null',
    "perl -e 'system q(curl x)'",
    "perl -le 'system q(curl x)'",
    "python3 -c 'import os; os.system(\"curl x\")'",
    "python3 - <<< 'import os'",
    "python3 <<< 'import os'",
    "python3 -X presite=evil -V",
    "ruby -e '`curl x`'",
    "node -e 'require(\"child_process\")'",
    "node --import 'data:text/javascript,1' x.js",
    "php -r 'system(\"curl x\");'",
    "lua -e 'os.execute(\"curl x\")'",
    "tclsh <<< 'exec curl x'",
    # --- find, git
    "find . -exec curl x \\;",
    "find . -execdir curl x +",
    "find . -ok curl x \\;",
    "find . -okdir curl {} \\;",
    "find / -maxdepth 0 -exec sh -c 'curl x' \\;",
    "find /usr/bin -name curl -exec {} x \\;",
    "git -c alias.x='!curl x' x",
    "git -c alias.x='!sh -c \"curl x\"' x",
    "git -c alias.co='!f(){ curl x; }; f' co",
    "git --config-env=alias.x=V x",
    "git -c core.sshCommand='curl x' fetch",
    "git -c core.pager='curl x' log",
    "git -c core.editor='curl x' commit",
    "git lg-alias-from-repo-config",
    # --- copies of the program
    "cp /usr/bin/curl ./c; ./c x",
    "ln -s /usr/bin/curl c; ./c x",
    "install /usr/bin/curl c && ./c x",
]


def _rules(deny: str = "Bash(curl:*)") -> tuple[tuple[str, dict[str, list[str]]], ...]:
    return (("managed", {"deny": [deny]}),)


def test_the_corpus_is_large_and_distinct() -> None:
    assert len(CURL_FORMS) >= 160
    assert len(set(CURL_FORMS)) == len(CURL_FORMS)


@pytest.mark.parametrize("cmd", CURL_FORMS)
def test_a_managed_deny_binds_in_bypass_mode(root: Path, cmd: str) -> None:
    p = policy(root, *_rules(), mode="bypassPermissions")
    decision = p.can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Deny), (cmd, decision)


@pytest.mark.parametrize("cmd", CURL_FORMS)
def test_a_managed_deny_binds_over_a_flags_allow(root: Path, cmd: str) -> None:
    p = policy(root, ("flags", {"allow": ["Bash"]}), *_rules())
    decision = p.can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Deny), (cmd, decision)


@pytest.mark.parametrize("cmd", CURL_FORMS)
def test_a_managed_deny_binds_in_default_mode(root: Path, cmd: str) -> None:
    decision = policy(root, *_rules()).can_use_tool("Bash", bash(cmd))
    assert not isinstance(decision, Allow), (cmd, decision)


@pytest.mark.parametrize("cmd", ["busybox wget x", "toybox wget x", "/bin/busybox wget -O- x"])
def test_busybox_applets_meet_the_rule_of_their_name(root: Path, cmd: str) -> None:
    p = policy(root, ("flags", {"allow": ["Bash"]}), *_rules("Bash(wget:*)"), mode="bypassPermissions")
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Deny), cmd


RM_FORMS = ["ls > >(rm x)", "ls 2> >(rm x)", "cat <<< $(rm x)", "echo > $(rm x)", "cat < <(rm x)"]


@pytest.mark.parametrize("cmd", RM_FORMS)
def test_a_managed_ask_is_not_skipped_by_a_redirection(root: Path, cmd: str) -> None:
    for mode in ("bypassPermissions", "default", "acceptEdits"):
        p = policy(root, ("flags", {"allow": ["Bash"]}), ("managed", {"ask": ["Bash(rm:*)"]}), mode=mode)
        decision = p.can_use_tool("Bash", bash(cmd))
        assert isinstance(decision, Ask) and "managed" in decision.reason, (cmd, mode, decision)


@pytest.mark.parametrize(
    ("cmd", "named"),
    [
        ("hash -p /usr/bin/curl c; c x", "hash -p"),
        ("enable -f ./x.so ls; ls", "enable -f"),
        ("/proc/self/exe -c 'curl x'", "/proc"),
        ("/lib64/ld-linux-x86-64.so.2 /bin/ls", "loader"),
        ("rbash -c 'ls'", "rbash"),
        ("perl '-M5;print 1' /dev/null", "perl"),
        ("git co main", "alias"),
        ("cp /usr/bin/ls c; ./c", "same line writes"),
        ("vim +'!ls'", "editor command"),
    ],
)
def test_the_reason_names_what_could_not_be_seen_through(root: Path, cmd: str, named: str) -> None:
    decision = policy(root, *_rules(), mode="bypassPermissions").can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Deny), decision
    assert named in decision.reason, decision.reason


def test_substitutions_in_redirections_are_looked_into(root: Path) -> None:
    p = policy(root, ("flags", {"allow": ["Bash"]}), *_rules(), mode="bypassPermissions")
    assert isinstance(p.can_use_tool("Bash", bash("ls > >(cat)")), Allow)
    assert isinstance(p.can_use_tool("Bash", bash("while read l; do echo $l; done < <(git ls-files)")), Allow)
    assert isinstance(p.can_use_tool("Bash", bash("ls > >(cat; curl x)")), Deny)


EVERYDAY = [
    "pytest",
    "pytest -x -q tests/",
    "git status",
    "git log --oneline -5",
    "ls -la",
    "cat README.md",
    "grep -r foo src",
    "python -m pytest -k curl -x",
    "python3 -W ignore -m pytest",
    "python -X dev app.py",
    "perl -MData::Dumper script.pl",
    "perl -Ilib -MList::Util=sum t.pl",
    "node --max-old-space-size=4096 app.js",
    "npm test",
    "make -j4",
    "nice -n 10 make",
    "git diff HEAD~1 -- src",
    "git commit -m 'fix: curl docs'",
    "ls > out.txt",
    "echo hi 2>&1 | tee log.txt",
    "cat <<< hello",
    "sort < data.txt",
    "vim notes.md",
    "less README.md",
    "ssh-keygen -l -f key.pub",
    "git stash list",
    "flash-cli --version",
]


@pytest.mark.parametrize("cmd", EVERYDAY)
def test_everyday_commands_still_run_with_a_deny_rule_and_an_allow(root: Path, cmd: str) -> None:
    p = policy(root, ("flags", {"allow": ["Bash"]}), *_rules(), mode="bypassPermissions")
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Allow), (cmd, command_candidates(cmd))


@pytest.mark.parametrize("cmd", ["git status", "ls -la", "cat README.md", "grep -r foo src", "git log --oneline"])
def test_read_only_commands_still_need_no_question(root: Path, cmd: str) -> None:
    assert is_read_only_command(cmd)[0]
    assert isinstance(policy(root, *_rules()).can_use_tool("Bash", bash(cmd)), Allow)


# ---------------------------------------------------------------- Read deny rules in Bash


@pytest.fixture
def secrets(root: Path) -> Path:
    (root / ".env").write_text("DB_PASSWORD=hunter2\n")
    (root / "secrets" / "key.txt").write_text("k\n")
    (root / "src" / "app.py").write_text("print(1)\n")
    (root / "README.md").write_text("hello\n")
    return root


READ_FORMS = [
    "cat < .env",
    "f=.env; cat < $f",
    "f=.e; g=nv; cat < $f$g",
    'cat < "${HOME:+.env}"',
    "cat 0<.env",
    "cat <> .env",
    "cat<.env",
    "wc -c 3<.env <&3",
    "dd if=.env",
    "dd if=./.env bs=1",
    "cd secrets && cat key.txt",
    "cd secrets; base64 key.txt",
    "cd ./secrets && od -c key.txt",
    "tar cf - secrets",
    "tar czf /tmp/a.tgz .",
    "zip -r /tmp/a.zip secrets",
    "cp -r secrets /tmp/s",
    "rsync -a secrets/ /tmp/s",
    "base64 secrets/key.txt",
    "xxd .env",
    "od -c .env",
    "f=.env; cat $f",
    'f=.env; cat "$f"',
    'f=secrets; tar cf - "$f"',
    "export F=.env; cat $F",
    "cat $(printf .en; echo v)",
    'cat "$X"',
    "cat ${X:-.env}",
    "cat `ls -a | grep en`",
    "for f in .env; do cat $f; done",
    "read f <<< .env; cat $f",
    "cp secrets/key.txt /tmp/k",
    "ln -s secrets s; cat s/key.txt",
    "cd secrets && tar cf - .",
    "pushd secrets && cat key.txt",
    "cd $D && cat key.txt",
    "cd src; cd ../secrets; cat key.txt",
    "cd secrets/.. && cd secrets && cat key.txt",
    "cat 0<>.env",
    'echo "$(< .env)"',
    "exec 3<.env; cat <&3",
    "< .env cat",
    "sudo cat < .env",
    "! cat < .env",
    "sh -c 'cat $0' .env",
    "bash -c 'f=.env; cat $f'",
    'cat "$1"',
    "tar cf - ./secrets/",
]


@pytest.mark.parametrize("cmd", READ_FORMS)
def test_read_deny_rules_hold_for_bash_in_bypass_mode(secrets: Path, cmd: str) -> None:
    rules = ("managed", {"deny": ["Read(.env)", "Read(./secrets/**)"]})
    p = policy(secrets, rules, mode="bypassPermissions")
    decision = p.can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Deny), (cmd, decision)
    p = policy(secrets, ("flags", {"allow": ["Bash"]}), rules)
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), (Ask, Deny)), cmd


@pytest.mark.parametrize(
    "cmd",
    [
        "cat README.md",
        "cat < README.md",
        "dd if=README.md",
        "cd src && cat app.py",
        "tar cf - src",
        "f=README.md; cat $f",
        "echo $HOME",
        'cat "$HOME/notes.txt"',
        "ls secrets",
        "ls -la",
        "pytest src",
        "git status",
        "echo $? $$ $#",
    ],
)
def test_read_deny_rules_leave_other_reads_alone(secrets: Path, cmd: str) -> None:
    p = policy(
        secrets,
        ("flags", {"allow": ["Bash"]}),
        ("managed", {"deny": ["Read(.env)", "Read(./secrets/**)"]}),
        mode="bypassPermissions",
    )
    decision = p.can_use_tool("Bash", bash(cmd))
    assert isinstance(decision, Allow), (cmd, decision)


def test_a_repeated_cd_is_not_lost_to_deduplication(root: Path) -> None:
    (root / "a" / "a").mkdir(parents=True)
    (root / "a" / "a" / "key").write_text("k\n")
    p = policy(root, ("managed", {"deny": ["Read(./a/a/key)"]}), mode="bypassPermissions")
    assert isinstance(p.can_use_tool("Bash", bash("cd a; cd a; cat key")), Deny)
    assert isinstance(p.can_use_tool("Bash", bash("cd a && cat key")), Allow)


@pytest.mark.parametrize(
    "cmd",
    ["python3 -c 'print(1)'", "rbash -c 'ls'", "f=x; for i in 1 2; do ls; done"],
)
def test_a_read_deny_does_not_need_a_bash_deny(secrets: Path, cmd: str) -> None:
    """Opaque commands meet Bash rules; a Read deny alone leaves them to what they name."""
    p = policy(secrets, ("flags", {"allow": ["Bash"]}), ("managed", {"deny": ["Read(./secrets/**)"]}))
    assert isinstance(p.can_use_tool("Bash", bash(cmd)), Allow), cmd
