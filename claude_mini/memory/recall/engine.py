"""Layer 3's engine: what one prefetch selects, from the scan to the rendered attachments.

The part (recall/part.py) decides when a prefetch starts, what reaches the model and the
session budget; this engine does the work of one selection:

    local_pass  (in a thread) scan the folder (on-disk index, only changed files read), the
                archive and the team folder ─► manifest of ≤ 200 by the fused BM25 + embedding
                ranking ─► its strong matches
    run         the local picks rendered at once (the `local` future), then, with strategy
                "model", one side-model request over the manifest (a request with no strong
                local match first gets English keywords when the folder is large); a failure or
                recall.timeoutMs falls back to the local picks
    render      the chosen files as attachments; archived ones are brought back
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from claude_mini.base.notices import NoticeChannel
from claude_mini.llm.protocol import ModelError
from claude_mini.memory.recall import embed
from claude_mini.memory.recall.archive import ArchiveTier, is_archived_name
from claude_mini.memory.recall.lexical import (
    SHORTLIST_SIZE,
    Candidate,
    manifest_line,
    select_lexical,
    shortlist,
    tokenize,
)
from claude_mini.memory.recall.scan import CandidateScanner, index_cache_file
from claude_mini.memory.recall.selection import (
    BRIDGE_FOLDER_FILES,
    LOCAL_MAX_SELECTED,
    RecalledMemory,
    RecallEvent,
    RecallFailed,
    Selection,
    add_stale_lines,
    build_keywords_request,
    build_recall_request,
    parse_keywords,
    parse_selection,
    render_memory,
    tier_note,
)
from claude_mini.memory.recall.team import TeamRecall, merge_tiers
from claude_mini.memory.store import MemoryStore
from claude_mini.memory.store.links import superseded_names
from claude_mini.memory.team.folder import is_team_name

if TYPE_CHECKING:
    from claude_mini.config import Config
    from claude_mini.config.memory_settings import RecallSettings
    from claude_mini.llm.protocol import ModelClient
    from claude_mini.session import Session

log = logging.getLogger(__name__)

# --- the hook ------------------------------------------------------------------------


class RecallEngine:
    """The selection of one prefetch: scans, the side-model request, rendering (recall/part.py
    schedules it); one-line messages go out once per session on the notice channel."""

    def __init__(
        self,
        store: MemoryStore,
        config: Config,
        notices: NoticeChannel | None = None,
        *,
        client: ModelClient | None = None,
        clock: Callable[[], float] = time.time,
        cache_dir: Path | None = None,
        team_root: Path | None = None,
    ) -> None:
        self.store = store
        self.config = config
        self.notices = notices or NoticeChannel()
        self.client = client  # None: use the agent's client (the main one; purpose tells them apart)
        self.clock = clock
        self.scanner = CandidateScanner(store.root, cache_file=_cache_file(cache_dir, store.root))
        # what gc archived: ranked with the live files, restored when chosen
        self.archive = ArchiveTier(store, cache_file=_cache_file(cache_dir, store.archive_dir))
        # the repository's team folder (memory/team/), searched beside the private one
        self.team = TeamRecall(team_root, cache_file=_cache_file(cache_dir, team_root)) if team_root else None
        for scanner in (self.scanner, self.archive.scanner, *([self.team.scanner] if self.team else [])):
            # a turn's local pass never waits for the embedding model: BM25 alone until it is loaded
            scanner.index.wait_for_model = False
        self.session: Session | None = None  # whose costs the side-model requests add to
        self._scan_lock = threading.Lock()  # the scanner is not thread-safe
        self._said: set[str] = set()
        self._warm_thread: threading.Thread | None = None

    def warm_up(self, *, model: bool = True) -> None:
        """Load bm25s and the stemmer (and, with `model`, the embedding model) in background
        threads, so a turn's local pass need not wait for them."""
        if self._warm_thread is None:
            self._warm_thread = embed.start_thread(tokenize, "recall-warm-up", "warm up")
        if model:
            embed.start_loading()

    async def warmed(self, timeout: float) -> None:
        """Wait at most `timeout` seconds for warm_up's libraries (bm25s, the stemmer; not the
        embedding model): a first turn that starts with the session would otherwise spend its whole
        hold importing them. In -p that wait is free: the SDK is still importing too."""
        thread = self._warm_thread
        if thread is not None and thread.is_alive():
            await asyncio.to_thread(thread.join, timeout)

    def new_session(self, session: Session) -> None:
        """/clear or /resume: costs go to `session`, and notices may be said once more."""
        self.session = session
        self._said.clear()

    async def run(
        self,
        query: str,
        exclude: frozenset[str],
        tools: list[str],
        settings: RecallSettings,
        client: ModelClient,
        event: RecallEvent,
        local: asyncio.Future[list[RecalledMemory]],
    ) -> Selection:
        try:
            with self.notices.busy("recall"):
                return await self._select(query, exclude, tools, settings, client, event, local)
        finally:
            if not local.done():  # failed or cancelled before the local pass finished
                local.set_result([])

    async def _select(
        self,
        query: str,
        exclude: frozenset[str],
        tools: list[str],
        settings: RecallSettings,
        client: ModelClient,
        event: RecallEvent,
        local: asyncio.Future[list[RecalledMemory]],
    ) -> Selection:
        manifest, strong, cut = await asyncio.to_thread(self.local_pass, query, exclude)
        by_name = {c.filename: c for c in manifest}
        # With a side model to come, the local pass leaves it room in the turn's 5 files (and
        # brings back from the archive only what it sends).
        sent = strong if settings.strategy == "lexical" else strong[:LOCAL_MAX_SELECTED]
        rendered, restored = await asyncio.to_thread(self.render, sent, by_name)
        found = list(rendered.values())
        local.set_result(found)
        if not manifest:
            return Selection([], settings.strategy, 0)
        if settings.strategy == "lexical":
            event.selected = list(strong)
            return Selection(found, "lexical", len(manifest), restored=restored)
        if cut and not strong:
            manifest = await self._bridged(client, settings, query, exclude) or manifest
            by_name |= {c.filename: c for c in manifest}
        try:
            names = await self._ask_model(client, settings, query, manifest, tools)
        except RecallFailed as exc:
            self.say(f"memory recall fell back to lexical search: {exc}")
            event.selected = list(strong)
            rest, rest_restored = await asyncio.to_thread(
                self.render, [n for n in strong if n not in rendered], by_name
            )
            return Selection(
                found + list(rest.values()), "lexical (fallback)", len(manifest), str(exc), restored + rest_restored
            )
        event.selected = list(names)
        more, more_restored = await asyncio.to_thread(self.render, [n for n in names if n not in rendered], by_name)
        rendered |= more
        chosen = [rendered[n] for n in names if n in rendered]
        return Selection(chosen, "model", len(manifest), restored=restored + more_restored)

    def local_pass(self, query: str, exclude: frozenset[str]) -> tuple[list[Candidate], list[str], bool]:
        """The manifest for the side model, the lexical pass's strong matches, and whether the
        manifest had to leave files out, from one scan (in a worker thread: the first scan of a
        process reads the on-disk index or the files)."""
        with self._scan_lock:
            self.scanner.scan()
            view = self.archive.refresh()
            exclude |= superseded_names(self.scanner.index.docs, view.index.docs)
            best = shortlist(query, self.scanner.index, SHORTLIST_SIZE, exclude=exclude, archive=view)
            scored = select_lexical(query, self.scanner.index, exclude=exclude, archive=view)
            if self.team is not None:
                best, scored = self._with_team(query, exclude, best, scored)
            strong = [f for f, _ in scored]
            candidates = [c for name, _ in best if (c := self._candidate_locked(name))]
            cut = len(self.scanner.index) + len(view.eligible) > BRIDGE_FOLDER_FILES
        manifest = sorted(candidates, key=lambda c: (-c.mtime, c.filename))
        return manifest, strong, cut

    async def _bridged(
        self, client: ModelClient, settings: RecallSettings, query: str, exclude: frozenset[str]
    ) -> list[Candidate]:
        """A request the local pass finds nothing strong for (another language than the memories',
        a pure paraphrase) may share almost no words with what it needs, and above
        BRIDGE_FOLDER_FILES the manifest can show only part of the folder: one small side-model
        request turns it into English keywords, and the manifest is ranked again with them.
        [] when that request fails (the first manifest is used). A turn with a strong local
        match never pays for it (scripts/bench_recall.py counts how many turns do)."""
        request = build_keywords_request(self.config.small_model, query)
        try:
            done = await asyncio.wait_for(client.complete(request), settings.timeout_ms / 1000)
            keywords = parse_keywords(done.message.text)
        except Exception as exc:  # the plain manifest still works: never fail the turn for it
            log.info("recall's keyword request failed: %s", exc)
            return []
        if self.session is not None:
            self.session.costs.add("recall", done.model or self.config.small_model, done.billed)
        if not keywords:
            return []
        widened = f"{query} {' '.join(keywords)}"
        manifest, _, _ = await asyncio.to_thread(self.local_pass, widened, exclude)
        return manifest

    def _with_team(
        self,
        query: str,
        exclude: frozenset[str],
        best: list[tuple[str, float]],
        scored: list[tuple[str, float]],
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The private tier's shortlist and strong matches merged with the team folder's
        (memory/recall/team.py); under the scan lock."""
        assert self.team is not None
        team_best, team_strong = self.team.local_pass(query, exclude)
        return merge_tiers(best, scored, team_best, team_strong)

    def render(self, names: list[str], by_name: dict[str, Candidate]) -> tuple[dict[str, RecalledMemory], list[str]]:
        """The chosen files as attachments by the name they were chosen under, and the live
        names of those brought back from the archive (in a worker thread: restoring takes the
        index lock; the loop never waits)."""
        now, out, restored = self.clock(), {}, []
        for name in names:
            candidate = by_name.get(name) or self.candidate(name)
            if candidate is not None and is_archived_name(name):
                live = self._bring_back(name, now)
                if live is not None:
                    restored.append(live)
                    candidate = replace(candidate, filename=live, path=self.store.root / live)
            memory = render_memory(candidate, now) if candidate else None
            if memory is not None:
                out[name] = memory
        add_stale_lines(list(out.values()), self._repo)
        return out, restored

    def _bring_back(self, name: str, now: float) -> str | None:
        """Restore an archived memory recall chose; its live name, or None (then it is shown
        from the archive and stays there)."""
        with self._scan_lock:
            live = self.archive.bring_back(name, now)
        if live is not None:
            self.say(
                f"memory recall brought {live} back from the archive (gc had put it away; it is in MEMORY.md again)"
            )
        return live

    @property
    def _repo(self) -> tuple[Path, ...]:
        """Where a recalled memory's paths are checked: the repository root, then the cwd."""
        return tuple(dict.fromkeys((self.config.project_root, self.config.cwd)))

    def candidate(self, filename: str) -> Candidate | None:
        with self._scan_lock:
            return self._candidate_locked(filename)

    def _candidate_locked(self, filename: str) -> Candidate | None:
        if is_archived_name(filename):
            return self.archive.candidate(filename)
        if is_team_name(filename):
            return self.team.candidate(filename) if self.team is not None else None
        return self.scanner.index.docs.get(filename)

    def save_indexes(self) -> None:
        """Keep what this process learnt of the folder for the next one (advisory)."""
        with self._scan_lock:
            self.scanner.save_cache()
            self.archive.scanner.save_cache()
            if self.team is not None:
                self.team.save_cache()

    async def _ask_model(
        self, client: ModelClient, settings: RecallSettings, query: str, manifest: list[Candidate], tools: list[str]
    ) -> list[str]:
        """One side-model request; any failure or the deadline raises RecallFailed."""
        lines = [manifest_line(c, tier_note(c.filename)) for c in manifest]
        model = self.config.small_model
        request = build_recall_request(model, query, lines, tools)
        try:
            done = await asyncio.wait_for(client.complete(request), settings.timeout_ms / 1000)
        except TimeoutError:
            raise RecallFailed(f"the side model did not answer within {settings.timeout_ms} ms") from None
        except ModelError as exc:
            raise RecallFailed(f"the side model failed: {exc}") from exc
        except Exception as exc:  # an unmapped transport error must not cost the turn its recall
            raise RecallFailed(f"the side model failed: {type(exc).__name__}: {exc}") from exc
        if self.session is not None:
            self.session.costs.add("recall", done.model or model, done.billed)
        return parse_selection(done.message.text, [c.filename for c in manifest])

    def record_use(self, names: list[str]) -> None:
        names = [n for n in names if not is_team_name(n)]  # the private usage record only
        if not names:
            return
        try:
            self.store.record_use(names, self.clock())
        except Exception as exc:  # the usage record is advisory; never fail a turn for it
            self.say(f"could not update the memory usage record: {exc}")

    def say(self, message: str) -> None:
        """Tell the user once per session (a notice the UI shows, and the log), later only at debug.

        INFO, not WARNING: Python's last-resort handler would print a warning on stderr over
        the REPL's screen; the notice channel reaches the user instead.
        """
        key = message.split(":")[0]
        if key in self._said:
            log.debug(message)
            return
        self._said.add(key)
        log.info(message)
        self.notices.say(message)


def _cache_file(cache_dir: Path | None, folder: Path) -> Path | None:
    return index_cache_file(cache_dir, folder) if cache_dir is not None else None
