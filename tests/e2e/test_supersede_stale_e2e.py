"""End to end through the real CLI: a correction added with `memory add --supersedes` replaces the
old memory in what recall offers, the recalled memory's header says what it names that is gone,
and `memory doctor` lists it."""

from __future__ import annotations

import json

from tests.fake_anthropic import Reply

WHY = ["--why", "a deploy from the wrong branch shipped untested code", "--how", "every deploy"]


def test_a_correction_supersedes_and_a_stale_memory_says_so(run_cli, fake_server, repo):
    old = run_cli(
        "memory",
        "add",
        "--type",
        "project",
        *WHY,
        "Deploy billing with make deploy-billing from the main branch. OLD-BODY",
    )
    assert old.returncode == 0, old.stderr
    old_file = old.stdout.split()[1]
    new = run_cli(
        "memory",
        "add",
        "--type",
        "project",
        *WHY,
        "--supersedes",
        old_file,
        "Deploy billing with scripts/deploy-billing.sh from the release branch. NEW-BODY",
    )
    assert new.returncode == 0, new.stderr
    new_file = new.stdout.split()[1]
    assert (
        f"Marked {old_file} as superseded by {new_file}: recall no longer offers it and it left MEMORY.md."
    ) in new.stdout

    fake_server.on(Reply.json({"selected_memories": [new_file]}), purpose="recall")
    fake_server.on(Reply.text("Nothing to save."), purpose="extract", times=None)
    fake_server.queue(Reply.tool("Read", {"file_path": "app.py"}).slow_first_byte(1.5), Reply.text("Use the script."))
    result = run_cli("-p", "how do I deploy the billing service?")
    assert result.returncode == 0, result.stderr
    (recall,) = fake_server.requests_for("recall")
    manifest = recall.body["messages"][0]["content"][0]["text"]
    assert f"] {new_file} (" in manifest and old_file not in manifest
    first, second = fake_server.requests_for("main")
    system = "\n".join(block["text"] for block in first.body["system"])
    assert f"]({new_file})" in system and old_file not in system  # MEMORY.md lists the successor
    sent = json.dumps(second.body["messages"][-1], ensure_ascii=False)
    assert f"Recalled memory: {new_file} — saved today" in sent and "NEW-BODY" in sent
    assert (
        "Possibly stale: it mentions scripts/deploy-billing.sh, which no longer exists. Check before relying on it."
    ) in sent
    seen = fake_server.requests_for("main") + fake_server.requests_for("recall")
    assert "OLD-BODY" not in json.dumps([r.body for r in seen])

    doctor = run_cli("memory", "doctor")
    assert (
        f"stale: {new_file} mentions scripts/deploy-billing.sh, which no longer exists (edit it, or forget it)"
    ) in doctor.stdout
    assert old_file not in doctor.stdout  # superseded: history, neither missing nor stale
    assert doctor.returncode == 0, doctor.stdout  # stale is advice, like likely duplicates

    bad = run_cli("memory", "add", "--supersedes", "nope.md", "Release notes go out on Fridays")
    assert bad.returncode == 0, bad.stderr
    assert "Note: --supersedes nope.md was ignored: there is no memory 'nope.md'" in bad.stdout
