"""YAML frontmatter: the one reader for commands, skills, agents, rules and memories, and the writer.

A frontmatter block is the YAML between a leading `---` line and the next
`---` line. `read_frontmatter` parses it strictly first (with a fast path for
the simple blocks real files have); where YAML refuses it (an unquoted
`description: Use when: ...`, a tab, a stray colon) it reads the block again
line by line as `key: value` pairs, as Claude Code does, so the file keeps its
keys. `parse_frontmatter` is the short form commands, skills, agents and rules
use; memories (`store.topic.parse_memory_text`) keep the YAML problem too, for
`memory doctor`. Broken YAML reads alike everywhere:
`frontmatter is not valid YAML (line N: what)`, N counted in the file, and
each lenient reading is one --debug line.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import yaml

log = logging.getLogger(__name__)

YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: 10-30x faster when present

FM_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s?(.*)$")  # a plain `key: value` line
_FRONTMATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
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
@dataclass(frozen=True)
class Frontmatter:
    """A file split into its frontmatter and body, and what was wrong with the block.

    `meta` is None without a block, or when nothing could be read from it; with a
    `problem` of kind "invalid_yaml" it holds the pairs the line-by-line reading
    found (`lenient`), and `clean` says whether every non-blank line was one.
    """

    meta: dict[str, Any] | None
    body: str
    problem: str | None = None
    kind: str | None = None  # None, "unclosed", "invalid_yaml", "not_mapping"
    lenient: bool = False
    clean: bool = True


def read_frontmatter(text: str, where: str = "") -> Frontmatter:
    """Split `text`: strict YAML first, then the line-by-line reading; `where` names the file in --debug."""
    if not text.startswith("---"):
        return Frontmatter(None, text)
    m = _FRONTMATTER.match(text)
    if m is None:
        if re.match(r"---[ \t]*\r?\n", text):
            return Frontmatter(None, text, "frontmatter is not closed by a `---` line", "unclosed")
        return Frontmatter(None, text)  # `----` or `---text`: a rule line or prose, not frontmatter
    block, body = m.group(1), text[m.end() :]
    # `paths: **/*.ts` is the usual mistake: YAML reads a leading `*` as an alias.
    meta, problem = load_yaml(block, fast=True, alias_hint="quote globs that start with *")
    if problem is None and meta is not None and not isinstance(meta, dict):
        return Frontmatter(None, body, f"frontmatter is a {type(meta).__name__}, not a mapping", "not_mapping")
    if problem is None:
        return Frontmatter(meta or {}, body)
    pairs, clean = read_pairs(block.split("\n"))
    if not pairs:
        return Frontmatter(None, body, problem, "invalid_yaml", clean=False)
    log.debug("%s: %s; read line by line as `key: value` pairs", where or "a file", problem)
    return Frontmatter(pairs, body, problem, "invalid_yaml", lenient=True, clean=clean)


def parse_frontmatter(text: str, where: str = "") -> tuple[dict[str, Any] | None, str, str | None]:
    """(metadata, body, problem); without frontmatter metadata is None and body is `text`.

    A block YAML refuses whose keys the line-by-line reading finds is no problem:
    its pairs are the metadata (Claude Code reads such files too).
    """
    fm = read_frontmatter(text, where)
    if fm.lenient:
        return fm.meta, fm.body, None
    if fm.problem:
        return None, text, fm.problem
    return fm.meta, fm.body, None


def read_pairs(block: list[str]) -> tuple[dict[str, Any], bool]:
    """Top-level `key: value` lines of a block YAML refused: the value is the rest of the line (a
    tab is a space, matching quotes dropped), `key:` followed by `- item` lines is a list.

    Also says whether every non-blank line was such a pair or item.
    """
    out: dict[str, Any] = {}
    clean, listing = True, None
    for raw in block:
        line = raw.rstrip("\r").replace("\t", " ")
        item = re.match(r"^\s+-\s+(.*)$", line) or re.match(r"^-\s+(.*)$", line)
        if item and listing is not None:
            out[listing] = [*(out[listing] or []), _unquoted(item.group(1).strip())]
            continue
        m = FM_LINE.match(line)
        if not m:
            clean = clean and not line.strip()
            continue
        value = _unquoted(m.group(2).strip())
        out[m.group(1)] = {"true": True, "false": False}.get(value.lower(), value) if value else None
        listing = m.group(1) if not value else None
    return out, clean


def salvage_pairs(block: list[str]) -> tuple[dict[str, Any], bool]:
    """`read_pairs` for a memory's block (an empty value is '' there, as `memory doctor` expects)."""
    pairs, clean = read_pairs(block)
    return {k: "" if v is None else v for k, v in pairs.items()}, clean


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


# --- writing -------------------------------------------------------------------------
def dump_frontmatter(fm: dict[str, Any]) -> str:
    """YAML for a frontmatter block, in the given key order, quoted wherever YAML needs it."""
    return yaml.safe_dump(fm, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)
