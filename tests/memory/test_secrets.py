"""The memory secret guard (memory/secrets/scan.py, memory/secrets/guard.py): what counts as a secret,
what passes, and Writes/Edits judged by the file as it will be after the change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from claude_mini.memory.secrets.guard import SecretGuard, UncheckedChange, text_after
from claude_mini.memory.secrets.scan import find_secret, find_secrets
from claude_mini.permissions import Allow, Deny, PolicyChain

FIXTURES = Path(__file__).parent / "secret_fixtures"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text())


class AllowAll:
    """A wrapped policy that allows everything, so only the guard can refuse."""

    def can_use_tool(self, tool_name, input):
        return Allow()


def kinds(text: str) -> list[str]:
    return [f.kind for f in find_secrets(text)]


# --- the fixture of realistic memory files ------------------------------------------------
@pytest.mark.parametrize("path", sorted((FIXTURES / "clean").glob("*.md")), ids=lambda p: p.name)
def test_clean_memory_files_pass(path):
    assert find_secrets(path.read_text()) == []


@pytest.mark.parametrize("path", sorted((FIXTURES / "secret").glob("*.md")), ids=lambda p: p.name)
def test_memory_files_with_secrets_are_found_by_kind_and_line(path):
    found = find_secrets(path.read_text())
    assert [[f.kind, f.line] for f in found] == EXPECTED[path.name]


def test_every_secret_fixture_has_an_expectation():
    assert sorted(p.name for p in (FIXTURES / "secret").glob("*.md")) == sorted(EXPECTED)


# --- families of secrets: (text, kind, the secret value that must never be shown) ------
ENV_LINES = [
    ("DB_PASSWORD=hunter2", "a password", "hunter2"),
    ('DB_PASSWORD="hunter2"', "a password", "hunter2"),
    ("export API_TOKEN='abc123def456ghi789'", "a token", "abc123def456ghi789"),
    ('export API_TOKEN="abc123def456ghi789"  # staging', "a token", "abc123def456ghi789"),
    ("_SECRET_KEY=k3j4h5g6f7d8s9", "a secret key", "k3j4h5g6f7d8s9"),
    ("__INTERNAL_PASSWD=Zx81!pq", "a password", "Zx81!pq"),
    ("PGPASSWORD=Tr0ub4dor psql -h db", "a password", "Tr0ub4dor"),
    ("docker run -e POSTGRES_PASSWORD=s3cr3tpw postgres", "a password", "s3cr3tpw"),
    ("STRIPE_WEBHOOK_SECRET=9f8e7d6c5b4a3210", "a secret", "9f8e7d6c5b4a3210"),
    ("set DEPLOY_TOKEN=q1w2e3r4t5y6", "a token", "q1w2e3r4t5y6"),
]
AWS = [
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "an AWS secret access key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        '"SecretAccessKey": "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY"',
        "an AWS secret access key",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    ),
    (
        "AWS_SECRET_ACCESS_KEY: Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0h",
        "an AWS secret access key",
        "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0h",
    ),
    (
        "id AKIAI44QH8DHBEXAMPLE\nsecret:\nje7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
        "an AWS secret access key",
        "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    ),
    ("aws ASIAQWERTYUIOPASDFGH here", "an AWS access key id", "QWERTYUIOPASDFGH"),
]
YAML = [
    ("database:\n  password: s3cr3t-Pa55\n", "a password", "s3cr3t-Pa55"),
    ("smtp:\n  secret: 'Q9w8E7r6T5y4'\n", "a secret", "Q9w8E7r6T5y4"),
    ('ci:\n  token: "ab12cd34ef56gh78"\n', "a token", "ab12cd34ef56gh78"),
    ("- name: api\n  apiKey: 7f6e5d4c3b2a1908\n", "a secret key", "7f6e5d4c3b2a1908"),
    ('{"db": {"password": "hunter22"}}', "a password", "hunter22"),
    ('client_secret = "a8f5f167f44f4964e6c998dee827110c"', "a secret", "a8f5f167f44f4964e6c998dee827110c"),
    ("**Password:** Tr0ub4dor&3", "a password", "Tr0ub4dor"),
    ("Server=db;User Id=sa;Password=hunter22;", "a password", "hunter22"),
]
HEADERS = [
    ('curl -H "Authorization: Bearer 7d1c0e9a5b3f4e2d8c6a" https://api/x', "a bearer token", "7d1c0e9a5b3f4e2d8c6a"),
    ("Authorization: Basic ZGVwbG95OnN1cGVyc2VjcmV0", "an Authorization header", "ZGVwbG95OnN1cGVyc2VjcmV0"),
    (
        'headers = {"Authorization": "Token 5f4dcc3b5aa765d61d8327deb882cf99"}',
        "an Authorization header",
        "5f4dcc3b5aa765d61d8327deb882cf99",
    ),
    ("Proxy-Authorization: Basic dXNlcjpwYXNzd29yZA==", "an Authorization header", "dXNlcjpwYXNzd29yZA"),
    ("X-Api-Key: 0a1b2c3d4e5f6a7b8c9d", "a secret key", "0a1b2c3d4e5f6a7b8c9d"),
    ("X-Auth-Token: r4nd0mT0k3nV4lu3", "a token", "r4nd0mT0k3nV4lu3"),
]
TYPED = [
    ("push with glpat-x8Yz3Qw9Lm2Nb7Vc4Kp1", "a credential", "x8Yz3Qw9Lm2Nb7Vc4Kp1"),
    ("runner GR1348941Zx8Yz3Qw9Lm2Nb7Vc4Kp1", "a credential", "Zx8Yz3Qw9Lm2Nb7Vc4Kp1"),
    ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a credential", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    (
        "pypi-AgEIcHlwaS5vcmcCJDk3ZjM2NTYxLWE4ZDQtNDFjOS05NmI0LWFhNDk2ZDM4ZTA5NQACKlszLCJmZGU0",
        "a credential",
        "Ljk3ZjM2NTYxLWE4ZDQtNDFjOS05",
    ),
    (
        "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX",
        "a credential",
        "aBcDeFgHiJkLmNoPqRsTuVwX",
    ),
    ("GOCSPX-" + "aB3_cD4-" * 4, "a Google OAuth client secret", "aB3_cD4-" * 4),
    (
        "github_pat_11ABCDEFG0k9Xq2Lm7Pw4R_" + "Ua8Ke2Wo7Qi4Tx9Ml3Vp6Rb1Nz5Cy0HgUa8Ke2Wo7Qi4Tx9Ml3Vp6Rb1Nz5Cy0Hg"[:59],
        "a credential",
        "Ua8Ke2Wo7Qi4Tx9Ml3Vp6",
    ),
    ("key: sk-ant-api03-" + "a" * 40, "an API key", "a" * 40),
    ("sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "a credential", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("SG." + "a" * 22 + "." + "b" * 43, "a credential", "b" * 43),
    ("AGE-SECRET-KEY-1" + "QZ" * 29, "a credential", "QZ" * 29),
]
KEY_BODIES = [
    (
        "MIIEowIBAAKCAQEAvx8YSmp6Qs4b3JXc0bL9PcW0uP8BRBKyGdWgmoJ2fA1cL6Ol",
        "a private key body",
        "vx8YSmp6Qs4b3JXc0bL9PcW0uP8BRBKyGdWgmoJ2fA1cL6Ol",
    ),
    (
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
        "a private key body",
        "ASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj",
    ),
    (
        '"key": "MHcCAQEEIBYl2Qd9Kx1uYc0N4b8s7Lq3Zf2Wv5Tn6Rm1Pj0Hk9GgoAoGCCqGSM49"',
        "a private key body",
        "IBYl2Qd9Kx1uYc0N4b8s7Lq3Zf2Wv5Tn6Rm1Pj0Hk9G",
    ),
    (
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
        "a private key body",
        "AAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    ),
    (
        "\n".join(["Rz9Qm4Lk2Pb8Wc6Td1Yf3Hg5Nj7Xv0Bs2Ku4Ma6Oe8Ic1Ur3Zt5Sx7Dw9Fy0Gq2Jl"] * 3),
        "a key body (a long base64 block)",
        "Rz9Qm4Lk2Pb8Wc6Td1Yf3Hg5Nj7Xv0Bs2",
    ),
    ("-----BEGIN EC PRIVATE KEY-----\n...", "a private key", "..."),
    ("PuTTY-User-Key-File-3: ssh-ed25519", "a PuTTY private key", "ssh-ed25519"),
]
DISGUISED = [
    ("token ghp_a1B2c3D4e5" + "\u200b" + "F6g7H8i9J0k1L2m3N4o5P6q7R8", "a credential", "F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("ＤＢ＿ＰＡＳＳＷＯＲＤ＝ｈｕｎｔｅｒ２２", "a password", "ｈｕｎｔｅｒ２２"),
    ("npm_\u2060" + "a1B2" * 9, "a credential", "a1B2" * 9),
    ("DB\\_PASSWORD=hunter22", "a password", "hunter22"),  # markdown-escaped underscore
]
OTHER = [
    ("postgres://app:hunter2secret@db.internal:5432/app", "a password in a URL", "hunter2secret"),
    ("redis://:Pa55w0rdX@cache:6379/0", "a password in a URL", "Pa55w0rdX"),
    ("mysql -u root -phunter22 billing", "a password on a command line", "hunter22"),
    ("sshpass -p 'Xk9mQ2pL' ssh deploy@host", "a password on a command line", "Xk9mQ2pL"),
    ("curl -u deploy:Tr0ub4dor3 https://registry", "a password on a command line", "Tr0ub4dor3"),
    ("docker login -u me --password hunter22 registry", "a password", "hunter22"),
    ("machine artifacts login ci password Xk9mQ2pL7v", "a password in a .netrc entry", "Xk9mQ2pL7v"),
    ("https://x.test/cb?access_token=abc123def456ghi&state=1", "a token", "abc123def456ghi"),
    ("API key: abcd1234efgh5678", "a secret key", "abcd1234efgh5678"),
    ("password: hunter2 (the staging one)", "a password", "hunter2"),
]


@pytest.mark.parametrize(
    ("text", "kind", "value"), ENV_LINES + AWS + YAML + HEADERS + TYPED + KEY_BODIES + DISGUISED + OTHER
)
def test_secrets_are_found_and_never_shown(text, kind, value):
    found = find_secrets(text)
    assert kind in [f.kind for f in found], (text, found)
    for finding in found:
        assert value not in finding.describe() and f"on line {finding.line}" in finding.describe()
    assert find_secret(text) == found[0]


# --- what must pass ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # placeholders
        "password=<your password>",
        "DB_PASSWORD=${DB_PASSWORD}",
        "API_TOKEN=$API_TOKEN",
        "token: xxx",
        "token: xxxx-xxxx-xxxx",
        "password: ***",
        "password: ********",
        "password: changeme",
        "secret: REDACTED",
        "api_key: your-api-key-here",
        "token: my_token",
        "password: {{ vault_db_password }}",
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "token: %TOKEN%",
        'export API_TOKEN="abc..."',
        "aws_secret_access_key = <secret>",
        "https://user:pass@host",
        'password = "<your password>"',
        "connect with postgres://app:${DB_PASSWORD}@db.internal/app",
        "secret: ENC[AES256_GCM,data:abc,iv:def,tag:ghi,type:str]",
        "token: !secret ha_token",
        # prose
        "the password is stored in Vault",
        "Password: see 1Password",
        "Password: 1Password has it",
        "Secret: the deploy key is in Vault",
        "token: the CSRF token from the header",
        "Auth: OAuth2 via Keycloak",
        "Bearer tokens expire after one hour",
        "the key is in 1Password under 'staging db'",
        "Use the --token flag with `gh auth token`",
        "always run pytest with -x",
        "risk-assessment-document-for-the-project is in docs/",
        # short values
        "password: abc",
        "pwd=abc12",
        "token: v2",
        "secret: 42",
        # references to where a secret lives
        "token: GITHUB_TOKEN",
        "set OPENAI_API_KEY in your shell before running",
        "password_file: /run/secrets/db",
        "pwd: /home/me/project",
        "api_key: ~/.config/x/key.txt",
        "DB_PASSWORD=op://Work/billing-db/password",
        "password = os.getenv('DB_PASSWORD')",
        'api_key = os.environ["OPENAI_API_KEY"]',
        "api_key = settings.OPENAI_KEY",
        "password: SecretStr",
        'headers = {"Authorization": f"Bearer {token}"}',
        "secret: arn:aws:secretsmanager:eu-west-1:123456789012:secret:db",
        # keys that only look sensitive
        "token_ttl: 3600",
        "max_tokens: 4096",
        "password_min_length: 12",
        "secret_name: prod-db",
        "tokenizer: cl100k_base",
        "auth_method: oauth",
        "client_id: 1234-abcd.apps.example.com",
        # public or non-secret material
        "commit 3f2a9c1e4b5d6f7a8b9c0d1e2f3a4b5c6d7e8f90 fixed it",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx8Vc2 deploy@ci",
        "https://example.com/user@host",
        "-----BEGIN CERTIFICATE-----\n"
        + "\n".join(["MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ"] * 3),
        "\n".join(["e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"] * 4),
    ],
)
def test_ordinary_memory_text_passes(text):
    assert find_secrets(text) == [], [f.describe() for f in find_secrets(text)]


def test_findings_are_one_per_line_in_line_order():
    text = (
        "intro\nDB_PASSWORD=hunter22\nnothing\nnpm_"
        + "a1" * 18
        + "\nGITHUB_TOKEN=ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    )
    found = find_secrets(text)
    assert [(f.kind, f.line) for f in found] == [("a password", 2), ("a credential", 4), ("a credential", 5)]
    assert found[2].label == "github-pat rule"  # the rule set names the line, not the assignment


def test_a_large_text_is_scanned_without_blowing_up():
    text = ("password" + "=" * 5000 + "\n") * 20 + "a" * 200_000 + "\n" + "-" * 50_000 + "x:" * 50_000
    assert find_secrets(text) == []
    assert kinds(text + "\nDB_PASSWORD=hunter22") == ["a password"]


# --- the file as it will be ------------------------------------------------------------------
def test_text_after_a_write_is_its_content(tmp_path):
    assert text_after("Write", {"file_path": str(tmp_path / "m.md"), "content": "x"}) == "x"
    assert text_after("Read", {"file_path": "m.md"}) is None


def test_text_after_an_edit_applies_the_replacement(tmp_path):
    path = tmp_path / "m.md"
    path.write_bytes(b"a\r\nDB_PASSWORD=\r\nDB_PASSWORD=\r\n")
    edit = {"file_path": "m.md", "old_string": "DB_PASSWORD=", "new_string": "DB_PASSWORD=hunter22"}
    first = {**edit, "old_string": "a\r\nDB_PASSWORD=", "new_string": "a\nDB_PASSWORD=hunter22"}
    assert text_after("Edit", first, tmp_path) == "a\nDB_PASSWORD=hunter22\nDB_PASSWORD=\n"
    with pytest.raises(UncheckedChange, match="old_string matches 2 places"):
        text_after("Edit", edit, tmp_path)
    assert (
        text_after("Edit", {**edit, "replace_all": True}, tmp_path) == "a\nDB_PASSWORD=hunter22\nDB_PASSWORD=hunter22\n"
    )
    assert text_after("Edit", {**edit, "file_path": "new.md", "old_string": ""}, tmp_path) == "DB_PASSWORD=hunter22"
    with pytest.raises(UncheckedChange, match="the Edit would fail: old_string was not found"):
        text_after("Edit", {**edit, "old_string": "missing"}, tmp_path)


class Guarded(PolicyChain):
    """The guard in a chain over an allow-all policy (its memory folder at hand for the tests)."""

    def __init__(self, guard: SecretGuard) -> None:
        super().__init__(AllowAll(), [guard])
        self.memory_dir = guard.memory_dir


@pytest.fixture
def guard(tmp_path):
    memdir = tmp_path / "memory"
    memdir.mkdir()
    return Guarded(SecretGuard(memdir, cwd=tmp_path))


def edit(guard, old, new, *, file="notes.md", replace_all=False):
    return guard.can_use_tool(
        "Edit",
        {"file_path": str(guard.memory_dir / file), "old_string": old, "new_string": new, "replace_all": replace_all},
    )


@pytest.mark.parametrize(
    ("before", "old", "new", "replace_all", "kind", "line"),
    [
        # a Write put the key, an Edit adds the value (only the new text was checked before)
        ("---\nname: DB\n---\nDB_PASSWORD=\n", "DB_PASSWORD=", "DB_PASSWORD=hunter22", False, "a password", 4),
        ("api:\n  token: PLACEHOLDER\n", "PLACEHOLDER", "ab12cd34ef56gh78", False, "a token", 2),
        ('export API_TOKEN=""\n', '""', '"q1w2e3r4t5y6u7i8"', False, "a token", 1),
        # the value is assembled from two halves
        ("machine ci login bot password Xk9m\n", "Xk9m", "Xk9mQ2pL7v", False, "a password in a .netrc entry", 1),
        ("- glpat-\n", "glpat-", "glpat-x8Yz3Qw9Lm2Nb7Vc4Kp1", False, "a credential", 1),
        # replace_all turns every placeholder into the value
        ("ok\nA=1\nsecret: TODO\nsecret: TODO\n", "TODO", "9f8e7d6c5b4a3210", True, "a secret", 3),
        # the header and the body of a key arrive in separate edits
        (
            "key:\nBODY\n",
            "BODY",
            "\n".join(["Rz9Qm4Lk2Pb8Wc6Td1Yf3Hg5Nj7Xv0Bs2Ku4Ma6Oe8Ic1Ur3Zt5"] * 3),
            False,
            "a key body (a long base64 block)",
            2,
        ),
    ],
)
def test_an_edit_that_completes_a_secret_is_refused(guard, before, old, new, replace_all, kind, line):
    (guard.memory_dir / "notes.md").write_text(before)
    decision = edit(guard, old, new, replace_all=replace_all)
    assert isinstance(decision, Deny), decision
    assert f"refused to save {kind}" in decision.reason and f"on line {line}" in decision.reason
    assert "notes.md (the file as this Edit would leave it)" in decision.reason
    assert new.strip('"') not in decision.reason and "Nothing was written" in decision.reason


def test_edits_that_leave_no_secret_are_allowed(guard):
    path = guard.memory_dir / "notes.md"
    path.write_text("DB_PASSWORD=hunter22\nkeep this\n")
    assert isinstance(edit(guard, "keep this", "keep that"), Deny)  # the file would still hold it
    assert isinstance(edit(guard, "DB_PASSWORD=hunter22", "DB_PASSWORD is in Vault"), Allow)
    path.write_text("the password is in Vault\n")
    assert isinstance(edit(guard, "in Vault", "in 1Password, item 'db'"), Allow)


def test_a_secret_outside_the_memory_folder_is_not_the_guards_business(guard, tmp_path):
    (tmp_path / ".env").write_text("DB_PASSWORD=\n")
    decision = guard.can_use_tool(
        "Edit", {"file_path": str(tmp_path / ".env"), "old_string": "=", "new_string": "=hunter22"}
    )
    assert isinstance(decision, Allow)


def test_a_write_names_every_kind_found_up_to_three(guard):
    content = (
        "DB_PASSWORD=hunter22\nnpm_" + "a1" * 18 + "\nglpat-x8Yz3Qw9Lm2Nb7Vc4Kp1\nsk_live_4eC39HqLyjWDarjtT1zdp7dc\n"
    )
    decision = guard.can_use_tool("Write", {"file_path": str(guard.memory_dir / "x.md"), "content": content})
    assert isinstance(decision, Deny)
    assert (
        "a password (DB_PASSWORD=…) on line 1, a credential (npmjsaccesstoken rule) on line 2, "
        "a credential (gitlab-pat rule) on line 3 and 1 more"
    ) in decision.reason
    assert "hunter22" not in decision.reason


# --- the after-text is the Edit tool's own ---------------------------------------------------
@pytest.mark.parametrize(
    ("before", "old", "new", "replace_all"),
    [
        # mixed line ends: Edit keeps every \r, so "=\r" matches (the guard's own CRLF folding did not)
        (b"DB_PASSWORD=\r\nnote\n", "=\r", "=hunter2Secret9\r", False),
        (b"a\nAPI_TOKEN=\r\nb\r\n", "API_TOKEN=\r\n", "API_TOKEN=q1w2e3r4t5y6u7i8\r\n", False),
        # CRLF throughout: Edit folds old/new too, so "\r\n" in them still matches
        (b"x\r\nsecret: TODO\r\n", "secret: TODO\r\n", "secret: 9f8e7d6c5b4a3210\r\n", False),
        (b"t: A\r\nt: A\r\n", "A", "glpat-x8Yz3Qw9Lm2Nb7Vc4Kp1", True),
        # UTF-8 with a BOM, and UTF-16
        ("\ufeffpassword: PLACEHOLDER\n".encode(), "PLACEHOLDER", "Tr0ub4dor3x", False),
        ("token: X\n".encode("utf-16"), "X", "ab12cd34ef56gh78", False),
    ],
)
def test_an_edit_is_judged_by_exactly_what_the_edit_tool_writes(guard, before, old, new, replace_all):
    from claude_mini.tools.edit import _edit

    path = guard.memory_dir / "cr.md"
    path.write_bytes(before)
    request = {"file_path": str(path), "old_string": old, "new_string": new, "replace_all": replace_all}
    decision = guard.can_use_tool("Edit", request)
    assert isinstance(decision, Deny) and "refused to save" in decision.reason, decision
    expected = text_after("Edit", request)
    _edit(path, old, new, replace_all, path.stat().st_mtime)  # what the tool would have done
    written = path.read_bytes()
    encoding = "utf-16" if before.startswith(b"\xff\xfe") else "utf-8-sig"
    text = written.decode(encoding)
    assert expected in (text, text.replace("\r\n", "\n"))
    assert find_secrets(expected) and find_secrets(text)


@pytest.mark.parametrize(
    ("setup", "old", "reason"),
    [
        (lambda p: p.write_text("DB_PASSWORD=\n"), "DB_PASSWORD=x", "old_string was not found"),
        (lambda p: p.write_text("t=\nt=\n"), "t=", "old_string matches 2 places"),
        (lambda p: p.mkdir(), "a", "is a directory"),
        (lambda p: p.write_bytes(b"DB_PASSWORD=\x00\n"), "DB_PASSWORD=", "binary file"),
        (lambda p: p.write_bytes(b"caf\xe9 DB_PASSWORD=\n"), "DB_PASSWORD=", "is not UTF-8 text"),
        (lambda p: None, "DB_PASSWORD=", "does not exist and old_string is not empty"),
        (
            lambda p: p.write_text("DB_PASSWORD=placeholder\n" + "filler line\n" * 800_000),
            "placeholder",
            "is over 8 MiB",
        ),
    ],
)
def test_an_edit_whose_result_cannot_be_computed_is_refused(guard, setup, old, reason):
    path = guard.memory_dir / "notes.md"
    setup(path)
    before = path.read_bytes() if path.is_file() else None
    decision = edit(guard, old, "DB_PASSWORD=hunter2Secret9")
    assert isinstance(decision, Deny), decision
    assert decision.reason.startswith("refused this Edit of notes.md in the memory folder ")
    assert "nothing was written, since it cannot be checked for secrets" in decision.reason
    assert reason in decision.reason and "\n" not in decision.reason
    assert "hunter2Secret9" not in decision.reason
    assert (path.read_bytes() if path.is_file() else None) == before


def test_an_edit_creating_a_file_is_judged_by_its_new_text(guard):
    assert isinstance(edit(guard, "", "DB_PASSWORD=hunter2Secret9", file="new.md"), Deny)
    assert isinstance(edit(guard, "", "the password is in Vault", file="new.md"), Allow)


def test_writes_too_large_to_check_are_refused_and_smaller_ones_scanned(guard):
    path = str(guard.memory_dir / "big.md")
    big = guard.can_use_tool("Write", {"file_path": path, "content": "x" * (8 * 1024 * 1024 + 1)})
    assert isinstance(big, Deny) and "the file would be over 8 MiB" in big.reason
    wide = guard.can_use_tool("Write", {"file_path": path, "content": "é" * (4 * 1024 * 1024 + 1)})
    assert isinstance(wide, Deny) and "over 8 MiB" in wide.reason  # counted in UTF-8 bytes
    assert isinstance(guard.can_use_tool("Write", {"file_path": path, "content": 5}), Deny)
    ok = guard.can_use_tool("Write", {"file_path": path, "content": "notes\n" * 100_000})
    assert isinstance(ok, Allow)


def test_checks_outside_the_memory_folder_are_left_to_the_tool(guard, tmp_path):
    (tmp_path / "big.md").write_text("x" * (9 * 1024 * 1024))
    decision = guard.can_use_tool(
        "Edit", {"file_path": str(tmp_path / "big.md"), "old_string": "missing", "new_string": "y"}
    )
    assert isinstance(decision, Allow)


# --- what hides a token ----------------------------------------------------------------------
HIDERS = [
    "\u202e",
    "\U000e0061",
    "\ufe0f",
    "\u3164",
    "\u0301",
    "\u200b",
    "\u2066",
    "\u00ad",
    "\ufeff",
    "\U000e0100",
    "\u034f",
    "\u115f",
    "\uffa0",
    "\x07",
    "\x1b",
    "\ue000",
    "\u20dd",
]


@pytest.mark.parametrize("hider", HIDERS, ids=lambda h: f"U+{ord(h):04X}")
def test_invisible_characters_do_not_hide_a_token(hider):
    assert kinds(f"ghp_a1B2c3D4{hider}e5F6g7H8i9J0k1L2m3N4o5P6q7R8") == ["a credential"]
    assert kinds(f"DB_PASS{hider}WORD=hunter2Secret9") == ["a password"]
    assert kinds(f"npm_{hider}" + "a1B2" * 9) == ["a credential"]


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("ghр_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a credential"),  # Cyrillic р
        ("DB_PАSSWORD=hunter2Secret9", "a password"),  # Cyrillic А
        ("ΑΡΙ_ΤΟΚΕΝ=q1w2e3r4t5y6", "a token"),  # Greek capitals
        ("gІpat-x8Yz3Qw9Lm2Nb7Vc4Kp1".replace("І", "l"), "a credential"),
        ("sеcrеt: 9f8e7d6c5b4a3210", "a secret"),  # Cyrillic е
        ("ρassword: Tr0ub4dor3", "a password"),  # Greek rho
        ("ｓｋ＿ｌｉｖｅ＿4eC39HqLyjWDarjtT1zdp7dc", "a credential"),  # fullwidth
    ],
)
def test_lookalike_letters_do_not_hide_a_secret(text, kind):
    assert kind in kinds(text), find_secrets(text)


@pytest.mark.parametrize(
    "text",
    [
        "Пароль от базы хранится в Vault, спросите у дежурного.",
        "Το κλειδί βρίσκεται στο 1Password.",
        "Der Schlüssel liegt im Tresor; café, naïve, résumé",
        "部署密钥在保险库里。トークンは環境変数にあります。",
        "Release 🚀 went fine 👍🏽 — thanks ❤️",
        "नमस्ते, पासवर्ड वॉल्ट में है",
    ],
)
def test_text_in_other_scripts_passes(text):
    assert find_secrets(text) == []


def test_folding_keeps_lines_and_leaves_the_file_alone(guard):
    from claude_mini.memory.secrets.fold import fold_for_scan

    text = "a\u200b\nb\u0301\r\nc\U000e0061\n\nghр_"
    assert fold_for_scan(text).split("\n") == ["a", "b\r", "c", "", "ghp_"]
    content = "ok\n\u202eremark\nDB_PАSSWORD=hunter2Secret9\n"
    decision = guard.can_use_tool("Write", {"file_path": str(guard.memory_dir / "m.md"), "content": content})
    assert isinstance(decision, Deny) and "on line 3" in decision.reason
    assert not (guard.memory_dir / "m.md").exists()


# --- shapes found since the review --------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("aws: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "an AWS secret access key"),
        ("The AWS secret is Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0h", "an AWS secret access key"),
        ("prod secret access key\n  je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY", "an AWS secret access key"),
        ("-----begin rsa private key-----\nabc", "a private key"),
        ("-----BEGIN RSA PRIVATE\nKEY-----", "a private key"),
        ("-----BEGIN\nOPENSSH PRIVATE KEY-----", "a private key"),
        ("STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "a credential"),
        ("db:\n  password: |\n    hunter2Secret9\n", "a password"),
        ("smtp:\n  secret: >-\n\n    Q9w8E7r6T5y4U3\n", "a secret"),
        ('PASSWORD="correct horse battery staple"', "a password"),
        ("db_password: 'purple monkey dishwasher 42'", "a password"),
        ('docker login --password "violet tiger lamp river"', "a password"),
        ("Cookie: sessionid=a8f5f167f44f4964e6c998dee827110c; theme=dark", "a session cookie"),
        ("Set-Cookie: _myapp_session=Q2hhbmdlTWU5ODc2NTQzMjE; Path=/; HttpOnly", "a session cookie"),
        ("curl --cookie 'connect.sid=s%3Aabc123def456ghi789' https://x", "a session cookie"),
        ("GHP_A1B2C3D4E5F6G7H8I9J0K1L2M3N4O5P6Q7R8", "a credential"),
        ("GLPAT-x8Yz3Qw9Lm2Nb7Vc4Kp1", "a credential"),
        ("sk-0123456789abcdef0123456789abcdef", "an API key"),
    ],
)
def test_shapes_the_review_found_missing(text, kind):
    assert kind in kinds(text), find_secrets(text)


@pytest.mark.parametrize(
    "text",
    [
        "pip install sk-learn-extras-version-two-thousand",
        "uses sk-image-processing-toolkit-extras",
        "see the sk-learn-compat-shims-package",
        'PASSWORD="see the vault entry"',
        'password: "stored in 1Password"',
        "password = 'ask ops for it'",
        'password: "<your password here>"',
        "password: |\n  see the vault\n",
        "token: >\n  the CSRF token from the header\n",
        "Cookie: theme=dark; lang=en",
        "Set-Cookie: sessionid=<value>; HttpOnly",
        "Set-Cookie: session=...; Path=/",
        "the cookie banner: accept all",
        "aws region eu-west-1, commit 3f2a9c1e4b5d6f7a8b9c0d1e2f3a4b5c6d7e8f90",
        "secret path src/components/SecretManagerSettings/View.tsx",
        "AWS docs: aws_secret_access_key comes from `aws configure`",
        "-----BEGIN PUBLIC KEY-----",
        "how to begin: the private key lives in Vault",
    ],
)
def test_shapes_that_stay_allowed(text):
    assert find_secrets(text) == [], [f.describe() for f in find_secrets(text)]
