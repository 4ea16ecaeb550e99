"""Benchmark the Bash permission checks on hostile sizes (docs/permissions-and-sandbox.md).

Three figures, the first two beside a baseline measured in the same run:
- the read-only check and the deny-rule candidate finder on command lines of
  1k to 33k newline-separated commands, beside the check as it was before
  the hardening (loaded from git history, commit OLD_COMMIT: its prescan was
  quadratic in newlines) and `shlex.split` of the same text, the cost floor of
  any tokeniser written in Python. Ours should grow linearly, the old one not;
- a Bash rule with many `*` against a text it does not match: our piece-by-
  piece matcher beside the regular expression the rules used to compile to
  (`.*` per star, run with a small text, since it backtracks exponentially).

    uv run python scripts/bench_bash_safety.py
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

from claude_mini.permissions import CommandPattern
from claude_mini.shell.candidates import command_candidates
from claude_mini.shell.parse import MAX_COMMAND_CHARS
from claude_mini.shell.read_only import is_read_only_command

OLD_COMMIT = "ca16225"  # the last commit before the hardening of the Bash checks


def old_check() -> Callable[[str], object] | None:
    """`is_read_only_command` as it was at OLD_COMMIT, or None outside a git checkout."""
    repo = Path(__file__).resolve().parent.parent
    shown = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:claude_mini/agent/bash_safety.py"], cwd=repo, capture_output=True, text=True
    )
    if shown.returncode != 0:
        return None
    module = types.ModuleType("old_bash_safety")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(shown.stdout, "old_bash_safety.py", "exec"), module.__dict__)
    return module.is_read_only_command


def best_of(runs: int, fn: Callable[[], object]) -> float:
    """The fastest of `runs` timings of `fn`, in seconds (the least disturbed by a noisy machine)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_lines() -> None:
    print(f"command lines (the check refuses lines over {MAX_COMMAND_CHARS:,} characters at once)")
    print(f"{'lines':>7} {'chars':>7} {'read-only':>10} {'candidates':>11} {'shlex':>8} {'old check':>10}")
    old = old_check()
    for lines in (1_000, 5_000, 10_000, 20_000, 33_000):
        text = "\n".join(["ls"] * lines)
        strict = best_of(3, lambda t=text: is_read_only_command(t))
        lenient = best_of(3, lambda t=text: command_candidates(t))
        floor = best_of(3, lambda t=text: shlex.split(t))
        before = "n/a" if old is None or lines > 10_000 else f"{best_of(1, lambda t=text: old(t)) * 1000:.0f}ms"
        print(
            f"{lines:>7} {len(text):>7} {strict * 1000:>8.1f}ms {lenient * 1000:>9.1f}ms "
            f"{floor * 1000:>6.1f}ms {before:>10}"
        )
    print("  (old check above 10k lines: skipped, it grows with the square of the line count)")
    over = "ls " * 50_000
    print(
        f"  over the limit ({len(over):,} chars): read-only check "
        f"{best_of(3, lambda: is_read_only_command(over)) * 1000:.2f} ms"
    )


def bench_stars() -> None:
    print("\nBash rule with many `*` that does not match")
    print(f"{'stars':>6} {'text':>6} {'ours':>10} {'old regex':>10}")
    for stars, size in ((6, 24), (9, 28), (12, 30), (40, 5_000)):
        spec = "a" + "*a" * stars + "*b"
        text = "a" * size
        pattern = CommandPattern.parse(spec)
        ours = best_of(3, lambda p=pattern, t=text: p.matches(t))
        old = re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", spec)))
        if stars <= 9:
            shown = f"{best_of(1, lambda o=old, t=text: o.fullmatch(t)) * 1000:>8.1f}ms"
        else:
            shown = "   (skipped: minutes)"
        print(f"{stars:>6} {size:>6} {ours * 1000:>8.3f}ms {shown}")


def bench_hostile() -> None:
    """Inputs a review found slow (18 s, 10 s, 111 s before the targets were de-duplicated and the
    wrapper starts bounded), through the whole decision with a Read and a Bash deny rule."""
    import tempfile
    from pathlib import Path

    from claude_mini.permissions import PermissionPolicy

    print("\nwhole decisions on hostile repetition (5,000-file project, Read and Bash deny rules)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i in range(5_000):
            (root / f"d{i % 50}").mkdir(exist_ok=True)
            (root / f"d{i % 50}" / f"f{i}.txt").write_text("x\n")
        policy = PermissionPolicy.from_layers(
            [("project", {"deny": ["Read(.env)", "Bash(curl:*)"]})], cwd=root, project_root=root
        )
        for label, cmd in (
            ("grep -r x + 400 x ' .'", "grep -r x" + " ." * 400),
            ("nice + 1,000 x ' 1'", "nice" + " 1" * 1_000),
            ("sudo + 10,000 x ' 1'", "sudo" + " 1" * 10_000),
            ("cat + 40,000 x ' 1'", "cat" + " 1" * 40_000),
        ):
            seconds = best_of(1, lambda c=cmd: policy.can_use_tool("Bash", {"command": c}))
            print(f"  {label:<28} {seconds * 1000:>8.1f} ms")


if __name__ == "__main__":
    bench_lines()
    bench_stars()
    bench_hostile()
