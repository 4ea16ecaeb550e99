"""User hooks from settings: Claude Code's `hooks` key, read from every settings layer.

    {"hooks": {"PreToolUse": [{"matcher": "Bash|Edit",
                               "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}

`load_hooks(config)` turns the layers into a `HookSet`: the commands that run; the hooks that
are written down but will not run here, each with why (an event claude-mini does not fire, a
handler type it has no runner for, an untrusted folder, a managed policy, `disableAllHooks`);
and one problem line per malformed entry, which is skipped while the rest of its file still
works. `claude-mini hooks list` and `/hooks` print `hooks_report`.

Matchers follow Claude Code (checked against 2.1.332): absent, "" or "*" match everything; a
matcher made only of letters, digits, `_`, `-`, spaces, `,` and `|` is a list of exact names
split at `|` and `,`, each trimmed ("Bash|Edit", "startup, resume"); anything else is a
regular expression searched anywhere in the value, as JavaScript's `RegExp.test` does ("^Bash"
also matches "BashOutput"; anchor with `^...$`). Case-sensitive. For events without a matcher
value (UserPromptSubmit, Stop) every matcher matches. One difference: a matcher that is not a
valid expression is a problem line here; Claude Code keeps it silently matching nothing.
"""

from __future__ import annotations

import difflib
import functools
import math
import os
import re
import shlex
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from claude_mini.base import paths
from claude_mini.base.text import visible_controls
from claude_mini.config.json_text import json_kind, json_shown
from claude_mini.config.layers import SettingsLayer

if TYPE_CHECKING:
    from pathlib import Path

    from claude_mini.config import Config

# Every event name Claude Code 2.1.332 accepts under `hooks`, and the ones claude-mini fires.
KNOWN_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "Notification",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "SessionStart",
    "SessionEnd",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "PreModelSwitch",
    "PostModelSwitch",
    "PermissionRequest",
    "PermissionDenied",
    "Setup",
    "TeammateIdle",
    "TaskCreated",
    "TaskCompleted",
    "Elicitation",
    "ElicitationResult",
    "ConfigChange",
    "WorktreeCreate",
    "WorktreeRemove",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
)
FIRED_EVENTS = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "PreCompact",
    "PostCompact",
    "InstructionsLoaded",
    "Notification",
    "SubagentStart",
    "SubagentStop",
)
HANDLER_TYPES = ("command", "prompt", "agent", "http", "mcp_tool")  # only "command" runs here
# Seconds. Claude Code's documented default for command hooks; 60 was asked for, but 2.1.332
# let a hook without a timeout run 70 s to its end (measured), so the reference wins.
DEFAULT_TIMEOUT = 600.0
# Seconds, for SessionEnd hooks without a written `timeout`: they hold the exit (and /clear)
# meanwhile. Third-party reports (anthropics/claude-code#41577, a merged PR in blackaxgit/clx)
# say Claude Code bounds SessionEnd hooks to about 1.5 s; 5 s leaves a slow machine some room.
SESSION_END_TIMEOUT = 5.0
TRUSTABLE_SOURCES = ("project", "local")  # config.untrusted.UNTRUSTED_SOURCES: the repository's own files
UNTRUSTED_WHY = "this folder is not trusted; run claude-mini here and trust it, or pass --trust-folder"
NOT_FIRED_WHY = "not fired by claude-mini"
_EXACT_MATCHER = re.compile(r"[A-Za-z0-9_\-, |]*")


@functools.lru_cache(maxsize=512)
def _expression(matcher: str) -> re.Pattern[str] | None:
    """The compiled regular expression of a matcher that is one; None when it does not compile."""
    try:
        return re.compile(matcher)
    except (re.error, OverflowError, RecursionError):
        return None


def matcher_matches(matcher: str, value: str | None) -> bool:
    """Whether `matcher` selects an event occurrence whose matcher value is `value` (module docstring)."""
    if value is None or matcher.strip() in ("", "*"):
        return True
    if _EXACT_MATCHER.fullmatch(matcher):
        return value in (name.strip() for name in re.split(r"[|,]", matcher))
    pattern = _expression(matcher)
    return pattern is not None and pattern.search(value) is not None


def matcher_problem(matcher: str) -> str | None:
    """Why a matcher meant as a regular expression is not one, or None."""
    if matcher.strip() in ("", "*") or _EXACT_MATCHER.fullmatch(matcher):
        return None
    try:
        re.compile(matcher)
    except re.error as exc:
        return str(exc)
    except (OverflowError, RecursionError):
        return "too large or nested too deeply"
    return None


