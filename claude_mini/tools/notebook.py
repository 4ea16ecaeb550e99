"""Jupyter notebooks: Read shows their cells with outputs; NotebookEdit changes one cell.

Both go through `nbformat` (imported here, never at start-up), so a file that is not a valid
notebook is one clear error and an edit can never write one that is not: the changed notebook
is validated before it replaces the file, atomically. A cell is named by its `id` (nbformat
4.5+) or, as Claude Code does for notebooks without ids, `cell-N` (N from 0). Editing a code
cell's source clears its outputs and execution count: they belonged to the old code.
NotebookEdit is checkpointed for /rewind like Write and Edit (rewind/part.py).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from pathlib import Path
from typing import Any

from claude_mini.llm.messages import MediaBlock
from claude_mini.tools import ToolContext, ToolError, ToolResult, opt_str_arg, str_arg
from claude_mini.tools.media import image_from_bytes
from claude_mini.tools.read import missing_file_message, record_read
from claude_mini.tools.write import require_fresh_read, unified_diff, write_file

MAX_OUTPUT_CHARS = 4000  # one output of one cell; beyond it the model gets a note
MAX_NOTEBOOK_CHARS = 100_000  # all cells shown by one Read, as Read's own limit
MAX_OUTPUT_IMAGES = 5
EDIT_MODES = ("replace", "insert", "delete")
CELL_TYPES = ("code", "markdown")

DESCRIPTION = """\
Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb).

- Read the notebook first: Read shows every cell with its id (or `cell-N` for notebooks \
without ids) and its outputs.
- edit_mode replace (the default) sets the cell's source; a code cell's outputs are cleared.
- edit_mode insert adds a new cell after cell_id (at the start when cell_id is omitted); \
cell_type is then required.
- edit_mode delete removes the cell; new_source is ignored (pass "").
- cell_type (code or markdown) may also change a replaced cell's type."""


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "notebook_path": {
                "type": "string",
                "description": "Path of the .ipynb file (absolute, or relative to the working directory)",
            },
            "cell_id": {
                "type": "string",
                "description": "The id of the cell to edit; with insert, the new cell goes after it",
            },
            "new_source": {"type": "string", "description": "The new source of the cell"},
            "cell_type": {
                "type": "string",
                "enum": list(CELL_TYPES),
                "description": "The cell's type; required with edit_mode insert",
            },
            "edit_mode": {
                "type": "string",
                "enum": list(EDIT_MODES),
                "description": "replace (default), insert or delete",
            },
        },
        "required": ["notebook_path", "new_source"],
        "additionalProperties": False,
    }


