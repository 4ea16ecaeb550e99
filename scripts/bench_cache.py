"""Benchmark Layer 4's cache sharing: how much of the extraction fork's input is read
from the prompt cache the main agent already paid for.

Runs a scripted 10-turn session in-process against the fake Anthropic server
(real SDK, real SSE, its deterministic prompt-cache simulation): each turn the
main agent reads a source file and answers; after each turn the extraction fork
runs, saving a memory on some turns (read, then write, then a last line). Prints
per turn the extraction requests' input tokens and the share read from cache,
then the total over every extraction request after the first. Target: >= 90%.

It runs the session three times, each with a fresh home, repository and server:
- plain;
- with user hooks configured in the repository's `.claude/settings.json` (a trusted folder,
  as `--trust-folder` makes it): UserPromptSubmit and PostToolUse hooks that add context to
  every turn, and a PreToolUse hook that only logs. Hook context joins the conversation as a
  `<system-reminder>`, so the fork still extends the parent's exact prefix (target: prefix
  reuse >= 97% with hooks configured). The script fails if the hooks did not run or their
  context never reached the model, so this figure cannot silently be a run without hooks;
- with the demo MCP server (tests/mcp_servers/demo_server.py, over stdio) in the repository's
  `.mcp.json`, the folder trusted and the server approved, and the main agent calling one of its
  tools every turn: its tools are in the cached tool list, fixed at the first request, so the
  fork still extends the parent's exact prefix (target: prefix reuse >= 97% with MCP servers
  configured). The script fails if the MCP tools were not in every request's tool list or the
  calls did not reach the server;
- with five skills in the repository's `.claude/skills` (Claude Code's layout) and the main agent
  loading one with the Skill tool on some turns: the listing is in the Skill tool's description,
  built once per conversation, and a body joins the conversation as a tool result, so the fork
  still extends the parent's exact prefix. The script fails if the Skill tool was not
  in every request's tool list, identically, or a loaded skill's body never reached the model;
- for contrast, with a fork that sends its own, smaller tool list (what "restricting the
  fork by removing tools" would cost).

Two figures per run: the share of the extraction requests' input read from the cache (the
fork's own new part, the turn's last answer and the extraction prompt, is never cached), and
prefix reuse: of what the request before each extraction request sent (and so cached), the
share the extraction request read back from the cache; 100% when its prefix is identical.

    uv run python scripts/bench_cache.py [--turns N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fake_anthropic import FakeAnthropic, Reply  # noqa: E402

from claude_mini.agent.fork import Fork  # noqa: E402
from claude_mini.base import paths  # noqa: E402
from claude_mini.config import load_config  # noqa: E402
from claude_mini.config.layers import merge  # noqa: E402
from claude_mini.llm.anthropic_client import AnthropicClient  # noqa: E402
from claude_mini.memory.store import format_memory  # noqa: E402
from claude_mini.runtime import build_runtime  # noqa: E402

SAVE_ON = {2, 5, 8}
SOURCE = '''\
"""Module {i}: part of the demo service."""

import logging

log = logging.getLogger(__name__)


def handler_{i}(request):
    """Handle one request of kind {i}: validate, transform, store."""
    if not request.get("id"):
        raise ValueError("request {i} needs an id")
    payload = {{k: v for k, v in request.items() if k != "secret"}}
    log.info("handling %s", payload["id"])
    return {{"ok": True, "kind": {i}, "payload": payload}}
'''


def make_repo(root: Path, turns: int) -> None:
    """A git repository with one source file per turn."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    for i in range(1, turns + 1):
        (root / f"module_{i}.py").write_text(SOURCE.format(i=i) * 3)


