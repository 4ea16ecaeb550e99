"""The notice channel (notices.py): nothing said before a display exists is lost, `once` says a
text once, and background status nests per kind and tells its listeners."""

from __future__ import annotations

import threading

from claude_mini.base.notices import Notice, NoticeChannel


def test_notices_said_before_a_display_are_shown_when_it_attaches_in_order():
    channel = NoticeChannel()
    channel.say("settings skipped", "warning")
    channel.say("recall fell back", "info")
    shown: list[Notice] = []
    channel.attach(shown.append)
    channel.say("Saved memory: a.md", "saved")
    assert shown == [
        Notice("settings skipped", "warning"),
        Notice("recall fell back", "info"),
        Notice("Saved memory: a.md", "saved"),
    ]
    assert [n.text for n in channel.said("warning")] == ["settings skipped"]


def test_once_drops_a_text_already_said():
    channel = NoticeChannel()
    shown: list[Notice] = []
    channel.attach(shown.append)
    channel.say("rule skipped", "warning", once=True)
    channel.say("rule skipped", "warning", once=True)
    channel.say("compacted", "info")
    channel.say("compacted", "info")
    assert [n.text for n in shown] == ["rule skipped", "compacted", "compacted"]


def test_background_status_nests_per_kind_from_any_thread():
    channel = NoticeChannel()
    heard: list[str] = []
    channel.subscribe(lambda: heard.append(channel.words()))
    channel.set_background("extract", True)
    worker = threading.Thread(target=lambda: channel.set_background("recall", True))
    worker.start()
    worker.join()
    channel.set_background("extract", False)
    assert channel.running() == ["recall"]
    with channel.busy("compact"):
        assert channel.words() == "compacting, recalling"
    assert heard == ["extracting", "extracting, recalling", "recalling", "compacting, recalling", "recalling"]
