"""Read of images and PDFs: blocks the model sees, scaled to the API's limits, broken files refused."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader, PdfWriter

from claude_mini.llm.messages import ToolResultBlock, block_to_api
from claude_mini.tools import ToolError
from claude_mini.tools.media import MAX_EDGE, image_from_bytes, parse_pages
from claude_mini.tools.read import ReadTool


def write_png(path: Path, size: tuple[int, int], color: str = "red") -> Path:
    Image.new("RGB", size, color).save(path, "PNG")
    return path


def write_pdf(path: Path, pages: int) -> Path:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=200, height=200)
    with open(path, "wb") as out:
        writer.write(out)
    return path


def decoded(data: str) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_read_png_returns_an_image_block(run, tmp_path):
    write_png(tmp_path / "shot.png", (40, 30))
    result = run(ReadTool(), file_path="shot.png")
    assert not result.is_error
    [block] = result.media
    assert (block.kind, block.media_type) == ("image", "image/png")
    assert decoded(block.data).size == (40, 30)
    assert "PNG 40x30" in result.content
    assert block.tokens == 2  # 40*30/750, rounded up


@pytest.mark.parametrize(
    ("fmt", "suffix", "media_type"), [("JPEG", "jpg", "image/jpeg"), ("WEBP", "webp", "image/webp")]
)
def test_read_other_formats_keep_their_type(run, tmp_path, fmt, suffix, media_type):
    Image.new("RGB", (10, 10), "blue").save(tmp_path / f"a.{suffix}", fmt)
    [block] = run(ReadTool(), file_path=f"a.{suffix}").media
    assert block.media_type == media_type


def test_a_large_image_is_scaled_to_the_api_limits(run, tmp_path):
    write_png(tmp_path / "big.png", (4000, 1000))
    result = run(ReadTool(), file_path="big.png")
    [block] = result.media
    width, height = decoded(block.data).size
    assert max(width, height) <= MAX_EDGE and width * height <= 1_150_000
    assert abs(width / height - 4.0) < 0.05
    assert "sent scaled to" in result.content


def test_a_broken_png_is_one_clear_error(run, tmp_path):
    good = io.BytesIO()
    Image.new("RGB", (50, 50), "red").save(good, "PNG")
    (tmp_path / "broken.png").write_bytes(good.getvalue()[:60])
    with pytest.raises(ToolError, match=r"broken\.png is a broken PNG image .*nothing sent"):
        run(ReadTool(), file_path="broken.png")


def test_a_text_file_named_png_is_refused(run, tmp_path):
    (tmp_path / "fake.png").write_text("not an image")
    with pytest.raises(ToolError, match="is not a PNG, JPEG, GIF or WebP image"):
        run(ReadTool(), file_path="fake.png")


def test_an_animated_gif_sends_its_first_frame_as_png():
    frames = [Image.new("P", (8, 8), i) for i in range(3)]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:])
    loaded = image_from_bytes(buffer.getvalue(), "anim.gif")
    assert loaded.block.media_type == "image/png"


def test_read_pdf_returns_a_document_block(run, tmp_path):
    write_pdf(tmp_path / "spec.pdf", 3)
    result = run(ReadTool(), file_path="spec.pdf")
    [block] = result.media
    assert (block.kind, block.media_type) == ("document", "application/pdf")
    assert base64.b64decode(block.data).startswith(b"%PDF-")
    assert "3 pages" in result.content


def test_a_long_pdf_must_be_read_in_parts(run, tmp_path):
    write_pdf(tmp_path / "long.pdf", 30)
    with pytest.raises(ToolError, match=r"has 30 pages: too long to read whole.* with `pages`"):
        run(ReadTool(), file_path="long.pdf")
    result = run(ReadTool(), file_path="long.pdf", pages="11-15")
    part = PdfReader(io.BytesIO(base64.b64decode(result.media[0].data)))
    assert len(part.pages) == 5
    assert "pages 11-15 of 30" in result.content


def test_pages_only_for_pdfs(run, tmp_path):
    (tmp_path / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match="only for PDF"):
        run(ReadTool(), file_path="a.txt", pages="1")


def test_a_corrupt_pdf_is_one_clear_error(run, tmp_path):
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4\ngarbage without any objects")
    with pytest.raises(ToolError, match="cannot be read as a PDF"):
        run(ReadTool(), file_path="bad.pdf")


@pytest.mark.parametrize(
    ("text", "expected"), [("3", [3]), ("1-4", [1, 2, 3, 4]), ("28-", [28, 29, 30]), (" 2 - 3 ", [2, 3])]
)
def test_parse_pages(text, expected):
    assert parse_pages(text, 30) == expected


@pytest.mark.parametrize(("text", "problem"), [("x", "must be a page"), ("5-2", "not a range"), ("31", "past its end")])
def test_parse_pages_refuses(text, problem):
    with pytest.raises(ToolError, match=problem):
        parse_pages(text, 30)


def test_tool_result_with_media_goes_as_a_content_list(run, tmp_path):
    write_png(tmp_path / "s.png", (4, 4))
    result = run(ReadTool(), file_path="s.png")
    sent = block_to_api(ToolResultBlock("t1", result.content, media=result.media))
    assert [c["type"] for c in sent["content"]] == ["text", "image"]
    assert sent["content"][1]["source"]["type"] == "base64"
    counted = block_to_api(ToolResultBlock("t1", result.content, media=result.media), media=False)
    assert counted["content"][1]["source"]["data"] == ""
