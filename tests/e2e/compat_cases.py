"""Drop-in fidelity fixtures: a repository's `.claude/` in Claude Code's formats, and the runs over it.

One repository (FILES, written by `write_repository`) holds what real repositories' folders hold and
claude-mini once read differently from Claude Code: frontmatter that is not strict YAML, agents with
tool rules, `disallowedTools`, `hooks`, `permissionMode` and `skills`, bodies without `$ARGUMENTS`,
`!` snippets with no output, settings `env`, commands in subfolders, and a hook on every event.

Each Case is one print-mode run: a prompt and the model's scripted replies (the fake server's script
format, served in order; a title request Claude Code makes is answered by TITLE_RULE). `observe`
reads what reached the model (the recorded request bodies), the hooks' log and the files on disk,
as a value both tools can be compared on; `expect` is that value as Claude Code 2.1.197 gave it.

tests/e2e/test_claude_code_compat_e2e.py runs every case through claude-mini and checks `expect`;
scripts/compat_claude_code.py runs the same cases through Claude Code from npm and prints the
differences.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HOOK_PY = r"""
import json, os, sys
data = json.load(sys.stdin)
data["_env"] = {"COMPAT_VAR": os.environ.get("COMPAT_VAR")}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hooklog.jsonl"), "a") as log:
    log.write(json.dumps(data) + "\n")
if len(sys.argv) > 1:
    open(sys.argv[1], "w").close()
