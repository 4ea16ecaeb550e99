"""End to end: Layer 3 in the REPL (a real pseudo-terminal) against the loopback fake server.

A pause in typing starts recall for the draft, so the side model's pick is ready before
Enter and joins the user's message itself, with no tool call needed; `/memory recall`
says which path brought each memory.
"""

from __future__ import annotations

import json
import time

from claude_mini.base import paths
from claude_mini.memory.store import MemoryStore
from tests.e2e.conftest import cli_env, trust_folder
from tests.e2e.test_repl import Terminal, wait_until
from tests.fake_anthropic import Reply

QUERY = "how do we cut a new version of the invoicing backend"


def test_a_selection_made_while_typing_reaches_the_first_request(isolated_env, fake_server, repo):
    store = MemoryStore(paths.memory_dir(repo))
    store.write(
        "release-steps.md",
        name="Release steps",
        type="project",
        description="Tag from main, run the ship pipeline, announce in #releases",
        body="RELEASE-BODY: git tag vX.Y.Z on main, then run the ship pipeline.",
    )
    store.write(
        "deploy-billing.md",
        name="Deploy billing",
        type="project",
        description="Deploy the invoicing backend to staging with make deploy-billing",
        body="DEPLOY-BODY",
    )
    # The side model takes 0.6 s; the draft's pause starts it well before Enter.
    fake_server.on(
        Reply.json({"selected_memories": ["release-steps.md"]}).slow_first_byte(0.6), purpose="recall", times=None
    )
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    fake_server.on(Reply.text("Hello."), purpose="main")
    fake_server.on(Reply.text("Tag it and run the pipeline."), purpose="main")
    trust_folder(isolated_env.home, repo)
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, TERM="xterm")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"recall": {"draftPauseMs": 300}}))
    term = Terminal([], repo, env)
    try:
        term.ready()
        term.submit("hi")  # a first turn: the runtime and the SDK are loaded after it
        term.expect("Hello.")
        term.ready()
        term.child.send(QUERY)
        wait_until(lambda: fake_server.requests_for("recall"), timeout=20)
        time.sleep(1.0)  # the selection is ready before Enter
        term.child.send("\r")
        term.expect("Tag it and run the pipeline.")
        term.ready()
        term.submit("/memory recall")
        term.expect(r"release-steps\.md \(model, while typing\)")
        term.ready()
        term.submit("/exit")
        assert term.exit_status() == 0
    finally:
        term.child.close(force=True)
    (recall,) = fake_server.requests_for("recall")
    assert QUERY in recall.body["messages"][0]["content"][0]["text"]
    _, main = fake_server.requests_for("main")  # one request: the answer needed no tool
    first = json.dumps(main.body["messages"][-1])
    assert "RELEASE-BODY" in first and "DEPLOY-BODY" in first  # the model's pick and the local one
    # The next process finds the recall index on disk instead of reading every memory file.
    assert list(paths.recall_cache_dir().glob("*.json"))


def test_the_status_line_says_recalling_while_a_drafts_recall_runs(isolated_env, fake_server, repo):
    MemoryStore(paths.memory_dir(repo)).write(
        "release-steps.md", name="Release steps", type="project", description="Tag from main", body="RELEASE-BODY"
    )
    fake_server.on(
        Reply.json({"selected_memories": ["release-steps.md"]}).slow_first_byte(3), purpose="recall", times=None
    )
    fake_server.on(Reply.text("Hello."), purpose="main")
    trust_folder(isolated_env.home, repo)
    env = cli_env(isolated_env.home, isolated_env.managed, fake_server.base_url, TERM="xterm")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"recall": {"draftPauseMs": 300}}))
    term = Terminal([], repo, env)
    try:
        term.ready()
        term.submit("hi")  # the runtime and the SDK are loaded after it
        term.expect("Hello.")
        term.ready()
        term.child.send(QUERY)
        term.expect("recalling…")
    finally:
        term.child.close(force=True)
