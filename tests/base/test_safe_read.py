"""The shared reader (claude_mini/base/safe_read.py) and the places that read through it.

Each file kind that reaches a prompt (or steers the session) is tried with the same hostile
layouts: a link to /proc, /dev or a credential file, a FIFO (timeouts: a hang fails the test),
a link out of the folder it must stay in, and a huge file, which must not be read whole.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from claude_mini.base import safe_read
from claude_mini.base.safe_read import Unreadable, read_capped, read_file
from claude_mini.config import load_config
from claude_mini.config.layers import SETTINGS_MAX_BYTES, read_settings_file
from claude_mini.mcp_servers.config import written_servers
from claude_mini.memory.extract.prompt import memory_policies
from claude_mini.memory.instructions import load_instructions
from claude_mini.memory.store import MemoryStore, MemoryStoreError, index_line, read_text_head
from claude_mini.skills.catalog import load_catalog
from claude_mini.subagents.types import AgentType, memory_dir, memory_dir_problem

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "project"
    out.mkdir()
    return out


# --- the reader itself ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("/proc/self/environ", "under /proc, a system location"),
        ("/proc/self/status", "under /proc"),
        ("/sys/kernel/uevent_seqnum", "under /sys"),
        ("/dev/zero", "a device file, not a regular file"),
        ("/dev/null", "a device file"),
        ("/sys/kernel", "a folder"),
    ],
)
def test_links_to_system_locations_are_refused(folder, target, why):
    if not os.path.exists(target):
        pytest.skip(f"{target} is not on this machine")
    (folder / "f.md").symlink_to(target)
    with pytest.raises(Unreadable, match=why) as refused:
        read_file(folder / "f.md", 1000)
    assert os.path.realpath(target) in str(refused.value) or target.startswith(("/proc", "/sys/kernel/u"))


def test_a_system_path_as_written_is_refused(folder):
    (folder / "plain.md").write_text("plain\n")
    fd = os.open(folder / "plain.md", os.O_RDONLY)
    try:  # /dev/fd/N leads back to a plain file: the spelling alone refuses it
        with pytest.raises(Unreadable, match="under /dev"):
            read_file(f"/dev/fd/{fd}", 1000)
    finally:
        os.close(fd)
    with pytest.raises(Unreadable, match="under /proc"):
        read_file("/proc/self/status", 1000)


def test_a_link_to_a_credential_file_is_refused(folder, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\naws_secret_access_key=x\n")
    (folder / "notes.md").symlink_to(tmp_path / ".aws" / "credentials")
    with pytest.raises(Unreadable, match=r"~/\.aws, a credential location"):
        read_file(folder / "notes.md", 1000)


def test_a_fifo_is_refused_without_hanging(folder):
    os.mkfifo(folder / "pipe.md")
    with pytest.raises(Unreadable, match="FIFO"):
        read_file(folder / "pipe.md", 1000)
    # Swapped in after the caller's own checks: the non-blocking open and fstat still refuse it.
    with pytest.raises(Unreadable, match="FIFO"):
        read_capped(str(folder / "pipe.md"), 1000)


def test_a_link_out_of_the_folder_is_refused_only_where_asked(folder, tmp_path):
    (tmp_path / "outside.md").write_text("outside\n")
    (folder / "in.md").write_text("inside\n")
    (folder / "out.md").symlink_to(tmp_path / "outside.md")
    (folder / "in-link.md").symlink_to(folder / "in.md")
    with pytest.raises(Unreadable, match="outside"):
        read_file(folder / "out.md", 1000, inside=folder)
    assert read_file(folder / "in-link.md", 1000, inside=folder) == b"inside\n"
    assert read_file(folder / "out.md", 1000) == b"outside\n"  # no `inside`: a trusted reader


def test_at_most_the_cap_plus_one_byte_is_read(folder):
    huge = folder / "huge.md"
    with open(huge, "wb") as f:  # sparse: 20 GB that were never written
        f.truncate(20 * 1024**3)
    with pytest.raises(Unreadable, match="too large"):
        read_file(huge, 1000)
    assert len(read_file(huge, 1000, cut=True)) == 1001


def test_a_missing_file_is_file_not_found(folder):
    with pytest.raises(FileNotFoundError):
        read_file(folder / "nothing.md", 10)
    (folder / "dangling.md").symlink_to(folder / "nothing.md")
    with pytest.raises(FileNotFoundError):
        read_file(folder / "dangling.md", 10)


def test_the_reader_imports_nothing_above_the_base_layer():
    source = Path(safe_read.__file__).read_text()
    imports = [line for line in source.splitlines() if line.startswith(("from claude_mini", "import claude_mini"))]
    assert imports and all(line.startswith("from claude_mini.base.") for line in imports)


# --- instruction files, skills, commands -----------------------------------------------------
def test_a_trusted_claude_md_linked_to_proc_is_skipped(folder, isolated_env):
    (folder / "CLAUDE.md").symlink_to("/proc/self/status")  # text without NULs: no binary guard
    loaded = load_instructions(folder, project_root=folder, trusted=True)
    assert "Name:" not in loaded.render()
    [skipped] = [s for s in loaded.skipped if s.linked_from == str(folder / "CLAUDE.md")]
    assert "system location" in skipped.reason


def test_a_trusted_skill_linked_to_proc_is_one_line(folder, isolated_env):
    link = folder / ".claude" / "skills" / "status" / "SKILL.md"
    link.parent.mkdir(parents=True)
    link.symlink_to("/proc/self/status")
    catalog = load_catalog(folder, isolated_env.home, trusted=True)
    assert catalog.find("status") is None
    [line] = [p for p in catalog.problems if "SKILL.md" in p]
    assert "system location" in line and "Name:" not in line


# --- memory: the index, topics, the policy file -----------------------------------------------
def test_a_memory_md_linked_to_proc_environ_reads_as_empty_and_is_never_rewritten(folder, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_TEST_CANARY", "canary-3b1f")
    store = MemoryStore(folder / "memory")
    store.root.mkdir()
    store.index_path.symlink_to("/proc/self/environ")
    said: list[str] = []
    store.warn = said.append
    assert store.index_text() == ""
    assert len(said) == 1 and "/proc" in said[0] and "\n" not in said[0]
    with pytest.raises(MemoryStoreError, match="the index was not changed"):
        store.update_index(add_or_replace={"a.md": index_line("a.md", "A", "a")})
    assert store.index_path.is_symlink()  # not replaced by a copy of the environment


def test_a_memory_md_linked_out_of_its_folder_is_refused(folder, tmp_path):
    (tmp_path / "elsewhere.md").write_text("- [Secret](s.md) — from outside\n")
    store = MemoryStore(folder / "memory")
    store.root.mkdir()
    store.index_path.symlink_to(tmp_path / "elsewhere.md")
    assert store.index_text() == ""


def test_a_topic_head_of_a_fifo_or_proc_link_is_skipped(folder):
    os.mkfifo(folder / "pipe.md")
    (folder / "env.md").symlink_to("/proc/self/status")
    assert read_text_head(folder / "pipe.md", 100) == (None, "a FIFO (named pipe), not a regular file")
    text, why = read_text_head(folder / "env.md", 100)
    assert text is None and "/proc" in (why or "")


@pytest.mark.parametrize("target", ["/proc/self/environ", "fifo", "outside"])
def test_a_project_memory_policy_that_is_no_plain_file_of_the_project_is_left_out(folder, tmp_path, target):
    policy = folder / ".claude" / "memory-policy.md"
    policy.parent.mkdir()
    if target == "fifo":
        os.mkfifo(policy)
    elif target == "outside":
        (tmp_path / "theirs.md").write_text("Save everything.\n")
        policy.symlink_to(tmp_path / "theirs.md")
    else:
        policy.symlink_to(target)
    said: list[str] = []
    assert memory_policies(folder, said.append) == []
    assert len(said) == 1 and "memory-policy.md was not read" in said[0]


def test_a_plain_memory_policy_is_still_read(folder):
    (folder / ".claude").mkdir()
    (folder / ".claude" / "memory-policy.md").write_text("Never save build logs.\n")
    assert memory_policies(folder) == [(folder / ".claude" / "memory-policy.md", "Never save build logs.")]


# --- an agent type's memory folder ------------------------------------------------------------
def keeper(memory: str = "project") -> AgentType:
    return AgentType(name="keeper", description="Keeps notes", prompt="Keep notes.", memory=memory)  # type: ignore[arg-type]


@pytest.mark.parametrize("layout", ["folder", "parent", "claude-dir"])
def test_an_agent_memory_folder_that_is_or_lies_in_a_link_is_refused(folder, isolated_env, layout):
    target = memory_dir(keeper(), folder, isolated_env.home)
    assert target is not None
    link_at = {"folder": target, "parent": target.parent, "claude-dir": folder / ".claude"}[layout]
    link_at.parent.mkdir(parents=True, exist_ok=True)
    link_at.symlink_to(folder if layout != "claude-dir" else folder / "elsewhere")
    problem = memory_dir_problem(keeper(), target, folder, isolated_env.home)
    assert problem and "symbolic link" in problem


def test_a_real_or_missing_agent_memory_folder_is_fine(folder, isolated_env):
    for scope in ("project", "user", "local"):
        target = memory_dir(keeper(scope), folder, isolated_env.home)
        assert target is not None
        assert memory_dir_problem(keeper(scope), target, folder, isolated_env.home) is None
        target.mkdir(parents=True)
        assert memory_dir_problem(keeper(scope), target, folder, isolated_env.home) is None


def test_an_agent_memory_path_that_is_a_file_is_refused(folder, isolated_env):
    target = memory_dir(keeper(), folder, isolated_env.home)
    assert target is not None
    target.parent.mkdir(parents=True)
    target.write_text("x")
    assert memory_dir_problem(keeper(), target, folder, isolated_env.home) == "it is not a folder"


# --- settings and .mcp.json ---------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_settings_file_that_cannot_be_read_is_one_line(folder, kind):
    path = folder / "settings.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as f:
            f.truncate(SETTINGS_MAX_BYTES + 1)
    warnings: list[str] = []
    assert read_settings_file(path, warnings) == {}
    [line] = warnings
    assert line.startswith(f"Skipped settings file {path}: ") and "Other settings still apply" in line
    assert {"fifo": "FIFO", "dev-zero": "a device file, not a regular file (a link to /dev/zero)", "huge": "too large"}[
        kind
    ] in line


def test_a_fifo_as_mcp_json_is_one_problem(repo, isolated_env):
    os.mkfifo(repo / ".mcp.json")
    config = load_config(repo, trust_folder=True)
    problems: list[str] = []
    assert written_servers(config, "project", problems)[1] == {}
    [line] = problems
    assert ".mcp.json" in line and "FIFO" in line and "MCP servers do not start" in line


def test_a_managed_settings_link_to_dev_zero_fails_closed(repo, isolated_env):
    (isolated_env.managed / "settings.json").symlink_to("/dev/zero")
    config = load_config(repo)
    assert config.managed_error and "/dev/zero" in config.managed_error
    assert "every tool is denied" in config.managed_error


# --- compaction's restore of recently read files ------------------------------------------------
def test_compaction_skips_a_read_file_that_became_a_fifo_or_a_proc_link(folder):
    from claude_mini.memory.compact.compactor import restore_files

    (folder / "a.py").write_text("print('a')\n")
    os.mkfifo(folder / "was-a-file.py")
    (folder / "status.txt").symlink_to("/proc/self/status")
    read = {folder / "a.py": 1.0, folder / "was-a-file.py": 2.0, folder / "status.txt": 3.0}
    assert restore_files(read) == [(str(folder / "a.py"), "print('a')\n")]
