"""Recall's scan of a memory folder: which files changed since the last scan (only those are read)
and the on-disk index that lets the next process skip reading the rest.

The on-disk index is one JSON file per folder (each file's size, mtime and parsed head with its
terms) and two companions it names: the files' embeddings (a float16 .npy, rows in the JSON's
order) and the bm25s matrix (a folder bm25s saves). A companion's name carries a token the JSON
records, so a crash between writes leaves companions the next process ignores, never a mismatch.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
import os
import secrets
import shutil
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from stat import S_IFDIR, S_IFREG
from typing import Any

from claude_mini.base.fileutil import atomic_write, os_error_text
from claude_mini.memory.recall.lexical import Candidate, LexicalIndex, bm25s_module, candidate_from_text
from claude_mini.memory.store import (
    ARCHIVE_DIR,
    HEAD_READ_BYTES,
    INDEX_FILENAME,
    LOGS_DIR,
    SkippedFile,
    read_text_head,
)

log = logging.getLogger(__name__)

INDEX_CACHE_VERSION = 4  # bump when tokenize() or Candidate changes: older caches are rebuilt
S_IFMT_MASK = 0o170000  # stat.S_IFMT as a mask, so the hot loop avoids two calls per file


@dataclass(slots=True)
class _Cached:
    size: int
    mtime_ns: int
    path: Path
    candidate: Candidate | None
    skip_reason: str | None = None


class CandidateScanner:
    """The recall candidates of a memory folder, re-reading only files that changed.

    Keep one per session. `reads` counts files actually opened (for tests and
    the benchmark); `index` is the LexicalIndex to pass to rank/shortlist.
    Files are chosen by the same rules as `store.iter_memory_entries`: `.md`,
    not hidden, not MEMORY.md, not under archive/ or logs/, symlinks only to
    files inside the folder. The archive is scanned the same way, with its own
    index file (ARCHIVE.md) and no folders skipped.
    """

    def __init__(
        self,
        root: Path,
        *,
        index_name: str = INDEX_FILENAME,
        skip_dirs: Collection[str] = (ARCHIVE_DIR, LOGS_DIR),
        cache_file: Path | None = None,
    ) -> None:
        self.root = Path(root)
        self.index_name = index_name  # the folder's own index file, never a candidate
        self.skip_dirs = frozenset(skip_dirs)  # top-level folders that hold no candidates
        self.index = LexicalIndex()
        self.skipped: list[SkippedFile] = []
        self.reads = 0
        self._cache: dict[str, _Cached] = {}
        self._order: list[str] = []  # every cached filename, sorted (kept incrementally)
        self._result: list[Candidate] | None = None  # reused while nothing changes
        self._unreadable: list[SkippedFile] = []
        self.cache_file = cache_file  # the on-disk copy of _cache, or None
        self._cache_loaded = cache_file is None
        self._dirty = False  # _cache differs from cache_file
        self._saved: tuple[int, bool] = (0, False)  # (vectors, BM25 matrix) cache_file holds

    def scan(self) -> list[Candidate]:
        """Every candidate, sorted by filename; stats every file, reads only changed ones."""
        self.skipped = []
        if not self._cache_loaded:
            self._load_cache()
        seen: dict[str, _Cached] = {}
        reads, known = self.reads, len(self._cache)
        self._scan_dir(str(self.root), "", seen, os.path.realpath(self.root))
        gone = self._cache.keys() - seen.keys()
        for filename in gone:
            del self._cache[filename]
            self.index.remove(filename)
            self._order.pop(bisect.bisect_left(self._order, filename))
        if gone or self.reads != reads:
            self._dirty = True
        if gone or self.reads != reads or self._result is None or len(self._cache) != known:
            cache = self._cache
            self._result = [c for f in self._order if (c := cache[f].candidate) is not None]
            self._unreadable = [
                SkippedFile(c.path, c.skip_reason or "unreadable") for c in cache.values() if c.candidate is None
            ]
        self.skipped += self._unreadable
        return list(self._result)

    def _scan_dir(self, folder: str, prefix: str, seen: dict[str, _Cached], real_root: str) -> None:
        # The hot loop of a warm turn: listdir + one lstat per entry through a directory
        # fd is about 25% cheaper than scandir + DirEntry.stat, and nothing else is done.
        try:
            names = os.listdir(folder)
            dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return
        subdirs = []
        cache, stat, top = self._cache, os.stat, not prefix
        index_name, skip_dirs = self.index_name, self.skip_dirs
        try:
            for name in names:
                if name[0] == "." or (top and name == index_name):
                    continue
                try:
                    st = stat(name, dir_fd=dir_fd, follow_symlinks=False)
                except OSError:
                    continue
                kind = st.st_mode & S_IFMT_MASK
                if kind == S_IFDIR:
                    if not top or name not in skip_dirs:
                        subdirs.append(name)
                    continue
                if not name.endswith(".md"):
                    continue
                if kind != S_IFREG:
                    target = self._follow(os.path.join(folder, name), real_root)
                    if target is None:
                        continue
                    st = target
                filename = name if top else prefix + name
                cached = cache.get(filename)
                if cached is None or cached.size != st.st_size or cached.mtime_ns != st.st_mtime_ns:
                    cached = self._load(filename, Path(folder, name), st)
                seen[filename] = cached
        finally:
            os.close(dir_fd)
        for sub in subdirs:
            self._scan_dir(os.path.join(folder, sub), f"{prefix}{sub}/", seen, real_root)

    def _follow(self, path: str, real_root: str) -> os.stat_result | None:
        """The stat of a symlink's target if it is a file inside the folder, else None."""
        real = os.path.realpath(path)
        if real.startswith(real_root + os.sep) and os.path.isfile(real):
            return os.stat(real)
        self.skipped.append(SkippedFile(Path(path), "symlink pointing outside the memory folder"))
        return None

    def _load(self, filename: str, path: Path, st: os.stat_result) -> _Cached:
        self.reads += 1
        text, reason = read_text_head(path, HEAD_READ_BYTES)
        candidate = None
        if text is not None:
            candidate = candidate_from_text(filename, text, st.st_mtime, size=st.st_size, path=path)
            self.index.add(candidate)
        else:
            self.index.remove(filename)
        cached = _Cached(st.st_size, st.st_mtime_ns, path, candidate, reason)
        if filename not in self._cache:
            bisect.insort(self._order, filename)
        self._cache[filename] = cached
        return cached

    # -- the on-disk copy --
    def save_cache(self) -> None:
        """Write what the scans learnt to `cache_file`, if anything changed since it was read.

        Advisory: a folder that cannot be written costs the next process a full read, never a
        turn, so a failure is logged and dropped.
        """
        if self.cache_file is None or not (self._dirty or self._saved != self._companions_state()):
            return
        files = {name: _cached_row(c) for name, c in self._cache.items()}
        data: dict[str, Any] = {"version": INDEX_CACHE_VERSION, "root": os.path.realpath(self.root), "files": files}
        old = self._companions()
        try:
            self.cache_file.parent.mkdir(parents=True, exist_ok=True)
            data |= self._save_companions(secrets.token_hex(4))
            atomic_write(self.cache_file, json.dumps(data, ensure_ascii=False, separators=(",", ":")))
        except OSError as exc:
            log.info("could not save the recall index %s: %s", self.cache_file, os_error_text(exc))
            return
        for path in old:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        self._dirty = False
        self._saved = self._companions_state()

    def _companions_state(self) -> tuple[int, bool]:
        return len(self.index.vectors), self.index.bm25_dump is not None

    def _companions(self) -> list[Path]:
        """The companion files of cache_file on disk now (to delete once a new set is written)."""
        assert self.cache_file is not None
        return list(self.cache_file.parent.glob(f"{self.cache_file.stem}.*.*"))

    def _save_companions(self, token: str) -> dict[str, Any]:
        """Write the vectors and the BM25 matrix beside cache_file; what the JSON records of them."""
        import numpy as np

        assert self.cache_file is not None
        out: dict[str, Any] = {}
        stem, folder = self.cache_file.stem, self.cache_file.parent
        vectors = self.index.vectors
        if vectors:
            names = sorted(vectors)
            np.save(folder / f"{stem}.{token}.vectors.npy", np.stack([vectors[n] for n in names]).astype(np.float16))
            out["vectors"] = {"file": f"{stem}.{token}.vectors.npy", "names": names}
        if self.index.bm25_dump is not None:
            retriever, order = self.index.bm25_dump
            retriever.save(str(folder / f"{stem}.{token}.bm25"))
            out["bm25"] = {"dir": f"{stem}.{token}.bm25", "order": order}
        return out

    def _load_cache(self) -> None:
        """Seed the scan state from `cache_file`; a missing, stale or damaged file is ignored
        (the scan then reads every file, as without a cache, and rewrites it)."""
        self._cache_loaded = True
        assert self.cache_file is not None
        try:
            data = json.loads(self.cache_file.read_bytes())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.info("ignoring the recall index %s: %s", self.cache_file, exc)
            return
        if (
            not isinstance(data, dict)
            or data.get("version") != INDEX_CACHE_VERSION
            or data.get("root") != os.path.realpath(self.root)
        ):
            return
        try:
            rows = {name: _row_cached(self.root, name, row) for name, row in data["files"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            log.info("ignoring the damaged recall index %s: %s", self.cache_file, exc)
            return
        for name, cached in rows.items():
            self._cache[name] = cached
            if cached.candidate is not None:
                self.index.add(cached.candidate)
        self._order = sorted(self._cache)
        self._load_companions(data)
        self._saved = self._companions_state()

    def _load_companions(self, data: dict[str, Any]) -> None:
        """The vectors and BM25 matrix the JSON names, if they are there and whole (else they
        are computed again when recall first ranks)."""
        assert self.cache_file is not None
        folder, docs = self.cache_file.parent, self.index.docs
        try:
            if isinstance(vec := data.get("vectors"), dict):
                import numpy as np

                matrix = np.load(folder / str(vec["file"])).astype(np.float32)
                for name, row in zip(vec["names"], matrix, strict=True):
                    if name in docs:
                        self.index.vectors[name] = row
            if isinstance(bm := data.get("bm25"), dict) and set(bm["order"]) == docs.keys():
                retriever = bm25s_module().BM25.load(str(folder / str(bm["dir"])))
                self.index.bm25_dump = (retriever, list(bm["order"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.info("ignoring the recall index's companions of %s: %s", self.cache_file, exc)


def index_cache_file(cache_dir: Path, folder: Path) -> Path:
    """Where the on-disk recall index of `folder` lives: one file per folder in `cache_dir`
    (the home folder's cache), so the memory folder holds only what a person wrote."""
    digest = hashlib.sha256(os.path.realpath(folder).encode()).hexdigest()[:16]
    return cache_dir / f"{digest}.json"


def delete_index_cache(cache_dir: Path, folder: Path) -> None:
    """Delete the on-disk recall index of `folder` with its companions (vectors, BM25 matrix):
    they hold what the memories say, and `memory forget --purge` deletes that for good."""
    cache = index_cache_file(cache_dir, folder)
    for path in [cache, *cache.parent.glob(f"{cache.stem}.*.*")]:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def _cached_row(cached: _Cached) -> list[Any]:
    c = cached.candidate
    if c is None:
        return [cached.size, cached.mtime_ns, cached.skip_reason]
    return [
        cached.size,
        cached.mtime_ns,
        None,
        c.type,
        c.mtime,
        c.description,
        c.head_text,
        c.name,
        c.size,
        c.frontmatter_ok,
        c.terms,
        c.length,
        c.superseded_by,
    ]


def _row_cached(root: Path, name: str, row: Any) -> _Cached:
    """One cache row back; raises on anything malformed (the whole cache is then ignored)."""
    if not isinstance(row, list) or len(row) not in (3, 13):
        raise ValueError(f"a row of {name} has the wrong shape")
    size, mtime_ns, path = int(row[0]), int(row[1]), root / name
    if len(row) == 3:
        return _Cached(size, mtime_ns, path, None, str(row[2]))
    type_, mtime, description, head_text, title, csize, ok, terms, length, successor = row[3:]
    if not isinstance(terms, dict):
        raise ValueError(f"the terms of {name} are not an object")
    candidate = Candidate(
        filename=name,
        type=None if type_ is None else str(type_),
        mtime=float(mtime),
        description=str(description),
        head_text=str(head_text),
        name=str(title),
        path=path,
        size=int(csize),
        frontmatter_ok=bool(ok),
        terms={str(t): float(n) for t, n in terms.items()},
        length=float(length),
        superseded_by=str(successor),
    )
    return _Cached(size, mtime_ns, path, candidate)
