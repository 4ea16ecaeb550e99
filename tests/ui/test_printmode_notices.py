"""Print mode's notices on stderr: one line each, whatever the text carries."""

from io import StringIO

from claude_mini.base.notices import NoticeChannel
from claude_mini.ui.printmode import stderr_display


def test_a_newline_in_a_notice_cannot_fake_a_second_line():
    err = StringIO()
    channel = NoticeChannel()
    channel.attach(stderr_display("text", err))
    channel.say('Bad permission rule "Nope(x)\nclaude-mini: FAKE LINE"', "warning")
    channel.say("recall fell back\x1b[2J", "info")
    lines = err.getvalue().splitlines()
    assert lines == ['claude-mini: Bad permission rule "Nope(x)\\nclaude-mini: FAKE LINE"', "recall fell back\\x1b[2J"]


def test_saved_memories_are_shown_with_text_output_only():
    for output_format, shown in (("text", 1), ("json", 0), ("stream-json", 0)):
        err = StringIO()
        channel = NoticeChannel()
        channel.attach(stderr_display(output_format, err))
        channel.say("Saved memory: a.md — the deploy day", "saved")
        assert len(err.getvalue().splitlines()) == shown
