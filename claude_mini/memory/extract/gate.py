"""Layer 4's gate: whether the turns since the last extraction hold anything durable, without a model.

An extraction run costs about as much as the turn it follows (it reads the conversation
again, from the cache, plus its own prompt); most turns ("hello", "list files", a question
answered from the code, an edit) teach nothing a later session needs, because the code and
git already hold it. The gate is a pure, deterministic function over
the pending messages (user text and tool calls) that finds the few that may:

    user-typed text (not tool results, reminders or attached files), after removing
    phrases that only look like cues ("never mind", "don't worry about it", "what's wrong")
        a cue ──► durable, reason: the kind and the words that matched
            remember     "remember", "note that", "keep in mind", 记住
            instruction  "from now on", "instead", "please use", "next time" (also in a question), 以后
            correction   "no, ...", "that's wrong", "actually, ...", "I meant", 不对
            preference   "I prefer", "always", "never", "don't", "use X, not Y", 总是, 不要
            decision     "we decided", "let's go with", "we deploy ...", "our convention", 我们决定
            people       "Dana owns", "ask Bob", "check with Ana", "I'm the backend lead", 负责
            schedule     "due Friday", "deadline", "release freeze", "every Monday", 截止, 周五
            reference    a URL, a host such as db2.internal, "dashboard", "runbook", "vault"
        (a question states only remember requests and instructions: "why does it always fail?"
        is no preference)
        2,000 characters or more typed ──► durable (a long message may say what no cue catches)
    tool calls: a Bash command that changes things failed, then a different but similar
        command succeeded with no file written in between (the fix was how to run it, not
        the code: "npm test" failed, "pnpm test" passed) ──► durable
    else ──► not durable; the Extractor keeps the turns pending and batches them.

Deliberately not durable: "don't worry about it", "never mind" (nothing stated), a failed
test made to pass by an edit (the code holds the fix), a question with "actually" in the
middle ("what does it actually do?"). Wrong calls in both directions are cheap: a
false "durable" costs one fork, a missed one still reaches a fork at the next durable turn,
at `memory.extractBatchTurns` pending turns, before a compaction, or at the session's end
if that span is durable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from claude_mini.base.text import one_line
from claude_mini.llm.messages import Message, TextBlock, ToolResultBlock
from claude_mini.shell.read_only import is_read_only_command

LONG_TEXT_CHARS = 2_000  # typed since the last extraction: too much for a word list to vouch for
SNIPPET_CHARS = 60  # of the matched words, in the reason

# Phrases removed before the cues are looked for: they contain a cue word but state nothing.
NOT_STATING = re.compile(
    r"\b(?:never\s*mind|don'?t\s+(?:worry|bother|know|understand|see|think|get|remember|care|mind)|"
    r"do\s+not\s+(?:worry|bother|know|understand)|(?:do|did)\s+you\s+remember|"
    r"(?:can|could)\s+you\s+remember\s+(?:what|how|where|when|why|which|who|if|whether)|"
    r"can'?t\s+remember|what'?s\s+wrong|what\s+is\s+wrong|what\s+went\s+wrong|anything\s+wrong|"
    r"something'?s?\s+wrong|no\s+(?:problem|worries|thanks|thank\s+you|idea)|not\s+sure|due\s+to)\b"
    r"|没关系|不用担心|算了|不知道",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"(?<=[.?!])\s+|(?<=[。？！])|\n+")
QUESTION = re.compile(r"(?:[?？]|吗|呢)\s*$")

_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_I = re.IGNORECASE


@dataclass(frozen=True)
class Cue:
    """One kind of durable statement: its words, and whether a question can state it."""

    kind: str
    pattern: re.Pattern[str]
    in_questions: bool = False  # "why does it always fail?" states no preference


# The first cue that matches names the reason.
CUES: tuple[Cue, ...] = (
    Cue(
        "a request to remember",
        re.compile(
            r"\b(?:remember|memori[sz]e|note\s+that|make\s+a\s+note|take\s+note|keep\s+in\s+mind|"
            r"for\s+future\s+reference|for\s+the\s+record|fyi|don'?t\s+forget|do\s+not\s+forget)\b"
            r"|记住|记得|记一下|别忘",
            _I,
        ),
        in_questions=True,
    ),
    Cue(
        "a standing instruction",
        re.compile(
            r"\b(?:from\s+now\s+on|going\s+forward|from\s+here\s+on|moving\s+forward|next\s+time|"
            r"in\s+(?:the\s+)?future|instead|please\s+(?:use|avoid|stop|keep|always|never|don'?t|do\s+not|"
            r"make\s+sure))\b|以后|今后|下次",
            _I,
        ),
        in_questions=True,
    ),
    Cue(
        "a correction",
        re.compile(
            r"^\s*(?:no|nope)\b\s*[,.!:;-]|(?:^|[,;]\s*)actually\b|"
            r"\b(?:i\s+meant|i\s+said|you\s+misunderstood|not\s+what\s+i\s+(?:asked|meant|wanted)|"
            r"(?:is|are|was|were|'s|'re)\s+(?:wrong|incorrect|outdated|out\s+of\s+date)|"
            r"that'?s\s+not\s+(?:right|correct|how|it))\b"
            r"|不对|错了|其实|而是",
            _I,
        ),
    ),
    Cue(
        "a preference",
        re.compile(
            r"\b(?:i\s+(?:really\s+)?(?:prefer|like|love|hate|dislike|want\s+you\s+to|always|never|usually)|"
            r"i'?d\s+rather|i\s+would\s+rather|prefer(?:s|red|ably)?|always|never|don'?t|do\s+not|avoid|"
            r"stop\s+(?:using|doing|adding|writing)|make\s+sure\s+(?:to|you|that)|no\s+need\s+to|"
            r"rather\s+than|(?:you|we)\s+(?:must|should\s+always|should\s+never))\b"
            r"|,\s*not\s+\w|^\s*(?:please\s+)?(?:use|prefer)\s+\S"
            r"|总是|永远|始终|不要|别再|偏好|更喜欢|请用|请使用|必须",
            _I,
        ),
    ),
    Cue(
        "a decision",
        re.compile(
            r"\b(?:we\s+(?:have\s+|'ve\s+)?(?:decided|agreed|settled|chose|picked|went\s+with)|"
            r"let'?s\s+(?:go\s+with|use|stick\s+with|keep|switch\s+to|standardi[sz]e)|the\s+plan\s+is|"
            r"decided|we(?:'ll|\s+will)\s+(?:use|go\s+with|switch|move)|"
            r"we(?:'re|\s+are)\s+(?:switching|moving|migrating|dropping|deprecating)|"
            r"we\s+(?:use|deploy|release|publish|ship|merge|squash|rebase|tag|version|pin|vendor|host|run|"
            r"test|build|lint|format|write|prefer|require|follow|never|always|don'?t|do\s+not)|"
            r"our\s+(?:convention|policy|rule|standard|process|style|workflow))\b"
            r"|我们决定|决定了|就用|改用",
            _I,
        ),
    ),
    Cue(
        "a fact about people",
        re.compile(  # names are capitalised: case matters here
            r"\b(?:(?i:ask|check\s+with|talk\s+to|ping|cc|reach\s+out\s+to|loop\s+in|owned\s+by|"
            r"maintained\s+by|approved\s+by|reviewed\s+by)\s+@?[A-Z][a-z]+|"
            r"(?!(?:It|This|That|The|There|Here|What|Which|Who|Where|When|How|Why)\b)[A-Z][a-z]+\s+"
            r"(?:owns|maintains|leads|manages|approves|reviews|is\s+(?:our|the)\s+\w+)|"
            r"(?i:who\s+owns|owner\s+of|on-call|point\s+of\s+contact|reports\s+to|our\s+team|my\s+team)|"
            r"(?i:i'?m|i\s+am)\s+(?:(?i:a|an|the)\s+(?!(?i:bit|little|lot)\b)\w+|[A-Z][a-z]+)|"
            r"(?i:i\s+work\s+(?:on|at|in|as|with)|my\s+(?:role|name|job|manager|boss|lead)))\b"
            r"|负责|找\S{1,4}确认"
        ),
    ),
    Cue(
        "a deadline or schedule",
        re.compile(
            rf"\b(?:due|deadline|(?:code|release|feature|merge|deploy)\s+freeze|"
            rf"freeze\s+(?:starts|begins|is|on|until|from|next)|"
            rf"by\s+(?:{_DAY}|tomorrow|tonight|eod|end\s+of\s+\w+|next\s+\w+)|until\s+(?:{_DAY}|{_MONTH})|"
            rf"every\s+(?:{_DAY}|day|morning|night|week|sprint|release)|on\s+{_DAY}s|"
            rf"each\s+(?:week|sprint|release|morning)|\d{{4}}-\d{{2}}-\d{{2}}|"
            rf"{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?|q[1-4])\b"
            r"|截止|期限|冻结|封版|每周|每天|周[一二三四五六日天]|星期[一二三四五六日天]",
            _I,
        ),
    ),
    Cue(
        "a reference",
        re.compile(
            r"https?://\S+|\b[\w-]+\.(?:internal|corp|intranet|lan)\b|"
            r"\b(?:dashboard|runbook|wiki|confluence|jira|grafana|sentry|datadog|pagerduty|notion|vault|"
            r"1password|slack\s+channel)\b",
            _I,
        ),
    ),
)


@dataclass(frozen=True)
class GateDecision:
    """The gate's answer and why, in words (for /context, the debug log and tests)."""

    durable: bool
    reason: str


