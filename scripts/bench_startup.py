"""Benchmark start-up: how long until claude-mini answers, each figure next to a same-run baseline.

    uv run python scripts/bench_startup.py [--runs N]

Measured (medians; the command and its baseline alternate, so machine load hits both):
- `claude-mini --version` and `--help` vs `python -c pass` (target: under 4x);
  `--version` must not import the anthropic SDK (checked in `sys.modules`);
- `claude-mini -p hi` against the fake server (instant reply, auto memory off) vs a
  minimal script that sends the same request body with the anthropic SDK (target: 1.2x);
- the REPL: time until the prompt and its status line are drawn in a pseudo-terminal,
  vs `python -c "import prompt_toolkit"` (target: 2.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_anthropic import FakeAnthropic  # noqa: E402

PY = sys.executable
CLI = [PY, "-m", "claude_mini"]
SDK_SCRIPT = """\
import json, sys
import anthropic
body = json.load(open(sys.argv[1]))
with anthropic.Anthropic().messages.stream(**body) as stream:
    print(stream.get_final_message().content[0].text)
"""


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds for one run of `cmd` (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL)
    return time.perf_counter() - start


def until_shown(cmd: list[str], pattern: str, env: dict[str, str], cwd: Path) -> float:
    """Seconds until `pattern` appears in a pseudo-terminal running `cmd` (cursor queries answered)."""
    import pexpect

    start = time.perf_counter()
    child = pexpect.spawn(cmd[0], cmd[1:], env=env, cwd=str(cwd), encoding="utf-8", dimensions=(30, 110),
                          timeout=60)
    try:
        while child.expect([pattern, r"\x1b\[6n"]) == 1:
            child.send("\x1b[1;1R")  # what a real terminal answers to prompt-toolkit's position query
        return time.perf_counter() - start
    finally:
        child.close(force=True)


def paired(runs: int, first: Callable[[], float], second: Callable[[], float]) -> tuple[float, float]:
    """Medians of `first` and `second`, run alternately after one warm-up each."""
    first(), second()
    a, b = [], []
    for _ in range(runs):
        a.append(first())
        b.append(second())
    return statistics.median(a), statistics.median(b)


def report(name: str, value: float, base: float, *, base_name: str, target: float | None) -> bool:
    """Print one row; returns whether the target is met (True when there is none)."""
    ratio = value / base
    ok = target is None or ratio <= target
    verdict = "-" if target is None else ("met" if ok else "MISSED")
    goal = "" if target is None else f"<= {target:g}x"
    print(f"{name:<34} {value:7.3f}s   {base_name:<34} {base:7.3f}s   {ratio:6.2f}x  {goal:<8} {verdict}")
    return ok


def version_imports_anthropic(env: dict[str, str], cwd: Path) -> bool:
    """Whether answering --version imported the anthropic SDK."""
    code = ("import sys\nfrom claude_mini.__main__ import main\nmain(['--version'])\n"
            "print('ANTHROPIC' if 'anthropic' in sys.modules else 'CLEAN')")
    out = subprocess.run([PY, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    return "ANTHROPIC" in out.stdout


def setup(tmp: Path, base_url: str) -> tuple[dict[str, str], Path]:
    """An isolated home folder, a small git repository and the environment pointing at the fake."""
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "app.py").write_text("print('hi')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_MINI_"))}
    env.update(CLAUDE_MINI_HOME=str(tmp / "home"), CLAUDE_MINI_MANAGED_DIR=str(tmp / "managed"),
               ANTHROPIC_BASE_URL=base_url, ANTHROPIC_API_KEY="bench", TERM="xterm",
               CLAUDE_MINI_DISABLE_AUTO_MEMORY="1")
    trust_for_bench(tmp / "home", repo)  # the REPL would otherwise ask before drawing its prompt
    return env, repo


def trust_for_bench(home: Path, repo: Path) -> None:
    """Record `repo` as trusted in the bench's own home folder, as a "yes" at the question would."""
    from unittest import mock

    from claude_mini import trust

    with mock.patch.dict(os.environ, {"CLAUDE_MINI_HOME": str(home)}):
        trust.record_trust(repo)


def print_mode_request(server: FakeAnthropic, env: dict[str, str], repo: Path, tmp: Path) -> Path:
    """Run `-p` once and save the body it sent, for the SDK-only baseline to send too."""
    server.clear_requests()
    run([*CLI, "-p", "hi"], env, repo)
    body = dict(server.requests_for("main")[-1].body)
    body.pop("stream", None)
    path = tmp / "body.json"
    path.write_text(json.dumps(body))
    (tmp / "sdk_only.py").write_text(SDK_SCRIPT)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement (default 7)")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder, FakeAnthropic() as server:
        tmp = Path(folder)
        env, repo = setup(tmp, server.base_url)
        body = print_mode_request(server, env, repo, tmp)
        print(f"{runs} runs each, medians; each command next to its same-run baseline\n")
        results = [
            report("claude-mini --version", *_pair(runs, [*CLI, "--version"], [PY, "-c", "pass"], env, repo),
                   target=4, base_name="python -c pass"),
            report("claude-mini --help", *_pair(runs, [*CLI, "--help"], [PY, "-c", "pass"], env, repo),
                   target=4, base_name="python -c pass"),
        ]
        typer_floor = statistics.median(run([PY, "-c", "import typer.main, typer._adapters"], env, repo)
                                        for _ in range(runs))
        print(f"  (typer's own import, which --help and the bare REPL start skip: {typer_floor:.3f}s)")
        results.append(report(
            "claude-mini -p hi (fake server)",
            *_pair(runs, [*CLI, "-p", "hi"], [PY, str(tmp / "sdk_only.py"), str(body)], env, repo),
            target=1.2, base_name="same request, anthropic SDK only"))
        results.append(report(
            "REPL prompt ready",
            *paired(runs, lambda: until_shown(CLI, r"mode: \w+", env, repo),
                    lambda: until_shown([PY, "-c", "import prompt_toolkit; print('ready')"], "ready", env, repo)),
            target=2.5, base_name="python -c 'import prompt_toolkit'"))
        clean = not version_imports_anthropic(env, repo)
        print(f"\n--version imports the anthropic SDK: {'no (good)' if clean else 'YES (it must not)'}")
        met = sum(results) + clean
        print(f"targets met: {met} of {len(results) + 1}")
        return 0 if all(results) and clean else 1


def _pair(runs: int, cmd: list[str], base: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    return paired(runs, lambda: run(cmd, env, cwd), lambda: run(base, env, cwd))


if __name__ == "__main__":
    sys.exit(main())
