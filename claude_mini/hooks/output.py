"""What the hooks of one event occurrence said: exit codes and JSON output, merged.

Claude Code's contract (its hooks reference, and 2.1.332 run here against the fake server):
- stdout is JSON when, stripped, it starts with `{` and ends with `}`. Valid JSON decides on
  any exit code but 2, with no error; JSON that does not parse, or has a field of the wrong
  type, or a `hookSpecificOutput.hookEventName` other than the event, or `hookSpecificOutput`
  on an event that takes none (PreCompact), is an error line and the whole output is ignored
  (it is not read as plain text either).
- Exit 0 with plain stdout: context for UserPromptSubmit and SessionStart (for PreCompact,
  instructions added to the compaction's), ignored elsewhere.
- Exit 2: a block on the events that can block, the reason being the JSON's `reason` when
  it has one, else stderr; on PreToolUse it is a deny. Some events show stderr to the user
  only (an error line here); some ignore exit 2.
- Any other exit code, a timeout, or a command that could not start: one error line; the
  output of a timed-out hook is discarded.
- PreToolUse: `permissionDecision` allow/deny/ask/defer (the older top-level `decision`
  approve/block means allow/deny), merged across hooks deny > defer > ask > allow.
- `suppressOutput` and `terminalSequence` are accepted and have no effect here: a hook's
  stdout never reaches the transcript anyway.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from claude_mini.base.text import one_line
from claude_mini.hooks.runner import HookRun
from claude_mini.llm.stream_assembly import encodable
from claude_mini.tools.base import cut_with_note

# Exit 2 blocks these (PostToolUse/PostToolUseFailure: the reason goes to the model beside
# the result, the tool having run already).
EXIT_2_BLOCKS = frozenset(
    {
        "PreToolUse",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "Stop",
        "SubagentStop",
        "TeammateIdle",
        "TaskCreated",
        "TaskCompleted",
        "ConfigChange",
        "PostToolBatch",
        "PreCompact",
        "PreModelSwitch",
        "Elicitation",
        "ElicitationResult",
        "WorktreeCreate",
        "WorktreeRemove",
        "PostToolUse",
        "PostToolUseFailure",
    }
)
# Exit 2 of these is ignored (every other event shows its stderr to the user).
EXIT_2_IGNORED = frozenset(
    {
        "PermissionRequest",
        "PermissionDenied",
        "Notification",
        "Setup",
        "InstructionsLoaded",
        "MessageDisplay",
        "StopFailure",
        "DirectoryAdded",
    }
)
# Top-level `decision: "block"` with `reason` (PreToolUse has its own, below).
DECISION_BLOCKS = frozenset(
    {
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStop",
        "ConfigChange",
        "PreCompact",
        "TaskCreated",
    }
)
# The events whose hooks may print `hookSpecificOutput` (Claude Code 2.1.332's validation
# schema); on any other event (PreCompact, PostCompact, SessionEnd, InstructionsLoaded) it is
# refused: the hook counts as failed and its whole output is ignored.
HOOK_SPECIFIC_EVENTS = frozenset(
    {
        "PreToolUse",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "SessionStart",
        "Setup",
        "PreModelSwitch",
        "PostModelSwitch",
        "SubagentStart",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStop",
        "PermissionDenied",
        "Notification",
        "PermissionRequest",
        "Elicitation",
        "ElicitationResult",
        "CwdChanged",
        "FileChanged",
        "WorktreeCreate",
        "MessageDisplay",
    }
)
# `hookSpecificOutput.additionalContext` reaches the model (on Stop and SubagentStop as
# feedback: the turn goes on with it, as after a block).
TAKES_ADDITIONAL_CONTEXT = frozenset(
    {
        "PreToolUse",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "SubagentStop",
        "SessionStart",
        "SubagentStart",
        "Setup",
        "PostModelSwitch",
    }
)
# Plain stdout of a successful hook is context (PreCompact: compaction instructions).
PLAIN_STDOUT_IS_CONTEXT = frozenset(
    {
        "UserPromptSubmit",
        "UserPromptExpansion",
        "SessionStart",
        "PostModelSwitch",
        "PreCompact",
    }
)
STOP_EVENTS = frozenset({"Stop", "SubagentStop"})  # their additionalContext is a block's reason
# `continue` and `systemMessage` are discarded for these.
IGNORES_CONTINUE = frozenset({"PreCompact"})

PERMISSION_ORDER = ("allow", "ask", "defer", "deny")  # later wins
LEGACY_DECISIONS = {"approve": "allow", "block": "deny"}
MAX_CONTEXT_CHARS = 10_000  # Claude Code's cap on one hook's context text
COMMAND_CHARS = 60

_TYPES: dict[str, tuple[type, str]] = {
    "continue": (bool, "true or false"),
    "suppressOutput": (bool, "true or false"),
    "stopReason": (str, "a string"),
    "reason": (str, "a string"),
    "systemMessage": (str, "a string"),
    "terminalSequence": (str, "a string"),
    "hookSpecificOutput": (dict, "an object"),
}
_SPECIFIC_TYPES: dict[str, tuple[type, str]] = {
    "permissionDecisionReason": (str, "a string"),
    "updatedInput": (dict, "an object"),
    "additionalContext": (str, "a string"),
}


@dataclass
class HookOutcome:
    """What the hooks of one event occurrence said, merged.

    `reason` is for the model, except on UserPromptSubmit (the prompt is dropped and the
    user is told why). `context`, in hook order: additionalContext, or plain stdout where
    the event takes it (on PreCompact, instructions for the summary).
    """

    block: bool = False  # exit 2, or decision "block" / PreToolUse permission "deny"
    reason: str = ""
    context: list[str] = field(default_factory=list)
    permission: str | None = None  # PreToolUse: "allow" | "deny" | "ask" | "defer"
    permission_reason: str = ""
    updated_input: dict[str, Any] | None = None  # PreToolUse: the last hook's that gave one
    stop: bool = False  # `continue: false`
    stop_reason: str = ""
    system_messages: list[str] = field(default_factory=list)  # shown to the user
    errors: list[str] = field(default_factory=list)  # one line per non-blocking failure


def interpret(event: str, runs: Sequence[HookRun]) -> HookOutcome:
    """Merge what the hook runs of one `event` occurrence said, in hook order."""
    outcome = HookOutcome()
    decisions: list[tuple[str, str]] = []  # PreToolUse: (permission, reason) per hook
    for run in runs:
        _read_run(event, run, outcome, decisions)
    if decisions:
        _merge_permissions(decisions, outcome)
    _make_encodable(outcome)
    return outcome


def _make_encodable(outcome: HookOutcome) -> None:
    """JSON can spell lone surrogates (`"\\ud800"`), which no encoder takes: the texts that reach
    the model, the transcript and the terminal get U+FFFD instead. (`updated_input` is left as
    given: the agent refuses a tool input that holds one.)"""
    outcome.reason, outcome.stop_reason = encodable(outcome.reason), encodable(outcome.stop_reason)
    outcome.permission_reason = encodable(outcome.permission_reason)
    for texts in (outcome.context, outcome.system_messages, outcome.errors):
        texts[:] = [encodable(text) for text in texts]


def _read_run(event: str, run: HookRun, outcome: HookOutcome, decisions: list[tuple[str, str]]) -> None:
    if run.error:
        outcome.errors.append(_line(event, run, f"could not start: {run.error}"))
        return
    if run.timed_out or run.exit_code is None:
        outcome.errors.append(_line(event, run, f"timed out after {run.hook.timeout:g} s"))
        return
    data, problem = _parse(event, run.stdout)
    if run.exit_code == 2:
        _read_exit_2(event, run, data, outcome, decisions)
    elif problem:
        outcome.errors.append(_line(event, run, f"{problem}; its output was ignored"))
    elif data is not None:
        _read_json(event, data, outcome, decisions)
    elif run.exit_code != 0:
        outcome.errors.append(_failure_line(event, run))
    elif event in PLAIN_STDOUT_IS_CONTEXT and run.stdout.strip():
        outcome.context.append(_capped(run.stdout.strip()))


def _read_exit_2(
    event: str,
    run: HookRun,
    data: dict[str, Any] | None,
    outcome: HookOutcome,
    decisions: list[tuple[str, str]],
) -> None:
    """A blocking error: the JSON's reason (if any) or stderr says why."""
    if event in EXIT_2_IGNORED:
        return
    if event not in EXIT_2_BLOCKS:
        outcome.errors.append(_failure_line(event, run))
        return
    reason = _json_reason(data) or run.stderr.strip()
    reason = (
        reason or f"The {event} hook `{one_line(run.hook.command, COMMAND_CHARS)}` blocked this and gave no reason."
    )
    if event == "PreToolUse":
        decisions.append(("deny", reason))
    else:
        _block(outcome, reason)


