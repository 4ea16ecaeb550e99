"""The REPL's start-up question: trust this folder? (DESIGN.md section 8, Trust).

Asked once per run, before the first prompt, when the project folder is not in
the trust record. "Yes" records it (`trust.record_trust`) and lets the
project's settings and imports take effect; "no" (also Esc, Ctrl-C, Ctrl-D)
keeps them ignored for this run and asks again next time. Enter answers yes, as Claude Code's
question does. Print mode never asks, and nor does a start-up that will end on "no model
configured" whatever the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prompt_toolkit import print_formatted_text
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.shortcuts.choice_input import ChoiceInput
from prompt_toolkit.styles import Style

from claude_mini import trust

if TYPE_CHECKING:
    from claude_mini.config import Config

QUESTION = "Do you trust the files in this folder?"
STYLE = Style.from_dict({"dim": "#888888", "warn": "#d7af00", "bold": "bold"})


def trust_explanation(config: Config) -> list[str]:
    """What trusting changes here: the generic sentence, why a folder inside a trusted one is asked
    about (a nested checkout), then what is ignored until then."""
    lines = [
        f"{config.project_root}",
        "A trusted folder's .claude/settings.json and settings.local.json may allow commands "
        "and edits without asking, and its CLAUDE.md may import files from your home folder. "
        "Until you trust it they are ignored (their deny and ask rules still apply).",
    ]
    stop = trust.load_record().stopped_at(config.project_root)
    if stop:
        lines.append(
            f"It is a checkout of its own inside the trusted folder {stop[0]}: that trust does not reach into it."
        )
    for path, items in config.ignored.items():
        lines.append(f"Ignored now in {path}: {'; '.join(items)}")
    return lines


def answer_trust(config: Config, yes: bool) -> str | None:
    """Apply the user's answer; the one line to show about it, if any."""
    if not yes:
        return None
    if trust.too_broad_to_record(config.project_root):
        config.grant_trust(this_run_only=True)
        return f"Trusted {config.project_root} for this session only: recording it would trust every folder below it."
    try:
        trust.record_trust(config.project_root)
    except trust.TrustRecordError as exc:
        config.grant_trust(this_run_only=True)
        return str(exc)
    config.grant_trust()
    return None


def ask_trust(config: Config) -> bool:
    """Ask the question in the terminal: True for yes; Esc, Ctrl-C and Ctrl-D mean no."""
    lines = trust_explanation(config)
    text = [("class:bold", f"{QUESTION}\n"), ("", f"  {lines[0]}\n"), ("class:dim", f"  {lines[1]}\n")]
    text += [("class:warn", f"  {line}\n") for line in lines[2:]]
    print_formatted_text(FormattedText(text), style=STYLE, end="")
    keys = KeyBindings()
    for key, answer in (("y", True), ("1", True), ("n", False), ("2", False)):  # a digit answers, as in every menu
        keys.add(key, eager=True)(lambda event, answer=answer: event.app.exit(result=answer))
    keys.add("escape", eager=True)(lambda event: event.app.exit(result=False))
    menu = ChoiceInput(
        message="",
        options=[(True, "Yes, trust this folder"), (False, "No, ignore its settings and outside imports")],
        default=True,  # as Claude Code's question: Enter trusts
        key_bindings=keys,
        style=STYLE,
    )
    try:
        return bool(menu.prompt())
    except (KeyboardInterrupt, EOFError):
        return False


def confirm_trust(config: Config) -> None:
    """Ask about an untrusted folder and apply the answer (the REPL calls this before its first prompt)."""
    if config.trusted:
        return
    note = answer_trust(config, ask_trust(config))
    if note:
        print_formatted_text(FormattedText([("class:warn", f"{note}\n")]), style=STYLE, end="")
