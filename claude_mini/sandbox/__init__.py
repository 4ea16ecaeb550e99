"""Bash in a kernel-enforced sandbox (bubblewrap) with a domain proxy.

settings.py   the `sandbox` settings key (Claude Code's format)
bwrap.py      whether bwrap runs here; the command line
layout.py     what one command may write, must not write, must not see
proxy.py      the domain proxy outside; bridge.py its port inside
box.py        Sandbox: one session's sandbox, asked by the Bash tool and the permission policy
status.py     /sandbox and `claude-mini sandbox status`
"""

from claude_mini.sandbox.box import Sandbox
from claude_mini.sandbox.settings import SandboxSettings, sandbox_settings

__all__ = ["Sandbox", "SandboxSettings", "sandbox_settings"]
