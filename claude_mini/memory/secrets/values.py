"""What a secret's value looks like, without a typed pattern: a stand-in or a reference is not one
(`<your-token>`, `$API_KEY`, `config.token`), a key name says which category a value is in, and
a value is judged by its length and character classes (the scan in secrets/scan.py uses these)."""

from __future__ import annotations

import re
from dataclasses import dataclass

MIN_PASSWORD_CHARS = 6
MIN_TOKEN_CHARS = 8
MIN_URL_PASSWORD_CHARS = 4
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 512  # of an assignment's line looked at after its operator


# Words that stand in a value slot without being a secret ("password: required").
_STAND_IN_WORDS = frozenset(
    re.findall(
        r"\S+",
        """
required optional prompt prompted interactive ask none null nil empty unset undefined hidden
masked redacted removed omitted secret secrets password passwords passwd token tokens example
sample dummy fake test testing default disabled enabled true false yes no on off changeme
changeit placeholder todo tbd fixme string str value any env environment keyring keychain
vault 1password keepass keepassxc lastpass bitwarden ssm sops stdin file see stored pass pw pwd
user username login
""",
    )
)


_STAND_IN_PARTS = (
    "example",
    "placeholder",
    "changeme",
    "change_me",
    "change-me",
    "redacted",
    "dummy",
    "your",
    "replace",
    "insert",
    "fixme",
    "todo",
    "sample",
)


_STAND_IN_START = ("$", "<", "{", "!", "[", "ENC[", "@")
_PERCENT_VARIABLE = re.compile(r"%[\w.]+%|%\(\w+\)[sd]")  # %TOKEN%, %(password)s; not %BJAQl9…
_MASK = re.compile(r"[xX*.#•_\-?0]+|(.)\1+")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_REFERENCE_START = (
    "/",
    "~/",
    "./",
    "../",
    "file:",
    "env:",
    "vault:",
    "op://",
    "arn:",
    "sm://",
    "ssm:",
    "secret://",
    "keyring:",
    "http://",
    "https://",
    "secrets.",
    "vars.",
    "env.",
    "process.env",
    "os.environ",
    "ENV[",
    "ENV.",
)


_CODE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[A-Z][a-z]+(?:[A-Z][a-z]+)+")  # config.token, SecretStr
_FILE_NAME = re.compile(r"[\w.\-/]+\.(?:txt|pem|key|json|ya?ml|env|gpg|age|asc|p12|pfx|jks|crt)")


def is_stand_in(value: str) -> bool:
    """Whether `value` holds a place (`<token>`, `${VAR}`, `xxx`, `changeme`) instead of a secret."""
    low = value.lower()
    return (
        low in _STAND_IN_WORDS
        or value.startswith(_STAND_IN_START)
        or _PERCENT_VARIABLE.fullmatch(value) is not None
        or any(part in low for part in _STAND_IN_PARTS)
        or low.startswith(("my-", "my_"))
        or "..." in value
        or "…" in value
        or _MASK.fullmatch(value) is not None
    )


def is_reference(value: str) -> bool:
    """Whether `value` names where a secret lives (an env var, a path, a vault URL) or is code."""
    return (
        _ENV_NAME.fullmatch(value) is not None
        or value.startswith(_REFERENCE_START)
        or "(" in value
        or "[" in value
        or _CODE.fullmatch(value) is not None
        or _FILE_NAME.fullmatch(value) is not None
    )


def char_classes(value: str) -> int:
    """How many of lower case, upper case, digits and symbols `value` mixes."""
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def has_letter_and_digit(value: str) -> bool:
    return any(c.isalpha() for c in value) and any(c.isdigit() for c in value)


_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
SENSITIVE_STEMS = ("pass", "pwd", "pw", "secret", "token", "key", "auth", "cred", "pat")
_PASSWORD_ENDINGS = ("password", "passwd", "passphrase")
_SECRET_ENDINGS = ("secret", "token", "apikey", "authtoken")
_SECRET_WORDS = frozenset({"pwd", "pass", "pw", "credential", "credentials", "creds", "auth", "pat", "authorization"})
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "signing",
        "sign",
        "encryption",
        "encrypt",
        "decryption",
        "master",
        "auth",
        "client",
        "license",
        "account",
        "storage",
        "app",
        "consumer",
        "deploy",
        "hmac",
        "jwt",
        "crypto",
        "cipher",
        "root",
        "session",
        "service",
        "webhook",
    }
)


_NEUTRAL_TAILS = frozenset({"base", "value", "b64", "base64", "hex", "raw", "plain", "plaintext"})
_SCHEME = re.compile(r"(?:bearer|basic|token|bot|digest|negotiate|apikey|sso-key|ssws)[ \t]+", re.IGNORECASE)
QUOTES = "\"'`"
_STRING_PREFIX = re.compile(r"[fbrFBR]{1,2}(?=[\"'])")  # f"Bearer {token}" is code, not a value
_VALUE_CUT = re.compile(r"[;&,]")
_NEXT_ASSIGNMENT = re.compile(r"[A-Za-z_][\w.-]*=\S")
_TRAILING_PUNCT = ".:!?)]}>*\"'`"
_PROSE_OK_TAIL = ("#", "//", "--", ",", ";", "&", "}", ")", "]", "|", "\\")


@dataclass(frozen=True)
class _Key:
    """What an assignment's key says its value is: `password`, `secret` or `header`."""

    category: str
    kind: str


