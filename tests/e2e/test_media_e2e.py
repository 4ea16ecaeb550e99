"""End to end: images, PDFs and notebooks against the fake server, judged on what it received.

In -p, Read of a PNG and of a PDF reach the next request as image and document blocks inside the
tool result, and a broken PNG is one error line to the model with nothing sent. In the REPL,
`@shot.png` and a pasted image path ride on the user's message as image blocks; NotebookEdit
replaces a cell and /rewind puts the notebook back.
"""

from __future__ import annotations

import base64
import io
import json

import nbformat
from nbformat import v4
from PIL import Image
from pypdf import PdfWriter

from tests.e2e.conftest import text_of, tool_results
from tests.e2e.test_repl import main_replies, start  # noqa: F401 (start is a fixture)
from tests.fake_anthropic import Reply


def png_bytes(size=(64, 48), color="red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


def pdf_bytes(pages: int) -> bytes:
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=100, height=100)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def test_read_of_an_image_and_a_pdf_sends_blocks_and_a_broken_png_one_line(run_cli, fake_server, repo):
    (repo / "shot.png").write_bytes(png_bytes())
    (repo / "spec.pdf").write_bytes(pdf_bytes(2))
    (repo / "broken.png").write_bytes(png_bytes()[:50])
    main_replies(
        fake_server,
        Reply.tools([("Read", {"file_path": "shot.png"}), ("Read", {"file_path": "spec.pdf"})]),
        Reply.tool("Read", {"file_path": "broken.png"}),
        Reply.text("Seen."),
    )
    result = run_cli("-p", "look at these")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Seen."
    image, pdf, broken = tool_results(fake_server)
    assert [c["type"] for c in image["content"]] == ["text", "image"]
    source = image["content"][1]["source"]
    assert source["media_type"] == "image/png" and base64.b64decode(source["data"]) == png_bytes()
    assert [c["type"] for c in pdf["content"]] == ["text", "document"]
    assert pdf["content"][1]["source"]["media_type"] == "application/pdf"
    assert broken["is_error"] and "broken.png is a broken PNG image" in text_of(broken)
    assert "\n" not in text_of(broken).strip()


def test_an_at_image_and_a_pasted_path_reach_the_request_as_blocks(start, fake_server, repo, tmp_path):  # noqa: F811
    (repo / "shot.png").write_bytes(png_bytes((30, 20), "blue"))
    shots = tmp_path / "Screen Shots"
    shots.mkdir()
    (shots / "Shot 1.png").write_bytes(png_bytes((10, 10), "green"))
    main_replies(fake_server, Reply.text("Two images."))
    term = start()
    term.ready()
    pasted = str(shots / "Shot 1.png").replace(" ", "\\ ")
    term.submit(f"compare @shot.png with {pasted}")
    term.expect(r"Attached shot\.png \(PNG 30x20\)")
    term.expect(r"Attached Shot 1\.png \(PNG 10x10\)")
    term.expect("Two images.")
    content = fake_server.requests_for("main")[0].body["messages"][0]["content"]
    assert [c["type"] for c in content[:3]] == ["text", "image", "image"]
    assert content[0]["text"].startswith("compare @shot.png with ")
    sizes = [Image.open(io.BytesIO(base64.b64decode(c["source"]["data"]))).size for c in content[1:3]]
    assert sizes == [(30, 20), (10, 10)]
    term.ready()
    term.submit("/context")
    term.expect(r"Messages: 2 \(1 user, 1 assistant; ~\d+ tokens\)")


def notebook(path) -> None:
    nb = v4.new_notebook()
    nb.cells = [v4.new_markdown_cell("# Analysis", id="intro"), v4.new_code_cell("x = 1", id="calc")]
    nb.cells[1].outputs = [v4.new_output("stream", name="stdout", text="ok\n")]
    nbformat.write(nb, str(path))


def test_a_notebook_cell_replaced_then_rewound(start, fake_server, repo):  # noqa: F811
    notebook(repo / "nb.ipynb")
    original = (repo / "nb.ipynb").read_text()
    main_replies(
        fake_server,
        Reply.tool("Read", {"file_path": "nb.ipynb"}),
        Reply.tool("NotebookEdit", {"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "x = 2"}),
        Reply.text("Changed the cell."),
    )
    term = start("--permission-mode", "acceptEdits")
    term.ready()
    term.submit("set x to 2")
    term.expect("Changed the cell.")
    shown = text_of(tool_results(fake_server)[0])
    assert '<cell id="calc" type="code">\nx = 1\n</cell>\n<outputs>\nok\n</outputs>' in shown
    changed = nbformat.read(str(repo / "nb.ipynb"), as_version=4)
    assert changed.cells[1].source == "x = 2" and changed.cells[1].outputs == []
    term.ready()
    term.submit("/rewind")
    term.expect("Rewind to before which message")
    term.expect(r"set x to 2\s+· nb\.ipynb")
    term.child.send("1")
    term.expect("Rewind to before “set x to 2”")
    term.child.send("1")  # code and conversation
    term.expect(r"Restored 1 file\(s\) as they were before that message")
    term.ready()
    assert (repo / "nb.ipynb").read_text() == original


def test_a_corrupt_notebook_is_refused_and_left_as_it_was(run_cli, fake_server, repo):
    (repo / "bad.ipynb").write_text('{"cells": [')
    main_replies(
        fake_server,
        Reply.tool("NotebookEdit", {"notebook_path": "bad.ipynb", "cell_id": "cell-0", "new_source": "x"}),
        Reply.text("Could not."),
    )
    result = run_cli("-p", "edit it", "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    [refused] = tool_results(fake_server)
    assert refused["is_error"] and "has not been read" in text_of(refused)
    main_replies(fake_server, Reply.tool("Read", {"file_path": "bad.ipynb"}), Reply.text("Broken."))
    assert run_cli("-p", "read it").returncode == 0
    [read] = tool_results(fake_server)
    assert read["is_error"] and "bad.ipynb is not a valid Jupyter notebook" in text_of(read)
    assert (repo / "bad.ipynb").read_text() == '{"cells": ['
    assert "Traceback" not in json.dumps(fake_server.requests[-1].body)
