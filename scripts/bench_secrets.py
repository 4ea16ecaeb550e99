"""How many secret and personal-data samples the scan catches, and how many clean notes it flags.

Runs both fixtures (tests/fixtures/secret_samples.json, the tuning set, and
secret_samples_heldout.json, never tuned on) through the current scan
(memory/secret_scan.find_secrets + memory/team/privacy.find_personal_data) and through
the scan as it is on `main` (its two modules loaded from `git show main:…` into a temp
folder), in the same run. A sample counts as caught when the team tier would refuse it
(a secret or personal data found); a clean note counts as flagged likewise.
Run: .venv/bin/python scripts/bench_secrets.py [git-ref]   (default ref: main)
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from claude_mini.memory.secrets.scan import find_secrets  # noqa: E402
from claude_mini.memory.team.privacy import PersonalContext, find_personal_data  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
FILES = {"samples": FIXTURES / "secret_samples.json", "held-out": FIXTURES / "secret_samples_heldout.json"}
Finder = Callable[[str], bool]


def _load(name: str, source: str, folder: Path) -> ModuleType:
    """Import `source` as module `name` from a file in `folder`."""
    path = folder / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def old_finder(ref: str, folder: Path) -> Finder:
    """The scan as it is at `ref`: its secret_scan and privacy modules, imported from a temp copy
    (a ref from before the scan became the memory/secrets/ package)."""

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:{path}"], check=True, capture_output=True, text=True
        ).stdout

    scan = _load("old_secret_scan", show("claude_mini/memory/secret_scan.py"), folder)
    privacy_src = show("claude_mini/memory/team/privacy.py").replace(
        "from claude_mini.memory.secret_scan import", "from old_secret_scan import"
    )
    privacy = _load("old_privacy", privacy_src, folder)
    context = privacy.PersonalContext()
    return lambda text: bool(scan.find_secrets(text) or privacy.find_personal_data(text, context))


def new_finder() -> Finder:
    """The scan in this checkout."""
    context = PersonalContext()
    return lambda text: bool(find_secrets(text) or find_personal_data(text, context))


def figures(data: dict[str, list[dict[str, str]]], found: Finder) -> dict[str, tuple[int, int]]:
    """(caught or flagged, total) per group of the fixture."""
    return {group: (sum(found(item["text"]) for item in items), len(items)) for group, items in data.items()}


def main() -> None:
    """Print, per fixture, the old and new figures side by side, and the misses of the new scan."""
    ref = sys.argv[1] if len(sys.argv) > 1 else "main"
    with tempfile.TemporaryDirectory() as tmp:
        finders = {ref: old_finder(ref, Path(tmp)), "this branch": new_finder()}
        for label, path in FILES.items():
            if not path.exists():
                print(f"{label}: {path.name} is missing, skipped")
                continue
            data = json.loads(path.read_text())
            print(f"{label} ({path.name})")
            for name, found in finders.items():
                start = time.perf_counter()
                result = figures(data, found)
                took = time.perf_counter() - start
                parts = [f"{group} {hit}/{total}" for group, (hit, total) in result.items()]
                print(f"  {name:>12}: " + ", ".join(parts) + f"  ({took:.2f} s)")
            new = finders["this branch"]
            for group in ("secrets", "personal"):
                missed = [item["kind"] for item in data.get(group, []) if not new(item["text"])]
                print(f"  missed {group}: {', '.join(missed) or 'none'}")
            flagged = [item["kind"] for item in data.get("clean", []) if new(item["text"])]
            print(f"  flagged clean: {', '.join(flagged) or 'none'}")


if __name__ == "__main__":
    main()
