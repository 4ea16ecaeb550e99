"""A memory folder that cannot be written (read-only, or a full disk): one clear line, never a traceback."""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path

import pytest

from claude_mini.agent.fork import ForkResult, ToolRun
from claude_mini.base import fileutil
from claude_mini.commands.memory import MemoryCommandError, MemoryContext, add_memory, forget_memory
from claude_mini.config import load_config
from claude_mini.llm.messages import ToolUseBlock
from claude_mini.memory.extract.journal import unsaved_writes
from claude_mini.memory.maintenance import forget
from claude_mini.memory.maintenance.dream import maybe_auto_dream
from claude_mini.memory.store import MemoryStore
from claude_mini.tools.base import ToolResult
from tests.folder_faults import read_only_folder


@pytest.fixture
def mc(tmp_path: Path) -> MemoryContext:
    return MemoryContext(load_config(tmp_path), MemoryStore(tmp_path / "memory"))


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(path, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(fileutil, "atomic_write", full)
    for module in ("claude_mini.memory.store.memory_store", "claude_mini.memory.store.index"):
        monkeypatch.setattr(f"{module}.atomic_write", full)


def test_memory_add_on_a_full_disk_says_what_was_not_saved(mc, monkeypatch):
    _full_disk(monkeypatch)
    with pytest.raises(
        MemoryCommandError,
        match=r"could not save the memory \(No space left on device: "
        r".*\); nothing was changed",
    ):
        add_memory(mc, "Deploy with make ship, never by hand", "user")
    assert list(mc.store.root.iterdir()) == []  # the empty claimed file went too


def test_memory_add_and_forget_in_a_read_only_folder_give_one_line(mc):
    add_memory(mc, "Deploy with make ship, never by hand", "user")
    with read_only_folder(mc.store.root):
        with pytest.raises(MemoryCommandError, match=r"could not save the memory \(.*\); nothing was saved"):
            add_memory(mc, "Release on Thursdays after the freeze", "project")
        with pytest.raises(MemoryCommandError, match=r"could not archive deploy"):
            forget_memory(mc.store, "deploy-with-make-ship-never-by-hand.md")
    assert len(mc.store.list()) == 1


def test_start_up_maintenance_in_a_read_only_folder_tells_once(mc, monkeypatch):
    said: list[str] = []
    mc.store.warn = said.append
    add_memory(mc, "Deploy with make ship, never by hand", "user")
    monkeypatch.setattr(forget, "pressure", lambda *a: True)  # gc is due: it must archive
    monkeypatch.setattr(
        forget,
        "gc",
        lambda *a, **k: (_ for _ in ()).throw(OSError(errno.EROFS, "Read-only file system", str(mc.store.root))),
    )
    assert forget.maybe_auto_gc(mc.store, mc.config) == []
    assert said == [f"Automatic memory gc skipped (Read-only file system: {mc.store.root}); nothing was archived."]
    with read_only_folder(mc.store.root):
        assert asyncio.run(maybe_auto_dream(None, mc.store, mc.config, "s1")) is None  # type: ignore[arg-type]
    assert len(said) == 2 and said[1].startswith("Automatic dream skipped (")


def test_an_extraction_write_that_failed_is_named(tmp_path):
    def run(name: str, path: str, text: str, error: bool, disk: bool = False) -> ToolRun:
        call = ToolUseBlock(id=f"t-{len(path)}-{error}-{len(text)}", name=name, input={"file_path": path})
        return ToolRun(
            call, ToolResult(text, is_error=error, metadata={"disk_error": disk} if error else {"path": path})
        )

    memory = tmp_path / "memory"
    result = ForkResult(
        "extract",
        tool_runs=[
            run(
                "Write",
                str(memory / "deploy.md"),
                f"Could not write {memory}/deploy.md: No space left on device. The file was not changed.",
                True,
                disk=True,
            ),
            run("Write", str(memory / "retried.md"), "not read first", True, disk=True),
            run("Write", str(memory / "retried.md"), "ok", False),
            # the fork's own mistake, not the disk's: not a save failure
            run("Edit", str(memory / "typo.md"), "String to replace not found in the file.", True),
        ],
    )
    assert unsaved_writes(result, tmp_path) == [
        f"deploy.md (Could not write {memory}/deploy.md: No space left on device. The file was not changed)"
    ]


def test_only_a_failure_of_the_disk_is_marked_as_one(tmp_path, monkeypatch):
    """run_tool marks a DiskError (the folder cannot be written), not a wrong Edit."""
    from claude_mini.agent.loop import run_tool
    from claude_mini.tools.base import ToolContext
    from claude_mini.tools.edit import EditTool
    from claude_mini.tools.write import WriteTool

    ctx = ToolContext(cwd=tmp_path, project_root=tmp_path)
    target = tmp_path / "deploy.md"
    monkeypatch.setattr(
        fileutil.tempfile,
        "mkstemp",
        lambda **k: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device")),
    )
    full = asyncio.run(
        run_tool(WriteTool(), ToolUseBlock("w", "Write", {"file_path": str(target), "content": "x"}), ctx)
    )
    assert full.is_error and full.metadata["disk_error"] and "No space left on device" in full.content
    monkeypatch.undo()
    target.write_text("a\n")
    ctx.read_files[target] = target.stat().st_mtime
    edit = {"file_path": str(target), "old_string": "zzz", "new_string": "b"}
    wrong = asyncio.run(run_tool(EditTool(), ToolUseBlock("e", "Edit", edit), ctx))
    assert wrong.is_error and not wrong.metadata["disk_error"]
