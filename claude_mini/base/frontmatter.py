"""YAML frontmatter, read and written the same way for instruction rules (Layer 1) and memories (Layer 2).

A frontmatter block is the YAML between a leading `---` line and the next
`---` line. Layer 1 wants the `paths:` of a rule (`parse_frontmatter`, with a
fast path for the simple blocks real rule files have); Layer 2 wants a
memory's name, description and type and salvages plain `key: value` lines
from a block YAML refused (`store.topic.parse_memory_text`). Both load YAML
through `load_yaml`, so broken YAML reads alike in both:
`frontmatter is not valid YAML (line N: what)`, N counted in the file.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: 10-30x faster when present

FM_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s?(.*)$")  # a plain `key: value` line
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_FM_KEY = re.compile(r"([A-Za-z_][\w-]*):(?: +(.*?))? *")
_FM_ITEM = re.compile(r"( *)- +(.*?) *")
_PLAIN_UNSAFE_START = frozenset("-?:,[]{}#&*!|>'\"%@`")
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"


# --- loading -------------------------------------------------------------------------
def load_yaml(source: str, *, fast: bool = False, alias_hint: str = "") -> tuple[Any, str | None]:
    """(data, None) for the YAML of a frontmatter block, or (None, why it is not valid YAML).

    `fast` tries `_simple_frontmatter` first. `alias_hint` is added to the
    message when YAML read a leading `*` as an alias.
    """
    data = _simple_frontmatter(source) if fast else None
    if data is not None:
        return data, None
    try:
        return yaml.load(source, Loader=YAML_LOADER), None
    except yaml.YAMLError as exc:
        return None, f"frontmatter is not valid YAML ({yaml_problem(exc, alias_hint)})"


def yaml_problem(exc: yaml.YAMLError, alias_hint: str = "") -> str:
    """A one-line YAML error with the line number in the file (frontmatter starts on line 2)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    # +2: the opening '---' is line 1 of the file and YAML counts from 0.
    where = f"line {mark.line + 2}: " if mark is not None else ""
    is_alias = "alias" in str(getattr(exc, "context", ""))
    hint = f"; {alias_hint}" if alias_hint and is_alias else ""
    return f"{where}{problem}{hint}"


def _simple_scalar(raw: str) -> str | None:
    """A string scalar whose YAML value is certain without a parser; None defers to PyYAML."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        inner = raw[1:-1]
        return None if raw[0] in inner or "\\" in inner else inner
    if not raw or raw[0] in _PLAIN_UNSAFE_START or ": " in raw or " #" in raw or "\t" in raw:
        return None
    # Plain `yes`, `12`, `~`, `2024-01-01` are not strings in YAML: defer those.
    tag = _RESOLVER.resolve(yaml.ScalarNode, raw, (True, False))
    return raw if tag == _STR_TAG and not raw.endswith(":") else None


def _simple_frontmatter(source: str) -> dict[str, Any] | None:
    """Parse `key: scalar` lines and `key:` + `- item` lists; None for anything else.

    This subset covers real rule files and is ~10x faster than PyYAML (even libyaml),
    which dominated load time; a differential test pins it to PyYAML's results.
    """
    meta: dict[str, Any] = {}
    key, indent = None, None  # the key whose list items may follow, and their indentation
    for line in source.replace("\r\n", "\n").split("\n"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _FM_ITEM.fullmatch(line)
        if item:
            value = _simple_scalar(item.group(2))
            if key is None or value is None or indent not in (None, item.group(1)):
                return None
            indent = item.group(1)
            if meta[key] is None:
                meta[key] = []
            meta[key].append(value)
            continue
        m = _FM_KEY.fullmatch(line)
        if m is None or m.group(1) in meta:
            return None
        name, raw = m.group(1), m.group(2)
        value = _simple_scalar(raw) if raw else None
        if raw and value is None:
            return None
        meta[name] = value
        key, indent = (None if raw else name), None
    return meta


# --- splitting -----------------------------------------------------------------------
def parse_frontmatter(text: str) -> tuple[dict[str, Any] | None, str, str | None]:
    """(metadata, body, problem); without frontmatter metadata is None and body is `text`."""
    if not text.startswith("---"):
        return None, text, None
    m = _FRONTMATTER.match(text)
    if m is None:
        if re.match(r"---[ \t]*\r?\n", text):
            return None, text, "frontmatter is not closed by a `---` line"
        return None, text, None  # `----` or `---text`: a rule line or prose, not frontmatter
    # `paths: **/*.ts` is the usual mistake: YAML reads a leading `*` as an alias.
    meta, problem = load_yaml(m.group(1), fast=True, alias_hint="quote globs that start with *")
    if problem:
        return None, text, problem
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return None, text, f"frontmatter is a {type(meta).__name__}, not a mapping"
    return meta, text[m.end() :], None


def salvage_pairs(block: list[str]) -> tuple[dict[str, Any], bool]:
    """Plain `key: value` pairs from a block YAML refused (often an unquoted ': ').

    Also says whether every non-blank line of the block was such a pair.
    """
    out: dict[str, Any] = {}
    clean = True
    for raw in block:
        line = raw.rstrip("\r")
        m = FM_LINE.match(line)
        if not m:
            clean = clean and not line.strip()
            continue
        value = m.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[m.group(1)] = {"true": True, "false": False}.get(value.lower(), value)
    return out, clean


# --- writing -------------------------------------------------------------------------
def dump_frontmatter(fm: dict[str, Any]) -> str:
    """YAML for a frontmatter block, in the given key order, quoted wherever YAML needs it."""
    return yaml.safe_dump(fm, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
