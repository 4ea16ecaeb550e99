"""One session's sandbox: whether a Bash call runs inside it, the bwrap line, the domain proxy.

The Bash tool asks `prepare` for the argv and environment of each call it runs sandboxed; the
permission policy asks `auto_allows` (autoAllowBashIfSandboxed); the REPL sets `ask_domain` so
the first use of a new host asks the user (print mode has none: the host is refused).
A fork or subagent shares the parent's sandbox (`for_fork` gives the extraction fork a view
whose memory folder is writable).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_mini.base.notices import NoticeChannel
from claude_mini.permissions import Allow, Ask, CommandPattern, Decision, Deny, Guard, Rule
from claude_mini.permissions.rules import domain_matches, url_host
from claude_mini.sandbox import bridge
from claude_mini.sandbox.bwrap import Availability, command_line, probe
from claude_mini.sandbox.layout import LayoutReport, build_layout, protected_paths
from claude_mini.sandbox.proxy import DomainProxy
from claude_mini.sandbox.settings import SandboxSettings
from claude_mini.shell.candidates import command_candidates

log = logging.getLogger(__name__)

AskDomain = Callable[[str, int], Awaitable[bool]]  # (host, port) -> allowed for the session
# Our own credentials never enter the sandbox's environment (a command could print them).
HIDDEN_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


@dataclass
class RuleSource:
    """Where the sandbox reads the session's current rules and folders (the permission policy)."""

    deny: Callable[[], Sequence[Rule]]
    allow: Callable[[], Sequence[Rule]]
    roots: Callable[[], Sequence[Path]]


@dataclass
class _Shared:
    """What a fork's view shares with the session's sandbox: temp folder, proxy, answers."""

    temp_dir: str | None = None
    proxy: DomainProxy | None = None
    approved: set[str] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)
    asking: asyncio.Lock | None = None


