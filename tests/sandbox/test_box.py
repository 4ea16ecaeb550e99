"""Sandbox decisions without running bwrap: which calls run inside, the layout, the domains."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from claude_mini.permissions import Allow, Ask, PermissionPolicy, PolicyChain, parse_rule
from claude_mini.sandbox import Sandbox, sandbox_settings
from claude_mini.sandbox.box import RuleSource, SandboxGuard, _domain_listed
from claude_mini.sandbox.bwrap import Availability


def _box(root: Path, sandbox: dict | None = None, *, deny=(), allow=(), works=True) -> Sandbox:
    rules = [parse_rule(r, source="user", project_root=root) for r in deny]
    allows = [parse_rule(r, source="user", project_root=root) for r in allow]
    return Sandbox(
        sandbox_settings({"sandbox": sandbox or {}}),
        RuleSource(deny=lambda: rules, allow=lambda: allows, roots=lambda: (root,)),
        project_root=root,
        availability=Availability("/usr/bin/bwrap", works),
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    return Path(os.path.realpath(project))


def test_which_calls_run_inside(root):
    box = _box(root, {"excludedCommands": ["docker", "git push:*"]})
    assert box.runs_sandboxed({"command": "pytest -q"})
    assert not box.runs_sandboxed({"command": "docker compose up -d"})
    assert not box.runs_sandboxed({"command": "make && git push origin main"})
    assert box.runs_sandboxed({"command": "git pull"})
    assert not box.runs_sandboxed({"command": "pytest", "dangerouslyDisableSandbox": True})
    ignored = _box(root, {"allowUnsandboxedCommands": False})
    assert ignored.runs_sandboxed({"command": "pytest", "dangerouslyDisableSandbox": True})
    assert not _box(root, works=False).runs_sandboxed({"command": "pytest"})


def _chain(policy: PermissionPolicy, box: Sandbox) -> PolicyChain:
    return PolicyChain(policy, [SandboxGuard(box)], rules=policy)


def test_auto_allow_lifts_the_modes_question_only(root):
    policy = PermissionPolicy(cwd=root, project_root=root)
    assert isinstance(policy.can_use_tool("Bash", {"command": "npm test"}), Ask)
    chain = _chain(policy, _box(root))
    assert isinstance(chain.can_use_tool("Bash", {"command": "npm test"}), Allow)
    assert isinstance(chain.can_use_tool("Bash", {"command": "npm test", "dangerouslyDisableSandbox": True}), Ask)
    assert isinstance(chain.can_use_tool("Write", {"file_path": "x.txt", "content": ""}), Ask)  # Bash only
    off = _chain(policy, _box(root, {"autoAllowBashIfSandboxed": False}))
    assert isinstance(off.can_use_tool("Bash", {"command": "npm test"}), Ask)
    asking = PermissionPolicy.from_layers([("managed", {"ask": ["Bash(npm test)"]})], cwd=root, project_root=root)
    assert isinstance(_chain(asking, _box(root)).can_use_tool("Bash", {"command": "npm test"}), Ask)
    plan = PermissionPolicy(cwd=root, project_root=root, mode="plan")
    assert not isinstance(_chain(plan, _box(root)).can_use_tool("Bash", {"command": "npm test"}), Allow)
    secret = _chain(policy, _box(root)).can_use_tool("Bash", {"command": "cat ~/.ssh/id_rsa"})
    assert isinstance(secret, Ask)  # a credential read is the user's to answer, sandbox or not


def test_a_required_sandbox_that_cannot_run_says_so(root):
    assert _box(root, {"failIfUnavailable": True}, works=False).missing_problem().startswith("the sandbox is required")
    assert _box(root, works=False).missing_problem() is None


def test_layout_protects_masks_and_grants(root, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home" / ".ssh").mkdir(parents=True)
    (tmp_path / "home" / ".netrc").write_text("machine x\n")
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / ".mcp.json").write_text("{}")
    (root / ".env").write_text("X=1\n")
    (root / "keys").mkdir()
    (root / "keys" / "a.pem").write_text("k")
    (root / "keys" / "readme.txt").write_text("r")
    (root / "secrets").mkdir()
    (root / "secrets" / "s.txt").write_text("s")
    cache = tmp_path / "cache"
    cache.mkdir()
    box = _box(
        root,
        {"filesystem": {"allowWrite": [f"/{cache}"]}},
        deny=["Read(./.env)", "Read(*.pem)", "Read(./secrets/**)", "Edit(./README.md)"],
        allow=["Edit(//opt/nonexistent/build/**)"],
    )
    (root / "README.md").write_text("hi")
    layout = box.layout().layout
    assert str(root) in layout.writable and str(cache) in layout.writable and box.temp_dir in layout.writable
    assert "/opt" not in layout.writable  # an Edit grant on a folder that is not there grants nothing of it
    for name in (".git/config", ".git/hooks", ".mcp.json", "README.md"):
        assert str(root / name) in layout.read_only
    assert str(root / ".env") in layout.masked_files and str(root / "keys" / "a.pem") in layout.masked_files
    assert str(root / "keys" / "readme.txt") not in layout.masked_files
    assert str(root / "secrets") in layout.masked_dirs
    assert str(tmp_path / "home" / ".ssh") in layout.masked_dirs
    assert str(tmp_path / "home" / ".netrc") in layout.masked_files
    asyncio.run(box.close())
    assert not os.path.exists(layout.empty_file)


def test_the_home_holding_the_project_is_not_hidden(tmp_path, monkeypatch):
    home = tmp_path / "cm-home"
    project = home / "work"
    project.mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_MINI_HOME", str(home))
    box = _box(Path(os.path.realpath(project)))
    assert str(os.path.realpath(home)) not in box.layout().layout.masked_dirs
    asyncio.run(box.close())


def test_domains():
    assert _domain_listed("pypi.org", ["pypi.org"]) and not _domain_listed("evil-pypi.org", ["pypi.org"])
    assert _domain_listed("files.pythonhosted.org", ["*.pythonhosted.org"])
    assert not _domain_listed("pythonhosted.org.evil.test", ["*.pythonhosted.org"])
    assert _domain_listed("anything", ["*"])


def test_deciding_a_host(root):
    box = _box(
        root,
        {"network": {"allowedDomains": ["pypi.org"], "deniedDomains": ["bad.test"]}},
        allow=["WebFetch(domain:docs.python.org)"],
        deny=["WebFetch(domain:worse.test)"],
    )

    async def decide(host: str) -> str | None:
        return await box.decide(host, 443)

    assert asyncio.run(decide("PyPI.org.")) is None
    assert asyncio.run(decide("docs.python.org")) is None
    assert "denied" in asyncio.run(decide("bad.test"))
    assert "denied" in asyncio.run(decide("worse.test"))
    assert "no rule allows it" in asyncio.run(decide("example.com"))
    asked: list[str] = []

    async def yes_once(host: str, port: int) -> bool:
        asked.append(host)
        return host == "example.com"

    box.ask_domain = yes_once
    assert asyncio.run(decide("example.com")) is None and asyncio.run(decide("example.com")) is None
    assert "the user said no" in asyncio.run(decide("other.test"))
    assert "the user said no" in asyncio.run(decide("other.test"))
    assert asked == ["example.com", "other.test"]  # each host is asked once a session
    assert box.for_fork(None).ask_domain is None


def test_the_bridges_interpreter_under_tmp_is_shown_again(monkeypatch, tmp_path):
    from claude_mini.sandbox import box as box_module

    venv = tmp_path / "checkout" / ".venv"
    venv.mkdir(parents=True)
    monkeypatch.setattr(box_module.sys, "prefix", str(venv))
    needs = box_module._bridge_needs()
    assert str(venv) in needs  # a fresh clone under /tmp (CI) must still start the bridge
    assert all(p.startswith("/tmp/") for p in needs)
