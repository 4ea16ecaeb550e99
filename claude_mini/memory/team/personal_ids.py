"""Personal identifiers in a text: phone numbers, bank and card numbers, national ids, birth dates,
home addresses, and a public IP address said to be a person's.

Checks come from well-kept libraries where one exists: `phonenumbers` (Google's
libphonenumber metadata) decides what is a real phone number of which country, and
`python-stdnum` checks IBANs (mod 97), card numbers (Luhn), US SSNs and routing
numbers, Canadian SINs, Indian PANs and Aadhaar numbers, and more. Our own part is
only finding candidates and the context that makes a number personal.

Engineering notes are full of numbers (SHAs, ports, build numbers, timestamps), so a
bare number counts only when its checksum holds AND its shape is strict, or when a
word next to it says what it is (`SSN`, `passport`, `born`, `routing`). Findings
name the kind, never the value. Each detector is linear in the text.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator

Hit = tuple[int, str, str]  # offset, kind, label (never the value)
CONTEXT_CHARS = 40  # how far before a number its naming word may stand
PHONE_REGIONS = ("US", "GB", "DE", "FR", "IN", "ES", "IT", "NL", "BR", "AU", "CA", "JP")
MIN_PHONE_DIGITS = 8


def _before(text: str, start: int) -> str:
    """The few words before `start` on its line, lower-cased: where a naming word stands."""
    head = text[max(0, start - CONTEXT_CHARS) : start]
    return head.rsplit("\n", 1)[-1].lower()


# --- phone numbers (phonenumbers) -----------------------------------------------------------
_PHONE_SHAPE = re.compile(r"[+(]|\d[ .\-/]\d")  # written as a phone number: +, (…), or grouped


def _phone_hits(text: str) -> Iterator[Hit]:
    """Valid numbers of a country we try, written as phone numbers (grouped, or with + or ( )."""
    import phonenumbers

    if sum(c.isdigit() for c in text) < MIN_PHONE_DIGITS:
        return
    seen: set[int] = set()
    for region in PHONE_REGIONS:  # +… numbers are found under any region; national ones need theirs
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            raw = match.raw_string
            if match.start in seen or not _PHONE_SHAPE.search(raw):
                continue  # a bare run of digits is more likely an id or a timestamp
            seen.add(match.start)
            yield (match.start, "a phone number", "")


# --- bank and card numbers (stdnum) -----------------------------------------------------------
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]{1,4}){3,8}(?![A-Za-z0-9])")
_CARD = re.compile(r"(?<![\w.-])\d(?:[ -]?\d){12,18}(?![\w-])")
# Issuer prefixes (IIN ranges) of Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro.
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|6(?:011|5|4[4-9]|2)|35|3[068]|5[06-9]")


def _card_length_fits(digits: str) -> bool:
    """An issuer prefix with that issuer's length (Amex 15, Mastercard 16, Visa 13/16/19)."""
    if _CARD_PREFIX.match(digits) is None:
        return False
    if digits[:2] in ("34", "37"):
        return len(digits) == 15
    if digits[0] == "4":
        return len(digits) in (13, 16, 19)
    return len(digits) >= 16


def _iban_hits(text: str) -> Iterator[Hit]:
    from stdnum import iban

    for match in _IBAN.finditer(text):
        groups = match.group(0).split(" ")
        while len(groups) > 1 and not any(c.isdigit() for c in groups[-1]):
            groups.pop()  # the regex may take a word after the number (`… 00 BIC`)
        if iban.is_valid("".join(groups)):
            yield (match.start(), "a bank account number (IBAN)", "")


def _card_hits(text: str) -> Iterator[Hit]:
    from stdnum import luhn

    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if _card_length_fits(digits) and luhn.is_valid(digits) and len(set(digits)) > 2:
            yield (match.start(), "a payment card number", "")


# --- national ids: a naming word, then stdnum's check for that id -------------------------------
def _validator(module: str) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        import importlib

        return bool(importlib.import_module(f"stdnum.{module}").is_valid(value))

    return check


def _always(value: str) -> bool:
    return True


# (words that name the id, the id's shape, its check, the kind shown)
_NAMED_IDS: tuple[tuple[re.Pattern[str], re.Pattern[str], Callable[[str], bool], str], ...] = (
    (
        re.compile(r"\bssn\b|social security"),
        re.compile(r"\d{3}[- ]?\d{2}[- ]?\d{4}"),
        _validator("us.ssn"),
        "a US social security number",
    ),
    (
        re.compile(r"\bsin\b|social insurance"),
        re.compile(r"\d{3}[- ]?\d{3}[- ]?\d{3}"),
        _validator("ca.sin"),
        "a Canadian social insurance number",
    ),
    (re.compile(r"\bpan\b"), re.compile(r"[A-Z]{5}\d{4}[A-Z]"), _validator("in_.pan"), "an Indian PAN"),
    (re.compile(r"aadhaar"), re.compile(r"\d{4}[ -]?\d{4}[ -]?\d{4}"), _validator("in_.aadhaar"), "an Aadhaar number"),
    (re.compile(r"\bbsn\b"), re.compile(r"\d{8,9}"), _validator("nl.bsn"), "a Dutch BSN"),
    (re.compile(r"pesel"), re.compile(r"\d{11}"), _validator("pl.pesel"), "a PESEL number"),
    (re.compile(r"\bcpf\b"), re.compile(r"\d{3}\.?\d{3}\.?\d{3}-?\d{2}"), _validator("br.cpf"), "a Brazilian CPF"),
    (
        re.compile(r"\b(?:dni|nie|nif)\b"),
        re.compile(r"[XYZ0-9]\d{7}-?[A-Z]"),
        _validator("es.nif"),
        "a Spanish national id",
    ),
    (
        re.compile(r"codice fiscale"),
        re.compile(r"[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z]"),
        _validator("it.codicefiscale"),
        "an Italian fiscal code",
    ),
    (re.compile(r"\bnhs\b"), re.compile(r"\d{3}[ -]?\d{3}[ -]?\d{4}"), _validator("gb.nhs"), "an NHS number"),
    (
        re.compile(r"\btfn\b|tax file"),
        re.compile(r"\d{3}[ ]?\d{3}[ ]?\d{2,3}"),
        _validator("au.tfn"),
        "an Australian tax file number",
    ),
    (
        re.compile(r"\brouting\b|\baba\b"),
        re.compile(r"\d{9}"),
        _validator("us.rtn"),
        "a bank routing and account number",
    ),
    (re.compile(r"passport"), re.compile(r"[A-Z0-9]{0,2}\d{6,9}"), _always, "a passport number"),
    (
        re.compile(r"licen[cs]e"),
        re.compile(r"[A-Z0-9]{5,9}\d{6}[A-Z0-9]{2,5}|[A-Z]\d{4,12}"),
        _always,
        "a driving licence number",
    ),
)
_ID_TOKEN = re.compile(r"(?<![\w.])[A-Z0-9][A-Z0-9 .\-]{4,20}[A-Z0-9](?![\w])")


def _named_id_hits(text: str) -> Iterator[Hit]:
    """An id right after the word that names it (`SSN 523-95-4493`, `passport no. 305614096`)."""
    lower = text.lower()
    for word, shape, check, kind in _NAMED_IDS:
        for named in word.finditer(lower):
            window = text[named.end() : named.end() + CONTEXT_CHARS]
            for match in shape.finditer(window):
                value = match.group(0)
                if sum(c.isdigit() for c in value) >= 4 and check(re.sub(r"[ .\-]", "", value)):
                    yield (named.start(), kind, "")
                    break


_NINO = re.compile(
    r"(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
    r" ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])"
)
_UK_LICENCE = re.compile(r"(?<![A-Za-z0-9])[A-Z9]{5}\d[0156]\d{4}[A-Z9]{2}\d[A-Z]{2}(?![A-Za-z0-9])")


def _shaped_id_hits(text: str) -> Iterator[Hit]:
    """Ids whose shape alone says what they are: a UK National Insurance or driving licence number."""
    for match in _NINO.finditer(text):
        yield (match.start(), "a UK National Insurance number", "")
    for match in _UK_LICENCE.finditer(text):
        yield (match.start(), "a driving licence number", "")


# --- birth dates, home addresses, a person's IP address -----------------------------------------
_BIRTH = re.compile(r"\b(?:born|dob|d\.o\.b|date of birth|birth ?date|birthday|geboren|né|née)\b")
_DATE = re.compile(
    r"\d{4}-\d{2}-\d{2}|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}"
    r"|\d{1,2} [A-Za-z]{3,9} \d{4}|[A-Za-z]{3,9} \d{1,2},? \d{4}"
)
_STREET = re.compile(
    r"\b\d{1,5}[A-Za-z]? (?:[A-Z][a-z']+ ){1,3}(?:Street|St|Road|Rd|Avenue|Ave|"
    r"Drive|Dr|Lane|Ln|Boulevard|Blvd|Way|Court|Ct|Place|Pl|Crescent|Close|"
    r"Terrace|Gardens|Parkway|Square)\b"
)
_POSTCODE = re.compile(r"\b[A-Z]{2} \d{5}(?:-\d{4})?\b|\b[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}\b")
_ADDRESS_WORDS = re.compile(r"\baddress\b|\blives at\b|\bship (?:it |them )?to\b")
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
_PERSON_WORDS = re.compile(r"\b(?:home|her|his|user|customer|employee|personal|residential)\b")


def _birth_hits(text: str) -> Iterator[Hit]:
    lower = text.lower()
    for word in _BIRTH.finditer(lower):
        near = text[max(0, word.start() - CONTEXT_CHARS) : word.end() + CONTEXT_CHARS]
        if _DATE.search(near):
            yield (word.start(), "a date of birth", "")


def _address_hits(text: str) -> Iterator[Hit]:
    """A street address with a postcode, or one the line calls an address."""
    for street in _STREET.finditer(text):
        line_start = text.rfind("\n", 0, street.start()) + 1
        line_end = text.find("\n", street.end())
        line = text[line_start : line_end if line_end >= 0 else len(text)]
        if _POSTCODE.search(line) or _ADDRESS_WORDS.search(line.lower()):
            yield (street.start(), "a postal address", "")


def _ip_hits(text: str) -> Iterator[Hit]:
    """A public IP address on a line that ties it to a person (`her home IP …`)."""
    for match in _IPV4.finditer(text):
        try:
            if not ipaddress.ip_address(match.group(0)).is_global:
                continue  # 10.0.4.12, 127.0.0.1: infrastructure, not a person
        except ValueError:
            continue
        if _PERSON_WORDS.search(_before(text, match.start())):
            yield (match.start(), "a person's IP address", "")


DETECTORS: tuple[Callable[[str], Iterator[Hit]], ...] = (
    _iban_hits,
    _card_hits,
    _named_id_hits,
    _shaped_id_hits,
    _phone_hits,
    _birth_hits,
    _address_hits,
    _ip_hits,
)


def personal_id_hits(text: str) -> list[Hit]:
    """Every personal identifier the detectors find in `text`."""
    return [hit for detect in DETECTORS for hit in detect(text)]