def classify_key(key: str, previous_word: str = "") -> _Key | None:
    """The category of `key` (DB_PASSWORD, apiKey, _SECRET_KEY, x-auth-token), or None."""
    words = [w.lower() for w in _WORDS.findall(key)]
    while len(words) > 1 and words[-1] in _NEUTRAL_TAILS:
        words.pop()  # secret_key_base, token_value: the tail does not change what it is
    if not words:
        return None
    last = words[-1]
    before = words[-2] if len(words) > 1 else previous_word.lower()
    if last == "authorization":
        return _Key("header", "an Authorization header")
    if last.endswith(_PASSWORD_ENDINGS) or last in ("pwd", "pass", "pw"):
        return _Key("password", "a password")
    if last.endswith(_SECRET_ENDINGS) or last in _SECRET_WORDS:
        return _Key("secret", "a token" if "token" in last else "a secret")
    if last == "key" and before in _KEY_QUALIFIERS:
        return _Key("secret", "a secret key")
    return None


@dataclass(frozen=True)
class _Value:
    """An assigned value, whether prose follows it, and whether it is a literal string (quoted)."""

    text: str
    prose: bool = False
    literal: bool = False  # quoted, or a YAML block: spaces belong to the value


def _quoted_value(rest: str) -> _Value | None:
    """The value inside quotes at the start of `rest`, if it closes on the same line."""
    quote = rest[:1]
    if not quote or quote not in QUOTES:
        return None
    end = rest.find(quote, 1)
    line_end = rest.find("\n")
    if end < 0 or (0 <= line_end < end):
        return None
    return _Value(rest[1:end], literal=True)


def _unquoted_value(rest: str) -> _Value:
    """The bare value at the start of `rest` and whether prose follows it on the line."""
    line = rest.split("\n", 1)[0]
    token = line.split(None, 1)[0] if line.strip() and not line[:1].isspace() else ""
    cut = _VALUE_CUT.search(token)
    value = token[: cut.start()] if cut else token
    value = value.rstrip(_TRAILING_PUNCT)
    tail = line[len(token) :].strip()
    # `DD_API_KEY=… DD_SITE=…`: another assignment follows, not a sentence
    prose = bool(tail) and not tail.startswith(_PROSE_OK_TAIL) and _NEXT_ASSIGNMENT.match(tail) is None
    return _Value(value, prose)


_YAML_BLOCK = re.compile(
    r"[|>][-+]?[1-9]?[-+]?[ \t]*(?:#[^\n]*)?\n(?:[ \t]*\n){0,3}"
    r"(?P<line>[ \t]+[^\n]*)"
)


def _block_value(rest: str) -> _Value | None:
    """The first line of a YAML block scalar (`password: |` then an indented line), if `rest` is one."""
    block = _YAML_BLOCK.match(rest)
    if block is None:
        return None
    return _Value(block.group("line").strip(), literal=True)


def assignment_value(text: str, end: int, category: str) -> _Value:
    """The value after an operator ending at `end` (the header scheme skipped)."""
    rest = text[end : end + MAX_VALUE_CHARS]
    code = _STRING_PREFIX.match(rest)
    if code:
        rest = rest[code.end() :]
    if category == "header":  # `Authorization: Bearer abc`, `"Authorization": "Basic abc"`
        bare = rest.lstrip(QUOTES)
        scheme = _SCHEME.match(bare)
        if scheme:
            return _unquoted_value(bare[scheme.end() :])
    found = _quoted_value(rest) or _block_value(rest)
    return found if found is not None else _unquoted_value(rest.lstrip(QUOTES))


# Words that make a quoted value with spaces a sentence about a password, not a passphrase.
_PROSE_WORDS = _STAND_IN_WORDS | frozenset(
    re.findall(
        r"\S+",
        """
a an the in is are was be it its this that for from of to at on by with and or not no our my your
their his her see use used ask via under over here there has have had read set get kept lives
held stored saved found entry manager variable same as like one any every each please check
""",
    )
)


PASSPHRASE_MIN_CHARS = 12


def is_passphrase(value: str) -> bool:
    """Whether a quoted value with spaces is a passphrase (`correct horse battery staple`).

    Two to eight words, at least 12 characters, none of them a function word or a
    stand-in ("see the vault entry", "<your password here>" are prose).
    """
    words = value.split()
    if not 2 <= len(words) <= 8 or len(value) < PASSPHRASE_MIN_CHARS or is_stand_in(value):
        return False
    return not any(w.strip(".,;:!?()'\"").lower() in _PROSE_WORDS or w[:1] in "$<{%" for w in words)


def value_is_secret(value: str, category: str, prose: bool = False, literal: bool = False) -> bool:
    """Whether an assigned value looks like a real secret for a key of `category`."""
    if any(c.isspace() for c in value):
        return literal and category == "password" and is_passphrase(value)
    if len(value) < MIN_PASSWORD_CHARS:
        return False
    if is_stand_in(value) or is_reference(value):
        return False
    if prose:  # "password: hunter2 (staging)" yes, "auth: OAuth2 via Keycloak" no
        if category == "password":
            return has_letter_and_digit(value)
        return len(value) >= 12 and char_classes(value) >= 3
    if category == "password":
        return True
    if category == "header":  # Basic credentials are base64 letters, often without a digit
        return len(value) >= MIN_TOKEN_CHARS
    return len(value) >= MIN_TOKEN_CHARS and (has_letter_and_digit(value) or len(value) >= 32)
