"""Benchmark Layer 1: build the instruction section vs merely read the same files,
and match 1,000 paths against the path-scoped rules.

Generates a repository 12 levels deep with 60 instruction files (25 per-folder
files and 35 imported through chains five deep) and 200 rules, half of them
conditional. Prints medians over repeated runs. Targets: building within 3x of
reading; matching 1,000 paths under 50 ms.

    uv run python scripts/bench_context.py [--runs N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from claude_mini.memory.instructions import (
    AttachmentTracker,
    ConditionalRule,
    InstructionSet,
    load_instructions,
)
from claude_mini.memory.instructions.globs import RuleIndex

DEPTH = 12
RULES = 200
PATHS = 1_000
EXTENSIONS = ["ts", "tsx", "py", "md", "go", "json", "css", "rs"]
PARAGRAPH = (
    "Prefer small functions with one clear purpose. Name things for what they are for. "
    "Run the tests before you commit, and keep the public API documented. "
)


def write(path: Path, text: str) -> None:
    """Create `path` (and its folders) with `text`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def body(title: str, paragraphs: int) -> str:
    """Markdown resembling a real instruction file: headings, a comment, a fenced example."""
    parts = [f"# {title}", "<!-- maintainers: keep this short -->"]
    parts += [PARAGRAPH * 2 for _ in range(paragraphs)]
    parts.append("```sh\nnpm test  # mentions @not/an-import.md inside a fence\n```")
    return "\n\n".join(parts) + "\n"


def import_chain(folder: Path, level: int) -> str:
    """Five files importing each other in a chain; returns the @line for the first."""
    for hop in range(1, 6):
        nxt = f"\n@chain{level}-{hop + 1}.md\n" if hop < 5 else ""
        write(folder / "docs" / f"chain{level}-{hop}.md", body(f"chain {level}.{hop}", 2) + nxt)
    return f"\nSee @docs/chain{level}-1.md for details.\n"


def rule_text(index: int, level: int) -> str:
    """A rule; odd ones are conditional with a string (brace set) or a list of globs."""
    text = body(f"rule {index}", 1)
    if index % 2 == 0:
        return text
    ext = EXTENSIONS[index % len(EXTENSIONS)]
    if index % 4 == 1:
        return f'---\npaths: "src/m{index % 7}/**/*.{{{ext},x{ext}}}, lib/*.{ext}"\n---\n{text}'
    return f'---\npaths:\n  - "pkg{index % 5}/**/*.{ext}"\n  - "docs/r{level}/*.md"\n---\n{text}'


def generate(root: Path) -> tuple[Path, Path]:
    """Build the repository under `root`; returns (repository root, deepest folder = cwd)."""
    repo = root / "repo"
    folders = [repo]
    for level in range(1, DEPTH + 1):
        folders.append(folders[-1] / f"d{level:02d}")
    for level, folder in enumerate(folders):
        main = "AGENTS.md" if level % 4 == 3 else "CLAUDE.md"
        extra = import_chain(folder, level) if level % 2 == 0 else ""
        write(folder / main, body(f"level {level}", 6) + extra)
        if level % 2 == 0:
            write(folder / ".claude" / "CLAUDE.md", body(f"team {level}", 3))
        if level % 3 == 0:
            write(folder / "CLAUDE.local.md", body(f"local {level}", 1))
    for index in range(RULES):
        level = index % len(folders)
        sub = f"area{index % 3}/" if index % 2 else ""
        write(folders[level] / ".claude" / "rules" / f"{sub}rule{index:03d}.md", rule_text(index, level))
    return repo, folders[-1]


def touched_paths(cwd: Path, count: int) -> list[Path]:
    """Deterministic file paths spread over the tree, some matching rules, most not."""
    rng = random.Random(9)
    parts = cwd.parts
    paths = []
    for _ in range(count):
        base = Path(*parts[: rng.randint(len(parts) - 12, len(parts))])
        head = rng.choice(["src/m3", "src/m5/deep", "lib", "pkg2/a/b", "docs/r4", "other", "tests"])
        paths.append(base / head / f"f{rng.randint(0, 999)}.{rng.choice(EXTENSIONS)}")
    return paths


