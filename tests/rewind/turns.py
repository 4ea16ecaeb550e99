"""The three turns the rewind tests go back through: create util.py; read and edit app.py; edit
util.py, create notes/todo.md and run a command that writes made.txt."""

from __future__ import annotations

from tests.fake_anthropic import Reply

ORIGINAL_APP = 'def greet():\n    return "hello"\n'  # app.py of the shared test repository
PROMPTS = ("create util", "change app", "third turn")
ANSWERS = ("Created util.", "Changed app.", "Done three.")


def three_turns(fake_server) -> None:
    """Serve the main agent's replies for the three turns, in order."""
    for reply in (
        Reply.tool("Write", {"file_path": "util.py", "content": "A = 1\n"}),
        Reply.text(ANSWERS[0]),
        Reply.tool("Read", {"file_path": "app.py"}),
        Reply.tool("Edit", {"file_path": "app.py", "old_string": "hello", "new_string": "hi"}),
        Reply.text(ANSWERS[1]),
        Reply.tool("Edit", {"file_path": "util.py", "old_string": "A = 1", "new_string": "A = 2"}),
        Reply.tool("Write", {"file_path": "notes/todo.md", "content": "- x\n"}),
        Reply.tool("Bash", {"command": "echo made > made.txt"}),
        Reply.text(ANSWERS[2]),
    ):
        fake_server.on(reply, purpose="main")
