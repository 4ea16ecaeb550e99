"""/resume in a folder projects shared before the record: sessions from before are listed, marked."""

from __future__ import annotations

import json
from pathlib import Path

from claude_mini.base import paths
from claude_mini.session import Session
from claude_mini.ui.session_commands import _options


def test_resume_marks_the_sessions_from_before_in_a_folder_shared_before(tmp_path: Path) -> None:
    dash, underscore = tmp_path / "my-app", tmp_path / "my_app"
    dash.mkdir(), underscore.mkdir()
    plain = paths.home_dir() / "projects" / paths.path_key(dash.resolve())
    plain.mkdir(parents=True)
    old = plain / "old.jsonl"
    old.write_text(
        json.dumps(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"type": "text", "text": f"read {underscore.resolve()}/Makefile"}],
                },
            }
        )
        + "\n"
    )
    session = Session(dash)  # claims the folder: it was shared with my_app
    session.record_system("note", text="NEW")
    assert paths.shares_key(dash) and session.transcript.path.parent == plain
    rows = dict(_options(dash, [old, session.transcript.path]))
    assert "(from before, may be another project's)" in rows["old"]
    assert "from before" not in rows[session.id]