def assess(messages: list[Message]) -> GateDecision:
    """Whether `messages` (the turns since the last extraction) may hold something durable."""
    typed = [text for message in messages if message.role == "user" for text in user_words(message)]
    for text in typed:
        found = stated_cue(text)
        if found is not None:
            return GateDecision(True, found)
    size = sum(len(text) for text in typed)
    if size >= LONG_TEXT_CHARS:
        return GateDecision(True, f"{size:,} characters typed: more than the cues can vouch for")
    resolved = resolved_failure(messages)
    if resolved is not None:
        return GateDecision(True, resolved)
    turns = count_turns(messages)
    return GateDecision(
        False,
        f"nothing durable in {turns} turn{'s' if turns != 1 else ''}: no preference, "
        "correction, decision, fact or resolved failure",
    )


def no_gate(messages: list[Message]) -> GateDecision:
    """The gate when `memory.extractGate` is false: every turn is extracted (the old behaviour)."""
    return GateDecision(True, "the gate is off (memory.extractGate: false)")


def stated_cue(text: str) -> str | None:
    """`kind: "words"` for the first cue in `text`, or None when it states nothing durable.

    Each sentence is read on its own; a question states only what a question can ("remember
    that...?", "...instead?"), not "why does it always fail?".
    """
    cleaned = NOT_STATING.sub(" ", text)
    for sentence in SENTENCE_END.split(cleaned):
        question = bool(QUESTION.search(sentence))
        for cue in CUES:
            match = cue.pattern.search(sentence) if cue.in_questions or not question else None
            if match is not None:
                return f'{cue.kind}: "{_snippet(sentence, match)}"'
    return None