@dataclass(frozen=True)
class HookCommand:
    """One command hook that runs on an event: what to run, when, for how long, and where it is written."""

    event: str  # "PreToolUse"
    matcher: str  # as written; "" when absent
    command: str
    timeout: float  # seconds
    source: str  # "user" | "project" | "local" | "flags" | "managed"
    file: str  # the settings file it came from ("command line" for flags)
    status_message: str = ""  # Claude Code's optional `statusMessage`
    run_async: bool = False  # `async: true`: runs in the background; what it says joins the next message
    once: bool = False  # `once: true`: runs once per session

    def matches(self, value: str | None) -> bool:
        """Whether this hook runs for an occurrence whose matcher value (tool name, source...) is `value`."""
        return matcher_matches(self.matcher, value)


@dataclass
class IgnoredHook:
    """A hook written in a settings file that will not run, and why (one line)."""

    event: str
    matcher: str
    command: str
    source: str
    file: str
    why: str


@dataclass
class HookSet:
    """Every hook of the settings layers: those that run, those that do not and why, the problems."""

    commands: list[HookCommand] = field(default_factory=list)
    ignored: list[IgnoredHook] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line per skipped malformed entry or setting

    def for_event(self, event: str, value: str | None = None) -> list[HookCommand]:
        """The hooks to run for one event occurrence: matching ones, identical commands once (the first)."""
        seen: set[str] = set()
        out = []
        for hook in self.commands:
            if hook.event == event and hook.command not in seen and hook.matches(value):
                seen.add(hook.command)
                out.append(hook)
        return out

    def to_json(self) -> dict[str, Any]:
        """The stable shape `claude-mini hooks list --json` prints."""
        return {
            "hooks": [_hook_json(hook) for hook in self.commands],
            "ignored": [asdict(hook) for hook in self.ignored],
            "problems": list(self.problems),
        }


def _hook_json(hook: HookCommand) -> dict[str, Any]:
    """One hook for --json, its handler flags under Claude Code's names."""
    data = asdict(hook)
    data["async"] = data.pop("run_async")
    return data


def load_hooks(config: Config) -> HookSet:
    """The hooks of every settings layer, each decided: run, ignored (why), or a problem.

    Reads `config.raw_layers`: `config.layers` has already dropped the `hooks` of an untrusted
    project, and the listing must still show them as ignored.
    """
    hooks = HookSet()
    why_not = _policy(config, hooks.problems)
    for layer in config.raw_layers:
        if "hooks" not in layer.data:
            continue
        reader = _LayerReader(layer, hooks.problems)
        reader.read(layer.data["hooks"])
        for entry in reader.entries:
            if isinstance(entry, HookCommand):
                why = NOT_FIRED_WHY if entry.event not in FIRED_EVENTS else why_not(entry.source)
                if not why:
                    hooks.commands.append(entry)
                    continue
                entry = IgnoredHook(entry.event, entry.matcher, entry.command, entry.source, entry.file, why)
            hooks.ignored.append(entry)
    return hooks


def agent_hooks(hooks: dict[str, Any], file: Path | None) -> HookSet:
    """The `hooks` of a subagent type's frontmatter (settings' format), for its run only; its `Stop`
    hooks are that run's end (Claude Code turns them into SubagentStop)."""
    hook_set = HookSet()
    reader = _LayerReader(SettingsLayer("agent", file, {"hooks": hooks}), hook_set.problems)
    reader.read(hooks)
    for entry in reader.entries:
        if isinstance(entry, HookCommand) and entry.event in FIRED_EVENTS:
            hook_set.commands.append(entry)
    return hook_set


def named_files(hooks: HookSet, folders: Iterable[str]) -> list[str]:
    """The files hook commands name (`bash .claude/hooks/fmt.sh`, `./scripts/check.py --x`), absolute:
    editing one changes what runs on the next event, so the permission policy protects them.

    Every hook written down counts, those that do not run here too (trusting the folder later
    would run them). A word names a file when it holds a `/` or is a file in one of `folders`
    (relative words are tried in each); folders themselves and options are left out.
    """
    found: list[str] = []
    folders = list(folders)
    for command in [*(h.command for h in hooks.commands), *(h.command for h in hooks.ignored)]:
        for word in _command_words(command):
            found += [path for path in _word_paths(word, folders) if path not in found]
    return found


