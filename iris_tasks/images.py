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

from collections.abc import Hashable
from typing import TYPE_CHECKING

from fairness_evals.corpus.hub import hf_image_bytes
from fairness_evals.corpus.images import DEFAULT_CACHE_SIZE as DEFAULT_CACHE_SIZE  # re-exported, as the one below
from fairness_evals.corpus.images import DEFAULT_SPILL_MB as DEFAULT_SPILL_MB
from fairness_evals.corpus.images import ProcessImageCache, decode_rgb, file_version, pil_image
from fairness_evals.corpus.integrity import check_face_size, check_source

if TYPE_CHECKING:
    from PIL import Image

#: The IRIS split settings, named in messages about a missing or ambiguous split.
SPLIT_SETTING = "IRIS_HF_SPLIT / IRIS_STEER_HF_SPLIT"
CACHE_ENV = "IRIS_IMAGE_CACHE"
SPILL_ENV = "IRIS_IMAGE_SPILL_MB"
BLANK_SIZE = (336, 336)
BLANK_COLOUR = (255, 255, 255)

_CACHE = ProcessImageCache(CACHE_ENV, SPILL_ENV)


#: The process-wide cache, sized from ``IRIS_IMAGE_CACHE`` and ``IRIS_IMAGE_SPILL_MB`` when first used.
image_cache = _CACHE.get
#: Replace the process-wide cache (tests and the bench); ``None`` re-reads the environment.
reset_image_cache = _CACHE.reset


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
        key: Hashable = ("file", path, *file_version(path), box)
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
    """(sha256, size) after decoding the image once (memoised per file version or dataset row); ``ValueError`` if it
    is unreadable, outside the size limits (:mod:`fairness_evals.corpus.integrity`), or ``box`` misses it or crops
    less than the minimum face size."""
    if path is None and hf is None:
        raise ValueError("check_image needs a path or a dataset row")
    checked = check_source(path=path, hf=hf, stats=image_cache().stats, split_setting=SPLIT_SETTING)
    if box is not None:
        left, top, right, bottom = clamp_box(box, checked.size)
        check_face_size(right - left, bottom - top, "crop")
    return checked.sha256, checked.size


def blank_image() -> Image.Image:
    """A fresh plain white 336 x 336 RGB image (the RFS-Und probe's "blank image")."""
    return pil_image().new("RGB", BLANK_SIZE, BLANK_COLOUR)
