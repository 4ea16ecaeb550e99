"""Ranking of memories for Layer 3: stemmed BM25 fused with static embeddings, and the candidates.

Recall offers the side model a manifest of at most 200 candidates; above that many memory files
it keeps the 200 best by the fused ranking rather than the 200 newest, and the zero-cost `lexical`
strategy takes its at most 5 from the same ranking with a cut that lets it select nothing.

Two kinds of evidence, fused by the sum of their z-scores (measured against reciprocal-rank
fusion in `fuse`):
- BM25 from `bm25s` (a sparse matrix of precomputed scores) over terms from `PyStemmer`'s English
  Snowball stemmer, with English stop words; runs of Chinese, Japanese or Korean characters are
  split into overlapping bigrams, as CJK search engines do without a dictionary segmenter.
  Scores are in units of "one match of a term that occurs in a single document" (the BM25 idf of
  df=1 at average length), so a cut means the same for 5 memories as for 10,000;
- cosine similarity of `wordllama` static embeddings of each memory's name, description and head
  (recall/embed.py): it reaches a memory worded differently from the request. Without the
  embedding package the fusion is BM25 alone.

`LexicalIndex` keeps, per document, its term counts and its vector (the scan cache keys both by the
file's size and mtime, so only changed files are tokenised or embedded again); the BM25 matrix and
the vector matrix are rebuilt from those, lazily, the first time a changed index is ranked.
scripts/bench_recall.py measures every constant here against plain BM25, stemmed BM25 and the
embeddings alone, on three fixtures, one of them held out.
"""

from __future__ import annotations

import bisect
import functools
import logging
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_mini.base.text import one_line
from claude_mini.memory.recall import embed
from claude_mini.memory.store import (
    ARCHIVE_DIR,
    HEAD_LINES,
    iso_utc,
    parse_memory_text,
    record_from_parsed,
)
from claude_mini.memory.store.links import successor_of

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

# --- constants -----------------------------------------------------------------------
SHORTLIST_SIZE = 200
SELECT_K = 5
K1 = 1.2
B = 0.75
FIELD_WEIGHT = 2  # name and description tokens count twice: they are written for recall
MAX_QUERY_TERMS = 32  # a pasted stack trace is cut to its 32 rarest known terms
RRF_K = 60  # the usual reciprocal-rank constant (Cormack et al. 2009), for fuse(rule="rrf")
EMBED_WEIGHT = 1.0  # the embeddings' evidence counts as much as BM25's
EMBED_BODY_CHARS = 300  # how much of the body joins the name and description in the embedded text
# The lexical strategy's cut (its picks join the user's message without a model's judgement, so
# it prefers nothing to a weak match; see select_lexical). Chosen by a grid over the four on
# bench_recall.py's generated fixture and the first outsider's fixture (`--calibrate` prints it),
# never on the held-out one: the setting with the most room over every target there (recall@5
# of plain BM25's top 5, precision 0.50, abstention 0.75). Figures: docs/memory.md.
SELECT_THRESHOLD = 1.8  # BM25, in rare-term matches
SELECT_COSINE = 0.75
SELECT_RELATIVE = 0.5  # of the best BM25
SELECT_NEAR = 0.03  # below the best cosine
MANIFEST_DESCRIPTION_CHARS = 200
ARCHIVE_PREFIX = ARCHIVE_DIR + "/"  # how recall names an archived file beside the live ones

# Scripts written without spaces between words (Han, kana, Hangul syllables are searched the
# same way): a run of them is one regex match, split into overlapping character bigrams (a
# lone character kept as is). A run never swallows the Latin word next to it: "部署billing" is
# "部署" and "billing".
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\U00020000-\U0002fa1f"
_WORD = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+")  # '_' and '-' separate words
_CJK_RUN = re.compile(rf"[{_CJK}]")
_CJK_STOP = frozenset("的了是在和我你他她它们这那吗呢吧啊个有也就都把被给のはがをにでともた")


# --- tokenising ----------------------------------------------------------------------
@functools.cache
def _analyzer() -> tuple[frozenset[str], Any]:
    """bm25s's English stop words and PyStemmer's English stemmer (loaded on first use: bm25s
    brings numpy, which start-up must not pay for)."""
    import Stemmer

    return frozenset(bm25s_module().stopwords.STOPWORDS_EN_PLUS), Stemmer.Stemmer("english")


def bm25s_module() -> Any:
    """bm25s, imported on first use with its logger quietened: it sets itself to DEBUG on import,
    and a record it logs (an empty document's warning) would reach logging's last resort, which
    prints on the REPL's screen."""
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.ERROR)
    return bm25s


