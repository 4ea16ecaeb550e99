"""Recall's static embeddings: `wordllama`'s 256-dimension model, whose weights ship in its wheel.

Loaded lazily, once per process, the first time a ranking asks for it (in recall's worker thread:
never at start-up, never before the REPL's first paint). Embedding a description takes tens of
microseconds on one core, with no network and no GPU. When the package is missing or its files
cannot be read, `embedder()` returns None, says why in one --debug line, and recall ranks by BM25
alone.

The wheel keeps its tokenizer under `tokenizers/` while the loader looks under `tokenizer/` and then
tries to download it: giving the package folder itself as `cache_dir`, with downloads disabled,
makes it find both files where they are.
"""

from __future__ import annotations

import atexit
import logging
import threading
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

DIMENSIONS = 256
# How long the end of a process waits for a load still running. A daemon thread stopped inside the
# libraries' native code at interpreter exit aborts the whole process ("FATAL: exception not
# rethrown", SIGABRT): a one-shot run that ends before the model is loaded must wait for it.
EXIT_WAIT_S = 30.0
_lock = threading.Lock()
_model: Any = None
_tried = False


def embedder(*, wait: bool = True) -> Any:
    """The loaded wordllama model, or None when it is not available (said once at debug).

    `wait=False`: None at once unless the model is loaded, so a caller on a deadline ranks by BM25
    meanwhile. It never starts the load: only `start_loading` (the REPL, once its runtime is ready)
    or a caller that waits does. A one-shot `-p` run so ranks by BM25 alone: loading the model
    (0.6 s) would outlast its first turn, which could not use it, and hold the run's exit.
    """
    global _model, _tried
    if not wait and (not _tried or _lock.locked()):
        return None
    with _lock:
        if not _tried:
            _tried = True
            _model = _load()
        return _model


def start_loading() -> None:
    """Load the model in a background thread (idempotent): recall's part starts it when the
    session starts, which the REPL does after its first paint."""
    if not _tried and not _lock.locked():
        start_thread(embedder, "recall-embeddings")


def start_thread(target: Any, name: str, *args: Any) -> threading.Thread:
    """Run `target(*args)` in a background thread that the end of the process waits for (at most
    EXIT_WAIT_S), so the process never exits while it is inside native code."""
    thread = threading.Thread(target=target, args=args, name=name, daemon=True)
    thread.start()
    atexit.register(thread.join, EXIT_WAIT_S)
    return thread


def _load() -> Any:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    # wordllama calls logging.basicConfig(level=INFO) on import, which would put a stderr handler
    # on the root logger and print every INFO record of the process (httpx2's, on other threads
    # meanwhile) over the REPL's screen. basicConfig does nothing while the root has a handler.
    root.addHandler(logging.NullHandler())
    try:
        import os

        import wordllama  # heavy (numpy, safetensors, tokenizers): only when recall first ranks
        from wordllama import WordLlama

        folder = os.path.dirname(wordllama.__file__)
        return WordLlama.load(config="l2_supercat", dim=DIMENSIONS, cache_dir=folder, disable_download=True)
    except Exception as exc:  # missing package, damaged wheel: recall still works on BM25 alone
        log.debug("memory recall ranks by BM25 only: the embedding model is not available (%s)", exc)
        return None
    finally:
        for handler in [h for h in root.handlers if h not in handlers]:  # ours, and any it added after all
            root.removeHandler(handler)
        root.setLevel(level)


def embed(texts: list[str], *, wait: bool = True) -> np.ndarray | None:
    """Unit-length float32 vectors of `texts`, one row each; None without the model (or, with
    `wait=False`, while it is still loading)."""
    model = embedder(wait=wait)
    if model is None:
        return None
    import numpy as np

    vectors = np.asarray(model.embed(texts, norm=True), dtype=np.float32)
    return vectors.reshape(len(texts), DIMENSIONS)


def reset_for_tests() -> None:
    """Forget the loaded model so a test can load it again (or find it missing)."""
    global _model, _tried
    with _lock:
        _model, _tried = None, False