# One hook program for every event: it logs the event (the script checks the log) and, for
# UserPromptSubmit and PostToolUse, adds context that differs every turn.
HOOK = """\
import json, sys
event = json.load(sys.stdin)
name = event["hook_event_name"]
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"event": name, "tool": event.get("tool_name")}) + "\\n")
if name == "UserPromptSubmit":
    context = "[bench-hook] Ticket PAY-142; prompt had %d characters." % len(event["prompt"])
elif name == "PostToolUse":
    context = "[bench-hook] %s of %s checked." % (event["tool_name"], event["tool_input"].get("file_path"))
else:
    sys.exit(0)
print(json.dumps({"hookSpecificOutput": {"hookEventName": name, "additionalContext": context}}))
"""
HOOKED_EVENTS = ("UserPromptSubmit", "PreToolUse", "PostToolUse")
DEMO_SERVER = Path(__file__).resolve().parent.parent / "tests" / "mcp_servers" / "demo_server.py"


def configure_hooks(repo: Path, tmp: Path) -> Path:
    """The repository's `.claude/settings.json` with one hook per event in HOOKED_EVENTS; the log path."""
    program, log = tmp / "hook.py", tmp / "hooks.log"
    program.write_text(HOOK)
    command = " ".join(shlex.quote(str(x)) for x in (sys.executable, program, log))
    entry = [{"matcher": "", "hooks": [{"type": "command", "command": command, "timeout": 30}]}]
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {e: entry for e in HOOKED_EVENTS}}))
    return log


def check_hooks_ran(log: Path, server: FakeAnthropic, turns: int) -> dict[str, int]:
    """Per event, how often the hooks ran; raises when one did not run every turn or its context
    never reached the model."""
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    counts = {event: sum(1 for line in lines if line["event"] == event) for event in HOOKED_EVENTS}
    if any(n < turns for n in counts.values()):
        raise SystemExit(f"bench_cache: the hooks did not run every turn ({counts} in {turns} turns)")
    seen = sum("[bench-hook]" in r.text for r in server.requests_for("main"))
    if not seen:
        raise SystemExit("bench_cache: no main request carried the hooks' context")
    return counts


def configure_mcp(repo: Path) -> None:
    """The demo MCP server in the repository's `.mcp.json`, approved, its tools allowed."""
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}})
    )
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["demo"]}))
    (repo / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["mcp__demo"]}}))


def check_mcp(server: FakeAnthropic, turns: int) -> int:
    """How many MCP tools every request listed; raises when a request's tool list lacked them or
    differed from the first one, or when a call did not reach the server."""
    requests = server.requests_for("main") + server.requests_for("extract")
    tools = requests[0].body["tools"]
    names = [tool["name"] for tool in tools if tool["name"].startswith("mcp__demo__")]
    if "mcp__demo__add" not in names or any(r.body["tools"] != tools for r in requests):
        raise SystemExit(f"bench_cache: the demo MCP server's tools were not in every request ({names})")
    conversation = server.requests_for("main")[-1].text  # every tool result of the session
    answered = sum(f'"sum": {i + 1}.0' in conversation for i in range(1, turns + 1))
    if answered < turns:
        raise SystemExit(f"bench_cache: {answered} of {turns} MCP calls came back with the server's result")
    return len(names)


