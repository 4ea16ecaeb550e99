"""What the Bash sandbox enforces, for `claude-mini sandbox status` (the sandbox a session here would
have) and the REPL's /sandbox (the session's own); sandbox/status.py words the report."""

from __future__ import annotations

from typing import TYPE_CHECKING

from claude_mini.base.notices import NoticeChannel
from claude_mini.runtime import make_policy, make_sandbox
from claude_mini.sandbox.status import status_lines
from claude_mini.tools.base import ToolContext

if TYPE_CHECKING:
    from claude_mini.config import Config
    from claude_mini.sandbox import Sandbox

OFF_LINE = "Sandbox: off (sandbox.enabled is false)."
SESSION_OFF_LINE = (
    "Sandbox: off (sandbox.enabled is false). Bash runs as you, checked by the "
    "permission rules and the command-line analysis only."
)


def sandbox_for(config: Config) -> Sandbox | None:
    """The sandbox a session in this folder would run Bash in (None: off in the settings); the
    caller closes it. The report says what a start-up notice would."""
    policy = make_policy(config, ToolContext(cwd=config.cwd, project_root=config.project_root))
    return make_sandbox(config, policy, NoticeChannel())


def session_lines(box: Sandbox | None) -> list[str]:
    """/sandbox: the session's sandbox status, or why there is none."""
    return [SESSION_OFF_LINE] if box is None else status_lines(box)
