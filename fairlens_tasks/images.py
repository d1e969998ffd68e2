"""FairLens images as the model sees them: decoded through a two-tier cache, from files or dataset rows.

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

The integrity checks of the corpus scan are :mod:`fairness_evals.corpus.integrity`'s, counted in this cache's
statistics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fairness_evals.corpus import hub
from fairness_evals.corpus.images import DEFAULT_CACHE_SIZE as DEFAULT_CACHE_SIZE  # re-exported, as the three below
from fairness_evals.corpus.images import DEFAULT_SPILL_MB as DEFAULT_SPILL_MB
from fairness_evals.corpus.images import DecodeStats as DecodeStats
from fairness_evals.corpus.images import ProcessImageCache, decode_rgb, file_version

if TYPE_CHECKING:
    from PIL import Image

CACHE_ENV = "FAIRLENS_IMAGE_CACHE"
SPILL_ENV = "FAIRLENS_IMAGE_SPILL_MB"
#: The FairLens split setting, named in messages about a missing or ambiguous split.
SPLIT_SETTING = "FAIRLENS_HF_SPLIT / --hf-split"

_CACHE = ProcessImageCache(CACHE_ENV, SPILL_ENV)
#: The process-wide cache, sized from ``FAIRLENS_IMAGE_CACHE`` and ``FAIRLENS_IMAGE_SPILL_MB`` when first used.
image_cache = _CACHE.get
#: Replace the process-wide cache (tests and the bench); ``None`` re-reads the environment.
reset_image_cache = _CACHE.reset


def load_file(path: str) -> Image.Image:
    """The RGB image at ``path``, through the cache (keyed by the file's path, size and modification time)."""
    return image_cache().get((path, *file_version(path)), lambda: decode_rgb(path))


def load_hf(name: str, split: str | None, column: str, index: int) -> Image.Image:
    """The RGB image of row ``index`` of the dataset ``name``, through the cache."""
    return image_cache().get(
        ("hf", name, split, column, int(index)),
        lambda: decode_rgb(hub.hf_image_bytes(name, split, column, int(index), split_setting=SPLIT_SETTING)),
    )
