"""restore.way_out: which paths a restore may write or delete without acting outside the project."""

from __future__ import annotations

from pathlib import Path

from claude_mini.rewind.restore import way_out


def test_real_folders_inside_the_project_are_fine(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "a" / "b").mkdir(parents=True)
    assert way_out(root / "a" / "b" / "f.txt", root) == ""
    assert way_out(root / "gone" / "f.txt", root) == ""  # a folder deleted since is made again, inside


def test_a_linked_folder_is_refused_even_when_it_points_inside(tmp_path: Path) -> None:
    """A link inside the project would still put the file somewhere the assistant never wrote."""
    root = tmp_path / "repo"
    (root / "real").mkdir(parents=True)
    (root / "a").symlink_to(root / "real")
    assert way_out(root / "a" / "f.txt", root).startswith("its folder a is now a symbolic link")
    (root / "real" / "deep").mkdir()
    assert "its folder a is now" in way_out(root / "a" / "deep" / "f.txt", root)


def test_a_file_that_is_a_link_out_of_the_project_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "repo", tmp_path / "outside.txt"
    root.mkdir()
    outside.write_text("x")
    (root / "f.txt").symlink_to(outside)
    assert way_out(root / "f.txt", root).startswith(f"it now leads outside the project (to {outside})")
    (root / "g.txt").symlink_to(root / "f2.txt")
    assert way_out(root / "g.txt", root) == ""  # a link to a file inside stays inside


def test_the_root_reached_through_a_link_and_files_outside_the_project(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "alias").symlink_to(root)
    assert way_out(root / "sub" / "f.txt", tmp_path / "alias") == ""  # the root's own link is the user's
    assert way_out(tmp_path / "elsewhere" / "f.txt", root) == ""  # not the project's: not judged
