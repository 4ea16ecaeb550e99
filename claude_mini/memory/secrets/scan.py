"""What looks like a credential in a text: the detection half of the memory secret guard.

Four families:

- typed tokens, recognisable by a fixed prefix or shape (`ghp_`, `glpat-`,
  `npm_`, `hvs.`, `sk-ant-`, JWTs, Slack webhooks, PEM headers, ...): first the
  well-kept rule set (memory/secrets/rules.py: gitleaks'/Betterleaks' rules and
  Google's Veles detectors, about 490), then our few documented extras for what
  it lacks (TOKEN_PATTERNS);
- key/value assignments whose key names a secret (`.env`, `export`, YAML,
  JSON, TOML, INI, URL query, connection strings, command-line flags,
  `Authorization:` headers), where the value must look like a real secret:
  placeholders (`<your password>`, `${VAR}`, `$VAR`, `xxx`, `***`,
  `changeme`), references (`DB_PASSWORD`, paths, vault URLs, `getenv(...)`),
  short values and prose ("password: see 1Password") pass;
- key material without its header: a block of long base64 lines, or base64
  that starts like a DER private key or an OpenSSH key; PEM headers in any case,
  split across lines;
- an AWS secret access key written bare next to its access key id, or on (or
  under) a line that says aws or secret;
- `Cookie:` / `Set-Cookie:` / `--cookie` values of session-like cookies; YAML
  block values (`password: |` and the next line); quoted passphrases
  (`PASSWORD="correct horse battery staple"`, not "see the vault entry").

The text is folded first (memory/secrets/fold.py): invisible characters and
Cyrillic/Greek lookalike letters hide nothing.

Findings say what was found and on which line, never the value: the kind,
plus the key name, the token's fixed public prefix or the rule's id. Our own
patterns are regular expressions without nested quantifiers and the rule set
runs on Vectorscan, so a scan is linear in the text.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from claude_mini.memory.secrets.fold import fold_for_scan
from claude_mini.memory.secrets.rules import rule_hits
from claude_mini.memory.secrets.values import (
    MAX_KEY_CHARS,
    MIN_URL_PASSWORD_CHARS,
    QUOTES,
    SENSITIVE_STEMS,
    assignment_value,
    char_classes,
    classify_key,
    has_letter_and_digit,
    is_reference,
    is_stand_in,
    value_is_secret,
)

PEM_MIN_LINES = 3  # consecutive long base64 lines that make a key body
PEM_MIN_LINE_CHARS = 40
AWS_PAIR_WINDOW = 400  # characters around an access key id searched for its secret key
MAX_KEYS_PER_LINE = 16
SHOWN_FINDINGS = 3  # a refusal names at most this many, then counts the rest


@dataclass(frozen=True)
class SecretFinding:
    """A likely secret: its kind, a label that is safe to show, and its line (1-based)."""

    kind: str
    line: int
    label: str = ""  # a key name (`DB_PASSWORD=…`) or a token's fixed prefix (`ghp_…`)

    def describe(self) -> str:
        """`a GitHub token (ghp_…) on line 3`: what was found and where, without the value."""
        shown = f" ({self.label})" if self.label else ""
        return f"{self.kind}{shown} on line {self.line}"


@dataclass(frozen=True)
class _Hit:
    """A raw match: where it starts in the text, what it is, what may be shown."""

    start: int
    kind: str
    label: str = ""


# --- typed tokens -------------------------------------------------------------------------
@dataclass(frozen=True)
class TokenPattern:
    """One kind of typed secret; group `value` is the secret, `prefix` (if any) is shown."""

    kind: str
    regex: re.Pattern[str]
    hints: tuple[str, ...]  # lower-case literals one of which every match contains
    checked: bool = False  # the value must not be a placeholder or reference
    min_chars: int = 0


def _t(
    kind: str, pattern: str, hints: str, flags: int = 0, *, checked: bool = False, min_chars: int = 0
) -> TokenPattern:
    """A TokenPattern; `hints` (space-separated) let a scan skip the regex when none occurs."""
    return TokenPattern(kind, re.compile(pattern, flags), tuple(hints.split()), checked, min_chars)


_B64 = r"[A-Za-z0-9+/]"
# Our own typed patterns: only what the rule set (memory/secrets/rules.py) lacks, each saying why.
# Everything with a fixed provider prefix it knows (GitHub, GitLab, npm, PyPI, Slack, Google,
# SendGrid, Shopify, DigitalOcean, Databricks, Twilio, Stripe sk_/rk_, JWT, age, Vault hvs.,
# Anthropic, ...) is the rule set's job and is not repeated here.
TOKEN_PATTERNS: tuple[TokenPattern, ...] = (
    # The catalog wants an upper-case header on one line; a memory may carry it lower-cased or
    # wrapped: `-----begin rsa private\nkey-----`.
    _t(
        "a private key",
        r"(?P<value>-{3,5}\s{0,4}BEGIN\s{1,4}(?:[A-Z0-9]{1,16}\s{1,4}){0,3}PRIVATE"
        r"\s{1,4}KEY)",
        "private",
        re.IGNORECASE,
    ),
    # PuTTY's .ppk format has no rule in the catalog.
    _t(
        "a PuTTY private key",
        r"(?P<value>PuTTY-User-Key-File-\d+:|Private-Lines:\s*\d+)",
        "putty-user-key-file- private-lines:",
    ),
    # A key pasted without its header: base64 that starts like a DER private key or an OpenSSH key.
    _t(
        "a private key body",
        r"(?<![A-Za-z0-9+/])(?P<value>(?:MII" + _B64 + r"{3}IBA[AD]|MIG" + _B64 + r"AgEA"
        r"|MHcCAQEE|MC4CAQAw|b3BlbnNzaC1rZXktdjE)" + _B64 + r"{40,})",
        "mii mig mhccaqee mc4caqaw b3blbnnzac1rzxktdje",
    ),
    # OpenAI-style `sk-` keys whose length and shape changed over the years (sk-proj-, sk-svcacct-,
    # bare sk- + 48): the catalog's rules want one exact shape each and miss the others.
    _t(
        "an API key",
        r"(?<![\w-])(?P<value>(?P<prefix>sk-(?:ant-(?:api|admin)\d\d-|ant-|proj-|"
        r"svcacct-|admin-|live-)?)(?P<body>[A-Za-z0-9_-]{20,}))",
        "sk-",
    ),
    # Stripe's webhook signing secret: the catalog knows sk_/rk_ keys only.
    _t("a Stripe webhook secret", r"(?<![\w-])(?P<value>(?P<prefix>whsec_)[A-Za-z0-9]{24,})", "whsec_"),
    # The catalog reports an access key id only beside its secret key; alone it still names an
    # account and invites the secret next to it.
    _t(
        "an AWS access key id",
        r"(?<![A-Z0-9])(?P<value>(?P<prefix>AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?![A-Z0-9])",
        "akia asia abia acca",
    ),
    # ...and a secret key only beside its id: named as such (`aws_secret_access_key = …`) it is one.
    _t(
        "an AWS secret access key",
        r"(?:aws_?)?secret_?access_?key[\"'`]?\s*(?:=|:|=>)\s*[\"'`]?"
        r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "access",
        re.IGNORECASE,
    ),
    # HashiCorp Vault batch tokens (`hvb.`); the catalog has the service tokens (`hvs.`) only.
    _t("a Vault batch token", r"(?<![\w.])(?P<value>(?P<prefix>hvb\.)[\w-]{40,})", "hvb."),
    # No catalog rule for these four formats.
    _t(
        "a Discord webhook URL",
        r"(?P<value>(?P<prefix>https://(?:\w+\.)?discord(?:app)?\.com/"
        r"api/webhooks/)\d+/[\w-]{40,})",
        "discord",
    ),
    _t("a Google OAuth client secret", r"(?<![\w-])(?P<value>(?P<prefix>GOCSPX-)[\w-]{24,})", "gocspx-"),
    _t("a Telegram bot token", r"(?<![\w:])(?P<value>\d{8,10}:AA[\w-]{33})(?![\w-])", ":aa"),
    _t("an Azure storage account key", r"(?P<prefix>AccountKey=)(?P<value>[A-Za-z0-9+/]{60,}={0,2})", "accountkey="),
    _t("an Azure SAS signature", r"[?&](?P<prefix>sig=)(?P<value>[A-Za-z0-9%+/]{30,})", "sig="),
    # Context rather than format: a password where a URL, a shell line or .netrc puts one,
    # judged by the same placeholder and reference checks as assignments.
    _t(
        "a password in a URL",
        r"(?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,30}://[^\s/:@]{0,256}:(?P<value>[^\s/@]{1,256})@[\w.\[-]",
        "://",
        re.IGNORECASE,
        checked=True,
        min_chars=MIN_URL_PASSWORD_CHARS,
    ),
    _t("a bearer token", r"\bBearer\s+(?P<value>[A-Za-z0-9\-._~+/]{16,}=*)", "bearer", checked=True),
    _t(
        "a password on a command line",
        r"\b(?:mysql(?:dump|admin)?|mariadb)\b[^\n]{0,200}?\s-p(?P<value>[^\s'\"-][^\s'\"]{3,})"
        r"|\bsshpass\s+-p[ \t]*[\"']?(?P<v3>[^\s'\"-][^\s'\"]{3,})"
        r"|\bcurl\b[^\n]{0,200}?\s(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<v2>[^\s\"']{4,})",
        "mysql mariadb sshpass curl",
        checked=True,
        min_chars=MIN_URL_PASSWORD_CHARS,
    ),
    _t(
        "a password in a .netrc entry",
        r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(?P<value>\S+)",
        "machine",
        checked=True,
        min_chars=MIN_URL_PASSWORD_CHARS,
    ),
)
_PACKAGE_NAME = re.compile(r"[a-z]+(?:-[a-z0-9]+){2,}")  # sk-learn-extras-version-two: a name, not a key


def _value_of(match: re.Match[str]) -> str:
    groups = match.groupdict()
    return groups.get("value") or groups.get("v2") or groups.get("v3") or ""


def _prefix_of(match: re.Match[str]) -> str:
    groups = match.groupdict()
    prefix = groups.get("prefix") or groups.get("p2") or ""
    return prefix + "…" if prefix else ""


def _typed_hits(text: str) -> Iterator[_Hit]:
    lower = text.lower()  # each regex runs only if one of its literals occurs (5x faster on clean text)
    for pattern in TOKEN_PATTERNS:
        if not any(hint in lower for hint in pattern.hints):
            continue
        for match in pattern.regex.finditer(text):
            value = _value_of(match)
            if pattern.checked and (len(value) < pattern.min_chars or is_stand_in(value) or is_reference(value)):
                continue
            if pattern.kind == "a bearer token" and not has_letter_and_digit(value):
                continue
            if pattern.kind == "an API key" and not _is_api_key_body(match):
                continue
            yield _Hit(match.start(), pattern.kind, _prefix_of(match))


def _is_api_key_body(match: re.Match[str]) -> bool:
    """A bare `sk-` key has a digit and is not a hyphenated name (`sk-learn-extras-version`)."""
    if match.group("prefix") != "sk-":
        return True  # sk-ant-…, sk-proj-…: the prefix alone says what it is
    body = match.group("body")
    return has_letter_and_digit(body) and _PACKAGE_NAME.fullmatch(body) is None


# --- key/value assignments ----------------------------------------------------------------
# A key token, optional closing quote/bracket and markdown bold, then an assignment operator.
_ASSIGNMENT = re.compile(
    r"(?<![\w.\-])(?P<key>[\w.\-]{2," + str(MAX_KEY_CHARS) + r"})[\"'`\]]?(?:\*\*|__)?[ \t]*"
    r"(?P<op>:=|=>|\?=|==|=|:(?!//))(?:\*\*|__)?[ \t]*"
)


def _previous_word(text: str, start: int) -> str:
    """The word before position `start` on its line ("API" in "API key: ...")."""
    head = text[max(0, start - 40) : start].rsplit("\n", 1)[-1].rstrip()
    words = re.findall(r"[A-Za-z]+", head)
    return words[-1] if words else ""


def _assignments(text: str) -> Iterator[re.Match[str]]:
    """The assignments with a sensitive-looking key; past MAX_KEYS_PER_LINE on one line, the
    rest of that line is skipped (no real file has that many, a hostile one stays linear)."""
    pos, line_start, seen = 0, 0, 0
    while (match := _ASSIGNMENT.search(text, pos)) is not None:
        pos = match.end()
        if not any(stem in match.group("key").lower() for stem in SENSITIVE_STEMS):
            continue
        if text.rfind("\n", line_start, match.start()) >= 0:
            line_start, seen = text.rfind("\n", line_start, match.start()) + 1, 0
        seen += 1
        if seen > MAX_KEYS_PER_LINE:
            newline = text.find("\n", pos)
            if newline < 0:
                return
            pos = newline + 1
            continue
        yield match


def _assignment_hits(text: str) -> Iterator[_Hit]:
    for match in _assignments(text):
        key = match.group("key")
        found = classify_key(key, _previous_word(text, match.start()))
        if found is None:
            continue
        value = assignment_value(text, match.end(), found.category)
        if value_is_secret(value.text, found.category, value.prose, value.literal):
            label = key.strip("-_.") or key
            op = "=" if match.group("op") in ("=", ":=", "?=", "==") else match.group("op")
            yield _Hit(match.start("key"), found.kind, f"{label}{op}…")


def _flag_hits(text: str) -> Iterator[_Hit]:
    """`--password hunter22`, `--token abc123...`: a secret passed as a command-line flag."""
    for match in _FLAG.finditer(text):
        found = classify_key(match.group("flag"))
        if found is None:
            continue
        raw = match.group("value")
        quoted = raw[:1] in QUOTES
        if value_is_secret(raw[1:-1] if quoted else raw, found.category, literal=quoted):
            yield _Hit(match.start(), found.kind, f"--{match.group('flag')} …")


_FLAG = re.compile(
    r"(?<![\w-])--?(?P<flag>[a-z][\w-]{1,40})[ \t]+"
    r"(?P<value>\"[^\"\n]+\"|'[^'\n]+'|[^\s'\"-]\S*)"
)


# --- cookies -----------------------------------------------------------------------------
_COOKIE = re.compile(
    r"(?<![\w-])(?:(?:set-)?cookie[\"']?[ \t]*:|--cookie(?:[ \t]+|=))[ \t]*[\"']?"
    r"(?P<pairs>[^\n]{1,1024})",
    re.IGNORECASE,
)
_COOKIE_PAIR = re.compile(r"(?P<name>[\w.\-]{1,64})=(?P<value>[^;\s\"',]{1,512})")
_SESSION_STEMS = (
    "sess",
    "sid",
    "auth",
    "token",
    "jwt",
    "remember",
    "login",
    "secret",
    "key",
    "pass",
    "cred",
    "identity",
    "user",
)


def _cookie_hits(text: str) -> Iterator[_Hit]:
    """`Cookie:` / `Set-Cookie:` headers (and curl's `--cookie`) carrying a session-like value."""
    if "cookie" not in text.lower():
        return
    for header in _COOKIE.finditer(text):
        for pair in _COOKIE_PAIR.finditer(header.group("pairs")):
            name, value = pair.group("name"), pair.group("value")
            if any(stem in name.lower() for stem in _SESSION_STEMS) and value_is_secret(value, "secret"):
                yield _Hit(header.start(), "a session cookie", f"{name}=…")
                break


# --- key material without a header, and bare AWS secret keys -----------------------------
_B64_LINE = re.compile(r"[ \t]*[A-Za-z0-9+/]{" + str(PEM_MIN_LINE_CHARS) + r",}={0,2}[ \t]*")
_PUBLIC_HEADER = re.compile(
    r"-----BEGIN (?:CERTIFICATE|PUBLIC KEY|RSA PUBLIC KEY|PGP PUBLIC KEY"
    r"|PGP SIGNATURE|PGP MESSAGE|CERTIFICATE REQUEST|X509 CRL)"
)
_HEX = re.compile(r"[\sA-Fa-f0-9]+")


def _key_body_hits(text: str) -> Iterator[_Hit]:
    """Runs of long base64 lines (a PEM body whose header was left out), not under a public header."""
    lines = text.split("\n")
    offsets = _line_offsets(lines)
    run_start = None
    for i, line in enumerate([*lines, ""]):
        if i < len(lines) and _B64_LINE.fullmatch(line):
            run_start = i if run_start is None else run_start
            continue
        if run_start is not None and i - run_start >= PEM_MIN_LINES:
            block = "\n".join(lines[run_start:i])
            header = "\n".join(lines[max(0, run_start - 2) : run_start])
            if (
                not _PUBLIC_HEADER.search(header)
                and not _HEX.fullmatch(block)
                and char_classes(block.replace("\n", "")) >= 3
            ):
                yield _Hit(offsets[run_start], "a key body (a long base64 block)")
        run_start = None


def _line_offsets(lines: list[str]) -> list[int]:
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    return offsets


_AWS_ID = re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])")
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _aws_pair_hits(text: str) -> Iterator[_Hit]:
    """A 40-character secret access key written near an access key id, without its key name."""
    for key_id in _AWS_ID.finditer(text):
        low = max(0, key_id.start() - AWS_PAIR_WINDOW)
        window = text[low : key_id.end() + AWS_PAIR_WINDOW]
        for match in _AWS_SECRET.finditer(window):
            value = match.group(0)
            if char_classes(value) >= 3 and not _HEX.fullmatch(value):
                yield _Hit(low + match.start(), "an AWS secret access key")


