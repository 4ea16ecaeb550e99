"""The tool list sent with every request, in a fixed order.

The tools are the first part of the prompt-cache prefix (DESIGN.md section 6):
their order, names, descriptions and schemas must not change between requests,
nor between the main agent and forked agents. Restrictions happen in
`can_use_tool`, never by leaving a tool out.
"""

from __future__ import annotations

from claude_mini.tools.base import Tool
from claude_mini.tools.bash import BashTool
from claude_mini.tools.bash_output import BashOutputTool
from claude_mini.tools.edit import EditTool
from claude_mini.tools.glob import GlobTool
from claude_mini.tools.grep import GrepTool
from claude_mini.tools.kill_shell import KillShellTool
from claude_mini.tools.notebook import NotebookEditTool
from claude_mini.tools.plan import ExitPlanModeTool
from claude_mini.tools.read import ReadTool
from claude_mini.tools.todo import TodoWriteTool
from claude_mini.tools.web_fetch import WebFetchTool
from claude_mini.tools.web_search import WebSearchTool
from claude_mini.tools.write import WriteTool

TOOL_NAMES = (
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
)


def default_tools(*, web_search: bool = True) -> list[Tool]:
    """Fresh instances of the built-in tools, always in the order of TOOL_NAMES; WebSearch left out
    where the endpoint does not offer it (`web_search=False`, tools/web_search.py)."""
    tools: list[Tool] = [
        ReadTool(),
        WriteTool(),
        EditTool(),
        BashTool(),
        GrepTool(),
        GlobTool(),
        TodoWriteTool(),
        BashOutputTool(),
        KillShellTool(),
        NotebookEditTool(),
        WebFetchTool(),
        ExitPlanModeTool(),
    ]
    if web_search:
        tools.append(WebSearchTool())
    return tools


def get_tool(name: str) -> Tool | None:
    """A fresh instance of the built-in tool called `name`, or None if there is none."""
    return next((tool for tool in default_tools() if tool.name == name), None)