def _cjk_tokens(run: str) -> list[str]:
    """Overlapping bigrams of a run of CJK characters; a one-character run is itself unless it
    is a particle ("的", "の")."""
    if len(run) == 1:
        return [] if run in _CJK_STOP else [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def cjk_characters(text: str) -> int:
    """How many characters of `text` belong to scripts written without spaces."""
    return len(_CJK_RUN.findall(text))


def tokenize(text: str) -> list[str]:
    """Search terms of `text`: lowercased words of two or more letters, stop words dropped,
    Snowball-stemmed; CJK runs as bigrams."""
    stop, stemmer = _analyzer()
    out: list[str] = []
    words: list[str] = []
    for word in _WORD.findall(text):
        if _CJK_RUN.match(word):
            out.extend(_cjk_tokens(word))
        elif len(word) > 1 and (lower := word.lower()) not in stop:
            words.append(lower)
    return out + stemmer.stemWords(words) if words else out


# --- candidates ----------------------------------------------------------------------
@dataclass(frozen=True, eq=False, slots=True)
class Candidate:
    """One memory file as recall sees it: its head, and its term counts for BM25."""

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

    def embedding_text(self) -> str:
        """What the embedding of this memory is computed from."""
        return f"{self.name}. {self.description}. {self.head_text[:EMBED_BODY_CHARS]}"


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
    """Candidates by filename with their vectors; the BM25 and vector matrices built on demand.

    `add` and `remove` are cheap (a changed file costs its own tokens and vector); the next
    ranking rebuilds the BM25 matrix from the kept term counts (bm25s has no incremental update:
    about 0.3 s at 10,000 memories, paid only on a turn after a change, in recall's thread).
    """

    def __init__(self, docs: Iterable[Candidate] = (), *, embeddings: bool = True) -> None:
        self.docs: dict[str, Candidate] = {}
        self.vectors: dict[str, np.ndarray] = {}  # kept while the file is unchanged
        self.embeddings = embeddings  # False: BM25 alone (the benchmark's baselines)
        self.wait_for_model = True  # False: rank by BM25 alone while the model is still loading
        self.bm25_dump: tuple[Any, list[str]] | None = None  # (bm25s retriever, its doc order)
        self._by_age: list[tuple[float, str]] | None = None  # (-mtime, filename), sorted
        self._matrix: np.ndarray | None = None  # the vectors, rows as order()
        for doc in docs:
            self.add(doc)

    def __len__(self) -> int:
        return len(self.docs)

    def add(self, doc: Candidate, vector: np.ndarray | None = None) -> None:
        """Index `doc` (with its vector, if known), replacing any earlier version."""
        if doc.filename in self.docs:
            self.remove(doc.filename)
        self.docs[doc.filename] = doc
        if vector is not None:
            self.vectors[doc.filename] = vector
        self.bm25_dump = self._matrix = None
        if self._by_age is not None:
            bisect.insort(self._by_age, (-doc.mtime, doc.filename))

    def remove(self, filename: str) -> None:
        """Forget a document (no-op if unknown)."""
        doc = self.docs.pop(filename, None)
        if doc is None:
            return
        self.vectors.pop(filename, None)
        self.bm25_dump = self._matrix = None
        if self._by_age is not None:
            self._by_age.pop(bisect.bisect_left(self._by_age, (-doc.mtime, filename)))

    def newest_first(self) -> Iterator[str]:
        """Filenames by mtime, newest first (the order is kept up to date incrementally)."""
        if self._by_age is None:
            self._by_age = sorted((-d.mtime, f) for f, d in self.docs.items())
        return (f for _, f in self._by_age)

    def order(self) -> list[str]:
        """Every filename in the order of the matrices' rows (sorted: ties rank by name)."""
        return self._retriever()[1]

    def bm25(self, query: str) -> dict[str, float]:
        """BM25 of every document matching a query term, in rare-term-match units."""
        if not self.docs:
            return {}
        scores, order = self.bm25_array(query), self.order()
        return {order[i]: float(scores[i]) for i in scores.nonzero()[0].tolist()}

    def bm25_array(self, query: str) -> np.ndarray:
        """BM25 of every document (rows as `order()`), in rare-term-match units."""
        import numpy as np

        retriever, order = self._retriever()
        ids = self._query_ids(retriever, tokenize(query))
        if not ids:
            return np.zeros(len(order))
        unit = math.log(1.0 + (len(order) - 0.5) / 1.5) / (K1 + 1)  # lucene idf of df=1, tf=1 at avgdl
        return np.asarray(retriever.get_scores_from_ids(ids), dtype=np.float64) / unit

    def _query_ids(self, retriever: Any, terms: list[str]) -> list[int]:
        """The query's known terms as column ids, each once, the MAX_QUERY_TERMS rarest."""
        vocab, indptr = retriever.vocab_dict, retriever.scores["indptr"]
        ids = {vocab[t] for t in terms if t in vocab}
        return sorted(ids, key=lambda i: (int(indptr[i + 1] - indptr[i]), i))[:MAX_QUERY_TERMS]

    def _retriever(self) -> tuple[Any, list[str]]:
        if self.bm25_dump is None:
            self.bm25_dump = _build_bm25(self.docs)
        return self.bm25_dump

    def cosines(self, query: str) -> dict[str, float]:
        """Cosine of the query's embedding with every document's; {} without the model."""
        sims = self.cosine_array(query) if self.docs else None
        return {} if sims is None else dict(zip(self.order(), sims.tolist(), strict=True))

    def cosine_array(self, query: str) -> np.ndarray | None:
        """Cosine of the query's embedding with every document's (rows as `order()`); None
        without the model, or for a query with no words (its embedding has no direction)."""
        if not self.embeddings or not _WORD.search(query):
            return None
        matrix = self._vector_matrix()
        q = embed.embed([query], wait=self.wait_for_model) if matrix is not None else None
        if matrix is None or q is None:
            return None
        import numpy as np

        result: np.ndarray = (matrix @ q[0]).astype(np.float64)
        return result

    def _vector_matrix(self) -> np.ndarray | None:
        if self._matrix is None:
            missing = [f for f in self.docs if f not in self.vectors]
            if missing:
                new = embed.embed([self.docs[f].embedding_text() for f in missing], wait=self.wait_for_model)
                if new is None:
                    return None
                self.vectors.update(zip(missing, new, strict=True))
            import numpy as np

            self._matrix = np.stack([self.vectors[f] for f in self.order()]).astype(np.float32)
        return self._matrix


def _build_bm25(docs: dict[str, Candidate]) -> tuple[Any, list[str]]:
    """A bm25s retriever over the documents' term counts (field weights as repeated terms)."""
    bm25s = bm25s_module()
    vocab: dict[str, int] = {}
    order = sorted(docs)
    ids = [
        [vocab.setdefault(term, len(vocab)) for term, tf in docs[f].terms.items() for _ in range(max(1, round(tf)))]
        for f in order
    ]
    retriever = bm25s.BM25(k1=K1, b=B)
    retriever.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
    return retriever, order


# --- ranking -------------------------------------------------------------------------
@dataclass(frozen=True)
class ArchiveView:
    """The archive as a second tier: its own index, and the files in it that recall may bring
    back (what gc archived, not what a person forgot)."""

    index: LexicalIndex
    eligible: Collection[str]


@dataclass(frozen=True)
class Evidence:
    """Every eligible document of every tier with its evidence for one query: BM25 (rare-term-
    match units) and cosine (zeros without the embedding model), as aligned arrays."""

    names: list[str]
    bm25: np.ndarray
    cosine: np.ndarray
    embedded: bool  # False: no cosine at all (the model is missing); BM25 matches alone count


_Tier = tuple[str, LexicalIndex, Collection[str] | None]  # name prefix, index, eligible files


def _as_index(docs: LexicalIndex | Iterable[Candidate]) -> LexicalIndex:
    # Pass `scanner.index` to skip this rebuild (it is what makes warm turns fast).
    return docs if isinstance(docs, LexicalIndex) else LexicalIndex(docs)


def tiers_of(docs: LexicalIndex | Iterable[Candidate], archive: ArchiveView | None = None) -> list[_Tier]:
    """The live tier, and the archive's eligible files after it (named `archive/<file>`)."""
    tiers: list[_Tier] = [("", _as_index(docs), None)]
    if archive is not None:
        tiers.append((ARCHIVE_PREFIX, archive.index, archive.eligible))
    return tiers


def evidence(query: str, tiers: list[_Tier], exclude: Collection[str] = ()) -> Evidence:
    """Each tier scored against its own statistics (the live memories' are kept free of what gc
    put away), the excluded and ineligible files left out."""
    import numpy as np

    names: list[str] = []
    b_parts, c_parts, embedded = [], [], True
    for prefix, tier, eligible in tiers:
        if not tier.docs:
            continue
        order = tier.order()
        keep = np.ones(len(order), dtype=bool)
        if eligible is not None:
            keep[:] = False
            keep[[i for i, f in enumerate(order) if f in eligible]] = True
        if exclude:
            keep[[i for i, f in enumerate(order) if prefix + f in exclude]] = False
        rows = np.flatnonzero(keep)
        names += [prefix + order[i] for i in rows.tolist()]
        cos = tier.cosine_array(query)
        embedded = embedded and cos is not None
        b_parts.append(tier.bm25_array(query)[rows])
        c_parts.append(np.zeros(len(rows)) if cos is None else cos[rows])
    if not names:
        return Evidence([], np.zeros(0), np.zeros(0), False)
    return Evidence(names, np.concatenate(b_parts), np.concatenate(c_parts), embedded)


def fuse(ev: Evidence, rule: str = "z") -> np.ndarray:
    """Each document's fused score: the sum of its BM25 and cosine z-scores (each standardised
    over the documents, so a query's spread decides, not the scale); `rule="rrf"` sums
    reciprocal ranks instead (1/(RRF_K + rank) in each ranking, nothing where BM25 does not
    match). Without the embedding model, BM25 alone.

    scripts/bench_recall.py compares both on the tunable fixtures: the z-score sum ranked top-5
    recall 0.959 / 0.812 against RRF's 0.929 / 0.794 (generated / first outsider's), with the
    same recall@200 at 2,000 memories.
    """
    if rule == "rrf":
        return _rrf(ev.bm25) + EMBED_WEIGHT * _rrf(ev.cosine)
    return _z(ev.bm25) + EMBED_WEIGHT * _z(ev.cosine)


def _z(x: np.ndarray) -> np.ndarray:
    spread = float(x.std()) if len(x) else 0.0
    return (x - x.mean()) / spread if spread > 0 else x * 0.0


def _rrf(x: np.ndarray) -> np.ndarray:
    import numpy as np

    order = np.argsort(-x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    return np.where(x > 0, 1.0 / (RRF_K + ranks), 0.0)


def best_of(ev: Evidence, score: np.ndarray, k: int, mask: np.ndarray | None = None) -> list[tuple[str, float]]:
    """The k best documents by `score` (among `mask`), ties in the evidence's order (by name)."""
    import numpy as np

    rows = np.arange(len(ev.names)) if mask is None else np.flatnonzero(mask)
    top = rows[np.argsort(-score[rows], kind="stable")[:k]]
    return [(ev.names[i], float(score[i])) for i in top.tolist()]


def _ranked(ev: Evidence) -> np.ndarray | None:
    """Which documents rank at all: every one with embeddings, else the BM25 matches."""
    return None if ev.embedded else ev.bm25 > 0


def rank(
    query: str, docs: LexicalIndex | Iterable[Candidate], *, exclude: Collection[str] = ()
) -> list[tuple[str, float]]:
    """Every ranked document as (filename, fused score), best first."""
    ev = evidence(query, tiers_of(docs), exclude)
    return best_of(ev, fuse(ev), len(ev.names), _ranked(ev))


def shortlist(
    query: str,
    docs: LexicalIndex | Iterable[Candidate],
    k: int = SHORTLIST_SIZE,
    *,
    exclude: Collection[str] = (),
    archive: ArchiveView | None = None,
) -> list[tuple[str, float]]:
    """The k best documents for the manifest by the fused ranking, then the newest of the rest.

    With an `archive`, its eligible files (named `archive/<file>`) are ranked with the live
    ones: gc decides what MEMORY.md lists, not what recall can reach. With embeddings every
    document has a rank; without them, a folder with too few BM25 matches to fill the manifest
    shows the side model the newest of the rest.
    """
    tiers = tiers_of(docs, archive)
    ev = evidence(query, tiers, exclude)
    best = best_of(ev, fuse(ev), k, _ranked(ev))
    taken = {f for f, _ in best}
    for prefix, tier, eligible in tiers:
        for f in tier.newest_first():
            if len(best) >= k:
                return best
            name = prefix + f
            if name not in taken and name not in exclude and (eligible is None or f in eligible):
                best.append((name, 0.0))
    return best


def select_lexical(
    query: str,
    docs: LexicalIndex | Iterable[Candidate],
    k: int = SELECT_K,
    threshold: float = SELECT_THRESHOLD,
    *,
    cosine: float = SELECT_COSINE,
    relative: float = SELECT_RELATIVE,
    near: float = SELECT_NEAR,
    exclude: Collection[str] = (),
    archive: ArchiveView | None = None,
) -> list[tuple[str, float]]:
    """The `lexical` recall strategy: up to k documents of the fused ranking that pass the cut.

    The query must have strong evidence somewhere, a BM25 of `threshold` rare-term matches or a
    cosine of `cosine`, or it selects nothing. Then a document passes on either side: BM25 at
    least `relative` of the best (when the best is strong), or a cosine within `near` of the
    best (when the best is strong). The fused order decides which k of those come first.
    """
    ev = evidence(query, tiers_of(docs, archive), exclude)
    if not ev.names:
        return []
    best_b, best_c = float(ev.bm25.max()), float(ev.cosine.max())
    passed = ((best_b >= threshold) & (ev.bm25 >= relative * best_b)) | (
        (best_c >= cosine) & (ev.cosine >= best_c - near)
    )
    return best_of(ev, fuse(ev), k, passed)
