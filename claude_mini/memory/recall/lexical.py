"""Lexical ranking of memories for Layer 3: BM25 with a small recency prior, and a scan cache.

Recall offers the side model a manifest of at most 200 candidates. Above that
many memory files we keep the 200 best by BM25 rather than the 200 newest, so
an old memory that matches the query is still reachable; the same scores,
with a threshold, are the zero-cost `lexical` recall strategy.

Scores are expressed in units of "one match of a term that occurs in a single
document" (the BM25 idf of df=1 at average length), so thresholds mean the
same for 5 memories as for 10,000.

`CandidateScanner` keeps, per file, the parsed head and its token counts keyed
by (size, mtime_ns), plus an inverted index updated incrementally: a warm turn
stats each file once and only re-reads and re-tokenises files that changed.
Given a cache file, it keeps that state on disk between processes too, so the
first turn of a new session stats the folder instead of reading every file.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
import re
import time
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from claude_mini.base.text import one_line
from claude_mini.memory.store import (
    ARCHIVE_DIR,
    HEAD_LINES,
    iso_utc,
    parse_memory_text,
    record_from_parsed,
)
from claude_mini.memory.store.links import successor_of

# --- constants -----------------------------------------------------------------------
SHORTLIST_SIZE = 200
K1 = 1.2
B = 0.75
FIELD_WEIGHT = 2  # name and description tokens count twice: they are written for recall
RECENCY_WEIGHT = 0.1  # at most a tenth of one rare-term match: breaks ties, never outranks one
RECENCY_HALF_LIFE_DAYS = 30.0
MAX_QUERY_TERMS = 32  # a pasted stack trace is cut to its 32 rarest known terms
SELECT_K = 5
FEEDBACK_SHARE = 0.25  # of the manifest's places, for the widened query (see shortlist)
FEEDBACK_DOCS = 10
FEEDBACK_TERMS = 10
FEEDBACK_MIN_SCORE = 0.5  # a feedback document must match at least half a rare term
# Nearly two rare-term matches, or many common ones. The lexical pass's picks join the user's
# message without the side model's judgement, so it prefers nothing to a weak match: 1.8 is
# the lowest threshold at which every no-memory query of bench_recall.py's generated fixture
# selects nothing (0.93 at 1.6), at recall@5 0.79 / precision@5 0.83 there (0.83 / 0.76 at 1.6);
# 2.0 lost lasting answers in bench_forgetting.py's year (0.75 against 0.80).
SELECT_THRESHOLD = 1.8
SELECT_RELATIVE = 0.7  # and at least this share of the best score: drops same-topic neighbours
MANIFEST_DESCRIPTION_CHARS = 200
ARCHIVE_PREFIX = ARCHIVE_DIR + "/"  # how recall names an archived file beside the live ones


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_STOP_WORDS = _word_set(
    "a an the and or but if then else of to in on at by for with from into about as is are "
    "was were be been being it its this that these those there here i me my we us our you "
    "your he she they them their what which who whom how why when where do does did done "
    "can could should would will shall may might must not no yes so than too very just also "
    "please let lets get got have has had any all some such only own same other more most "
    "up out over again further once between"
)
# Scripts written without spaces between words (Han, kana, Hangul syllables are searched the
# same way): a run of them is one regex match, so it is split into overlapping character
# bigrams (and a lone character kept as is), as CJK search engines do when no dictionary
# segmenter is at hand. A run never swallows the Latin word next to it: "部署billing" is
# "部署" and "billing".
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f"
_WORD = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")  # '_' and '-' separate words
_COMPOUND = re.compile(
    rf"(?<![^\W{_CJK}]|-)[^\W_{_CJK}]+(?:[-_][^\W_{_CJK}]+){{1,2}}"
    rf"(?![^\W{_CJK}]|-)"
)  # 2-3 parts
_CJK_RUN = re.compile(rf"[{_CJK}]")
_CJK_STOP = _word_set(
    "的 了 是 在 和 我 你 他 她 它 们 这 那 吗 呢 吧 啊 个 有 也 就 都 把 被 给 の は が を に で と も た"
)
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_token_memo: dict[str, tuple[str, ...]] = {}
_MEMO_MAX = 200_000


# --- tokenising ----------------------------------------------------------------------
def stem(word: str) -> str:
    """A light, deterministic stem: plural 's'/'ies', then 'ing'/'ed', then a final 'e'."""
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    if len(w) > 5 and w.endswith("ing"):
        w = _undouble(w[:-3])
    elif len(w) > 4 and w.endswith("ed"):
        w = _undouble(w[:-2])
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def _undouble(w: str) -> str:
    # running -> runn -> run; but install(ing) keeps its 'll'.
    return w[:-1] if len(w) > 2 and w[-1] == w[-2] and w[-1] not in "lsz" else w


def _word_tokens(word: str) -> tuple[str, ...]:
    """Tokens of one raw word: camelCase/digit parts plus the whole word, stemmed."""
    cached = _token_memo.get(word)
    if cached is not None:
        return cached
    lower = word.lower()
    parts = _CAMEL.findall(word) if word.isascii() and not word.islower() else []
    if not parts and word.isascii() and any(c.isdigit() for c in word):
        parts = _CAMEL.findall(word)
    pieces = [p.lower() for p in parts] if len(parts) > 1 else []
    pieces.append(lower)
    out = tuple(stem(p) for p in pieces if len(p) > 1 and p not in _STOP_WORDS)
    if len(_token_memo) >= _MEMO_MAX:
        _token_memo.clear()
    _token_memo[word] = out
    return out


def _cjk_tokens(run: str) -> list[str]:
    """Overlapping bigrams of a run of CJK characters; a one-character run is itself unless it
    is a particle ("的", "の")."""
    if len(run) == 1:
        return [] if run in _CJK_STOP else [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_characters(text: str) -> int:
    """How many characters of `text` belong to scripts written without spaces."""
    return len(_CJK_RUN.findall(text))


def query_words(text: str) -> list[tuple[str, ...]]:
    """`tokenize(text)` grouped by the word each term came from: a camelCase word's parts and
    the whole word are one group, so a query word counts once however it is split."""
    out: list[tuple[str, ...]] = []
    for word in _WORD.findall(text):
        if _CJK_RUN.match(word):
            out.extend((t,) for t in _cjk_tokens(word))
        elif tokens := _word_tokens(word):
            out.append(tokens)
    if "-" in text or "_" in text:
        for compound in _COMPOUND.findall(text):
            out.append(_word_tokens(compound.replace("-", "").replace("_", "")))
    return out


def tokenize(text: str) -> list[str]:
    """Search terms of `text`: lowercased, split on non-alphanumerics and camelCase, stemmed.

    A short hyphenated or snake_case compound also yields its joined form, so
    "on-call" meets "oncall" and "e-mail" meets "email".
    """
    return [term for word in query_words(text) for term in word]


# --- candidates ----------------------------------------------------------------------
@dataclass(frozen=True, eq=False, slots=True)
class Candidate:
    """One memory file as recall sees it: its head, and token counts precomputed for BM25."""

    filename: str
    type: str | None
    mtime: float
    description: str
    head_text: str
    name: str = ""
    path: Path | None = None
    size: int = 0
    frontmatter_ok: bool = True
    terms: dict[str, float] = field(default_factory=dict, repr=False)
    length: float = 0.0
    superseded_by: str = ""  # frontmatter `superseded_by` (memory/extract/supersede.py)


def candidate_from_text(
    filename: str, text: str, mtime: float, *, size: int | None = None, path: Path | None = None
) -> Candidate:
    """A Candidate from the text of a file (only its first HEAD_LINES lines are used)."""
    head = "\n".join(text.split("\n", HEAD_LINES)[:HEAD_LINES])
    parsed = parse_memory_text(head)
    record = record_from_parsed(
        path or Path(filename), filename, parsed, mtime, len(text.encode()) if size is None else size
    )
    body = parsed.body
    terms: Counter[str] = Counter()
    for token in tokenize(f"{record.name} {record.description}"):
        terms[token] += FIELD_WEIGHT
    terms.update(tokenize(body))
    return Candidate(
        filename=filename,
        type=record.type,
        mtime=mtime,
        description=record.description,
        head_text=body,
        name=record.name,
        path=path,
        size=record.size,
        frontmatter_ok=record.frontmatter_ok,
        terms=dict(terms),
        length=float(sum(terms.values())),
        superseded_by=successor_of(record.frontmatter),
    )


def manifest_line(candidate: Candidate, note: str = "") -> str:
    """`- [type] file.md (ISO mtime): description`, one line of the recall manifest;
    `note` is added inside the parentheses (`archived`)."""
    desc = one_line(candidate.description)
    if len(desc) > MANIFEST_DESCRIPTION_CHARS:
        desc = desc[: MANIFEST_DESCRIPTION_CHARS - 1] + "…"
    kind = candidate.type or "untyped"
    when = iso_utc(candidate.mtime) + (f", {note}" if note else "")
    return f"- [{kind}] {candidate.filename} ({when}): {desc}"


# --- the index -----------------------------------------------------------------------
class LexicalIndex:
    """An inverted index over Candidates, updated one document at a time."""

    def __init__(self, docs: Iterable[Candidate] = ()) -> None:
        self.docs: dict[str, Candidate] = {}
        self.postings: dict[str, dict[str, float]] = {}
        self.lengths: dict[str, float] = {}
        self.total_length = 0.0
        self.cjk_docs = 0  # documents with text in a script written without spaces
        self._by_age: list[tuple[float, str]] | None = None  # (-mtime, filename), sorted
        for doc in docs:
            self.add(doc)

    def __len__(self) -> int:
        return len(self.docs)

    def add(self, doc: Candidate) -> None:
        """Index `doc`, replacing any earlier version with the same filename."""
        if doc.filename in self.docs:
            self.remove(doc.filename)
        self.docs[doc.filename] = doc
        for term, tf in doc.terms.items():
            self.postings.setdefault(term, {})[doc.filename] = tf
        self.lengths[doc.filename] = doc.length
        self.total_length += doc.length
        self.cjk_docs += _has_cjk_terms(doc)
        if self._by_age is not None:
            bisect.insort(self._by_age, (-doc.mtime, doc.filename))

    def remove(self, filename: str) -> None:
        """Forget a document (no-op if unknown)."""
        doc = self.docs.pop(filename, None)
        if doc is None:
            return
        for term in doc.terms:
            posting = self.postings.get(term)
            if posting is not None:
                posting.pop(filename, None)
                if not posting:
                    del self.postings[term]
        del self.lengths[filename]
        self.total_length -= doc.length
        self.cjk_docs -= _has_cjk_terms(doc)
        if self._by_age is not None:
            key = (-doc.mtime, filename)
            self._by_age.pop(bisect.bisect_left(self._by_age, key))

    def newest_first(self) -> Iterator[str]:
        """Filenames by mtime, newest first (the order is kept up to date incrementally)."""
        if self._by_age is None:
            self._by_age = sorted((-d.mtime, f) for f, d in self.docs.items())
        return (f for _, f in self._by_age)

    def idf(self, df: int) -> float:
        """BM25 idf (the non-negative '+1' form) for a term in `df` documents."""
        n = len(self.docs)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def bm25(self, query: str) -> dict[str, float]:
        """BM25 of every document matching a query term, in rare-term-match units."""
        if not self.docs:
            return {}
        unit = self.idf(1) or 1.0
        avgdl = (self.total_length / len(self.docs)) or 1.0
        # norm = K1 * (1 - B + B * length / avgdl), split so nothing is cached per corpus state
        base, slope, lengths = K1 * (1.0 - B), K1 * B / avgdl, self.lengths
        scores: dict[str, float] = {}
        for group in self._query_groups(query):
            best: dict[str, float] = {}  # a word's parts and its whole count once: the best
            for term in group:
                posting = self.postings[term]
                weight = self.idf(len(posting)) * (K1 + 1) / unit
                for filename, tf in posting.items():
                    score = weight * tf / (tf + base + slope * lengths[filename])
                    if score > best.get(filename, 0.0):
                        best[filename] = score
            for filename, score in best.items():
                scores[filename] = scores.get(filename, 0.0) + score
        return scores

    def _query_groups(self, query: str) -> list[tuple[str, ...]]:
        """The query's words as groups of known terms ("GitHub": git, hub, github), rarest
        first (the ones that discriminate), at most MAX_QUERY_TERMS; ties by the terms."""
        groups = {
            known for word in query_words(query) if (known := tuple(sorted({t for t in word if t in self.postings})))
        }
        rarity = {g: min(len(self.postings[t]) for t in g) for g in groups}
        return sorted(groups, key=lambda g: (rarity[g], g))[:MAX_QUERY_TERMS]


def _has_cjk_terms(doc: Candidate) -> bool:
    return any(_CJK_RUN.match(term) for term in doc.terms)


def crosses_scripts(query: str, index: LexicalIndex) -> bool:
    """True when `query` is written mostly without spaces (Chinese, Japanese) and the memories
    mostly are not: its words can then reach only the few memories in its own script."""
    letters = sum(c.isalpha() for c in query)
    mostly_cjk = letters > 0 and cjk_characters(query) * 2 >= letters
    return mostly_cjk and index.cjk_docs * 2 < len(index)


def recency_prior(mtime: float, now: float) -> float:
    """A small bonus that halves every RECENCY_HALF_LIFE_DAYS of age."""
    age_days = max(0.0, now - mtime) / 86_400.0
    prior: float = RECENCY_WEIGHT * 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)
    return prior


# --- ranking -------------------------------------------------------------------------
def _as_index(docs: LexicalIndex | Iterable[Candidate]) -> LexicalIndex:
    # Pass `scanner.index` to skip this rebuild (it is what makes warm turns fast).
    return docs if isinstance(docs, LexicalIndex) else LexicalIndex(docs)


def rank(
    query: str, docs: LexicalIndex | Iterable[Candidate], now: float | None = None, *, exclude: Collection[str] = ()
) -> list[tuple[str, float]]:
    """Every document as (filename, BM25 + recency), best first; ties by filename."""
    index = _as_index(docs)
    now = time.time() if now is None else now
    bm25 = index.bm25(query)
    scored = [(f, bm25.get(f, 0.0) + recency_prior(d.mtime, now)) for f, d in index.docs.items() if f not in exclude]
    scored.sort(key=lambda item: (-item[1], item[0]))
    return scored


@dataclass(frozen=True)
class ArchiveView:
    """The archive as a second tier for `select_lexical`: its own index, and the files in it
    that recall may bring back (what gc archived, not what a person forgot)."""

    index: LexicalIndex
    eligible: Collection[str]


def shortlist(
    query: str,
    docs: LexicalIndex | Iterable[Candidate],
    k: int = SHORTLIST_SIZE,
    now: float | None = None,
    *,
    exclude: Collection[str] = (),
    archive: ArchiveView | None = None,
) -> list[tuple[str, float]]:
    """The k best documents for the manifest: matches by score, then the newest of the rest.

    With an `archive`, its eligible files (named `archive/<file>`) are ranked with the live
    ones, each scored against its own tier's index: gc decides what MEMORY.md lists, not what
    recall can reach. Recency is a prior in the score and the order of the fill, never a filter.

    When the query matches more files than fit, the last quarter of the places goes to the
    query widened by its best matches' own terms (pseudo-relevance feedback): a request that
    shares only a word or two with the memory it needs ("the quote is off by a penny") often
    shares them with neighbours that use the memory's words ("rounding", "decimal").
    scripts/bench_recall.py: on the held-out fixture at 2,000 memories, 0.879 -> 0.921 of the
    relevant files offered (plain BM25, no archive), the generated fixture unchanged.
    """
    index = _as_index(docs)
    now = time.time() if now is None else now
    tiers: list[tuple[str, LexicalIndex, Collection[str] | None]] = [("", index, None)]
    if archive is not None:
        tiers.append((ARCHIVE_PREFIX, archive.index, archive.eligible))
    matched = _matches(query, tiers, now, exclude)
    best = heapq.nsmallest(k, matched, key=_best_first)
    if len(matched) > k:
        kept = k - int(k * FEEDBACK_SHARE)
        best = best[:kept]
        taken = {f for f, _ in best}
        widened = f"{query} {_feedback_terms(query, best[:FEEDBACK_DOCS], tiers)}"
        extra = (m for m in sorted(_matches(widened, tiers, now, exclude), key=_best_first) if m[0] not in taken)
        best += itertools.islice(extra, k - kept)
    taken = {f for f, _ in best}
    for prefix, tier, eligible in tiers:
        # Too few lexical matches to fill the manifest: the side model still sees the newest.
        for f in tier.newest_first():
            if len(best) >= k:
                return best
            name = prefix + f
            if name not in taken and name not in exclude and (eligible is None or f in eligible):
                best.append((name, recency_prior(tier.docs[f].mtime, now)))
    return best


_Tier = tuple[str, LexicalIndex, Collection[str] | None]  # name prefix, index, eligible files


def _best_first(item: tuple[str, float]) -> tuple[float, str]:
    return -item[1], item[0]


def _matches(query: str, tiers: list[_Tier], now: float, exclude: Collection[str]) -> list[tuple[str, float]]:
    """(name, BM25 + recency) of every eligible document of every tier that matches `query`."""
    out = []
    for prefix, tier, eligible in tiers:
        for f, score in tier.bm25(query).items():
            name = prefix + f
            if name not in exclude and (eligible is None or f in eligible):
                out.append((name, score + recency_prior(tier.docs[f].mtime, now)))
    return out


def _feedback_terms(query: str, top: list[tuple[str, float]], tiers: list[_Tier]) -> str:
    """The FEEDBACK_TERMS terms that weigh most in the best matches (tf share x idf), leaving
    out the query's own; from matches of at least FEEDBACK_MIN_SCORE only."""
    own = set(tokenize(query))
    weights: dict[str, float] = {}
    for name, score in top:
        if score < FEEDBACK_MIN_SCORE:
            continue
        prefix, tier = next((p, t) for p, t, _ in reversed(tiers) if name.startswith(p))
        doc = tier.docs[name.removeprefix(prefix)]
        for term, tf in doc.terms.items():
            if term not in own:
                weight = tf / (doc.length or 1.0) * tier.idf(len(tier.postings[term]))
                weights[term] = weights.get(term, 0.0) + weight
    best = heapq.nsmallest(FEEDBACK_TERMS, weights.items(), key=lambda item: (-item[1], item[0]))
    return " ".join(term for term, _ in best)


