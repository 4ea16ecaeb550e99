"""Benchmark the staleness check (memory/recall/staleness.py): what it adds to a recalled memory.

    uv run python scripts/bench_staleness.py [--repo PATH] [--days N] [--runs N]

Recall renders at most 5 chosen files per turn in a worker thread, and checks them in one
batch: references found by patterns, a stat each, at most one `git ls-files` (for paths
missing at the root) and one `git log --since --numstat` (for the files they cite).
This prints, for memories citing 3 tracked files and one missing path, written `--days`
before the repository's last commit:

- the median time to render a turn's 5 recalled memories with and without the check
  (`add_stale_lines`: one batch, at most two git calls);
- the parts: finding references (pure), the git calls;
- `memory doctor`'s batch (`stale_memories`) over 200 such memories, one git call for all.

The default repository is this one; any git work tree will do (a larger history makes
`git log` walk more commits: pass `--repo` to see).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from claude_mini.memory.recall.lexical import candidate_from_text
from claude_mini.memory.recall.selection import add_stale_lines, render_memory
from claude_mini.memory.recall.staleness import (
    find_references,
    git_history,
    memory_text,
    stale_memories,
    stale_reasons,
    tracked_elsewhere,
)
from claude_mini.memory.store import format_memory


def median_ms(action: Callable[[], object], runs: int) -> float:
    """The median wall time of `action` over `runs` runs, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def tracked_files(repo: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True)
    return [f for f in out.stdout.splitlines() if f.endswith((".py", ".ts", ".js", ".md", ".rst"))]


def last_commit(repo: Path) -> float:
    out = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=repo, capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def memories(files: list[str], count: int) -> list[str]:
    """Memory texts citing three tracked files each, and one path that does not exist."""
    out = []
    for i in range(count):
        cited = [files[(3 * i + k) % len(files)] for k in range(3)]
        body = (
            f"The flow starts in {cited[0]}, goes through `{cited[1]}` and ends in "
            f"{cited[2]}. The old entry point was src/removed_{i}.py. Run make test first."
        )
        out.append(
            format_memory(name=f"Flow {i}", description=f"How request flow {i} works", type="project", body=body)
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--days", type=float, default=90.0)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    repo = args.repo.resolve()
    files = tracked_files(repo)
    commits = subprocess.run(
        ["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    since = last_commit(repo) - args.days * 86_400
    texts = memories(files, 200)
    print(
        f"repository {repo}: {len(files)} tracked source files, {commits} commits; "
        f"memories written {args.days:g} days before its last commit"
    )

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, text in enumerate(texts[:5]):
            path = Path(tmp) / f"flow-{i}.md"
            path.write_text(text)
            os.utime(path, (since, since))
            paths.append(path)
        cands = [candidate_from_text(p.name, p.read_text(), since, path=p) for p in paths]
        now = time.time()

        def render(repo: tuple[Path, ...]) -> list:
            shown = [m for c in cands if (m := render_memory(c, now)) is not None]
            add_stale_lines(shown, repo)
            return shown

        plain = median_ms(lambda: render(()), args.runs)
        checked = median_ms(lambda: render((repo,)), args.runs)
        print(
            f"render a turn's 5 recalled memories: {plain:.2f} ms without the check, "
            f"{checked:.1f} ms with it (+{checked - plain:.1f} ms for the batch)"
        )
        print("  header: " + render((repo,))[0].text.split("\n\n")[0].splitlines()[-1])

    text = memory_text(texts[0])
    refs = median_ms(lambda: find_references(text), args.runs * 10)
    cited = [r.target for r in find_references(text) if r.kind == "path"][:3]
    log = median_ms(lambda: git_history(repo, cited, since), args.runs)
    ls = median_ms(lambda: tracked_elsewhere(repo, ["src/removed_0.py"]), args.runs)
    total = median_ms(lambda: stale_reasons(texts[0], since, (repo,)), args.runs)
    print(
        f"one memory: find references {refs:.3f} ms, git ls-files {ls:.1f} ms, "
        f"git log --numstat {log:.1f} ms, stale_reasons in all {total:.1f} ms"
    )

    batch = {f"flow-{i}.md": (t, since) for i, t in enumerate(texts)}
    doctor = median_ms(lambda: stale_memories(batch, (repo,)), max(3, args.runs // 5))
    print(f"memory doctor, 200 memories: {doctor:.0f} ms (one git log for all cited files)")


if __name__ == "__main__":
    main()