def load_notebook(path: Path) -> Any:
    """The notebook at `path` as nbformat's node; ToolError when it is not a valid notebook."""
    import nbformat  # startup: nbformat loads only for a notebook

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ToolError(missing_file_message(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ToolError(f"{path} could not be read as a notebook ({exc}).") from None
    try:
        notebook = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
        nbformat.validate(notebook)
    except Exception as exc:  # NotJSONError, ValidationError, KeyError...: each means "not a notebook"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ToolError(f"{path} is not a valid Jupyter notebook ({first[:200]}); nothing was changed.") from None
    if notebook.get("nbformat", 0) < 4:
        raise ToolError(f"{path} is an nbformat {notebook.get('nbformat')} notebook; only version 4 is supported.")
    return notebook


def cell_name(cell: Any, index: int) -> str:
    """How a cell is named to the model: its id, or `cell-N` when the notebook has no ids."""
    return str(cell.get("id") or f"cell-{index}")


# ---------------------------------------------------------------- Read


def read_notebook(path: Path) -> tuple[ToolResult, float]:
    """Read's result for a notebook: every cell (source, then outputs), images in outputs as blocks."""
    st = path.stat()
    notebook = load_notebook(path)
    language = notebook.metadata.get("language_info", {}).get("name") or "python"
    parts: list[str] = []
    media: list[MediaBlock] = []
    size = 0
    for index, cell in enumerate(notebook.cells):
        text = _render_cell(cell, index, language, media)
        if size + len(text) > MAX_NOTEBOOK_CHARS:
            parts.append(f"[... {len(notebook.cells) - index} more cells not shown: the notebook is too long to show]")
            break
        parts.append(text)
        size += len(text)
    if not notebook.cells:
        parts.append(f"(The notebook {path} has no cells.)")
    meta = {"path": str(path), "cells": len(notebook.cells)}
    return ToolResult("\n\n".join(parts), metadata=meta, media=media), st.st_mtime


def _render_cell(cell: Any, index: int, language: str, media: list[MediaBlock]) -> str:
    kind = cell.get("cell_type", "code")
    head = f'<cell id="{cell_name(cell, index)}" type="{kind}"'
    if kind == "code" and cell.get("execution_count") is not None:
        head += f' execution_count="{cell["execution_count"]}"'
    body = f"{head}>\n{cell.get('source', '')}\n</cell>"
    outputs = [_render_output(o, media) for o in cell.get("outputs", [])] if kind == "code" else []
    shown = [o for o in outputs if o]
    if shown:
        body += "\n<outputs>\n" + "\n".join(shown) + "\n</outputs>"
    return body


def _render_output(output: Any, media: list[MediaBlock]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _clip(str(output.get("text", "")))
    if kind == "error":
        return _clip(f"{output.get('ename', 'Error')}: {output.get('evalue', '')}")
    data = output.get("data", {})
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            return _output_image(str(data[mime]), media)
    if "text/plain" in data:
        return _clip(str(data["text/plain"]))
    return f"[output of type {', '.join(sorted(data)) or kind} not shown]"


def _output_image(b64: str, media: list[MediaBlock]) -> str:
    if len(media) >= MAX_OUTPUT_IMAGES:
        return "[image output not shown: at most 5 images a Read]"
    try:
        loaded = image_from_bytes(base64.b64decode(b64.replace("\n", "")), "an output image")
    except (ToolError, binascii.Error) as exc:
        return f"[image output not shown: {exc}]"
    media.append(loaded.block)
    return f"[image output {len(media)}: {loaded.summary}, attached below]"


def _clip(text: str) -> str:
    text = text.rstrip("\n")
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return f"{text[:MAX_OUTPUT_CHARS]}\n[... {len(text) - MAX_OUTPUT_CHARS:,} more characters of output cut]"


# ---------------------------------------------------------------- NotebookEdit


class NotebookEditTool:
    """NotebookEdit: replace, insert or delete one cell of a notebook the model has read."""

    name = "NotebookEdit"
    description = DESCRIPTION
    read_only = False

    def __init__(self) -> None:
        self.input_schema = _schema()

    def validate(self, input: dict[str, Any], ctx: ToolContext) -> None:
        """Bad arguments and a notebook not read (or changed since) fail before anyone is asked."""
        path, *_ = _arguments(input, ctx)
        try:
            mtime = path.stat().st_mtime
        except FileNotFoundError:
            raise ToolError(missing_file_message(path, suggest=False)) from None
        require_fresh_read(path, mtime, ctx.read_files.get(path))

    async def call(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the edit, validate the notebook, write it atomically; record the new mtime as read."""
        path, cell_id, source, cell_type, mode = _arguments(input, ctx)
        seen = ctx.read_files.get(path)
        result, mtime = await asyncio.to_thread(_edit, path, cell_id, source, cell_type, mode, seen)
        record_read(ctx, path, mtime)
        return result


def _arguments(input: dict[str, Any], ctx: ToolContext) -> tuple[Path, str | None, str, str | None, str]:
    path = ctx.resolve(str_arg(input, "notebook_path"))
    if path.suffix.lower() != ".ipynb":
        raise ToolError(f"{path} is not a notebook (.ipynb); use Edit for other files.")
    mode = opt_str_arg(input, "edit_mode") or "replace"
    if mode not in EDIT_MODES:
        raise ToolError(f"edit_mode must be one of {', '.join(EDIT_MODES)}, got {mode!r}.")
    cell_type = opt_str_arg(input, "cell_type")
    if cell_type is not None and cell_type not in CELL_TYPES:
        raise ToolError(f"cell_type must be code or markdown, got {cell_type!r}.")
    if mode == "insert" and cell_type is None:
        raise ToolError("cell_type (code or markdown) is required to insert a cell.")
    cell_id = opt_str_arg(input, "cell_id")
    if mode != "insert" and cell_id is None:
        raise ToolError(f"cell_id is required to {mode} a cell.")
    source = str_arg(input, "new_source", allow_empty=True) if mode != "delete" else ""
    return path, cell_id, source, cell_type, mode


def _edit(
    path: Path, cell_id: str | None, source: str, cell_type: str | None, mode: str, seen: float | None
) -> tuple[ToolResult, float]:
    require_fresh_read(path, path.stat().st_mtime, seen)
    notebook = load_notebook(path)
    index = _find(notebook, cell_id) if cell_id is not None else -1
    before = str(notebook.cells[index].get("source", "")) if mode != "insert" else ""
    if mode == "delete":
        name = cell_name(notebook.cells[index], index)
        del notebook.cells[index]
        message, source = f"Deleted cell {name} of {path}", ""
    elif mode == "insert":
        cell = _new_cell(notebook, cell_type or "code", source)
        notebook.cells.insert(index + 1, cell)
        message = f"Inserted {cell_type} cell {cell_name(cell, index + 1)} into {path}"
    else:
        _replace(notebook, index, source, cell_type)
        message = f"Updated cell {cell_name(notebook.cells[index], index)} of {path}"
    mtime = write_file(path, _serialise(notebook, path).encode("utf-8"))
    # The diff people read is the cell's source, not the notebook's JSON.
    meta = {"path": str(path), "diff": unified_diff(path, before + "\n", source + "\n", created=mode == "insert")}
    return ToolResult(message, metadata=meta), mtime


def _find(notebook: Any, cell_id: str) -> int:
    for index, cell in enumerate(notebook.cells):
        if cell.get("id") == cell_id:
            return index
    if cell_id.startswith("cell-") and cell_id[5:].isdigit() and int(cell_id[5:]) < len(notebook.cells):
        return int(cell_id[5:])
    names = ", ".join(cell_name(c, i) for i, c in enumerate(notebook.cells[:20]))
    raise ToolError(f"No cell {cell_id!r} in the notebook; its cells: {names or '(none)'}.")


def _new_cell(notebook: Any, cell_type: str, source: str) -> Any:
    from nbformat import v4  # startup: nbformat loads only for a notebook

    cell = v4.new_code_cell(source) if cell_type == "code" else v4.new_markdown_cell(source)
    if notebook.get("nbformat_minor", 0) < 5:
        cell.pop("id", None)  # ids arrived with nbformat 4.5; an older notebook must not carry one
    return cell


def _replace(notebook: Any, index: int, source: str, cell_type: str | None) -> None:
    cell = notebook.cells[index]
    if cell_type is not None and cell_type != cell.get("cell_type"):
        replacement = _new_cell(notebook, cell_type, source)
        if "id" in cell:
            replacement["id"] = cell["id"]
        notebook.cells[index] = replacement
        return
    cell["source"] = source
    if cell.get("cell_type") == "code":
        cell["outputs"] = []
        cell["execution_count"] = None


def _serialise(notebook: Any, path: Path) -> str:
    """The notebook as JSON, validated first: an edit never writes an invalid notebook."""
    import nbformat  # startup: nbformat loads only for a notebook

    try:
        nbformat.validate(notebook)
    except nbformat.ValidationError as exc:
        raise ToolError(
            f"The edit would make {path} an invalid notebook ({exc.message}); nothing was changed."
        ) from None
    return str(nbformat.writes(notebook)) + "\n"
