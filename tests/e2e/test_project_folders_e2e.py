"""End to end: projects whose paths differ only in punctuation keep their sessions and memory apart."""

from __future__ import annotations

import json

from claude_mini.base import paths
from tests.fake_anthropic import Reply


def _system(request) -> str:
    return "\n".join(block["text"] for block in request.body["system"])


def test_continue_in_a_lookalike_folder_does_not_resume_the_other_project(run_cli, fake_server, tmp_path):
    dash, underscore = tmp_path / "my-app", tmp_path / "my_app"
    dash.mkdir(), underscore.mkdir()
    fake_server.on(Reply.text("Nothing worth saving."), purpose="extract", times=None)
    fake_server.on(Reply.text("first answer"), purpose="main", times=1)
    assert run_cli("-p", "SECRET-PLAN of my-app", cwd=dash).returncode == 0
    resumed = run_cli("-c", "-p", "what were we doing?", cwd=underscore)
    assert resumed.returncode == 1 and "No earlier session in this directory" in resumed.stderr
    assert "SECRET-PLAN" not in json.dumps([r.body for r in fake_server.requests_for("main")[1:]])
    added = run_cli("memory", "add", "underscore deploys with make ship", cwd=underscore)
    assert added.returncode == 0, added.stderr
    assert paths.memory_dir(underscore) != paths.memory_dir(dash)
    fake_server.on(Reply.text("ok"), purpose="main", times=1)
    assert run_cli("-p", "hello", cwd=dash).returncode == 0
    assert "make ship" not in _system(fake_server.requests_for("main")[-1])


def test_a_folder_shared_before_stays_with_the_first_and_the_other_gets_a_copy(
    run_cli, fake_server, tmp_path, isolated_env
):
    dash, underscore = tmp_path / "my-app", tmp_path / "my_app"
    dash.mkdir(), underscore.mkdir()
    old = isolated_env.home / "projects" / paths.path_key(dash.resolve())  # the folder both used before
    (old / "memory").mkdir(parents=True)
    (old / "memory" / "MEMORY.md").write_text("- [Ship](ship.md) — SHARED-MEMORY: ship with make ship\n")
    (old / "memory" / "ship.md").write_text(
        "---\nname: Ship\ndescription: ship with make ship\ntype: project\n---\nmake ship\n"
    )
    _old_transcript(old, "OLD-TALK", underscore / "Makefile")  # claude-mini ran in my_app before
    fake_server.on(Reply.text("Nothing worth saving."), purpose="extract", times=None)
    fake_server.on(Reply.text("one"), purpose="main", times=1)
    fake_server.on(Reply.text("two"), purpose="main", times=1)
    first = run_cli("-p", "hello", cwd=dash)
    assert first.returncode == 0, first.stderr
    [line] = [x for x in first.stderr.splitlines() if "differ only in punctuation" in x]
    assert str(underscore.resolve()) in line
    second = run_cli("-p", "hello", cwd=underscore)
    assert second.returncode == 0, second.stderr
    [line] = [x for x in second.stderr.splitlines() if "differ only in punctuation" in x]
    assert "memory was copied to" in line
    dash_request, underscore_request = fake_server.requests_for("main")
    assert "SHARED-MEMORY" in _system(dash_request) and "SHARED-MEMORY" in _system(underscore_request)
    assert paths.memory_dir(underscore) != paths.memory_dir(dash) == old / "memory"
    fake_server.on(Reply.text("three"), purpose="main", times=1)
    again = run_cli("-c", "-p", "and now?", cwd=underscore)  # its own session, not the other's
    assert again.returncode == 0 and "differ only in punctuation" not in again.stderr  # said once
    answers = json.dumps(fake_server.requests_for("main")[-1].body["messages"])
    assert '"two"' in answers and '"one"' not in answers


def _old_transcript(folder, text: str, named) -> None:
    """A session saved before transcripts recorded their cwd, whose tool call names `named`."""
    folder.mkdir(parents=True, exist_ok=True)
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": str(named.resolve())}}
    entries = [
        {"type": "user", "session_id": "old", "message": {"role": "user", "content": text}},
        {"type": "assistant", "session_id": "old", "message": {"role": "assistant", "content": [call]}},
        {
            "type": "user",
            "session_id": "old",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "all: ship"}],
            },
        },
        {"type": "assistant", "session_id": "old", "message": {"role": "assistant", "content": "ok"}},
    ]
    (folder / "00000000-old.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))


def test_continue_in_a_folder_shared_before_skips_the_sessions_from_before(
    run_cli, fake_server, tmp_path, isolated_env
):
    dash, underscore = tmp_path / "my-app", tmp_path / "my_app"
    dash.mkdir(), underscore.mkdir()
    old = isolated_env.home / "projects" / paths.path_key(dash.resolve())
    _old_transcript(old, "OLD-TALK of my_app", underscore / "Makefile")  # my_app's, in the folder dash keeps
    fake_server.on(Reply.text("Nothing worth saving."), purpose="extract", times=None)
    refused = run_cli("-c", "-p", "go on", cwd=dash)
    assert refused.returncode == 1 and "may be another project's" in refused.stderr and "/resume" in refused.stderr
    assert fake_server.requests_for("main") == [] and not (old / "project.json").exists()  # not claimed
    fake_server.on(Reply.text("first"), purpose="main", times=1)
    fake_server.on(Reply.text("second"), purpose="main", times=1)
    assert run_cli("-p", "NEW-TALK", cwd=dash).returncode == 0
    [new] = [p for p in old.glob("*.jsonl") if p.stem != "00000000-old"]
    assert {json.loads(line)["cwd"] for line in new.read_text().splitlines()} == {str(dash.resolve())}
    again = run_cli("-c", "-p", "go on", cwd=dash)
    assert again.returncode == 0, again.stderr
    sent = json.dumps(fake_server.requests_for("main")[-1].body["messages"])
    assert "NEW-TALK" in sent and "OLD-TALK" not in sent
    elsewhere = run_cli("-c", "-p", "go on", cwd=underscore)  # my_app leaves the folder: no /resume hint
    assert elsewhere.stderr.strip() == "claude-mini: No earlier session in this directory to continue."
