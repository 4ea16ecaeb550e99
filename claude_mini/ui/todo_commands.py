"""`/todos`: the model's todo list in this conversation (TodoWrite, tools/todo.py)."""

from __future__ import annotations

from claude_mini.ui.commands import CommandContext, command, print_lines
from claude_mini.ui.render import todo_lines


@command("todos", help="Show the todo list the model keeps for this conversation.")
def show_todos(ctx: CommandContext) -> None:
    """Print the list, one item a line with its status mark, under how far it is."""
    todos = ctx.rt.agent.ctx.todos
    print_lines(ctx, todo_lines(todos) if todos else ["No todo list in this conversation."])
