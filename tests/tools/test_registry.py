"""The tool list: fixed order, byte-stable specs (the prompt-cache prefix), read-only flags."""

from __future__ import annotations

import json

from claude_mini.tools import tool_spec
from claude_mini.tools.registry import TOOL_NAMES, default_tools, get_tool


def _specs_json() -> str:
    return json.dumps([tool_spec(t) for t in default_tools()])


def test_order_is_fixed() -> None:
    names = [
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Grep",
        "Glob",
        "TodoWrite",
        "BashOutput",
        "KillShell",
        "NotebookEdit",
        "WebFetch",
        "ExitPlanMode",
        "WebSearch",
    ]
    assert [t.name for t in default_tools()] == names
    assert list(TOOL_NAMES) == [t.name for t in default_tools()]
    assert [t.name for t in default_tools(web_search=False)] == [n for n in names if n != "WebSearch"]


def test_specs_are_byte_stable_across_instances() -> None:
    first = _specs_json()
    tools = default_tools()
    tools[0].input_schema["properties"]["file_path"]["description"] = "mutated"
    assert _specs_json() == first  # instances do not share schema dicts


def test_read_only_flags() -> None:
    assert {t.name: t.read_only for t in default_tools()} == {
        "Read": True,
        "Write": False,
        "Edit": False,
        "Bash": False,
        "Grep": True,
        "Glob": True,
        "TodoWrite": False,
        "BashOutput": True,
        "KillShell": False,
        "NotebookEdit": False,
        "WebFetch": True,
        "ExitPlanMode": False,
        "WebSearch": True,
    }


def test_schemas_require_only_declared_properties() -> None:
    for tool in default_tools():
        schema = tool.input_schema
        assert schema["type"] == "object"
        assert set(schema["required"]) <= set(schema["properties"]), tool.name
        assert tool.description.strip() == tool.description


def test_get_tool() -> None:
    grep = get_tool("Grep")
    assert grep is not None and grep.name == "Grep"
    assert get_tool("Nope") is None