# Skills as repositories write them: a name, a one-line description, a body of rules (1-3 KB).
# Each body starts with a marker the script looks for in the requests.
SKILLS = {
    "handler-conventions": (
        "How request handlers in this service are written: validation, logging, the secret field",
        [
            "Every handler validates its input first and raises ValueError naming the missing field",
            "Drop the `secret` field before logging or storing a payload; never log the raw request",
            "Log with the module's `log`, at info for each request and warning for rejected ones",
            "Return a dict with `ok`, `kind` and `payload`; never return None or a bare value",
            "A new handler gets a test in tests/handlers/ with one valid and two invalid requests",
        ],
    ),
    "db-migration": (
        "Write and review an Alembic migration: batching, locks, downgrade, the staging rehearsal",
        [
            "Generate with `alembic revision --autogenerate` and read every operation it added",
            "A NOT NULL column needs a server default or a backfill before the constraint",
            "Backfill in batches of 10,000 rows with a commit per batch",
            "Create indexes on big tables concurrently, inside an autocommit block",
            "Write and test the downgrade: upgrade, downgrade, upgrade on a staging copy",
        ],
    ),
    "pr-review": (
        "Review a pull request: correctness, tests, naming, and what the description leaves out",
        [
            "Read the description, then the diff file by file; note what the description does not mention",
            "Check each changed function for its error paths and the tests that cover them",
            "Name the line for every finding (file:line) and say why it matters, not only what",
            "Separate blocking findings from suggestions; at most five suggestions",
            "End with a one-line verdict: approve, approve with changes, or request changes",
        ],
    ),
    "release-notes": (
        "Draft release notes from CHANGELOG.md for a new version, grouped the Keep a Changelog way",
        [
            "List every entry under Unreleased; invent nothing",
            "Group as Added, Changed, Deprecated, Removed, Fixed, Security",
            "Write for users: what changes for them, with the PR number",
            "Breaking changes first, each with its one-line migration",
            "Show the notes and wait for approval before tagging",
        ],
    ),
    "incident-postmortem": (
        "Write a blameless postmortem: timeline in UTC, impact, root cause, action items with owners",
        [
            "Timeline in UTC from the first alert to the all-clear, one line per event",
            "Impact in numbers: users affected, requests failed, minutes of downtime",
            "Root cause as a chain of causes, no names of people",
            "Action items each with an owner, a ticket and a date",
            "Link the dashboards and the alert that fired",
        ],
    ),
}
SKILL_ON = {1: "handler-conventions", 4: "pr-review", 7: "handler-conventions", 9: "db-migration"}


def skill_body(name: str) -> str:
    description, rules = SKILLS[name]
    lines = [f"# {name}", "", f"[bench-skill {name}] {description}.", ""]
    lines += [f"{n}. {rule}. Check it again before you answer." for n, rule in enumerate(rules, start=1)]
    lines += ["", "Files this skill mentions are in its folder; Read them when a step needs one."]
    return "\n".join(lines * 3) + "\n"  # the rules, with their checks, as long bodies repeat them


def configure_skills(repo: Path) -> None:
    """SKILLS as `.claude/skills/<name>/SKILL.md`, each with a reference file beside it."""
    for name, (description, _) in SKILLS.items():
        folder = repo / ".claude" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{skill_body(name)}")
        (folder / "reference.md").write_text(f"# {name}: reference\n")


