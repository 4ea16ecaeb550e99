"""What an MCP server that connects late costs in prompt cache when its tools join at a turn start.

Runs the real CLI (`-p --input-format stream-json --output-format stream-json`) against the fake
Anthropic server (its deterministic prompt-cache simulation) with two user messages, the second
sent once the first's result is out and the server has had time to connect. Two runs:
- late: the demo MCP server (tests/mcp_servers/demo_server.py) starts 3 s late while the first
  request waits only 0.5 s for it (MCP_TIMEOUT=500): turn 1 goes without its tools, turn 2 sends
  the tool list with them, so the whole prefix (tools lead it) is written to the cache again;
- on time: the same server without the delay, its tools in both requests.

Prints each run's second request: input tokens not cached, read from the cache, written to it.

    python scripts/bench_mcp_late_join.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from fake_anthropic import FakeAnthropic  # noqa: E402

DEMO = ROOT / "tests" / "mcp_servers" / "demo_server.py"
LATE_SECONDS = 3
CONNECTED_AFTER = 15  # seconds after the first result: the late server has connected on a busy machine


def user_line(text: str) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n"


def run(late: bool) -> dict[str, int]:
    """One two-turn session; the second main request's usage."""
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as server:
        home, repo = Path(tmp) / "home", Path(tmp) / "repo"
        home.mkdir()
        repo.mkdir()
        command = f"sleep {LATE_SECONDS}; exec {sys.executable} {DEMO}" if late else f"exec {sys.executable} {DEMO}"
        config = {"mcpServers": {"demo": {"command": "sh", "args": ["-c", command]}}}
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "CLAUDE_MINI_HOME": str(home),
            "CLAUDE_MINI_MANAGED_DIR": str(Path(tmp) / "managed"),
            "CLAUDE_CONFIG_DIR": str(Path(tmp) / "claude-code"),
            "CLAUDE_MINI_DISABLE_AUTO_MEMORY": "1",
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "x",
            "MCP_TIMEOUT": "500" if late else "60000",
        }
        args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "claude_mini", *args, "--mcp-config", json.dumps(config)],
            cwd=repo,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(user_line("first question"))
        proc.stdin.flush()
        for line in proc.stdout:  # until the first result
            if json.loads(line)["type"] == "result":
                break
        time.sleep(CONNECTED_AFTER)  # the late server connects meanwhile (its start imports the MCP SDK)
        proc.stdin.write(user_line("second question"))
        proc.stdin.close()
        proc.stdout.read()
        proc.wait(60)
        first, second = server.requests_for("main")[:2]
        tools = [[t["name"] for t in r.body["tools"]] for r in (first, second)]
        joined = [name for name in tools[1] if name not in tools[0]]
        assert (bool(joined) == late) and all(n.startswith("mcp__demo__") for n in joined), tools
        return second.usage or {}


def main() -> None:
    for late in (True, False):
        usage = run(late)
        print(
            f"{'late (tools join at turn 2)' if late else 'on time (same tools)':<28}  "
            f"turn 2 input: {usage.get('input_tokens', 0):>5} uncached, "
            f"{usage.get('cache_read_input_tokens', 0):>5} read from cache, "
            f"{usage.get('cache_creation_input_tokens', 0):>5} written to cache"
        )


if __name__ == "__main__":
    main()
