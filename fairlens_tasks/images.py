"""Image access: a two-tier decode cache, integrity checks, and Hugging Face dataset handles.

Every question of a domain is asked of every image, and the documents are ordered image by image, so a
model that keeps the document order sees an image's questions one after the other: a cache of a few decoded
images turns 21 decodes (hiring) into one. The cache is keyed by the file (path, size, modification time) or
by (dataset, row), holds at most ``FAIRLENS_IMAGE_CACHE`` images in memory (default 8; see
:class:`fairness_evals.corpus.images.ImageCache` for the eviction rule), and hands out copies, so a model that edits an
image in place cannot corrupt it. Memory stays flat however large the corpus: nothing else keeps pixels.

Behind it, the first decode of each file writes its raw pixels to a spill file in a private temporary
directory (cap ``FAIRLENS_IMAGE_SPILL_MB`` MiB, default 4096; 0 turns it off; removed at exit), and later
misses of the memory tier rebuild the image from there without decoding. So an image is decoded once per
run whatever the request order, also for models that sort requests by prompt text and so cycle through all
images once per question (README, "Image decoding").

:func:`check_image` decodes an image once, at reduced scale where the format allows (JPEG draft mode
still reads every byte of the compressed stream), with truncated files treated as errors whatever
``PIL.ImageFile.LOAD_TRUNCATED_IMAGES`` says (lmms-eval sets it to True globally).
"""

from __future__ import annotations

import os
from typing import Any

from PIL import Image

from fairness_evals.corpus import hub, integrity
from fairness_evals.corpus.images import DEFAULT_CACHE_SIZE as DEFAULT_CACHE_SIZE  # re-exported, as the three below
from fairness_evals.corpus.images import DEFAULT_SPILL_MB as DEFAULT_SPILL_MB
from fairness_evals.corpus.images import DecodeStats as DecodeStats
from fairness_evals.corpus.images import ImageCache, ProcessImageCache, decode_rgb
from fairness_evals.corpus.integrity import Checked as Checked

CACHE_ENV = "FAIRLENS_IMAGE_CACHE"
SPILL_ENV = "FAIRLENS_IMAGE_SPILL_MB"

_CACHE = ProcessImageCache(CACHE_ENV, SPILL_ENV)


def image_cache() -> ImageCache:
    """The process-wide cache, sized from ``FAIRLENS_IMAGE_CACHE`` and ``FAIRLENS_IMAGE_SPILL_MB`` when first
    used."""
    return _CACHE.get()


def reset_image_cache(capacity: int | None = None, spill_mb: int | None = None) -> ImageCache:
    """Replace the process-wide cache (tests and the bench); ``None`` re-reads the environment."""
    return _CACHE.reset(capacity, spill_mb)


def _file_key(path: str) -> tuple[str, int, int]:
    stat = os.stat(path)
    return (path, stat.st_size, stat.st_mtime_ns)


def load_file(path: str) -> Image.Image:
    """The RGB image at ``path``, through the cache."""
    return image_cache().get(_file_key(path), lambda: decode_rgb(path))


# --------------------------------------------------------------------------- Hugging Face datasets
#: The FairLens split setting, named in messages about a missing or ambiguous split.
SPLIT_SETTING = "FAIRLENS_HF_SPLIT / --hf-split"


def hf_dataset(name: str, split: str | None) -> Any:
    """The dataset ``name`` opened once per process (:func:`fairness_evals.corpus.hub.hf_dataset`)."""
    return hub.hf_dataset(name, split, split_setting=SPLIT_SETTING)


def hf_image_bytes(name: str, split: str | None, column: str, index: int) -> bytes:
    """The encoded bytes of row ``index``'s image (no decoding)."""
    return hub.hf_image_bytes(name, split, column, index, split_setting=SPLIT_SETTING)


def load_hf(name: str, split: str | None, column: str, index: int) -> Image.Image:
    """The RGB image of row ``index``, through the cache."""
    return image_cache().get(
        ("hf", name, split, column, int(index)), lambda: decode_rgb(hf_image_bytes(name, split, column, index))
    )


# --------------------------------------------------------------------------- integrity
def check_image_bytes(data: bytes) -> Checked:
    """:func:`fairness_evals.corpus.integrity.check_image_bytes`, counted in this cache's statistics."""
    return integrity.check_image_bytes(data, image_cache().stats)


def check_image_file(path: str) -> Checked:
    """:func:`fairness_evals.corpus.integrity.check_image_file`, counted in this cache's statistics."""
    return integrity.check_image_file(path, image_cache().stats)