def _command_words(command: str) -> list[str]:
    """The words of a hook's command line, option values included (`--config=./x.toml`)."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:  # unbalanced quotes: the plain words still name the script
        words = command.split()
    out = []
    for word in words:
        if word.startswith("-"):
            word = word.partition("=")[2]
        out += [w for w in re.split(r"[;&|<>()`]+", word) if w]
    return out


def _word_paths(word: str, folders: list[str]) -> list[str]:
    """Where `word` points if it names a file ($CLAUDE_PROJECT_DIR and ~ expanded), else nothing."""
    project = folders[0] if folders else os.getcwd()
    word = re.sub(r"\$\{?(?:CLAUDE_PROJECT_DIR|CLAUDE_MINI_PROJECT_DIR)\}?", lambda _: project, word)
    word = os.path.expanduser(word)
    if "$" in word:
        return []
    bases = [""] if os.path.isabs(word) else folders
    paths = [os.path.normpath(os.path.join(base, word)) for base in bases]
    if "/" not in word:  # a bare word is a program or an argument unless such a file is there
        paths = [p for p in paths if os.path.isfile(p)]
    return [p for p in paths if not os.path.isdir(p) and p != os.sep]


def _policy(config: Config, problems: list[str]) -> Callable[[str], str | None]:
    """A function: source -> why its hooks do not run here, or None (trust, managed policy, disableAllHooks)."""
    managed = next((layer for layer in config.raw_layers if layer.source == "managed"), None)
    policy = managed.data if managed else {}
    where = f"the managed settings {managed.path}" if managed else ""
    disable_all = _policy_flag(policy, "disableAllHooks", where, problems)
    managed_only = _policy_flag(policy, "allowManagedHooksOnly", where, problems)
    user_off = next(
        (
            f"disableAllHooks is true in {layer.path or 'the command line'}; remove it there to "
            "run them (it cannot turn off managed hooks)"
            for layer in config.layers
            if layer.source != "managed" and layer.data.get("disableAllHooks") is True
        ),
        None,
    )

    def why_not(source: str) -> str | None:
        if disable_all:
            return f"disableAllHooks is true in {where}"
        if source == "managed":
            return None
        if config.managed_error:
            return (
                "the managed settings file cannot be used, so whether it allows other hooks is "
                "unknown; they run again once it is fixed"
            )
        if managed_only:
            return f"allowManagedHooksOnly is true in {where}: only managed hooks run"
        if source in TRUSTABLE_SOURCES and not config.trusted:
            return UNTRUSTED_WHY
        return user_off

    return why_not


def _policy_flag(policy: dict[str, Any], key: str, where: str, problems: list[str]) -> bool:
    """A managed true/false hook policy; any other value counts as true (managed settings fail closed)."""
    value = policy.get(key, False)
    if isinstance(value, bool):
        return value
    problems.append(
        f"{key} in {where} must be true or false (got {json_shown(value)}); read as true, "
        "as managed settings fail closed: ask whoever manages this machine to fix it."
    )
    return True


class _LayerReader:
    """Reads one layer's `hooks` object: command hooks, handlers it cannot run (ignored), problems."""

    def __init__(self, layer: SettingsLayer, problems: list[str]) -> None:
        self.source = layer.source
        self.file = str(layer.path) if layer.path else "command line"
        self.problems = problems
        self.entries: list[HookCommand | IgnoredHook] = []  # in the file's order

    def skip(self, where: str, what: str) -> None:
        """One problem line: which entry of which file was skipped, why, that the rest still applies."""
        self.problems.append(
            f"Skipped {where} in {self.file}: it {what}. The file's other hooks still apply; fix the entry to use it."
        )

    def read(self, hooks: Any) -> None:
        if not isinstance(hooks, dict):
            self.skip("hooks", f"must be an object of event names, not {json_kind(hooks)}")
            return
        for event, groups in hooks.items():
            self.read_event(str(event), groups)

    def read_event(self, event: str, groups: Any) -> None:
        where = f"hooks.{event}"
        if event not in KNOWN_EVENTS:
            close = difflib.get_close_matches(event, KNOWN_EVENTS, n=1)
            self.skip(
                where,
                "is not a hook event "
                + (f"(did you mean {close[0]}?)" if close else "(events are names like PreToolUse or SessionStart)"),
            )
        elif not isinstance(groups, list):
            self.skip(where, f'must be a list of {{"matcher", "hooks"}} groups, not {json_kind(groups)}')
        else:
            for i, group in enumerate(groups):
                self.read_group(event, f"{where}.{i}", group)

    def read_group(self, event: str, where: str, group: Any) -> None:
        if not isinstance(group, dict):
            self.skip(where, f'must be an object with "matcher" and "hooks", not {json_kind(group)}')
            return
        matcher = group.get("matcher")
        matcher = "" if matcher is None else matcher
        handlers = group.get("hooks")
        if not isinstance(matcher, str):
            self.skip(where, f"has a matcher that is not a string ({json_shown(matcher)})")
        elif problem := matcher_problem(matcher):
            self.skip(
                where, f"has the matcher {json_shown(matcher)}, which is not a valid regular expression ({problem})"
            )
        elif not isinstance(handlers, list):
            self.skip(where, 'needs "hooks": a list of {"type": "command", "command": ...} handlers')
        else:
            for j, handler in enumerate(handlers):
                self.read_handler(event, matcher, f"{where}.hooks.{j}", handler)

    def read_handler(self, event: str, matcher: str, where: str, handler: Any) -> None:
        if not isinstance(handler, dict):
            self.skip(where, f'must be an object like {{"type": "command", "command": ...}}, not {json_kind(handler)}')
            return
        kind, command = handler.get("type"), handler.get("command")
        timeout = handler.get("timeout", SESSION_END_TIMEOUT if event == "SessionEnd" else DEFAULT_TIMEOUT)
        status = handler.get("statusMessage", "")
        if kind in HANDLER_TYPES and kind != "command":
            self.ignore(event, matcher, _handler_text(handler), f"type {kind} is not supported by claude-mini")
        elif kind != "command":
            self.skip(
                where,
                'has no "type" (use "command")'
                if kind is None
                else f'has the unknown type {json_shown(kind)} (claude-mini runs "command" hooks)',
            )
        elif not isinstance(command, str) or not command.strip():
            self.skip(where, 'needs "command": the shell command to run')
        elif "\0" in command:
            self.skip(where, "has a NUL character in its command, which no shell can run")
        elif not _is_positive_number(timeout):
            self.skip(where, f"has the timeout {json_shown(timeout)}; it must be a number of seconds above 0")
        elif "if" in handler:
            self.ignore(
                event,
                matcher,
                command,
                'its "if" condition is not supported by claude-mini; drop it and test the input in the command',
            )
        else:
            if not isinstance(status, str):
                self.problems.append(
                    f"{where} in {self.file}: statusMessage must be a string "
                    f"(got {json_shown(status)}); the hook runs without it."
                )
            self.entries.append(
                HookCommand(
                    event,
                    matcher,
                    command,
                    float(timeout),
                    self.source,
                    self.file,
                    status if isinstance(status, str) else "",
                    handler.get("async") is True,
                    handler.get("once") is True,
                )
            )

    def ignore(self, event: str, matcher: str, text: str, why: str) -> None:
        self.entries.append(IgnoredHook(event, matcher, text, self.source, self.file, why))


