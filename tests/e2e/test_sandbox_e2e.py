"""End to end: Bash inside the bubblewrap sandbox, judged on disk and in the tool results the
model got. Skipped only where bwrap cannot run (CI installs it)."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from claude_mini.sandbox.bwrap import probe
from tests.e2e.conftest import cli_env, text_of, tool_results
from tests.e2e.test_repl import wait_until
from tests.fake_anthropic import Reply

pytestmark = pytest.mark.skipif(not probe().works, reason=f"bwrap cannot run here: {probe().problem}")


def _bash(fake_server, *commands: str) -> None:
    fake_server.queue(*(Reply.tool("Bash", {"command": c}) for c in commands), Reply.text("done"))


def test_a_write_outside_the_project_leaves_no_file(run_cli, fake_server, repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    _bash(fake_server, f"echo x > {outside}/escaped.txt; echo y > inside.txt")
    result = run_cli("-p", "write", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    assert not (outside / "escaped.txt").exists()
    assert (repo / "inside.txt").read_text() == "y\n"
    # /tmp inside is the sandbox's own tmpfs: the folder is not even there
    assert "No such file or directory" in text_of(tool_results(fake_server)[0])


def test_a_read_deny_rule_masks_the_file_whatever_the_shell_text(run_cli, fake_server, repo, isolated_env):
    (repo / ".env").write_text("API_TOKEN=s3cr3t-value\n")
    (isolated_env.managed / "settings.json").write_text(json.dumps({"permissions": {"deny": ["Read(./.env)"]}}))
    # A script the Bash-line check cannot read (it does not open files a program opens itself):
    # written by one call, run by the next. Only the kernel stands in the way.
    _bash(fake_server, "printf '%s\\n' 'cat .e*v' > show.sh", "bash show.sh; cat README.md; echo end")
    result = run_cli("-p", "read", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    shown = text_of(tool_results(fake_server)[1])
    assert "# demo" in shown and "end" in shown  # only the denied file is hidden, not the project
    for request in fake_server.requests:
        assert "s3cr3t-value" not in json.dumps(request.body)


def _local_server() -> http.server.HTTPServer:
    server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("allowed", [[], ["docs.example.org"]], ids=["no-proxy", "proxy-refuses"])
def test_a_local_port_no_rule_allows_is_unreachable(run_cli, fake_server, repo, isolated_env, allowed):
    (isolated_env.home / "settings.json").write_text(json.dumps({"sandbox": {"network": {"allowedDomains": allowed}}}))
    server = _local_server()
    port = server.server_address[1]
    try:
        _bash(
            fake_server,
            f"curl -sSf -m 5 http://127.0.0.1:{port}/ && echo REACHED",
            f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\" && echo REACHED",
        )
        result = run_cli("-p", "connect", "--permission-mode", "bypassPermissions")
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    texts = [text_of(r) for r in tool_results(fake_server)]
    assert len(texts) == 2 and all("REACHED" not in t for t in texts)
    if allowed:  # with the proxy in place, the refusal is its own, and the user is told
        assert "403" in texts[0]
        assert "The sandbox refused network access to 127.0.0.1" in result.stderr


def test_an_allowed_domain_goes_through_the_proxy(run_cli, fake_server, repo):
    server = _local_server()
    port = server.server_address[1]
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(
        json.dumps({"permissions": {"allow": ["WebFetch(domain:127.0.0.1)"]}})
    )
    try:
        _bash(fake_server, f"curl -sS -m 10 -o /dev/null -w '%{{http_code}}' http://127.0.0.1:{port}/README.md")
        result = run_cli("-p", "fetch", "--trust-folder")
    finally:
        server.shutdown()
    assert result.returncode == 0, result.stderr
    assert text_of(tool_results(fake_server)[0]).strip() == "200"


def test_sandboxed_commands_run_without_a_question(run_cli, fake_server, repo):
    _bash(fake_server, "touch made-by-make.txt")
    result = run_cli("-p", "build")
    assert result.returncode == 0, result.stderr
    assert (repo / "made-by-make.txt").exists()


def test_credentials_and_the_home_are_hidden(run_cli, fake_server, repo, isolated_env, tmp_path):
    home = tmp_path / "userhome"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE-KEY-BYTES\n")
    (isolated_env.home / "settings.json").write_text("{}")
    _bash(fake_server, f"cat {home}/.ssh/id_ed25519; ls {isolated_env.home}; echo end")
    result = run_cli("-p", "look", "--permission-mode", "bypassPermissions", env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    text = text_of(tool_results(fake_server)[0])
    assert "PRIVATE-KEY-BYTES" not in text and "settings.json" not in text


def test_protected_files_are_read_only_inside(run_cli, fake_server, repo):
    hooks = repo / ".git" / "hooks"
    _bash(fake_server, "echo 'touch /tmp/pwned' > .git/hooks/pre-commit; echo '[core]' >> .git/config; echo end")
    before = (repo / ".git" / "config").read_text()
    result = run_cli("-p", "plant", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    assert not (hooks / "pre-commit").exists()
    assert (repo / ".git" / "config").read_text() == before


def test_the_sandbox_can_be_switched_off(run_cli, fake_server, repo, isolated_env, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (isolated_env.home / "settings.json").write_text(json.dumps({"sandbox": {"enabled": False}}))
    _bash(fake_server, f"echo x > {outside}/written.txt")
    result = run_cli("-p", "write", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    assert (outside / "written.txt").exists()


def test_sandbox_status(run_cli, repo):
    result = run_cli("sandbox", "status")
    assert result.returncode == 0, result.stderr
    assert "Sandbox: enforced" in result.stdout
    data = json.loads(run_cli("sandbox", "status", "--json").stdout)
    assert data["enforced"] is True and str(Path(repo).resolve()) in data["filesystem"]["writable"]


def _sleepers(seconds: str) -> list[int]:
    """Host pids of the processes running `sleep <seconds>` (a number no other test uses)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if cmdline.read_bytes() == f"sleep\0{seconds}\0".encode():
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def test_kill_9_of_claude_mini_ends_the_sandboxed_command_and_its_children(isolated_env, fake_server, repo):
    fake_server.on(Reply.tool("Bash", {"command": "sleep 3301.5 & touch started; sleep 3302.5"}), purpose="main")
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, CLAUDE_MINI_DISABLE_AUTO_MEMORY="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "claude_mini", "-p", "wait"],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: (repo / "started").exists() and _sleepers("3302.5"), timeout=60)
        assert _sleepers("3301.5")
        proc.kill()
        proc.wait(timeout=30)
        wait_until(lambda: not _sleepers("3301.5") and not _sleepers("3302.5"), timeout=30)
    finally:
        proc.kill()


