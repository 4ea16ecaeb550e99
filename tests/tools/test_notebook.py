"""Notebooks: Read shows cells with outputs; NotebookEdit replaces, inserts and deletes cells through nbformat."""

from __future__ import annotations

import io
from pathlib import Path

import nbformat
import pytest
from nbformat import v4
from PIL import Image

from claude_mini.tools import ToolError
from claude_mini.tools.notebook import NotebookEditTool
from claude_mini.tools.read import ReadTool


def make_notebook(path: Path, *, minor: int = 5) -> Path:
    nb = v4.new_notebook()
    nb.nbformat_minor = minor
    code = v4.new_code_cell("print(1 + 1)", execution_count=1)
    code.outputs = [v4.new_output("stream", name="stdout", text="2\n")]
    png = io.BytesIO()
    Image.new("RGB", (6, 6), "green").save(png, "PNG")
    import base64

    plot = v4.new_code_cell("plot()", execution_count=2)
    plot.outputs = [v4.new_output("display_data", data={"image/png": base64.b64encode(png.getvalue()).decode()})]
    nb.cells = [v4.new_markdown_cell("# Title"), code, plot]
    if minor < 5:
        for cell in nb.cells:
            cell.pop("id", None)
    else:
        for i, cell in enumerate(nb.cells):
            cell["id"] = f"c{i}"
    nbformat.write(nb, str(path))
    return path


def test_read_shows_cells_with_outputs_and_images(run, tmp_path):
    make_notebook(tmp_path / "a.ipynb")
    result = run(ReadTool(), file_path="a.ipynb")
    assert '<cell id="c0" type="markdown">\n# Title\n</cell>' in result.content
    assert '<cell id="c1" type="code" execution_count="1">\nprint(1 + 1)\n</cell>\n<outputs>\n2\n</outputs>' in (
        result.content
    )
    assert "[image output 1: PNG 6x6, attached below]" in result.content
    assert [m.kind for m in result.media] == ["image"]


def test_replace_a_cell_clears_its_outputs(run, ctx, tmp_path):
    path = make_notebook(tmp_path / "a.ipynb")
    run(ReadTool(), file_path="a.ipynb")
    result = run(NotebookEditTool(), notebook_path="a.ipynb", cell_id="c1", new_source="print(3)")
    assert not result.is_error and "Updated cell c1" in result.content
    cell = nbformat.read(str(path), as_version=4).cells[1]
    assert (cell.source, cell.outputs, cell.execution_count) == ("print(3)", [], None)
    assert "-print(1 + 1)" in result.metadata["diff"]


def test_insert_and_delete(run, tmp_path):
    path = make_notebook(tmp_path / "a.ipynb")
    run(ReadTool(), file_path="a.ipynb")
    run(
        NotebookEditTool(),
        notebook_path="a.ipynb",
        cell_id="c0",
        new_source="x = 1",
        cell_type="code",
        edit_mode="insert",
    )
    cells = nbformat.read(str(path), as_version=4).cells
    assert [c.source for c in cells] == ["# Title", "x = 1", "print(1 + 1)", "plot()"]
    run(NotebookEditTool(), notebook_path="a.ipynb", cell_id="c0", new_source="", edit_mode="delete")
    assert [c.source for c in nbformat.read(str(path), as_version=4).cells] == ["x = 1", "print(1 + 1)", "plot()"]


def test_cells_without_ids_are_named_by_index(run, tmp_path):
    path = make_notebook(tmp_path / "old.ipynb", minor=4)
    assert '<cell id="cell-1" type="code"' in run(ReadTool(), file_path="old.ipynb").content
    run(
        NotebookEditTool(),
        notebook_path="old.ipynb",
        cell_id="cell-0",
        new_source="",
        edit_mode="insert",
        cell_type="markdown",
    )
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)  # no `id` slipped into a 4.4 notebook
    assert nb.cells[1].source == ""


def test_edit_needs_a_fresh_read(run, tmp_path):
    make_notebook(tmp_path / "a.ipynb")
    with pytest.raises(ToolError, match="has not been read"):
        run(NotebookEditTool(), notebook_path="a.ipynb", cell_id="c1", new_source="x")


def test_unknown_cell_names_the_cells(run, tmp_path):
    make_notebook(tmp_path / "a.ipynb")
    run(ReadTool(), file_path="a.ipynb")
    with pytest.raises(ToolError, match=r"No cell 'zz' in the notebook; its cells: c0, c1, c2"):
        run(NotebookEditTool(), notebook_path="a.ipynb", cell_id="zz", new_source="x")


def test_a_corrupt_notebook_is_one_clear_error_and_untouched(run, tmp_path):
    path = tmp_path / "bad.ipynb"
    path.write_text('{"cells": [ {"cell_type": "code"')
    with pytest.raises(ToolError, match=r"bad\.ipynb is not a valid Jupyter notebook"):
        run(ReadTool(), file_path="bad.ipynb")
    assert path.read_text() == '{"cells": [ {"cell_type": "code"'


@pytest.mark.parametrize(
    ("input", "problem"),
    [
        ({"edit_mode": "insert"}, "cell_type .* is required"),
        ({"edit_mode": "move", "cell_id": "c1"}, "edit_mode must be one of"),
        ({"cell_type": "raw", "cell_id": "c1"}, "cell_type must be code or markdown"),
        ({}, "cell_id is required"),
    ],
)
def test_bad_arguments(ctx, tmp_path, input, problem):
    make_notebook(tmp_path / "a.ipynb")
    with pytest.raises(ToolError, match=problem):
        NotebookEditTool().validate({"notebook_path": "a.ipynb", "new_source": "x", **input}, ctx)