"""

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
)

# The input fields Claude Code documents (hooks reference, "Hook input") and 2.1.197 sent, per event;
# `prompt_id` once a prompt was typed, `permission_mode` and `effort` where it sends them.
DOCUMENTED_FIELDS: dict[str, set[str]] = {
    "SessionStart": {"source"},
    "UserPromptSubmit": {"prompt_id", "permission_mode", "prompt"},
    "PreToolUse": {"prompt_id", "permission_mode", "effort", "tool_name", "tool_input", "tool_use_id"},
    "PostToolUse": {
        *("prompt_id", "permission_mode", "effort", "tool_name", "tool_input", "tool_use_id"),
        *("tool_response", "duration_ms"),
    },
    "PostToolUseFailure": {
        *("prompt_id", "permission_mode", "effort", "tool_name", "tool_input", "tool_use_id"),
        *("error", "is_interrupt", "duration_ms"),
    },
    "Stop": {
        *("prompt_id", "permission_mode", "effort", "stop_hook_active", "last_assistant_message"),
        *("background_tasks", "session_crons"),
    },
    "SubagentStart": {"prompt_id", "agent_id", "agent_type"},
    "SubagentStop": {
        *("prompt_id", "permission_mode", "effort", "agent_id", "agent_type", "stop_hook_active"),
        *("agent_transcript_path", "last_assistant_message", "background_tasks", "session_crons"),
    },
    "SessionEnd": {"prompt_id", "reason"},
}
COMMON_FIELDS = {"session_id", "transcript_path", "cwd", "hook_event_name"}


def _hooks() -> dict[str, Any]:
    """Every event logs its input; the agent-file hook (in `nowrite.md`) is separate."""
    handler = {"type": "command", "command": "python3 .claude/hooks/log.py"}
    return {event: [{"matcher": "", "hooks": [handler]}] for event in HOOK_EVENTS}


SETTINGS = {
    "env": {"COMPAT_VAR": "from-settings", "MAX_THINKING_TOKENS": "2048"},
    "permissions": {"allow": ["Bash(printenv:*)"]},
    "hooks": _hooks(),
}

FILES: dict[str, str] = {
    "README.md": "# compat fixture\n",
    ".claude/settings.json": json.dumps(SETTINGS, indent=2),
    ".claude/hooks/log.py": HOOK_PY,
    # Commands: positional arguments, a body without placeholders, a namespaced one whose YAML is not strict.
    ".claude/commands/pos.md": (
        "---\ndescription: positions\n---\nA0=$0 A1=$1 A2=$2 X=$2xl ALL=$ARGUMENTS IDX=$ARGUMENTS[1]\n"
    ),
    ".claude/commands/noargs.md": "Body without placeholders. !`true` !`[ -f README.md ] && echo has-readme`\n",
    ".claude/commands/git/commit.md": "---\ndescription: Commit: with colon\nmodel:\thaiku\n---\nCOMMIT-BODY\n",
    # A skill whose description YAML refuses.
    ".claude/skills/greet/SKILL.md": "---\nname: greet\ndescription: Greets: politely\n---\nGREET-SKILL-BODY\n",
    # Agents: keys other tools add, a tool rule, a mode, disallowedTools + hooks + skills + model: inherit.
    ".claude/agents/reviewer.md": (
        "---\nname: reviewer\ndescription: Use when: the user asks for a review\n"
        "tools: Read, Bash(python3:*)\ncolor: blue\ncategory: quality\ndisplayName: Reviewer\n---\n"
        "You review code.\n"
    ),
    ".claude/agents/writer.md": (
        "---\nname: writer\ndescription: Writes files\ntools: Write, Read\npermissionMode: acceptEdits\n---\n"
        "You write files.\n"
    ),
    ".claude/agents/nowrite.md": (
        "---\nname: nowrite\ndescription: Cannot write\ndisallowedTools: Write, Edit\nmodel: inherit\n"
        "skills:\n  - greet\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
        "        - type: command\n          command: python3 .claude/hooks/log.py agent-hook-ran\n---\n"
        "You never write.\n"
    ),
}

# claude-mini's user settings for these runs: its Bash sandbox (on by default where bubblewrap runs,
# off in Claude Code) would let every command run unasked and hide what an agent's rules grant.
USER_SETTINGS = {"sandbox": {"enabled": False}}

TITLE_RULE = {"contains": "Write the title", "reply": {"text": '{"title": "t"}'}, "times": 100}


def write_repository(root: Path) -> None:
    """The fixture repository's files under `root` (a folder that exists)."""
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@dataclass
class Run:
    """One finished run as both tools are compared on it."""

    repo: Path
    bodies: list[dict[str, Any]]  # request bodies, oldest first, a title request left out
    stdout: str = ""
    stderr: str = ""

    def texts(self, body: dict[str, Any] | None = None) -> str:
        """Every text the model was sent (system, tool descriptions, messages), one request or all."""
        out: list[str] = []
        for b in [body] if body is not None else self.bodies:
            system = b.get("system") or []
            out += [system] if isinstance(system, str) else [s.get("text", "") for s in system]
            out += [t.get("description", "") for t in b.get("tools", [])]
            for message in b.get("messages", []):
                content = message["content"]
                for block in [content] if isinstance(content, str) else content:
                    if isinstance(block, str):
                        out.append(block)
                    elif block.get("type") == "text":
                        out.append(block["text"])
                    elif block.get("type") == "tool_result":
                        inner = block.get("content")
                        out += [inner] if isinstance(inner, str) else [i.get("text", "") for i in inner or []]
        return "\n".join(out)

    def line(self, pattern: str) -> str | None:
        """The first line (of any request) matching `pattern`, or None."""
        m = re.search(rf"^.*{pattern}.*$", self.texts(), re.M)
        return m.group(0).strip() if m else None

    def hooklog(self) -> list[dict[str, Any]]:
        log = self.repo / ".claude" / "hooks" / "hooklog.jsonl"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    def child_request(self, marker: str) -> dict[str, Any] | None:
        """The first request of a subagent whose task holds `marker` (no answer of its own yet)."""
        for body in self.bodies:
            messages = body.get("messages", [])
            if any(m["role"] == "assistant" for m in messages):
                continue
            if marker in self.texts({"messages": messages}):
                return body
        return None


@dataclass
class Case:
    """One print-mode run over the fixture repository."""

    name: str
    kind: str  # the class of difference it covers
    prompt: str
    replies: list[dict[str, Any]]
    observe: Callable[[Run], Any]
    expect: Any
    extra_files: dict[str, str] = field(default_factory=dict)


def _listing_line(run: Run, name: str) -> str | None:
    line = run.line(rf"- {re.escape(name)}: ")
    return line.split(" (")[0] if line else None  # a tool list after it is each tool's own format


def _listing(run: Run) -> dict[str, str | None]:
    return {name: _listing_line(run, name) for name in ("git:commit", "greet", "reviewer")}


def _agent_call(agent: str, marker: str) -> dict[str, Any]:
    return {"tool": "Agent", "input": {"description": "task", "prompt": marker, "subagent_type": agent}}