def _is_random_40(value: str) -> bool:
    """Whether a 40-character base64 word mixes lower case, upper case and digits like a real key."""
    return any(c.islower() for c in value) and any(c.isupper() for c in value) and any(c.isdigit() for c in value)


_AWS_CONTEXT = ("aws", "secret")


def _aws_context_hits(text: str) -> Iterator[_Hit]:
    """A bare 40-character secret access key on a line (or below a line) that says aws or secret."""
    lower = text.lower()
    if not any(word in lower for word in _AWS_CONTEXT):
        return
    for match in _AWS_SECRET.finditer(text):
        if not _is_random_40(match.group(0)):
            continue
        line_start = lower.rfind("\n", 0, match.start()) + 1
        context_start = lower.rfind("\n", 0, max(0, line_start - 1)) + 1
        line_end = lower.find("\n", match.end())
        context = lower[context_start : line_end if line_end >= 0 else len(lower)]
        if any(word in context for word in _AWS_CONTEXT):
            yield _Hit(match.start(), "an AWS secret access key")


# --- the rule set ------------------------------------------------------------------------
def _rule_set_hits(text: str) -> Iterator[_Hit]:
    """Tokens the well-kept rule set recognises (memory/secrets/rules.py), named by its rule id."""
    for hit in rule_hits(text):
        yield _Hit(hit.start, "a credential", f"{hit.rule} rule")