def median_ms(samples: list[float]) -> float:
    """Median of durations in seconds, in milliseconds."""
    return statistics.median(samples) * 1000


def build(cwd: Path, repo: Path, home: Path) -> InstructionSet:
    """What a session does at start: load everything and render the section."""
    instructions = load_instructions(cwd, project_root=repo, home=home, managed=home / "managed")
    instructions.render()
    return instructions


def read_only(paths: list[Path]) -> None:
    """The floor: read the same files and nothing else."""
    for path in paths:
        path.read_text(encoding="utf-8")


def time_build_vs_read(cwd: Path, repo: Path, home: Path, runs: int) -> InstructionSet:
    """Alternate building and reading in one run so both see the same cache state."""
    instructions = build(cwd, repo, home)  # warm-up, and the file list for the reader
    paths = [Path(f.path) for f in [*instructions.files, *instructions.conditional]]
    build_s, read_s = [], []
    for _ in range(runs):
        start = time.perf_counter()
        read_only(paths)
        read_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        build(cwd, repo, home)
        build_s.append(time.perf_counter() - start)
    ratio = statistics.median(build_s) / statistics.median(read_s)
    print(
        f"files: {len(instructions.files)} loaded ({len(paths) - len(instructions.files)} "
        f"conditional rules set aside), {len(instructions.skipped)} skipped, "
        f"section {len(instructions.render()):,} chars"
    )
    print(f"read the same files:        {median_ms(read_s):7.2f} ms")
    print(
        f"build instruction section:  {median_ms(build_s):7.2f} ms   "
        f"ratio {ratio:.2f}x (target <= 3x) {'OK' if ratio <= 3 else 'MISSED'}"
    )
    return instructions


def time_matching(instructions: InstructionSet, cwd: Path, runs: int) -> None:
    """Compile once (paid lazily on the first touch), then match 1,000 paths per run."""
    rules = instructions.conditional
    paths = touched_paths(cwd, PATHS)
    start = time.perf_counter()
    index: RuleIndex[ConditionalRule] = RuleIndex()
    for rule in rules:
        index.add(str(rule.base), rule.globset, rule)
    index.matching([str(paths[0])])  # compiles the joint regexes, as the first touch does
    compile_ms = (time.perf_counter() - start) * 1000
    match_s, hits = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        hits = sum(len(index.matching([str(p)])) for p in paths)
        match_s.append(time.perf_counter() - start)
    match_ms = median_ms(match_s)
    print(f"compile {len(rules)} conditional rules' globs: {compile_ms:6.2f} ms (once, on first touch)")
    print(
        f"match {PATHS:,} paths against them: {match_ms:6.2f} ms   ({hits} matches) "
        f"(target < 50 ms) {'OK' if match_ms < 50 else 'MISSED'}"
    )
    tracker_s = []
    for _ in range(runs):
        tracker = AttachmentTracker(instructions)
        start = time.perf_counter()
        for p in paths:
            tracker.on_path_touched(p)
        tracker_s.append(time.perf_counter() - start)
    print(
        f"tracker.on_path_touched x {PATHS:,} (real paths, nested folders, attachments): "
        f"{median_ms(tracker_s):6.2f} ms; {len(tracker.active())} attachments"
    )


def main() -> None:
    """Generate the repository in a temporary folder and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-context-") as tmp:
        root = Path(tmp).resolve()
        repo, cwd = generate(root)
        home = root / "home"
        home.mkdir()
        print(f"repository: {DEPTH} levels deep, {RULES} rules (half conditional), runs={args.runs}")
        instructions = time_build_vs_read(cwd, repo, home, args.runs)
        time_matching(instructions, cwd, args.runs)


if __name__ == "__main__":
    main()
