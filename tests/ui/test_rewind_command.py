"""/rewind without the model: nothing to go back to, an unknown point, a conversation-only choice
when no file changed, the message back in the input, and the transcript's record of it."""

from __future__ import annotations

import json

from claude_mini.llm.messages import Message, TextBlock


def say(runtime, *texts: str) -> None:
    for text in texts:
        runtime.session.add_message(Message("user", [TextBlock(text)]), prompt=True)
        runtime.session.add_message(Message("assistant", [TextBlock(f"re: {text}")]))


def test_nothing_to_rewind_and_an_unknown_point_are_one_line_each(slash):
    assert slash.run("/rewind").strip() == "Nothing to rewind to: this conversation has no message of yours yet."
    say(slash.runtime, "hello")
    out = slash.run("/rewind 7")
    assert out.startswith("No message '7' to rewind to") and out.rstrip().endswith("Nothing was changed.")


def test_without_file_changes_only_the_conversation_is_offered_and_the_message_comes_back(slash):
    say(slash.runtime, "first", 'second @app.py please\n\n<attached-file path="app.py">x</attached-file>')
    slash.host.choice = None
    assert "Nothing was changed." in slash.run("/rewind")
    [points] = slash.host.choices
    assert [label.split("  ")[-1] for _, label in points] == ["second @app.py please", "first"]
    slash.host.choice = "conversation"
    out = slash.run("/rewind 1")
    assert slash.host.choices[-1] == [("conversation", "Restore conversation"), ("cancel", "Never mind")]
    assert "Rewound the conversation to before that message (2 messages left out of it" in out
    assert slash.host.input == "second @app.py please"
    assert [m.text for m in slash.runtime.session.messages] == ["first", "re: first"]
    last = json.loads(slash.runtime.session.transcript.path.read_text().splitlines()[-1])
    assert last["type"] == "rewind" and last["to"] == points[0][0]


def test_a_message_id_is_named_by_4_characters_or_more(slash):
    say(slash.runtime, "hello")
    slash.host.choice = None
    slash.run("/rewind")
    [[(message_id, _)]] = slash.host.choices
    short = message_id[:3]
    if not (short.isdigit() and int(short) == 1):  # "001" would be the list's first message
        assert slash.run(f"/rewind {short}").startswith(f"No message '{short}'")
    assert slash.run(f"/rewind {message_id[:4]}").strip() == "Nothing was changed."  # found it