class Sandbox:
    """The session's bubblewrap sandbox for Bash (see the module docstring)."""

    def __init__(
        self,
        settings: SandboxSettings,
        rules: RuleSource,
        *,
        project_root: Path,
        notices: NoticeChannel | None = None,
        availability: Availability | None = None,
        memory_dir: Path | None = None,
        shared: _Shared | None = None,
    ) -> None:
        self.settings = settings
        self.rules = rules
        self.project_root = Path(project_root)
        self.notices = notices
        self.availability = availability or (probe() if settings.enabled else Availability(None, False))
        self.memory_dir = memory_dir
        self.ask_domain: AskDomain | None = None
        self._shared = shared or _Shared()
        self._excluded = [_exclusion(text) for text in settings.excluded_commands]

    # ---- deciding

    @property
    def enforced(self) -> bool:
        """Whether Bash calls run inside bwrap (on, and bwrap works here)."""
        return self.settings.enabled and self.availability.works

    def missing_problem(self) -> str | None:
        """Why a required sandbox (failIfUnavailable) cannot run, else None."""
        if self.settings.enabled and self.settings.fail_if_unavailable and not self.availability.works:
            return (
                f"the sandbox is required (sandbox.failIfUnavailable) but cannot run: "
                f"{self.availability.problem}; the command was not run"
            )
        return None

    def runs_sandboxed(self, input: dict[str, Any]) -> bool:
        """Whether this Bash call would run inside the sandbox."""
        if not self.enforced:
            return False
        if input.get("dangerouslyDisableSandbox") is True and self.settings.allow_unsandboxed:
            return False
        return not self.excluded(str(input.get("command") or ""))

    def auto_allows(self, input: dict[str, Any]) -> bool:
        """autoAllowBashIfSandboxed: a call that runs sandboxed needs no question of the mode."""
        return self.settings.auto_allow and self.runs_sandboxed(input)

    def excluded(self, command: str) -> bool:
        """Whether `command` runs a program listed in excludedCommands (it then runs outside)."""
        if not self._excluded:
            return False
        return any(
            c.opaque is None and any(p.matches(c.text) for p in self._excluded) for c in command_candidates(command)
        )

    # ---- running

    @property
    def temp_dir(self) -> str:
        """The session's temp folder: writable inside, TMPDIR there, holds the proxy socket."""
        if self._shared.temp_dir is None:
            self._shared.temp_dir = tempfile.mkdtemp(prefix="claude-mini-sandbox-")
        return self._shared.temp_dir

    def layout(self) -> LayoutReport:
        """What the next command may see and write."""
        empty = os.path.join(self.temp_dir, ".empty")
        if not os.path.exists(empty):
            Path(empty).touch(mode=0o444)
        return build_layout(
            project_root=self.project_root,
            roots=self.rules.roots(),
            temp_dir=self.temp_dir,
            settings=self.settings,
            deny_rules=self.rules.deny(),
            allow_rules=self.rules.allow(),
            memory_dir=self.memory_dir,
            empty_file=empty,
        )

    async def prepare(self, argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[list[str], dict[str, str]]:
        """The bwrap argv and the environment that run `argv` in `cwd` inside the sandbox.

        The bridge to the domain proxy (a Python start-up, the larger part of the added time)
        runs only when some host could be let through: a domain is allowed or someone can be
        asked. Otherwise the command has no network at all, which is the same answer sooner.
        """
        report = await asyncio.to_thread(self.layout)
        inner = argv
        if self.ask_domain is not None or self._allowed_domains():
            inner = [sys.executable, "-I", "-S", bridge.__file__, await self._proxy_socket(), "--", *argv]
            report.layout.visible += _bridge_needs()
        assert self.availability.path is not None
        full = command_line(self.availability.path, report.layout, str(cwd), inner)
        log.debug("sandbox: %s", shlex.join(full))
        env = {k: v for k, v in env.items() if k not in HIDDEN_ENV}
        env.update(TMPDIR=self.temp_dir)
        return full, env

    def absent_protected(self) -> list[str]:
        """The protected paths (layout.PROTECTED) that do not exist now. A mount can keep an
        existing file read-only, not stop one being created: `remove_created` looks after."""
        return [
            p
            for p in protected_paths([self.project_root, *self.rules.roots()])
            if not os.path.lexists(p) and not _in_missing_git(p)
        ]

    def remove_created(self, absent: Sequence[str]) -> str:
        """Delete what a sandboxed command created among `absent` (a new `.claude/settings.local.json`
        or `.mcp.json` would run code outside the sandbox next session); the note for the model."""
        made = [p for p in absent if os.path.lexists(p)]
        for path in made:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        if not made:
            return ""
        names = ", ".join(os.path.relpath(p, self.project_root) for p in made)
        log.debug("sandbox: removed %s, created by a sandboxed command", names)
        return (
            f"[The sandbox removed {names}: files that configure git or claude-mini cannot be "
            "created from Bash. Use the Write tool; the user is asked.]"
        )

    async def _proxy_socket(self) -> str:
        shared = self._shared
        if shared.proxy is None:
            shared.proxy = DomainProxy(os.path.join(self.temp_dir, "proxy.sock"), self.decide)
        await shared.proxy.start()
        return shared.proxy.socket_path

    # ---- the network

    async def decide(self, host: str, port: int) -> str | None:
        """None to let a connection to `host` through, else the one-line reason it is refused."""
        host = host.lower().rstrip(".")
        denied = [*self.settings.denied_domains, *_web_fetch_domains(self.rules.deny())]
        if _domain_listed(host, denied):
            return f"claude-mini sandbox: {host} is denied by the settings"
        shared = self._shared
        if _domain_listed(host, self._allowed_domains()) or host in shared.approved:
            return None
        if host not in shared.refused and self.ask_domain is not None:
            shared.asking = shared.asking or asyncio.Lock()
            async with shared.asking:  # one question at a time; a second connection waits for it
                if host not in shared.approved and host not in shared.refused:
                    with contextlib.suppress(Exception):
                        ok = await self.ask_domain(host, port)
                        (shared.approved if ok else shared.refused).add(host)
            if host in shared.approved:
                return None
        why = "the user said no" if host in shared.refused else "no rule allows it"
        if self.notices is not None:
            self.notices.say(
                f"The sandbox refused network access to {host} ({why}); allow it with "
                f"sandbox.network.allowedDomains or a WebFetch(domain:{host}) allow rule.",
                "warning",
                once=True,
            )
        return (
            f"claude-mini sandbox: network access to {host} is not allowed ({why}); "
            f"sandbox.network.allowedDomains or WebFetch(domain:{host}) allows it"
        )

    @property
    def session_hosts(self) -> tuple[list[str], list[str]]:
        """(hosts the user allowed, hosts the user refused) in this session."""
        return sorted(self._shared.approved), sorted(self._shared.refused)

    def network_allows(self, host: str | None) -> bool:
        """Whether `sandbox.network.allowedDomains` or the user's answer this session lets `host` through."""
        if host is None:
            return False
        return _domain_listed(host, self.settings.allowed_domains) or host in self._shared.approved

    def names_host(self, host: str) -> bool:
        """Whether `sandbox.network.allowedDomains` names `host` itself (no wildcard): what lets WebFetch
        reach a loopback or private address."""
        return host.lower().rstrip(".") in (d.lower().rstrip(".") for d in self.settings.allowed_domains)

    def _allowed_domains(self) -> list[str]:
        return [*self.settings.allowed_domains, *_web_fetch_domains(self.rules.allow())]

    # ---- views and the end

    def for_fork(self, memory_dir: Path | None) -> Sandbox:
        """A view for a forked agent: the same sandbox, with `memory_dir` writable inside."""
        view = Sandbox(
            self.settings,
            self.rules,
            project_root=self.project_root,
            notices=self.notices,
            availability=self.availability,
            memory_dir=memory_dir,
            shared=self._shared,
        )
        view.ask_domain = None  # nobody answers a background fork's question
        return view

    async def close(self) -> None:
        """Stop the proxy and remove the session's temp folder."""
        if self._shared.proxy is not None:
            await self._shared.proxy.close()
        if self._shared.temp_dir is not None:
            shutil.rmtree(self._shared.temp_dir, ignore_errors=True)
            self._shared.temp_dir = None


def _in_missing_git(path: str) -> bool:
    """Whether `path` lies in a `.git` folder that does not exist: one the command creates
    (`git init`) is its own, and its config is what git wrote."""
    head, sep, _ = path.partition(f"{os.sep}.git{os.sep}")
    return bool(sep) and not os.path.isdir(os.path.join(head, ".git"))


def _bridge_needs() -> list[str]:
    """What the bridge needs to start that lies under /tmp (hidden inside): the interpreter's
    folders (a virtual environment in a checkout under /tmp) and the bridge's own folder."""
    needed = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.abspath(bridge.__file__))}
    return sorted({q for p in needed for q in (os.path.abspath(p), os.path.realpath(p)) if q.startswith("/tmp/")})


