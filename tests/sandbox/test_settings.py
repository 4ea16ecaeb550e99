"""The `sandbox` settings key: defaults, Claude Code's key names, bad values, managed-only domains."""

from __future__ import annotations

from claude_mini.sandbox import sandbox_settings


def test_defaults_turn_it_on_with_auto_allow():
    settings = sandbox_settings({})
    assert settings.enabled and settings.auto_allow and settings.allow_unsandboxed
    assert not settings.fail_if_unavailable and settings.allowed_domains == () and settings.problems == ()


def test_claude_codes_keys_are_read():
    settings = sandbox_settings(
        {
            "sandbox": {
                "enabled": False,
                "failIfUnavailable": True,
                "autoAllowBashIfSandboxed": False,
                "allowUnsandboxedCommands": False,
                "excludedCommands": ["docker", "git push:*"],
                "network": {
                    "allowedDomains": ["pypi.org", "*.npmjs.org"],
                    "deniedDomains": ["evil.test"],
                    "allowAllUnixSockets": True,
                },
                "filesystem": {
                    "allowWrite": ["~/.cache"],
                    "denyWrite": ["./vendor"],
                    "denyRead": ["~/notes"],
                    "allowRead": ["~/notes/public"],
                },
            }
        }
    )
    assert (settings.enabled, settings.fail_if_unavailable, settings.auto_allow, settings.allow_unsandboxed) == (
        False,
        True,
        False,
        False,
    )
    assert settings.excluded_commands == ("docker", "git push:*")
    assert settings.allowed_domains == ("pypi.org", "*.npmjs.org") and settings.denied_domains == ("evil.test",)
    assert settings.all_unix_sockets
    assert settings.allow_write == ("~/.cache",) and settings.deny_write == ("./vendor",)
    assert settings.deny_read == ("~/notes",) and settings.allow_read == ("~/notes/public",)


def test_a_bad_value_becomes_its_default_with_one_line():
    settings = sandbox_settings({"sandbox": {"enabled": "yes", "excludedCommands": ["ok", 3]}})
    assert settings.enabled is True and settings.excluded_commands == ("ok",)
    assert len(settings.problems) == 2
    assert settings.problems[0] == "sandbox.enabled must be true or false (got 'yes'); using true."
    assert sandbox_settings({"sandbox": []}).problems[0].startswith("sandbox must be an object")


def test_managed_domains_only():
    managed = {"sandbox": {"network": {"allowManagedDomainsOnly": True, "allowedDomains": ["corp.example"]}}}
    user = {"sandbox": {"network": {"allowedDomains": ["anything.example"]}}}
    merged = {"sandbox": {"network": {"allowedDomains": ["anything.example", "corp.example"]}}}
    settings = sandbox_settings(merged, [("user", user), ("managed", managed)])
    assert settings.allowed_domains == ("corp.example",)