def _snippet(sentence: str, match: re.Match[str]) -> str:
    """The sentence on one line, or the part of it around the match when it is long."""
    start = max(0, min(match.start() - SNIPPET_CHARS // 3, len(sentence) - SNIPPET_CHARS))
    while start > 0 and not sentence[start - 1].isspace():
        start -= 1  # from a word's start
    words = " ".join(sentence[start : start + SNIPPET_CHARS].split())
    return ("…" if start else "") + words + ("…" if start + SNIPPET_CHARS < len(sentence) else "")


def user_words(message: Message) -> list[str]:
    """What the user typed in a user message (not tool results, reminders or attachments)."""
    return [
        b.text
        for b in message.content
        if isinstance(b, TextBlock) and not b.text.startswith(("<system-reminder>", "<attached-file"))
    ]


def count_turns(messages: list[Message]) -> int:
    """How many user prompts `messages` holds (tool-result messages are not turns)."""
    return sum(1 for m in messages if m.role == "user" and any(t.strip() for t in user_words(m)))


# ---------------------------------------------------------------- a failure that was resolved

SIMILAR_COMMANDS = 0.3  # word overlap (Jaccard) from which two commands count as the same intent


def resolved_failure(messages: list[Message]) -> str | None:
    """`a failure resolved: "a" failed, "b" worked` when a Bash command that changes things failed
    and a different, similar one succeeded later with no Write or Edit in between."""
    calls: dict[str, str] = {}  # tool_use id -> Bash command
    failed: list[str] = []  # since the last file write
    for message in messages:
        if message.role == "assistant":
            for call in message.tool_uses:
                if call.name in ("Write", "Edit"):
                    failed = []  # what works after an edit may work because of the edit
                elif call.name == "Bash":
                    calls[call.id] = _command(call.input)
            continue
        for block in message.content:
            if not isinstance(block, ToolResultBlock) or block.tool_use_id not in calls:
                continue
            command = calls[block.tool_use_id]
            if block.is_error and not is_read_only_command(command)[0]:
                failed.append(command)
            elif not block.is_error:
                earlier = next((f for f in failed if f != command and similar(f, command)), None)
                if earlier is not None:
                    return f'a failure resolved: "{one_line(earlier, 40)}" failed, "{one_line(command, 40)}" worked'
    return None


def similar(a: str, b: str) -> bool:
    """Whether two commands share enough words to be two tries at the same thing."""
    x, y = set(a.split()), set(b.split())
    return bool(x and y) and len(x & y) / len(x | y) >= SIMILAR_COMMANDS


def _command(input: Any) -> str:
    command = input.get("command") if isinstance(input, dict) else None
    return command if isinstance(command, str) else ""