def select_lexical(
    query: str,
    docs: LexicalIndex | Iterable[Candidate],
    k: int = SELECT_K,
    threshold: float = SELECT_THRESHOLD,
    now: float | None = None,
    *,
    exclude: Collection[str] = (),
    relative: float = SELECT_RELATIVE,
    archive: ArchiveView | None = None,
) -> list[tuple[str, float]]:
    """The `lexical` recall strategy: up to k documents whose BM25 clears the threshold.

    The recency prior orders the survivors but never lets a document pass the
    threshold, so a query that matches nothing well selects nothing. With an
    `archive`, its eligible files compete too, named `archive/<file>`. Each tier
    is scored against its own index: the live memories' statistics stay free of
    what gc put away (scripts/bench_forgetting.py: scoring both as one corpus
    only matched the folder that never forgets, and weighting the archive down
    lost the rarely asked answers). An archived file is older, so the recency
    prior gives a live one the edge in a near tie.
    """
    index = _as_index(docs)
    now = time.time() if now is None else now
    scored = [(f, s, f, index) for f, s in index.bm25(query).items() if f not in exclude]
    if archive is not None:
        named = ((ARCHIVE_PREFIX + f, s, f) for f, s in archive.index.bm25(query).items())
        scored += [(name, s, f, archive.index) for name, s, f in named if f in archive.eligible and name not in exclude]
    if not scored:
        return []
    floor = max(threshold, relative * max(item[1] for item in scored))
    passed = [(name, s + recency_prior(source.docs[f].mtime, now)) for name, s, f, source in scored if s >= floor]
    return heapq.nsmallest(k, passed, key=lambda item: (-item[1], item[0]))