def _child(run: Run, marker: str) -> dict[str, Any]:
    body = run.child_request(marker) or {}
    tools = {t.get("name") for t in body.get("tools", [])}
    main = run.bodies[0] if run.bodies else {}
    return {
        "found": bool(body),
        "Write": "Write" in tools,
        "Bash": "Bash" in tools,
        "skill preloaded": "GREET-SKILL-BODY" in run.texts(body) if body else False,
        "model inherited": body.get("model") == main.get("model"),
    }


def _fields(run: Run) -> dict[str, list[str]]:
    """Per event: the documented fields missing from what the hook received (empty: all sent)."""
    seen: dict[str, set[str]] = {}
    for entry in run.hooklog():
        seen.setdefault(entry["hook_event_name"], set()).update(entry)
    return {
        event: sorted((DOCUMENTED_FIELDS[event] | COMMON_FIELDS) - seen[event]) if event in seen else ["(not fired)"]
        for event in DOCUMENTED_FIELDS
    }


CASES = [
    Case(
        "listing",
        "frontmatter, command names",
        "hello",
        [{"text": "ok"}],
        _listing,
        {
            "git:commit": "- git:commit: Commit: with colon",
            "greet": "- greet: Greets: politely",
            "reviewer": "- reviewer: Use when: the user asks for a review",
        },
    ),
    Case(
        "positional",
        "arguments",
        '/pos one "two three" four',
        [{"text": "ok"}],
        lambda run: run.line("A0="),
        'A0=one A1=two three A2=four X=$2xl ALL=one "two three" four IDX=two three',
    ),
    Case(
        "appended",
        "arguments, ! placeholder, read-only [",
        "/noargs alpha beta",
        [{"text": "ok"}],
        lambda run: (run.line("^Body without") or "") + " | " + (run.line("^ARGUMENTS:") or ""),
        "Body without placeholders. (Bash completed with no output) has-readme | ARGUMENTS: alpha beta",
    ),
    Case(
        "short name",
        "command names",
        "/commit",
        [{"text": "ok"}],
        lambda run: "COMMIT-BODY" in run.texts(),
        True,
    ),
    Case(
        "tool rule",
        "agents",
        "review it",
        [
            _agent_call("reviewer", "TASK-REVIEWER"),
            {"tool": "Bash", "input": {"command": "python3 -c 'print(6 * 7)'", "description": "compute"}},
            {"text": "child done"},
            {"text": "done"},
        ],
        lambda run: run.line("^42$") is not None,  # the command ran: its output reached the child
        True,
    ),
    Case(
        "permission mode",
        "agents",
        "write it",
        [
            _agent_call("writer", "TASK-WRITER"),
            {"tool": "Write", "input": {"file_path": "written.txt", "content": "x\n"}},
            {"text": "child done"},
            {"text": "done"},
        ],
        lambda run: (run.repo / "written.txt").exists(),
        True,
    ),
    Case(
        "agent keys",
        "agents",
        "delegate",
        [
            _agent_call("nowrite", "TASK-NOWRITE"),
            {"tool": "Bash", "input": {"command": "true", "description": "nothing"}},
            {"text": "child done"},
            {"text": "done"},
        ],
        lambda run: {**_child(run, "TASK-NOWRITE"), "agent hook": (run.repo / "agent-hook-ran").exists()},
        {
            "found": True,
            "Write": False,
            "Bash": True,
            "skill preloaded": True,
            "model inherited": True,
            "agent hook": True,
        },
    ),
    Case(
        "settings env",
        "settings env",
        "show the variable",
        [{"tool": "Bash", "input": {"command": "printenv COMPAT_VAR", "description": "show"}}, {"text": "done"}],
        lambda run: {
            "tool": "from-settings" in (run.line("from-settings") or ""),
            "hook": all(e["_env"]["COMPAT_VAR"] == "from-settings" for e in run.hooklog()),
            "thinking": (run.bodies[0].get("thinking") or {}).get("budget_tokens") if run.bodies else None,
        },
        {"tool": True, "hook": True, "thinking": 2048},
    ),
    Case(
        "hook fields",
        "hook input",
        "use tools",
        [
            {"tool": "Bash", "input": {"command": "echo hi", "description": "say hi"}},
            {"tool": "Bash", "input": {"command": "false", "description": "fail"}},
            _agent_call("general-purpose", "TASK-GP"),
            {"text": "child done"},
            {"text": "done"},
        ],
        _fields,
        {event: [] for event in DOCUMENTED_FIELDS},
    ),
]