def check_skills(server: FakeAnthropic, turns: int) -> int:
    """How many Skill calls returned their body; raises when a request lacked the Skill tool, its
    tool list differed from the first one, or a loaded body never reached the model."""
    requests = server.requests_for("main") + server.requests_for("extract")
    tools = requests[0].body["tools"]
    skill = [tool for tool in tools if tool["name"] == "Skill"]
    if (
        not skill
        or any(f"- {name}: " not in skill[0]["description"] for name in SKILLS)
        or any(r.body["tools"] != tools for r in requests)
    ):
        raise SystemExit("bench_cache: the Skill tool with every skill listed was not in every request")
    conversation = server.requests_for("main")[-1].body["messages"]
    results = [
        json.dumps(block)
        for message in conversation
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    loaded = [i for i, name in SKILL_ON.items() if i <= turns]
    found = sum(any(f"[bench-skill {SKILL_ON[i]}]" in r for r in results) for i in loaded)
    bodies = sum("[bench-skill " in r for r in results)
    if not loaded or found < len(loaded) or bodies != len(loaded):
        raise SystemExit(f"bench_cache: {bodies} skill bodies reached the model for {len(loaded)} Skill calls")
    return bodies


def script(server: FakeAnthropic, memdir: Path, turns: int, mcp: bool = False, skills: bool = False) -> None:
    """Main replies (call the MCP server's add if configured, load a skill on some turns if
    configured, read a file, answer) and extraction replies (save on some turns)."""
    for i in range(1, turns + 1):
        if mcp:
            server.on(Reply.tool("mcp__demo__add", {"a": i, "b": 1}), purpose="main")
        if skills and i in SKILL_ON:
            server.on(Reply.tool("Skill", {"skill": SKILL_ON[i], "args": f"module_{i}.py"}), purpose="main")
        server.on(Reply.tool("Read", {"file_path": f"module_{i}.py"}), purpose="main")
        server.on(Reply.text(f"module_{i}.py validates, transforms and stores requests."), purpose="main")
        if i not in SAVE_ON:
            server.on(Reply.text("Nothing to save."), purpose="extract")
            continue
        memory = format_memory(
            name=f"Convention {i}",
            description=f"how handlers of kind {i} are written",
            type="project",
            body=f"Handlers of kind {i} drop the `secret` field.",
            why="privacy review",
            how_to_apply="every new handler",
        )
        server.on(Reply.tool("Read", {"file_path": str(memdir / "MEMORY.md")}), purpose="extract")
        server.on(
            Reply.tool("Write", {"file_path": str(memdir / f"project_kind_{i}.md"), "content": memory}),
            purpose="extract",
        )
        server.on(Reply.text("Saved one memory."), purpose="extract")


async def run_session(repo: Path, server: FakeAnthropic, turns: int, *, trusted: bool) -> None:
    config = load_config(repo, trust_folder=trusted)
    config.settings = merge(config.settings, {"recall": {"strategy": "off"}})
    rt = build_runtime(config, client=AnthropicClient(base_url=server.base_url, api_key="bench"))
    for i in range(1, turns + 1):
        async for _ in rt.agent.run(f"Explain what module_{i}.py does; remember conventions you see."):
            pass
        await rt.extractor.wait(30)
    await rt.close()  # the session's end: MCP servers are stopped too


def measure(
    turns: int, fork_tools: int | None = None, hooks: bool = False, mcp: bool = False, skills: bool = False
) -> list[list[dict[str, int]]]:
    """Usage of each extraction request, grouped by turn (a fresh home, repo and server); each
    usage also carries `parent_input`, the whole input of the request before it."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic() as server,
        mock.patch.dict(os.environ, {"CLAUDE_MINI_HOME": str(Path(tmp) / "home")}),
    ):
        repo = Path(tmp) / "repo"
        make_repo(repo, turns)
        log = configure_hooks(repo, Path(tmp)) if hooks else None
        if mcp:
            configure_mcp(repo)
        if skills:
            configure_skills(repo)
        script(server, paths.memory_dir(repo), turns, mcp, skills)
        patch = mock.patch.object(Fork, "request", _trimmed_request(fork_tools)) if fork_tools else None
        with patch or _nothing():
            asyncio.run(run_session(repo, server, turns, trusted=hooks or mcp))
        if log is not None:
            counts = check_hooks_ran(log, server, turns)
            print(f"\nhooks ran: {', '.join(f'{event} {n}x' for event, n in counts.items())}")
        if mcp:
            print(
                f"\nMCP tools in every request's tool list: {check_mcp(server, turns)}; "
                f"the server answered all {turns} calls"
            )
        if skills:
            print(
                f"\nSkill tool (listing {len(SKILLS)} skills) in every request's tool list, identical; "
                f"{check_skills(server, turns)} skill bodies reached the model as Skill results"
            )
        by_turn: list[list[dict[str, int]]] = []
        before: dict[str, int] | None = None
        for request in server.requests:
            if (
                request.purpose == "main"
                and request.body["messages"][-1]["role"] == "user"
                and isinstance(request.body["messages"][-1]["content"][0].get("text"), str)
            ):
                by_turn.append([])
            elif request.purpose == "extract" and request.usage and before:
                by_turn[-1].append({**request.usage, "parent_input": total_input(before)})
            before = request.usage or before
        return by_turn


def _trimmed_request(keep: int):
    original = Fork.request

    def request(self):
        req = original(self)
        return replace(req, tools=req.tools[:keep])

    return request


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def total_input(usage: dict[str, int]) -> int:
    return usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]


def share(usages: list[dict[str, int]]) -> float:
    total = sum(total_input(u) for u in usages)
    return 100.0 * sum(u["cache_read_input_tokens"] for u in usages) / total if total else 0.0


def reuse(usages: list[dict[str, int]]) -> float:
    """Of what the requests before these sent, the share these read back from the cache."""
    sent = sum(u["parent_input"] for u in usages)
    return 100.0 * sum(u["cache_read_input_tokens"] for u in usages) / sent if sent else 0.0


def report(title: str, by_turn: list[list[dict[str, int]]]) -> tuple[float, float]:
    """Print the table; (share of input from cache, prefix reuse) over the requests after the first."""
    print(f"\n{title}")
    print(f"{'turn':>4}  {'requests':>8}  {'input tokens':>12}  {'from cache':>10}  {'share':>6}  {'reuse':>6}")
    for n, usages in enumerate(by_turn, start=1):
        read = sum(u["cache_read_input_tokens"] for u in usages)
        total = sum(total_input(u) for u in usages)
        print(f"{n:>4}  {len(usages):>8}  {total:>12,}  {read:>10,}  {share(usages):>5.1f}%  {reuse(usages):>5.1f}%")
    after_first = [u for usages in by_turn for u in usages][1:]
    figures = share(after_first), reuse(after_first)
    print(
        f"extraction requests after the first: {len(after_first)}, {figures[0]:.1f}% of their input "
        f"tokens read from the cache, prefix reuse {figures[1]:.1f}%"
    )
    return figures


class _Count(logging.Handler):
    """Counts the cache guard's warnings instead of printing each one."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=10)
    args = parser.parse_args()
    guard = logging.getLogger("claude_mini.agent.fork")
    counter = _Count()
    guard.addHandler(counter)
    guard.propagate = False
    plain = report("Fork on the parent's exact prefix (claude_mini)", measure(args.turns))
    print(f"cache-prefix mismatches logged: {_mismatches(counter)}")
    hooked = report(
        "The same, with hooks configured (UserPromptSubmit, PreToolUse, PostToolUse)", measure(args.turns, hooks=True)
    )
    print(f"cache-prefix mismatches logged: {_mismatches(counter)}")
    with_mcp = report(
        "The same, with the demo MCP server configured (stdio, one call per turn)", measure(args.turns, mcp=True)
    )
    print(f"cache-prefix mismatches logged: {_mismatches(counter)}")
    with_skills = report(
        "The same, with five skills in .claude/skills (the Skill tool loads one on turns "
        f"{', '.join(str(i) for i in SKILL_ON if i <= args.turns)})",
        measure(args.turns, skills=True),
    )
    print(f"cache-prefix mismatches logged: {_mismatches(counter)}")
    report("Fork with its own tool list (Read, Write, Edit only): for contrast", measure(args.turns, fork_tools=3))
    print(f"cache-prefix mismatches logged: {_mismatches(counter)}")
    checks = [
        ("share of input from cache, no hooks", plain[0], 90.0),
        ("share of input from cache, with hooks", hooked[0], 90.0),
        ("share of input from cache, with MCP servers", with_mcp[0], 90.0),
        ("share of input from cache, with skills", with_skills[0], 90.0),
        ("prefix reuse, no hooks", plain[1], 97.0),
        ("prefix reuse, with hooks", hooked[1], 97.0),
        ("prefix reuse, with MCP servers", with_mcp[1], 97.0),
        ("prefix reuse, with skills", with_skills[1], 97.0),
    ]
    print()
    for what, figure, target in checks:
        print(f"Target {what} >= {target:.0f}%: {'met' if figure >= target else 'NOT met'} ({figure:.1f}%)")
    return 0 if all(figure >= target for _, figure, target in checks) else 1


def _mismatches(counter: _Count) -> str:
    """How many cache-prefix mismatches the fork's guard logged since the last call, with the first."""
    messages, counter.messages = counter.messages, []
    return f"{len(messages)}, e.g. {messages[0]}" if messages else "0"


if __name__ == "__main__":
    sys.exit(main())