def _handler_text(handler: dict[str, Any]) -> str:
    """What a handler of another type would do, for the listing: its command, prompt, URL or tool."""
    for key in ("command", "prompt", "url", "tool"):
        if isinstance(handler.get(key), str):
            return str(handler[key])
    return ""


def _is_positive_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0


# ---- the listing shared by `claude-mini hooks list` and /hooks


def hooks_report(hooks: HookSet, config: Config) -> list[str]:
    """Every hook grouped by event (matcher, command, timeout, source, file), then the ones that do
    not run with why, then the problems; one line saying where to add hooks when there are none.

    Commands, matchers and paths come from the repository: their control characters are shown
    escaped, so nothing reaches the terminal but text.
    """
    if not (hooks.commands or hooks.ignored or hooks.problems):
        lines = [_no_hooks_line(config)]
    else:
        lines = [*_running_lines(hooks.commands), *_ignored_lines(hooks.ignored)]
        if hooks.problems:
            lines.append(f"Problems ({len(hooks.problems)}):")
            lines += [f"  {problem}" for problem in hooks.problems]
    return [visible_controls(line).replace("\n", "\\n") for line in lines]


def _no_hooks_line(config: Config) -> str:
    return (
        f'No hooks. Add them under "hooks" in {paths.home_dir() / "settings.json"} (all your '
        f"projects) or {config.project_root / '.claude' / 'settings.json'} (this project), "
        "in Claude Code's format."
    )


def _running_lines(commands: list[HookCommand]) -> list[str]:
    """The hooks that run, by event in Claude Code's order of events."""
    if not commands:
        return ["No hook runs here."]
    lines = [f"Hooks that run here ({len(commands)}):"]
    for event in sorted({hook.event for hook in commands}, key=KNOWN_EVENTS.index):
        lines.append(f"  {event}")
        lines += [
            f"    {hook.matcher or '*'}  {hook.command}  ({hook.timeout:g} s; {hook.source}: {hook.file})"
            for hook in commands
            if hook.event == event
        ]
    return lines


def _ignored_lines(ignored: list[IgnoredHook]) -> list[str]:
    """The hooks that do not run, each with why."""
    if not ignored:
        return []
    return [
        f"Hooks that do not run ({len(ignored)}):",
        *(
            f"  {hook.event}  {hook.matcher or '*'}  {hook.command}  ({hook.source}: {hook.file}): {hook.why}"
            for hook in ignored
        ),
    ]