# --- the scan -------------------------------------------------------------------------------
# Most specific first: where two detectors flag one line, the first one names it (our typed
# patterns before the rule set, so a URL's password or a bearer token keeps its own name).
DETECTORS: tuple[Callable[[str], Iterator[_Hit]], ...] = (
    _typed_hits,
    _rule_set_hits,
    _aws_pair_hits,
    _assignment_hits,
    _cookie_hits,
    _flag_hits,
    _aws_context_hits,
    _key_body_hits,
)


def find_secrets(text: object) -> list[SecretFinding]:
    """Every likely secret in `text`, one per line, in line order."""
    if not isinstance(text, str) or not text:
        return []
    text = fold_for_scan(text)  # invisible characters and lookalike letters hide nothing
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    by_line: dict[int, SecretFinding] = {}
    for detect in DETECTORS:
        for hit in detect(text):
            line = bisect.bisect_right(starts, hit.start)
            by_line.setdefault(line, SecretFinding(hit.kind, line, hit.label))
    return [by_line[n] for n in sorted(by_line)]


def find_secret(text: object) -> SecretFinding | None:
    """The first likely secret in `text` (by line), or None."""
    found = find_secrets(text)
    return found[0] if found else None


def describe_findings(found: list[SecretFinding]) -> str:
    """`a password (DB_PASSWORD=…) on line 2 and an npm token (npm_…) on line 5`."""
    parts = [f.describe() for f in found[:SHOWN_FINDINGS]]
    if len(found) > SHOWN_FINDINGS:
        parts.append(f"{len(found) - SHOWN_FINDINGS} more")
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
