"""Benchmark start-up: how long until claude-mini answers, each figure next to a same-run baseline.

    uv run python scripts/bench_startup.py [--runs N]

Measured (medians; the command and its baseline alternate, so machine load hits both):
- `claude-mini --version` and `--help` vs `python -c pass` (target: under 4x);
  `--version` must not import the anthropic SDK (checked in `sys.modules`);
- `claude-mini -p hi` against the fake server (instant reply, auto memory off) vs a
  minimal script that sends the same request body with the anthropic SDK (target: 1.2x);
- the same with the prompt piped in from a command that takes a second (`(sleep 1; echo
  hi) | claude-mini -p`), vs the SDK-only script reading that pipe after its imports
  (no target: it shows how much start-up work overlaps the wait);
- the REPL: time until the prompt and its status line are drawn in a pseudo-terminal,
  vs `python -c "import prompt_toolkit"` (target: 2.5x);
- when Claude Code is installed (`claude` on PATH), the same three user-visible waits
  for both tools against the same fake server: `-p hi` (target: 1.3x Claude Code's), the
  answer to a message typed as soon as the REPL is started (1.5x) and the REPL's prompt
  (0.5x). Claude Code runs in its own temporary home, onboarded, with the bench folder
  and the bench key already accepted, and with its non-essential traffic turned off.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_anthropic import FakeAnthropic, RecordedRequest, Reply  # noqa: E402

PY = sys.executable
CLI = [PY, "-m", "claude_mini"]
SDK_SCRIPT = """\
import json, sys
import anthropic
sys.stdin.read()  # the prompt is in the body; this waits for a piped one, as claude-mini must
body = json.load(open(sys.argv[1]))
with anthropic.Anthropic().messages.stream(**body) as stream:
    print(stream.get_final_message().content[0].text)
