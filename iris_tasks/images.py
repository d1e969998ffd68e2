"""Images the IRIS tasks show: corpus images (cropped to a person's box), and the probe's blank image.

Decoding goes through a two-tier cache of FairLens's kind (:class:`fairness_evals.corpus.images.ImageCache`: in
memory, the first ``capacity - 1`` images stay, one slot rotates, copies are handed out; behind it, the raw
pixels of every decoded image in a temporary spill file, so an image is decoded once per run in any request
order), sized by ``IRIS_IMAGE_CACHE`` (default 8) and ``IRIS_IMAGE_SPILL_MB`` (MiB, default 4096; 0 turns the
spill file off), separate from FairLens's. Crops are cached under (file, box). Integrity
checks are :mod:`fairness_evals.corpus.integrity`'s (every byte read, truncation is an error), counted in this
cache's statistics.

The RFS-Und probe decouples knowledge from vision with "a blank image" (paper Figure 2); models still need
an image, so :func:`blank_image` makes one in code: plain white, 336 x 336 pixels (LLaVA-1.5's input size;
any size is resized by the model's processor).
"""

from __future__ import annotations

import os
from collections.abc import Hashable

from PIL import Image

from fairness_evals.corpus.hub import hf_image_bytes
from fairness_evals.corpus.images import DEFAULT_CACHE_SIZE as DEFAULT_CACHE_SIZE  # re-exported, as the one below
from fairness_evals.corpus.images import DEFAULT_SPILL_MB as DEFAULT_SPILL_MB
from fairness_evals.corpus.images import ImageCache, ProcessImageCache, decode_rgb
from fairness_evals.corpus.integrity import check_image_bytes, check_image_file

CACHE_ENV = "IRIS_IMAGE_CACHE"
SPILL_ENV = "IRIS_IMAGE_SPILL_MB"
BLANK_SIZE = (336, 336)
BLANK_COLOUR = (255, 255, 255)

_CACHE = ProcessImageCache(CACHE_ENV, SPILL_ENV)


def image_cache() -> ImageCache:
    return _CACHE.get()


def reset_image_cache(capacity: int | None = None, spill_mb: int | None = None) -> ImageCache:
    """Replace the process-wide cache (tests and the bench); ``None`` re-reads the environment."""
    return _CACHE.reset(capacity, spill_mb)


def clamp_box(box: tuple[float, float, float, float], size: tuple[int, int]) -> tuple[int, int, int, int]:
    """The pixel box inside an image of ``size``; ``ValueError`` when nothing of it is inside."""
    width, height = size
    left, top = max(0, round(box[0])), max(0, round(box[1]))
    right, bottom = min(width, round(box[2])), min(height, round(box[3]))
    if right <= left or bottom <= top:
        raise ValueError(f"bounding box {tuple(round(v, 1) for v in box)} lies outside the {width}x{height} image")
    return left, top, right, bottom


def _decode(read: bytes | str, box: tuple[float, float, float, float] | None) -> Image.Image:
    rgb = decode_rgb(read)
    return rgb.crop(clamp_box(box, rgb.size)) if box is not None else rgb


def load_image(
    *,
    path: str | None = None,
    hf: tuple[str, str | None, str, int] | None = None,
    box: tuple[float, float, float, float] | None = None,
) -> Image.Image:
    """The RGB image of a file or a dataset row ``(name, split, column, index)``, cropped to ``box``."""
    if path:
        stat = os.stat(path)
        key: Hashable = ("file", path, stat.st_size, stat.st_mtime_ns, box)
        return image_cache().get(key, lambda: _decode(path, box))
    if hf is None:
        raise ValueError("load_image needs a path or a dataset row")
    name, split, column, index = hf
    return image_cache().get(
        ("hf", name, split, column, int(index), box),
        lambda: _decode(hf_image_bytes(name, split, column, int(index)), box),
    )


def check_image(
    *, path: str | None = None, hf: tuple[str, str | None, str, int] | None = None, box=None
) -> tuple[str, tuple[int, int]]:
    """(sha256, size) after decoding the image once; ``ValueError`` if it is unreadable or ``box`` misses it."""
    if path:
        checked = check_image_file(path, image_cache().stats)
    elif hf is not None:
        checked = check_image_bytes(hf_image_bytes(*hf), image_cache().stats)
    else:
        raise ValueError("check_image needs a path or a dataset row")
    if box is not None:
        clamp_box(box, checked.size)
    return checked.sha256, checked.size


def blank_image() -> Image.Image:
    """A fresh plain white 336 x 336 RGB image (the RFS-Und probe's "blank image")."""
    return Image.new("RGB", BLANK_SIZE, BLANK_COLOUR)
