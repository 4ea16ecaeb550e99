"""End to end in the REPL: a retry says how long it waits, a retried answer is not glued to the
cut one, and Esc keeps what had arrived on screen (pexpect, against the fake server)."""

from __future__ import annotations

import re

from tests.e2e import test_repl
from tests.e2e.test_repl import main_replies, wait_until
from tests.fake_anthropic import Reply

start = test_repl.start  # the REPL-in-a-pty fixture

# Cut after four 12-character deltas: the first paragraph is complete, the second is not.
CUT = "First try, paragraph one.\n\nSecond paragraph is cut off here."
RETRIED = "Second try says something else."


def test_a_retry_says_its_wait_and_a_cut_answer_starts_again(start, fake_server):
    main_replies(
        fake_server,
        Reply.error(429, retry_after=3600),
        Reply.text("Fine now."),
        Reply.text(CUT).stream_error("overloaded_error", after=7),
        Reply.text(RETRIED),
    )
    term = start(CLAUDE_MINI_RETRY_MAX_WAIT_SECONDS="0.01")
    term.ready()
    term.submit("first")
    term.expect(r"⟳ retrying in 0\.01 s, not the 3600 s the server asked for \(attempt 2 of 4\): 429")
    term.expect("Fine now.")
    term.ready()
    term.submit("second")
    term.expect("First try, paragraph one.")
    term.expect(r"⟳ retrying in 0\.01 s \(attempt 2 of 4\): overloaded_error: Overloaded")
    term.expect("the answer above was cut off; it starts again below")
    term.expect(RETRIED)
    term.ready()
    screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", term.output.getvalue())
    assert "Second paragraph is c" not in screen  # the unfinished block of the cut attempt is dropped
    assert len(fake_server.requests_for("main")) == 4


def test_esc_keeps_the_text_that_had_arrived(start, fake_server):
    main_replies(
        fake_server, Reply.text("Partial words arrive first, then the model stalls for good.").hang(mid_stream=True)
    )
    term = start()
    term.ready()
    term.submit("take your time")
    term.expect("Responding")  # some text arrived (it waits in the open paragraph, unprinted)
    wait_until(lambda: fake_server.requests_for("main"))
    term.child.send("\x1b")
    term.expect("Partial words arrive")
    term.expect("Interrupted")
    term.ready()
