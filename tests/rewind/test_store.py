"""rewind/store.py: what a checkpoint keeps of a file, one copy per content, the cap (oldest
dropped first, their copies deleted), one record per file and turn, a damaged index set aside,
unreadable records skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini.config.checkpoint_settings import CheckpointSettings, checkpoint_settings
from claude_mini.rewind.store import (
    MAX_FILE_BYTES,
    FileHistory,
    StoreError,
    capture,
    fingerprint,
)


def history(tmp_path: Path, cap: int = 10_000) -> FileHistory:
    return FileHistory(tmp_path / "store", "s1", CheckpointSettings(cap))


def change(store: FileHistory, message: str, path: Path, new: str) -> str | None:
    """What a Write of `new` to `path` in the turn of `message` records (the note, if any)."""
    before, data = capture(path)
    path.write_text(new)
    return store.record_change(message, path, before, data, fingerprint(path), "Write")


def test_capture_keeps_text_and_notes_what_it_cannot_keep(tmp_path: Path):
    text = tmp_path / "a.py"
    text.write_text("x = 1\n")
    before, data = capture(text)
    assert before.state == "kept" and data == b"x = 1\n" and before.size == 6
    assert capture(tmp_path / "none")[0].state == "absent"
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"PK\x00\x01")
    before, data = capture(binary)
    assert (before.state, before.why, data) == ("unrestorable", "it is a binary file", None)
    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    before, data = capture(huge)
    assert before.state == "unrestorable" and data is None and "larger than 1 MB" in before.why
    assert capture(tmp_path)[0].why == "it is not a regular file"


def test_one_copy_per_content_and_one_record_per_file_and_turn(tmp_path: Path):
    store = history(tmp_path)
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("same\n")
    b.write_text("same\n")
    change(store, "m1", a, "one\n")
    change(store, "m1", a, "two\n")  # the same turn again: only its state after moves
    change(store, "m1", b, "three\n")
    [first, second] = store.load().changes
    assert first.path == str(a) and first.before.sha == second.before.sha  # one content, one copy
    assert first.after == fingerprint(a) and [p.name for p in store.blob_dir.iterdir()] == [first.before.sha]
    assert store.blob(first.before.sha) == b"same\n"


def test_the_oldest_copies_are_dropped_first_to_stay_under_the_cap(tmp_path: Path):
    store = history(tmp_path, cap=2_500)
    files = [tmp_path / f"f{i}.txt" for i in range(4)]
    for i, path in enumerate(files):
        path.write_text(str(i) * 1_000)
    notes = [change(store, f"m{i}", path, "new") for i, path in enumerate(files)]
    assert notes[:2] == [None, None]
    assert notes[2] == (
        "File checkpoints of this session reached their cap of 2.44 KB (checkpoints.maxSessionMB): "
        "1 saved file copy was dropped, oldest first; /rewind cannot put those files back as they "
        "were before those changes."
    )
    states = [c.before.state for c in store.load().changes]
    assert states == ["unrestorable", "unrestorable", "kept", "kept"]
    assert "dropped to keep this session's checkpoints under 2.44 KB" in store.load().changes[0].before.why
    assert store.stored_bytes() == 2_000 <= store.cap and len(list(store.blob_dir.iterdir())) == 2


def test_a_cap_of_zero_keeps_no_copy(tmp_path: Path):
    store = history(tmp_path, cap=0)
    path = tmp_path / "a.txt"
    path.write_text("x")
    change(store, "m1", path, "y")
    assert store.load().changes[0].before.why == "file checkpoints are off (checkpoints.maxSessionMB is 0)"
    assert store.stored_bytes() == 0


def test_the_setting_is_validated_with_its_default_said(tmp_path: Path):
    assert checkpoint_settings({"checkpoints": {"maxSessionMB": 2}}).max_session_bytes == 2 * 1024 * 1024
    bad = checkpoint_settings({"checkpoints": {"maxSessionMB": "lots"}})
    assert bad.max_session_bytes == 50 * 1024 * 1024
    assert bad.problems == ("checkpoints.maxSessionMB must be a number of megabytes >= 0 (got 'lots'); using 50.",)


def test_a_damaged_index_is_said_when_read_and_set_aside_when_written(tmp_path: Path):
    store = history(tmp_path)
    store.root.mkdir()
    store.index_path.write_text("[1, 2")
    with pytest.raises(StoreError, match="is damaged .* It was left as it is; move it away"):
        store.load()
    path = tmp_path / "a.txt"
    path.write_text("x")
    note = change(store, "m1", path, "y")
    assert note is not None and note.startswith("The checkpoint index was damaged; it was kept as ")
    [aside] = [p for p in store.root.iterdir() if p.name.startswith("index.json.damaged-")]
    assert aside.read_text() == "[1, 2" and len(store.load().changes) == 1


def test_unreadable_records_are_skipped_and_counted(tmp_path: Path):
    store = history(tmp_path)
    path = tmp_path / "a.txt"
    path.write_text("x")
    change(store, "m1", path, "y")
    data = json.loads(store.index_path.read_text())
    data["records"] += [{"kind": "change", "seq": 9}, {"kind": "who knows", "seq": 10}, "nonsense"]
    store.index_path.write_text(json.dumps(data))
    index = store.load()
    assert len(index.records) == 1 and index.skipped == 3


def test_a_damaged_copy_is_not_handed_out(tmp_path: Path):
    store = history(tmp_path)
    path = tmp_path / "a.txt"
    path.write_text("x")
    change(store, "m1", path, "y")
    sha = store.load().changes[0].before.sha
    (store.blob_dir / sha).write_bytes(b"tampered")
    assert store.blob(sha) is None
