"""The secret and personal-data scan against samples assembled from public rule sets
(tests/fixtures/secret_samples.json, written without sight of the code): the target is
at least 55 of 57 secrets and 23 of 25 personal-data samples, and engineering notes
(SHAs, UUIDs, hashes, placeholders) must pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini.memory.secrets.scan import find_secrets
from claude_mini.memory.team.privacy import PersonalContext, find_personal_data, team_refusal

SAMPLES = json.loads((Path(__file__).parents[1] / "fixtures" / "secret_samples.json").read_text())
MAX_CLEAN_FLAGGED = 2  # of 40; 0 today


def caught(text: str) -> bool:
    """Whether the team tier would refuse `text` (a secret or personal data in it)."""
    return team_refusal(text, PersonalContext(), "the memory") is not None


def test_at_least_55_of_57_secrets_are_found_by_the_secret_scan_alone():
    missed = [s["kind"] for s in SAMPLES["secrets"] if not find_secrets(s["text"])]
    assert len(SAMPLES["secrets"]) == 57 and len(missed) <= 2, missed


def test_at_least_23_of_25_personal_data_samples_are_refused_by_the_team_tier():
    missed = [s["kind"] for s in SAMPLES["personal"] if not caught(s["text"])]
    assert len(SAMPLES["personal"]) == 25 and len(missed) <= 2, missed


def test_clean_engineering_notes_are_not_flagged():
    flagged = [s["kind"] for s in SAMPLES["clean"] if caught(s["text"])]
    assert len(SAMPLES["clean"]) == 40 and len(flagged) <= MAX_CLEAN_FLAGGED, flagged


@pytest.mark.parametrize(
    "text",
    [
        "Vault login: VAULT_TOKEN=hvs.CAESIJlU9JMYEhOPYv4igdhm9PnZDrabYTobQ4Ymnlq1qY-LGh4KHGh2cy5WeEhHZT"
        "ZnUjhNRW9XcEhmWTdmbGZBV1c",
        "batch token hvb.AAAAAQJEbW9kZWxfd2l0aF9hX2xvbmdfYm9keV90aGF0X2lzX25vdF9yZWFsX2J1dF9sb29rcz8xQ2x6WkxqR3pUZ0pq",
    ],
)
def test_a_vault_token_never_reaches_the_team_folder(text):
    refusal = team_refusal(text, PersonalContext(), "vault.md")
    assert refusal is not None and "hvs.CAES" not in refusal and "hvb.AAAA" not in refusal


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("IBAN DE89 3704 0044 0532 0130 00", "a bank account number (IBAN)"),
        ("card 4539 1488 0343 6467", "a payment card number"),
        ("SSN 078-05-1121", "a US social security number"),
        ("call +44 20 7946 0958", "a phone number"),
    ],
)
def test_personal_identifiers_are_named_without_their_value(text, kind):
    found = find_personal_data(text, PersonalContext())
    assert kind in [f.kind for f in found]
    assert all(text.split()[-1] not in f.describe() for f in found)


@pytest.mark.parametrize(
    "text",
    [
        "IBAN DE89 3704 0044 0532 0130 01",  # mod 97 fails
        "order 4111 1111 1111 1112",  # Luhn fails
        "build 1700000000 took 12 s; port 8080; 10.0.4.12",
        "commit 0fe598ad50d8348e1ace2137b49a3b28ee823b54",
    ],
)
def test_numbers_that_fail_their_check_pass(text):
    assert find_personal_data(text, PersonalContext()) == []


def test_prose_skips_the_rule_set_and_tokens_do_not():
    from claude_mini.memory.secrets.rules import may_hold_token

    assert not may_hold_token(
        "Always run the whole test suite with pytest -x before a commit; "
        "the configuration lives in pyproject.toml (internationalization)."
    )
    assert may_hold_token("token ghp_Zk3uQ9pLm2Rt7VwX8yB4nC6dE1fG5hJ0kLmN")
    assert may_hold_token("SG." + "a" * 22 + "." + "b" * 43)  # no digit, but far too long for a word
