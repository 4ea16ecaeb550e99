"""WebFetch(domain:...) and WebSearch rules, in every layer and mode, and the sandbox's domain lists
applied to WebFetch as its proxy applies them to Bash."""

from __future__ import annotations

from pathlib import Path

from claude_mini.permissions import Allow, Ask, Deny, PermissionPolicy, PolicyChain, parse_rule
from claude_mini.sandbox import Sandbox, sandbox_settings
from claude_mini.sandbox.box import RuleSource, SandboxGuard
from claude_mini.sandbox.bwrap import Availability
from claude_mini.tools.web_access import rules_name_host


def _policy(root: Path, **kinds: list[str]) -> PermissionPolicy:
    layers = [("user", {"allow": kinds.get("allow", []), "deny": kinds.get("deny", []), "ask": kinds.get("ask", [])})]
    if "managed" in kinds:
        layers.append(("managed", {"deny": kinds["managed"]}))
    return PermissionPolicy.from_layers(layers, cwd=root, project_root=root)


def fetch(url: str) -> dict:
    return {"url": url, "prompt": "x"}


def test_domain_rules_match_the_host_of_the_url(tmp_path):
    policy = _policy(
        tmp_path,
        allow=["WebFetch(domain:docs.python.org)", "WebFetch(domain:*.readthedocs.io)"],
        ask=["WebFetch(domain:pypi.org)"],
        managed=["WebFetch(domain:evil.example)"],
    )
    assert policy.can_use_tool("WebFetch", fetch("https://docs.python.org/3/library/")) == Allow()
    assert policy.can_use_tool("WebFetch", fetch("https://httpx.readthedocs.io/en/")) == Allow()
    assert isinstance(policy.can_use_tool("WebFetch", fetch("https://readthedocs.io/")), Ask)  # `*.` is subdomains
    assert isinstance(policy.can_use_tool("WebFetch", fetch("https://docs.python.org.evil.example/")), Ask)
    asked = policy.can_use_tool("WebFetch", fetch("https://pypi.org/project/x"))
    assert isinstance(asked, Ask) and asked.by_rule
    denied = policy.can_use_tool("WebFetch", fetch("https://EVIL.example./x"))
    assert isinstance(denied, Deny) and "managed rule WebFetch(domain:evil.example)" in denied.reason
    policy.mode = "bypassPermissions"
    assert isinstance(policy.can_use_tool("WebFetch", fetch("https://evil.example/")), Deny)


def test_web_tools_ask_by_default_also_in_plan_mode(tmp_path):
    policy = _policy(tmp_path, allow=["WebSearch"])
    assert isinstance(policy.can_use_tool("WebFetch", fetch("https://example.org/")), Ask)
    assert policy.can_use_tool("WebSearch", {"query": "python"}) == Allow()
    policy.mode = "plan"
    assert policy.can_use_tool("WebSearch", {"query": "python"}) == Allow()
    assert isinstance(policy.can_use_tool("WebFetch", fetch("https://example.org/")), Ask)
    assert policy.suggest_rule("WebFetch", fetch("https://Example.org/a")) == "WebFetch(domain:example.org)"


def test_a_webfetch_rule_must_name_a_host(tmp_path):
    policy = _policy(tmp_path, allow=["WebFetch(https://example.org)"], deny=["WebFetch(example.org)"])
    problems = [str(e) for e in policy.errors]
    assert any("WebFetch rules name a host: WebFetch(domain:example.com)" in p for p in problems)
    assert any("all WebFetch use is denied until the rule is fixed" in p for p in problems)  # fails closed
    assert isinstance(policy.can_use_tool("WebFetch", fetch("https://other.org/")), Deny)


def test_which_rules_name_a_host_for_private_addresses(tmp_path):
    rules = [
        parse_rule(t, source="user", project_root=tmp_path)
        for t in ("WebFetch(domain:127.0.0.1)", "WebFetch(domain:*)")
    ]
    assert rules_name_host(rules, "127.0.0.1")
    assert not rules_name_host(rules, "10.0.0.5")  # a wildcard names no host


def test_the_sandbox_domain_lists_bind_webfetch(tmp_path):
    policy = _policy(tmp_path)
    box = Sandbox(
        sandbox_settings({"sandbox": {"network": {"allowedDomains": ["github.com"], "deniedDomains": ["*.bad.io"]}}}),
        RuleSource(deny=lambda: policy.deny_rules, allow=lambda: policy.allow_rules, roots=lambda: (tmp_path,)),
        project_root=tmp_path,
        availability=Availability(None, False),
    )
    chain = PolicyChain(policy, [SandboxGuard(box)], rules=policy)
    assert chain.can_use_tool("WebFetch", fetch("https://github.com/org/repo")) == Allow()
    denied = chain.can_use_tool("WebFetch", fetch("https://x.bad.io/"))
    assert isinstance(denied, Deny) and "sandbox.network.deniedDomains" in denied.reason
    assert isinstance(chain.can_use_tool("WebFetch", fetch("https://example.org/")), Ask)
    assert box.names_host("github.com") and not box.names_host("api.github.com")