def _exclusion(text: str) -> CommandPattern:
    """An excludedCommands entry: a Bash rule's specifier; a bare program name covers its arguments."""
    text = text.strip()
    if " " not in text and "*" not in text and not text.endswith(":*"):
        text += ":*"
    return CommandPattern.parse(text)


def _web_fetch_domains(rules: Sequence[Rule]) -> list[str]:
    return [
        r.specifier.removeprefix("domain:").strip()
        for r in rules
        if r.tool == "WebFetch" and r.specifier and r.specifier.startswith("domain:")
    ]


def _domain_listed(host: str, patterns: Sequence[str]) -> bool:
    """Whether a pattern covers `host` (`domain_matches`: exact, `*.example.com`, `*`)."""
    return any(domain_matches(host, pattern) for pattern in patterns)


class SandboxGuard(Guard):
    """autoAllowBashIfSandboxed in the permission chain (its innermost guard): the mode's question
    for a Bash call that will run sandboxed becomes Allow. Asks only the user may answer (an ask
    rule, a protected file, credentials), denies and plan mode's refusals pass unchanged.

    WebFetch shares the proxy's domain lists: a host in `sandbox.network.deniedDomains` is refused,
    one in `allowedDomains` (or allowed by the user for Bash this session) needs no question."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox

    def before(self, tool_name: str, input: dict[str, Any]) -> Deny | Ask | None:
        """Deny a WebFetch of a host the sandbox's network settings deny."""
        host = url_host(input.get("url")) if tool_name == "WebFetch" else None
        if host is not None and _domain_listed(host, self.sandbox.settings.denied_domains):
            return Deny(f"{host} is denied by sandbox.network.deniedDomains")
        return None

    def after(self, tool_name: str, input: dict[str, Any], decision: Decision) -> Decision:
        """Allow in place of the mode's Ask when the call runs in the sandbox, or fetches a host the
        network settings allow."""
        if not isinstance(decision, Ask) or decision.user_only:
            return decision
        if tool_name == "Bash" and self.sandbox.auto_allows(input):
            return Allow()
        if tool_name == "WebFetch" and self.sandbox.network_allows(url_host(input.get("url"))):
            return Allow()
        return decision
