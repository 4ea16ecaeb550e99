"""What the extraction fork is asked: the instructions, the folder's manifest, the project's memory
policies and, with a team tier, how to propose a memory for it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.base import paths
from claude_mini.base.safe_read import Unreadable, read_file
from claude_mini.base.text import one_line
from claude_mini.llm.messages import Message, TextBlock
from claude_mini.memory.recall.lexical import Candidate, manifest_line
from claude_mini.memory.store import MemoryStore
from claude_mini.memory.store.links import record_links, successor_of
from claude_mini.memory.team import TeamTier

if TYPE_CHECKING:
    pass


MAX_TURNS = 5  # DESIGN.md section 5: the fork's turns
MANIFEST_MAX = 200  # as many as recall offers
POLICY_FILENAME = "memory-policy.md"
POLICY_MAX_CHARS = 8_000  # a policy is guidance, not a second CLAUDE.md
PROMPT = """\
You are now the memory extraction agent: a background helper of the main assistant. \
Nobody reads this reply; it never joins the conversation.

Your task: decide whether the last {count} messages of the conversation above{since} \
hold anything worth keeping in the project's memory folder `{root}`, and save it there. \
Those messages are your only source. Do not investigate or verify anything: no searching \
or reading the code, no git, no shell commands. Read only files in the memory folder; \
write only there, with absolute paths. Other calls are refused.

Worth saving — what a future session would need and could not easily find out again:
- user: who the user is, their role, expertise and how they like to work;
- feedback: a correction or a confirmed way of working ("always run pytest with -x");
- project: decisions, goals, deadlines, incidents: context that is not in the code;
- reference: where things live outside the repository (dashboards, tickets, docs).
Not worth saving: what the code or git history shows, the state of the task at hand, \
what CLAUDE.md already says, guesses. Never secrets, keys, tokens or passwords: such \
writes are refused.

Existing memories (update the right one instead of adding a duplicate, and correct \
one these messages proved wrong):
{manifest}

One memory per file, `{root}/<type>_<topic>.md` (e.g. `feedback_testing.md`):

```markdown
---
name: Short title
description: One line saying what it is and when it matters (recall finds memories by it)
type: user | feedback | project | reference
---
The fact or rule, with absolute dates.
**Why:** the reason. **How to apply:** when it applies (feedback and project memories need both).
```

`{root}/MEMORY.md` is the index: one line per memory, `- [Short title](file.md) — short hook`.

When these messages correct or replace an existing memory (a fact that changed, a rule the \
user reversed): if it is still the same memory, update that file in place and keep its \
filename. If a new file replaces an old one, add `supersedes: old_file.md` to the new file's \
frontmatter and leave the old file and its MEMORY.md line alone: the old one is then marked \
and no longer recalled. Memories listed as `superseded by` another are history: correct \
their successor instead.

Work in two steps ({max_turns} responses at most):
1. In one response, Read every file you will change — the memories to update and \
MEMORY.md if it exists — all the calls at once (they run in parallel). A file must be \
read before it can be changed.
2. In the next response, make every Write and Edit at once: new memories, updated \
ones, and the MEMORY.md lines.
Then answer with one short line. If nothing is worth saving, call no tool and answer \
"Nothing to save."
"""


TEAM_PROMPT = """
# The team memory

This repository also has a team memory in `{team_root}`, shared through git with everyone \
who works on it. Its memories (do not save them again):
{team_manifest}

A feedback or project memory that concerns the whole team, not only this user (a rule of \
the repository, a decision, a pitfall of its build, tests or deploys), gets `team: true` in \
its frontmatter: write it in `{root}` like any other, and it is proposed for the team \
memory after a check for secrets and personal data. Never mark user or reference memories, \
personal preferences, or text with people's names, e-mail addresses or paths on this \
machine. Never write into `{team_root}` yourself.
"""


def extraction_prompt(
    *,
    count: int,
    first_words: str,
    manifest: str,
    root: Path,
    policies: list[tuple[Path, str]],
    max_turns: int = MAX_TURNS,
    team: str = "",
) -> str:
    """The fork's task: the messages since the cursor, the manifest, format, method, the team
    tier (`team`: `team_prompt`'s text, or ''), policies."""
    since = f' (from the user\'s "{first_words}")' if first_words else ""
    text = (
        PROMPT.format(count=count, since=since, root=root, manifest=manifest or "(none yet)", max_turns=max_turns)
        + team
    )
    for path, policy in policies:
        text += f"\n# What should be remembered, according to {path}\n\n{policy}\n"
    return text


def team_prompt(tier: TeamTier | None, root: Path) -> str:
    """The extraction prompt's part about the team tier: what it holds and how to propose a
    memory for it; '' without a team tier, or when nothing may be proposed (an untrusted
    folder whose proposals would go straight to the team folder)."""
    if tier is None or tier.write_problem() and tier.proposals != "private":
        return ""
    return TEAM_PROMPT.format(
        team_root=tier.root, root=root, team_manifest=memory_manifest(tier.store()) or "(none yet)"
    )


def memory_manifest(store: MemoryStore) -> str:
    """One line per existing memory, newest first: `- [type] file.md (time): description`,
    with `superseded by new.md` beside the time of a memory a live one replaced."""
    records = sorted(store.list(), key=lambda r: r.mtime, reverse=True)[:MANIFEST_MAX]
    superseded, _ = record_links(records)
    return "\n".join(
        manifest_line(
            Candidate(r.filename, r.type, r.mtime, r.description, head_text=""),
            f"superseded by {successor_of(r.frontmatter)}" if r.filename in superseded else "",
        )
        for r in records
    )


def memory_policies(
    project_root: Path,
    warn: Callable[[str], None] | None = None,
) -> list[tuple[Path, str]]:
    """The project's `.claude/memory-policy.md` and the user's `memory-policy.md`, when present.

    Read through safe_read (no /proc, /dev, /sys or credential file, no FIFO, a capped read);
    the project's must resolve inside the project, trusted or not: a committed policy linking
    out of it would carry whatever it names into the extraction prompt.
    """
    found = []
    for path, inside in (
        (project_root / ".claude" / POLICY_FILENAME, project_root),
        (paths.home_dir() / POLICY_FILENAME, None),
    ):
        try:
            data = read_file(path, POLICY_MAX_CHARS * 4, cut=True, inside=inside)
        except (OSError, Unreadable) as exc:
            if warn is not None and not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                warn(
                    f"The memory policy {path} was not read ({exc}); extraction runs without it. "
                    "Make it a regular text file to use it."
                )
            continue
        text = data[: POLICY_MAX_CHARS * 4].decode("utf-8", errors="replace").strip()
        if text:
            found.append((path, text[:POLICY_MAX_CHARS]))
    return found


def first_user_words(messages: list[Message], limit: int = 80) -> str:
    """The start of the first thing the user typed in `messages` (not a tool result or reminder)."""
    for message in messages:
        if message.role != "user":
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and not block.text.startswith("<system-reminder>"):
                words = one_line(block.text)
                return words if len(words) <= limit else words[: limit - 1] + "…"
    return ""