"""
CLAUDE_CODE_INSTALL = "npm install -g @anthropic-ai/claude-code"
# Claude Code asks once before using a key from the environment; it remembers the answer
# by the key's last 20 characters.
CLAUDE_CODE_KEY = "bench-key-0123456789abcdefghij"
# What each REPL shows once its prompt is ready: claude-mini's status line, Claude Code's
# hint line under its input box (its words are placed with cursor moves, so one word).
MINI_READY = r"mode: \w+"
CLAUDE_CODE_READY = "shortcuts"
MESSAGE = "bench-ping"  # typed into both REPLs; the fake answers it with ANSWER
ANSWER = "bench-pong-4f7a"


def run(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds for one run of `cmd` (it must succeed)."""
    start = time.perf_counter()
    subprocess.run(
        cmd,
        env=env,
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def until_shown(cmd: list[str], pattern: str, env: dict[str, str], cwd: Path) -> float:
    """Seconds until `pattern` appears in a pseudo-terminal running `cmd` (cursor queries answered)."""
    start = time.perf_counter()
    child = _spawn(cmd, env, cwd)
    try:
        _expect(child, pattern)
        return time.perf_counter() - start
    finally:
        child.close(force=True)


def until_answered(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds from the start of a REPL until the answer to a message typed at once is shown.

    The message is typed before the program has drawn anything, as a user who does not
    wait would, and Enter is pressed once the message shows in the program's input. (An
    Enter typed earlier reaches the terminal's line discipline as a newline: Claude Code
    keeps it as a line break in its input box, so it would never send.) The terminal does
    not echo, so the message on screen is the program's own drawing of it.
    """
    start = time.perf_counter()
    child = _spawn(cmd, env, cwd, echo=False)
    try:
        child.send(MESSAGE)
        _expect(child, MESSAGE)
        child.send("\r")
        _expect(child, ANSWER)
        return time.perf_counter() - start
    finally:
        child.close(force=True)


def _spawn(cmd: list[str], env: dict[str, str], cwd: Path, *, echo: bool = True):
    import pexpect

    return pexpect.spawn(
        cmd[0], cmd[1:], env=env, cwd=str(cwd), encoding="utf-8", dimensions=(30, 110), timeout=60, echo=echo
    )


def _expect(child, pattern: str) -> None:
    while child.expect([pattern, r"\x1b\[6n"]) == 1:
        child.send("\x1b[1;1R")  # what a real terminal answers to prompt-toolkit's position query


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
    code = (
        "import sys\nfrom claude_mini.__main__ import main\nmain(['--version'])\n"
        "print('ANTHROPIC' if 'anthropic' in sys.modules else 'CLEAN')"
    )
    out = subprocess.run([PY, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    return "ANTHROPIC" in out.stdout


def setup(tmp: Path, base_url: str) -> tuple[dict[str, str], Path]:
    """An isolated home folder, a small git repository and the environment pointing at the fake."""
    repo = tmp / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "app.py").write_text("print('hi')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE_MINI_"))}
    env.update(
        CLAUDE_MINI_HOME=str(tmp / "home"),
        CLAUDE_MINI_MANAGED_DIR=str(tmp / "managed"),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="bench",
        TERM="xterm",
        CLAUDE_MINI_DISABLE_AUTO_MEMORY="1",
    )
    trust_for_bench(tmp / "home", repo)  # the REPL would otherwise ask before drawing its prompt
    return env, repo


def trust_for_bench(home: Path, repo: Path) -> None:
    """Record `repo` as trusted in the bench's own home folder, as a "yes" at the question would."""
    from unittest import mock

    from claude_mini import trust

    with mock.patch.dict(os.environ, {"CLAUDE_MINI_HOME": str(home)}):
        trust.record_trust(repo)


def answer_typed_message(server: FakeAnthropic) -> None:
    """Make the fake answer the REPLs' typed message with ANSWER, in the conversation only:
    the request that offers tools (Claude Code also asks, without tools, for a session title
    made from the message, and may show it; claude-mini marks its conversation `main`)."""

    def conversation(request: RecordedRequest) -> bool:
        body = request.body if isinstance(request.body, dict) else {}
        return request.purpose in (None, "main") and bool(body.get("tools"))

    server.on(Reply.text(ANSWER), contains=MESSAGE, match=conversation, times=None)


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


# ---------------------------------------------------------------------------
# Claude Code, side by side


def claude_code_version() -> str | None:
    """`claude --version` when the `claude` on PATH is Claude Code, else None."""
    exe = shutil.which("claude")
    if exe is None:
        return None
    try:
        out = subprocess.run(
            [exe, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out.replace("(Claude Code)", "").strip() if "Claude Code" in out else None


def claude_code_env(tmp: Path, base_url: str, repo: Path) -> dict[str, str]:
    """Claude Code's environment: its own home, already onboarded, the bench folder trusted,
    the bench key accepted, pointed at the fake, and no update checks or telemetry."""
    home = tmp / "claude-code-home"
    home.mkdir()
    state = {
        "hasCompletedOnboarding": True,
        "projects": {str(repo.resolve()): {"hasTrustDialogAccepted": True}},
        "customApiKeyResponses": {"approved": [CLAUDE_CODE_KEY[-20:]], "rejected": []},
    }
    (home / ".claude.json").write_text(json.dumps(state))
    # Whatever configures the user's own Claude Code stays out (keys, models, XDG folders).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "CLAUDE", "DISABLE_", "XDG_"))}
    env.update(
        HOME=str(home),
        TERM="xterm",
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY=CLAUDE_CODE_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
    )
    return env


def reached_fake(server: FakeAnthropic, env: dict[str, str], repo: Path) -> bool:
    """Run Claude Code's `-p` once; whether its request came to the fake server."""
    server.clear_requests()
    try:
        run(["claude", "-p", "hi"], env, repo)
    except subprocess.CalledProcessError:
        return False
    return any(r.path == "/v1/messages" and "claude-cli" in r.headers.get("user-agent", "") for r in server.requests)


def compare_with_claude_code(
    runs: int, server: FakeAnthropic, mini_env: dict[str, str], repo: Path, tmp: Path
) -> list[bool]:
    """The three side-by-side rows, or one line saying why they were skipped."""
    version = claude_code_version()
    if version is None:
        print(f"\nClaude Code: not installed, comparison skipped (install it with `{CLAUDE_CODE_INSTALL}`)")
        return []
    env = claude_code_env(tmp, server.base_url, repo)
    if not reached_fake(server, env, repo):
        print(f"\nClaude Code {version}: its -p did not reach the fake server, comparison skipped")
        return []
    print(f"\nside by side with Claude Code {version}, same fake server")
    claude = ["claude"]
    return [
        report(
            "claude-mini -p hi",
            *_pair(runs, [*CLI, "-p", "hi"], [*claude, "-p", "hi"], mini_env, repo, env),
            target=1.3,
            base_name="claude -p hi",
        ),
        report(
            "REPL: answer to a message typed",
            *paired(runs, lambda: until_answered(CLI, mini_env, repo), lambda: until_answered(claude, env, repo)),
            target=1.5,
            base_name="the same in Claude Code",
        ),
        report(
            "REPL prompt ready",
            *paired(
                runs,
                lambda: until_shown(CLI, MINI_READY, mini_env, repo),
                lambda: until_shown(claude, CLAUDE_CODE_READY, env, repo),
            ),
            target=0.5,
            base_name="Claude Code's prompt ready",
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement (default 7)")
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder, FakeAnthropic() as server:
        tmp = Path(folder)
        env, repo = setup(tmp, server.base_url)
        answer_typed_message(server)
        body = print_mode_request(server, env, repo, tmp)
        print(f"{runs} runs each, medians; each command next to its same-run baseline\n")
        results = [
            report(
                "claude-mini --version",
                *_pair(runs, [*CLI, "--version"], [PY, "-c", "pass"], env, repo),
                target=4,
                base_name="python -c pass",
            ),
            report(
                "claude-mini --help",
                *_pair(runs, [*CLI, "--help"], [PY, "-c", "pass"], env, repo),
                target=4,
                base_name="python -c pass",
            ),
        ]
        typer_floor = statistics.median(
            run([PY, "-c", "import typer.main, typer._adapters"], env, repo) for _ in range(runs)
        )
        print(f"  (typer's own import, which --help and the bare REPL start skip: {typer_floor:.3f}s)")
        results.append(
            report(
                "claude-mini -p hi (fake server)",
                *_pair(runs, [*CLI, "-p", "hi"], [PY, str(tmp / "sdk_only.py"), str(body)], env, repo),
                target=1.2,
                base_name="same request, anthropic SDK only",
            )
        )
        report(
            "claude-mini -p, stdin after 1s",
            *_pair(runs, _piped([*CLI, "-p"]), _piped([PY, str(tmp / "sdk_only.py"), str(body)]), env, repo),
            target=None,
            base_name="the same, anthropic SDK only",
        )
        results.append(
            report(
                "REPL prompt ready",
                *paired(
                    runs,
                    lambda: until_shown(CLI, MINI_READY, env, repo),
                    lambda: until_shown([PY, "-c", "import prompt_toolkit; print('ready')"], "ready", env, repo),
                ),
                target=2.5,
                base_name="python -c 'import prompt_toolkit'",
            )
        )
        results += compare_with_claude_code(runs, server, env, repo, tmp)
        clean = not version_imports_anthropic(env, repo)
        print(f"\n--version imports the anthropic SDK: {'no (good)' if clean else 'YES (it must not)'}")
        met = sum(results) + clean
        print(f"targets met: {met} of {len(results) + 1}")
        return 0 if all(results) and clean else 1


def _piped(cmd: list[str], delay: float = 1.0) -> list[str]:
    """`cmd` reading "hi" from a pipe whose writer takes `delay` seconds to start."""
    return ["sh", "-c", f"(sleep {delay}; echo hi) | {shlex.join(cmd)}"]


def _pair(
    runs: int, cmd: list[str], base: list[str], env: dict[str, str], cwd: Path, base_env: dict[str, str] | None = None
) -> tuple[float, float]:
    return paired(runs, lambda: run(cmd, env, cwd), lambda: run(base, base_env or env, cwd))


if __name__ == "__main__":
    sys.exit(main())