def _read_json(event: str, data: dict[str, Any], outcome: HookOutcome, decisions: list[tuple[str, str]]) -> None:
    if event not in IGNORES_CONTINUE:
        if data.get("continue") is False:
            outcome.stop = True
            outcome.stop_reason = _joined(outcome.stop_reason, data.get("stopReason", ""))
        if data.get("systemMessage"):
            outcome.system_messages.append(data["systemMessage"])
    specific = data.get("hookSpecificOutput") or {}
    decision, reason = data.get("decision"), data.get("reason", "")
    if event == "PreToolUse":
        permission = specific.get("permissionDecision") or LEGACY_DECISIONS.get(decision or "")
        if permission:
            decisions.append((permission, specific.get("permissionDecisionReason") or reason))
        if "updatedInput" in specific:
            outcome.updated_input = specific["updatedInput"]
    elif decision == "block" and event in DECISION_BLOCKS:
        _block(outcome, reason)
    context = specific.get("additionalContext")
    if context and event in STOP_EVENTS:
        _block(outcome, _capped(context))
    elif context and event in TAKES_ADDITIONAL_CONTEXT:
        outcome.context.append(_capped(context))


def _merge_permissions(decisions: list[tuple[str, str]], outcome: HookOutcome) -> None:
    """The strictest decision wins; its reasons (of every hook that gave it) are kept."""
    winner = max((p for p, _ in decisions), key=PERMISSION_ORDER.index)
    outcome.permission = winner
    outcome.permission_reason = "\n".join(r for p, r in decisions if p == winner and r)
    if winner == "deny":
        _block(outcome, outcome.permission_reason)


