"""`@image`, `@pdf` and pasted image paths become blocks; a broken one is a warning; Ctrl-V's
clipboard image is saved to a file, or one line says why not."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageGrab
from pypdf import PdfWriter

from claude_mini.llm.messages import ToolUseBlock
from claude_mini.tools.base import ToolResult
from claude_mini.ui.clipboard import NO_TOOL, clipboard_image
from claude_mini.ui.mentions import expand_mentions, pasted_images
from claude_mini.ui.render import outcome_lines


def png(path, size=(8, 6)):
    Image.new("RGB", size, "red").save(path, "PNG")
    return path


def expand(text, root, **kw):
    return expand_mentions(text, cwd=root, project_root=root, ignored=lambda _: False, media=True, **kw)


def test_at_image_becomes_a_block_and_the_text_stays(tmp_path):
    png(tmp_path / "shot.png")
    found = expand("see @shot.png", tmp_path)
    assert found.text == "see @shot.png" and not found.warnings
    assert [(b.kind, b.label) for b in found.media] == [("image", "shot.png")]
    assert found.attached == ["shot.png (PNG 8x6)"]


def test_without_media_an_image_is_still_refused_as_binary(tmp_path):
    png(tmp_path / "shot.png")
    found = expand_mentions("@shot.png", cwd=tmp_path, project_root=tmp_path, ignored=lambda _: False)
    assert found.warnings == ["@shot.png is a binary file; sent without it."] and not found.media


def test_a_broken_image_is_a_warning(tmp_path):
    buffer = io.BytesIO()
    Image.new("RGB", (40, 40)).save(buffer, "PNG")
    (tmp_path / "bad.png").write_bytes(buffer.getvalue()[:40])
    found = expand("@bad.png", tmp_path)
    assert not found.media
    [warning] = found.warnings
    assert (
        warning.startswith("@bad.png was not attached: bad.png is a broken PNG image") and "sent without it" in warning
    )


def test_an_added_folder_may_be_mentioned(tmp_path):
    project, other = tmp_path / "p", tmp_path / "o"
    project.mkdir()
    other.mkdir()
    (other / "notes.md").write_text("hello\n")
    outside = expand(f"@{other}/notes.md", project)
    assert outside.warnings and "outside the project" in outside.warnings[0]
    added = expand(f"@{other}/notes.md", project, roots=[other])
    assert not added.warnings and "hello" in added.text


@pytest.mark.parametrize("form", ["escaped", "quoted", "file-url"])
def test_pasted_image_paths(tmp_path, form):
    folder = tmp_path / "Screen Shots"
    folder.mkdir()
    path = png(folder / "Shot 1.png")
    typed = {
        "escaped": str(path).replace(" ", "\\ "),
        "quoted": f"'{path}'",
        "file-url": "file://" + str(path).replace(" ", "\\ "),
    }[form]
    found = pasted_images(f"what is wrong here {typed} ?", lambda _: None)
    assert [b.label for b in found.media] == ["Shot 1.png"]


def test_a_pasted_path_denied_by_a_read_rule_is_not_attached(tmp_path):
    path = png(tmp_path / "secret.png")
    found = pasted_images(str(path), lambda p: "Denied by user rule Read(./secret.png)")
    assert not found.media and "Denied by user rule" in found.warnings[0]


def test_clipboard_image_is_saved(tmp_path, monkeypatch):
    monkeypatch.setattr(ImageGrab, "grabclipboard", lambda: Image.new("RGB", (5, 5), "blue"))
    path, problem = clipboard_image(tmp_path)
    assert problem == "" and path is not None and Image.open(path).size == (5, 5)


def test_clipboard_without_a_tool_or_an_image_says_so(tmp_path, monkeypatch):
    def missing():
        raise NotImplementedError("wl-paste or xclip is required")

    monkeypatch.setattr(ImageGrab, "grabclipboard", missing)
    assert clipboard_image(tmp_path) == (None, NO_TOOL)
    monkeypatch.setattr(ImageGrab, "grabclipboard", lambda: ["/some/file.txt"])
    assert clipboard_image(tmp_path)[1].startswith("There is no image on the clipboard")


def test_render_names_what_read_and_notebook_edit_did():
    image = ToolResult("Read shot.png", metadata={"media": "PNG 3000x2000, sent scaled to 1313x876"})
    [line] = outcome_lines(ToolUseBlock("t1", "Read", {"file_path": "shot.png"}), image)
    assert line.plain == "Read PNG 3000x2000, sent scaled to 1313x876"
    [line] = outcome_lines(
        ToolUseBlock("t2", "Read", {"file_path": "a.ipynb"}), ToolResult("<cell>", metadata={"cells": 3})
    )
    assert line.plain == "Read 3 cells"
    edit = ToolResult(
        "Updated cell calc of /p/a.ipynb", metadata={"diff": "--- a\n+++ b\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"}
    )
    lines = [t.plain for t in outcome_lines(ToolUseBlock("t3", "NotebookEdit", {"notebook_path": "a.ipynb"}), edit)]
    assert lines[0] == "Updated cell calc of /p/a.ipynb" and any("+x = 2" in t for t in lines[1:])


def test_at_pdf_becomes_a_document_block(tmp_path):
    writer = PdfWriter()
    writer.add_blank_page(width=100, height=100)
    with open(tmp_path / "spec.pdf", "wb") as out:
        writer.write(out)
    found = expand("summarise @spec.pdf", tmp_path)
    assert [(b.kind, b.media_type) for b in found.media] == [("document", "application/pdf")]
    assert found.attached == ["spec.pdf (PDF, 1 page)"]
