"""paths.py: the home and managed folders and the project key of DESIGN.md section 4."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini.base import paths


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/home/ada/src/shop", "-home-ada-src-shop"),
        ("/tmp/a b/c.d_e", "-tmp-a-b-c-d-e"),
        ("/srv/café", "-srv-caf-"),
        ("/", "-"),
    ],
)
def test_path_key_replaces_every_non_alphanumeric_character(path: str, key: str) -> None:
    assert paths.path_key(Path(path)) == key


def test_long_keys_are_cut_with_a_hash_that_keeps_them_apart() -> None:
    first, second = (Path("/" + "a" * 250 + suffix) for suffix in ("x", "y"))
    key1, key2 = paths.path_key(first), paths.path_key(second)
    assert len(key1) == 200 + 1 + 8 and key1[:200] == key2[:200]
    assert key1 != key2


def test_home_and_managed_folders_follow_the_environment(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CLAUDE_MINI_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("CLAUDE_MINI_MANAGED_DIR", str(tmp_path / "m"))
    assert paths.home_dir() == tmp_path / "h" and paths.managed_dir() == tmp_path / "m"
    monkeypatch.delenv("CLAUDE_MINI_HOME")
    monkeypatch.delenv("CLAUDE_MINI_MANAGED_DIR")
    assert paths.home_dir() == Path.home() / ".claude-mini"
    assert paths.managed_dir() == Path("/etc/claude-mini")


def test_memory_is_keyed_on_the_git_root_and_transcripts_on_the_cwd(repo: Path) -> None:
    sub = repo / "src"
    sub.mkdir()
    root_key = paths.path_key(repo.resolve())
    assert paths.memory_dir(sub) == paths.home_dir() / "projects" / root_key / "memory"
    assert paths.project_dir(sub) == paths.home_dir() / "projects" / paths.path_key(sub.resolve())


def test_outside_git_the_cwd_is_the_key(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    assert paths.memory_dir(folder) == paths.home_dir() / "projects" / paths.path_key(folder.resolve()) / "memory"


@pytest.fixture
def lookalikes(tmp_path: Path) -> list[Path]:
    """Four project folders whose paths differ only in punctuation: one key before the record."""
    folders = [tmp_path / "my-app", tmp_path / "my_app", tmp_path / "my.app", tmp_path / "my" / "app"]
    for folder in folders:
        folder.mkdir(parents=True)
    return folders


def test_paths_that_differ_only_in_punctuation_get_folders_of_their_own(lookalikes: list[Path]) -> None:
    said: list[str] = []
    plain = paths.home_dir() / "projects" / paths.path_key(lookalikes[0].resolve())
    assert {paths.path_key(f.resolve()) for f in lookalikes} == {plain.name}
    for folder in lookalikes:
        before = (paths.project_dir(folder), paths.memory_dir(folder))
        paths.claim_project_folders(folder, said.append)
        assert (paths.project_dir(folder), paths.memory_dir(folder)) == before  # looking = claiming
    folders = [paths.project_dir(f) for f in lookalikes]
    assert folders[0] == plain and len(set(folders)) == 4  # the first keeps DESIGN.md's plain key
    assert all(f.name.startswith(plain.name + "-") and len(f.name) == len(plain.name) + 9 for f in folders[1:])
    assert [json.loads((f / "project.json").read_text())["path"] for f in folders] == [
        str(f.resolve()) for f in lookalikes
    ]
    assert [paths.memory_dir(f) for f in lookalikes] == [f / "memory" for f in folders]
    assert said == []  # new folders: nothing to say


def test_a_shared_folder_from_before_stays_with_the_first_and_the_others_get_a_copy(lookalikes: list[Path]) -> None:
    first, second = lookalikes[0], lookalikes[1]
    plain = paths.home_dir() / "projects" / paths.path_key(first.resolve())
    (plain / "memory").mkdir(parents=True)
    (plain / "memory" / "MEMORY.md").write_text("- [Build](build.md) — make, not npm\n")
    (plain / "memory" / "build.md").write_text("---\nname: Build\n---\nmake\n")
    _old_transcript(plain, second / "setup.py")  # claude-mini ran in `second`: it gets a copy
    said: list[str] = []
    paths.claim_project_folders(first, said.append)
    assert paths.project_dir(first) == plain and len(said) == 1
    assert str(second.resolve()) in said[0] and "differ only in punctuation" in said[0]
    assert paths.project_dir(second) == plain  # still shared until its first run copies the memory
    paths.claim_project_folders(second, said.append)
    own = paths.project_dir(second)
    assert (own / "memory" / "build.md").read_text() == (plain / "memory" / "build.md").read_text()
    assert not list(own.glob("*.jsonl"))  # -c there must not resume the other project's session
    assert (plain / "memory" / "MEMORY.md").exists() and (plain / "old.jsonl").exists()
    assert len(said) == 2 and str(own / "memory") in said[1] and "\n" not in "".join(said)
    paths.claim_project_folders(second, said.append)
    paths.claim_project_folders(first, said.append)
    assert len(said) == 2  # said once


def test_a_folder_from_before_with_one_project_on_disk_is_claimed_quietly(tmp_path: Path) -> None:
    folder = tmp_path / "solo-app"
    folder.mkdir()
    plain = paths.home_dir() / "projects" / paths.path_key(folder.resolve())
    (plain / "memory").mkdir(parents=True)
    said: list[str] = []
    paths.claim_project_folders(folder, said.append)
    assert said == [] and paths.memory_dir(folder) == plain / "memory"
    assert json.loads((plain / "project.json").read_text()) == {"path": str(folder.resolve()), "shared_with": []}


def test_a_home_that_cannot_be_written_is_left_alone(tmp_path: Path) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    projects = paths.home_dir() / "projects"
    projects.parent.mkdir(parents=True, exist_ok=True)
    projects.write_text("not a folder")  # every mkdir under it fails, even for root (chmod would not)
    paths.claim_project_folders(folder, pytest.fail)
    assert paths.project_dir(folder) == projects / paths.path_key(folder.resolve())


def test_an_empty_record_left_by_a_cut_short_write_does_not_merge_lookalikes(lookalikes: list[Path]) -> None:
    dash, underscore = lookalikes[0], lookalikes[1]
    plain = paths.home_dir() / "projects" / paths.path_key(dash.resolve())
    plain.mkdir(parents=True)
    (plain / "project.json").write_text("")  # an older claude-mini created it, then the disk was full
    paths.claim_project_folders(dash, print)
    paths.claim_project_folders(underscore, print)
    assert paths.project_dir(dash) == plain != paths.project_dir(underscore)
    assert json.loads((plain / "project.json").read_text())["path"] == str(dash.resolve())
    assert [p.name for p in plain.iterdir()] == ["project.json"]  # no temp file left behind


def test_a_record_that_cannot_be_read_counts_as_another_projects(lookalikes: list[Path]) -> None:
    dash, underscore = lookalikes[0], lookalikes[1]
    plain = paths.home_dir() / "projects" / paths.path_key(dash.resolve())
    plain.mkdir(parents=True)
    (plain / "project.json").write_text('{"path": "/some')  # cut mid-write: whose it is, is unknown
    for folder in (dash, underscore):
        assert paths.project_dir(folder) != plain
        paths.claim_project_folders(folder, pytest.fail)
    assert len({plain, paths.project_dir(dash), paths.project_dir(underscore)}) == 3
    assert (plain / "project.json").read_text() == '{"path": "/some'  # never overwritten


def test_a_record_write_that_fails_leaves_no_record_and_the_next_run_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "app"
    folder.mkdir()
    plain = paths.home_dir() / "projects" / paths.path_key(folder.resolve())

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(paths.os, "fsync", disk_full)
        paths.claim_project_folders(folder, pytest.fail)
    assert list(plain.iterdir()) == []
    paths.claim_project_folders(folder, pytest.fail)
    assert json.loads((plain / "project.json").read_text())["path"] == str(folder.resolve())


def test_a_memory_copy_that_fails_keeps_the_shared_folder_and_is_tried_again(
    lookalikes: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = lookalikes[0], lookalikes[1]
    plain = paths.home_dir() / "projects" / paths.path_key(first.resolve())
    (plain / "memory").mkdir(parents=True)
    (plain / "memory" / "build.md").write_text("make\n")
    _old_transcript(plain, second)
    paths.claim_project_folders(first, print)
    said: list[str] = []

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(paths.shutil, "copytree", disk_full)
        paths.claim_project_folders(second, said.append)
    [line] = said
    assert "No space left on device" in line and "keeps using the shared folder" in line
    assert paths.memory_dir(second) == plain / "memory"  # not an empty folder of its own
    paths.claim_project_folders(second, said.append)  # the next run
    assert paths.memory_dir(second) != plain / "memory"
    assert (paths.memory_dir(second) / "build.md").read_text() == "make\n"
    assert "memory was copied" in said[-1]


def _old_transcript(folder: Path, named: Path) -> None:
    """A transcript from before cwd was recorded, whose tool call names `named`."""
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(named.resolve())}}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "old.jsonl").write_text(
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [call]}}) + "\n"
    )


def test_only_lookalikes_claude_mini_ran_in_get_a_copy_of_the_memory(lookalikes: list[Path]) -> None:
    dash, underscore, dot = lookalikes[0], lookalikes[1], lookalikes[2]
    plain = paths.home_dir() / "projects" / paths.path_key(dash.resolve())
    (plain / "memory").mkdir(parents=True)
    (plain / "memory" / "build.md").write_text("make\n")
    _old_transcript(plain, Path(str(underscore) + "2") / "x.py")  # my_app2: not my_app
    below = plain.with_name(paths.path_key(dot.resolve() / "src"))  # claude-mini ran in my.app/src
    _old_transcript(below, dot / "src" / "x.py")
    said: list[str] = []
    paths.claim_project_folders(dash, said.append)
    [line] = said
    assert str(dot.resolve()) in line and str(underscore.resolve()) not in line
    for folder in lookalikes[1:]:
        paths.claim_project_folders(folder, said.append)
    assert (paths.memory_dir(dot) / "build.md").read_text() == "make\n"
    assert not paths.memory_dir(underscore).exists() and not paths.memory_dir(lookalikes[3]).exists()
    assert len(set(map(paths.memory_dir, lookalikes))) == 4
    # A lookalike no transcript names may have run claude-mini all the same (a chat, relative paths):
    # each of them hears, once, where the memory from before stayed and how to copy it.
    told = [line for line in said if "If claude-mini ran here before" in line]
    assert len(told) == 2 and all(str(plain / "memory") in line and "cp -r" in line for line in told)
    assert str(paths.memory_dir(underscore)) in told[0] and str(paths.memory_dir(lookalikes[3])) in told[1]
    for folder in lookalikes:
        paths.claim_project_folders(folder, said.append)
    assert len(said) == 4  # the record line, the copy line, two lines for the others: once each


def test_a_lookalike_made_after_the_record_hears_nothing(lookalikes: list[Path]) -> None:
    dash, underscore = lookalikes[0], lookalikes[1]
    paths.claim_project_folders(dash, pytest.fail)
    (paths.memory_dir(dash)).mkdir(parents=True)
    (paths.memory_dir(dash) / "build.md").write_text("make\n")  # the owner's own memory, after the record
    paths.claim_project_folders(underscore, pytest.fail)


def test_a_filesystem_without_hard_links_still_gets_its_records(
    lookalikes: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "Operation not permitted")  # what vfat and exFAT answer

    monkeypatch.setattr(paths.os, "link", no_links)
    dash, underscore = lookalikes[0], lookalikes[1]
    for folder in (dash, underscore, dash):
        paths.claim_project_folders(folder, pytest.fail)
    folders = [paths.project_dir(dash), paths.project_dir(underscore)]
    assert folders[0] != folders[1]
    assert [json.loads((f / "project.json").read_text())["path"] for f in folders] == [
        str(dash.resolve()),
        str(underscore.resolve()),
    ]
    assert sorted(p.name for p in folders[0].iterdir()) == ["project.json"]  # no temp file left
