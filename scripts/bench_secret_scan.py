"""Time the memory secret scan (memory/secret_scan.find_secrets) on 1 MB and 8 MB memory texts.

Three texts per size: the clean fixture memories repeated (ASCII), the same with a
Cyrillic/accented word on every line (non-ASCII: the normalisation path), and a
hostile one (long runs of `=`, `:`, `-` and base64). Prints the best of three runs.
Run: .venv/bin/python scripts/bench_secret_scan.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from claude_mini.memory.secrets.scan import find_secrets  # noqa: E402

CLEAN = ROOT / "tests" / "memory" / "secret_fixtures" / "clean"
SIZES = {"1 MB": 1_000_000, "8 MB": 8_000_000}


def repeated(unit: str, size: int) -> str:
    """`unit` repeated to `size` characters."""
    return (unit * (size // len(unit) + 1))[:size]


def texts(size: int) -> dict[str, str]:
    """The three kinds of text of about `size` characters."""
    clean = "\n".join(p.read_text() for p in sorted(CLEAN.glob("*.md")))
    accented = "\n".join(f"{line} — café Привет" for line in clean.splitlines())
    hostile = "password" + "=" * 5000 + "\nx:" * 2000 + "\n" + "Rz9Qm4Lk2Pb8Wc6Td1Yf3Hg5" * 40 + "\n"
    return {
        "clean ASCII": repeated(clean, size),
        "non-ASCII": repeated(accented, size),
        "hostile": repeated(hostile, size),
    }


def best_of(text: str, runs: int = 3) -> tuple[float, int]:
    """The fastest of `runs` scans of `text` in seconds, and how many findings it made."""
    best, found = float("inf"), 0
    for _ in range(runs):
        start = time.perf_counter()
        found = len(find_secrets(text))
        best = min(best, time.perf_counter() - start)
    return best, found


def main() -> None:
    for label, size in SIZES.items():
        for kind, text in texts(size).items():
            seconds, found = best_of(text)
            print(f"{label:>5} {kind:<12} {seconds * 1000:8.0f} ms  ({found} findings)")


if __name__ == "__main__":
    main()