def _block(outcome: HookOutcome, reason: str) -> None:
    outcome.block = True
    outcome.reason = _joined(outcome.reason, reason)


def _parse(event: str, stdout: str) -> tuple[dict[str, Any] | None, str]:
    """(the JSON object, "") or (None, what is wrong with it); (None, "") for plain text."""
    text = stdout.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None, ""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        return None, f"printed invalid JSON ({str(exc) or 'nested too deeply'})"
    problem = _schema_problem(event, data)
    return (None, problem) if problem else (data, "")


def _schema_problem(event: str, data: Any) -> str:
    """What makes `data` not a valid hook output for `event` (every field's type is checked
    before its value is used, so no output can raise), or ""."""
    if not isinstance(data, dict):
        return "printed JSON that is not an object"
    for key, (kind, what) in _TYPES.items():
        if key in data and not isinstance(data[key], kind):
            return f"printed JSON whose `{key}` is not {what}"
    if "decision" in data and not (isinstance(data["decision"], str) and data["decision"] in LEGACY_DECISIONS):
        return 'printed JSON whose `decision` is not "approve" or "block"'
    specific = data.get("hookSpecificOutput")
    if specific is None:
        return ""
    if event not in HOOK_SPECIFIC_EVENTS:
        return f"printed hookSpecificOutput, which {event} hooks cannot give"
    name = specific.get("hookEventName")
    if name != event:
        shown = name if isinstance(name, str) and name else "no event"
        return f"printed hookSpecificOutput for {shown}, not {event}"
    for key, (kind, what) in _SPECIFIC_TYPES.items():
        if key in specific and not isinstance(specific[key], kind):
            return f"printed JSON whose `hookSpecificOutput.{key}` is not {what}"
    decision = specific.get("permissionDecision", "allow")
    if not (isinstance(decision, str) and decision in PERMISSION_ORDER):
        return "printed JSON whose `permissionDecision` is not allow, deny, ask or defer"
    return ""


def _json_reason(data: dict[str, Any] | None) -> str:
    if data is None:
        return ""
    specific = data.get("hookSpecificOutput") or {}
    return str(data.get("reason") or specific.get("permissionDecisionReason") or "").strip()


def _failure_line(event: str, run: HookRun) -> str:
    code = run.exit_code or 0
    status = f"exit {code}" if code >= 0 else f"killed by {_signal_name(-code)}"
    first = next((line.strip() for line in run.stderr.splitlines() if line.strip()), "")
    return _line(event, run, f"failed ({status})" + (f": {first}" if first else ""))


def _line(event: str, run: HookRun, what: str) -> str:
    return f"{event} hook `{one_line(run.hook.command, COMMAND_CHARS)}` {what}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _capped(text: str) -> str:
    return cut_with_note(text, MAX_CONTEXT_CHARS, "from the hook")


def _joined(first: str, second: str) -> str:
    return "\n".join(part for part in (first, second) if part)