def test_the_memory_folder_is_visible_to_the_extraction_fork_only(run_cli, fake_server, repo):
    from claude_mini.base import paths
    from tests.e2e.conftest import trust_folder

    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"recall": {"strategy": "off"}}))
    trust_folder(paths.home_dir(), repo)
    memdir = paths.memory_dir(repo)
    memdir.mkdir(parents=True)
    (memdir / "MEMORY.md").write_text("- [Old](old.md) — an index line only the fork may read\n")
    fake_server.on(Reply.tool("Bash", {"command": f"cat {memdir}/MEMORY.md; echo main-end"}), purpose="main")
    fake_server.on(Reply.text("Always run pytest with -x, noted."), purpose="main")
    fake_server.on(Reply.tool("Bash", {"command": f"cat {memdir}/MEMORY.md"}), purpose="extract")
    fake_server.on(Reply.text("Nothing new."), purpose="extract")
    result = run_cli("-p", "always run pytest with -x")
    assert result.returncode == 0, result.stderr
    main = text_of(tool_results(fake_server)[0])
    assert "main-end" in main and "only the fork may read" not in main
    extract_results = [
        b
        for r in fake_server.requests_for("extract")
        for b in (r.body["messages"][-1]["content"] if isinstance(r.body["messages"][-1]["content"], list) else [])
        if b.get("type") == "tool_result"
    ]
    assert extract_results and "only the fork may read" in text_of(extract_results[0])


def test_a_settings_file_or_mcp_json_a_command_creates_is_removed(run_cli, fake_server, repo):
    (repo / ".claude").mkdir()
    hook = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "touch /tmp/owned"}]}]}}
    _bash(
        fake_server,
        f"echo '{json.dumps(hook)}' > .claude/settings.local.json; echo '{{}}' > .mcp.json; "
        "echo kept > notes.txt; git init -q sub && ls sub/.git/config",
    )
    result = run_cli("-p", "plant", "--permission-mode", "bypassPermissions")
    assert result.returncode == 0, result.stderr
    assert not (repo / ".claude" / "settings.local.json").exists() and not (repo / ".mcp.json").exists()
    assert (repo / "notes.txt").exists() and (repo / "sub" / ".git" / "config").exists()  # a new repo is its own
    text = text_of(tool_results(fake_server)[0])
    assert (
        "The sandbox removed .mcp.json, .claude/settings.local.json" in text
        or "The sandbox removed .claude/settings.local.json, .mcp.json" in text
    )
