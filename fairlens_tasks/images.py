"""Image access: a two-tier decode cache, integrity checks, and Hugging Face dataset handles.

Every question of a domain is asked of every image, and the documents are ordered image by image, so a
model that keeps the document order sees an image's questions one after the other: a cache of a few decoded
images turns 21 decodes (hiring) into one. The cache is keyed by the file (path, size, modification time) or
by (dataset, row), holds at most ``FAIRLENS_IMAGE_CACHE`` images in memory (default 8; see
:class:`image_corpus.images.ImageCache` for the eviction rule), and hands out copies, so a model that edits an
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

import hashlib
import io
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageFile

from image_corpus.images import DEFAULT_CACHE_SIZE as DEFAULT_CACHE_SIZE  # re-exported, as the three below
from image_corpus.images import DEFAULT_SPILL_MB as DEFAULT_SPILL_MB
from image_corpus.images import DecodeStats as DecodeStats
from image_corpus.images import ImageCache, ProcessImageCache, decode_rgb

CACHE_ENV = "FAIRLENS_IMAGE_CACHE"
SPILL_ENV = "FAIRLENS_IMAGE_SPILL_MB"

_LOCK = threading.RLock()
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
_DATASETS: dict[tuple[str, str], Any] = {}


def hf_dataset(name: str, split: str | None) -> Any:
    """The dataset ``name`` (a hub name, a ``save_to_disk`` folder or a data folder), opened once per process.

    Images are not decoded here. ``split`` None takes the only split, or "test" when there are several.
    """
    key = (name, split or "")
    with _LOCK:
        found = _DATASETS.get(key)
        if found is not None:
            return found
    import datasets

    path = Path(name).expanduser()
    if path.is_dir() and ((path / "state.json").is_file() or (path / "dataset_dict.json").is_file()):
        loaded = datasets.load_from_disk(str(path))
    else:
        loaded = datasets.load_dataset(str(path) if path.exists() else name)
    if isinstance(loaded, datasets.DatasetDict):
        splits = list(loaded)
        if split is None:
            if len(splits) == 1:
                split = splits[0]
            elif "test" in splits:
                split = "test"
            else:
                raise ValueError(
                    f"hf:{name} has splits {', '.join(splits)}; choose one with FAIRLENS_HF_SPLIT / --hf-split"
                )
        if split not in loaded:
            raise ValueError(f"hf:{name} has no split {split!r}; it has {', '.join(splits)}")
        loaded = loaded[split]
    elif split is not None and str(loaded.split) not in (split, "None"):
        raise ValueError(f"hf:{name} is a single {loaded.split!s} split, not {split!r}")
    with _LOCK:
        _DATASETS.setdefault(key, loaded)
        return _DATASETS[key]


def hf_undecoded(name: str, split: str | None, column: str) -> Any:
    """The dataset with ``column`` left undecoded (``{"bytes", "path"}`` rows), opened once per process."""
    import datasets

    key = (name, f"{split or ''}\0{column}")
    with _LOCK:
        found = _DATASETS.get(key)
        if found is not None:
            return found
    dataset = hf_dataset(name, split)
    if column not in dataset.column_names:
        raise ValueError(f"hf:{name} has no column {column!r}; it has {', '.join(dataset.column_names)}")
    feature = dataset.features[column]
    if isinstance(feature, datasets.Image) and feature.decode:
        dataset = dataset.cast_column(column, datasets.Image(decode=False))
    with _LOCK:
        _DATASETS.setdefault(key, dataset)
        return _DATASETS[key]


def hf_image_bytes(name: str, split: str | None, column: str, index: int) -> bytes:
    """The encoded bytes of row ``index``'s image (no decoding)."""
    value = hf_undecoded(name, split, column)[int(index)][column]
    if isinstance(value, dict):
        if value.get("bytes"):
            return bytes(value["bytes"])
        if value.get("path"):
            return Path(value["path"]).read_bytes()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return Path(value).read_bytes()
    raise ValueError(f"hf:{name} row {index}: column {column!r} holds no image ({type(value).__name__})")


def load_hf(name: str, split: str | None, column: str, index: int) -> Image.Image:
    """The RGB image of row ``index``, through the cache."""
    return image_cache().get(
        ("hf", name, split, column, int(index)), lambda: decode_rgb(hf_image_bytes(name, split, column, index))
    )


# --------------------------------------------------------------------------- integrity
@dataclass(frozen=True)
class Checked:
    sha256: str
    size: tuple[int, int]


def check_image_bytes(data: bytes) -> Checked:
    """Decode ``data`` once (reduced scale for JPEG) and hash it; raise ``ValueError`` if it is corrupt."""
    digest = hashlib.sha256(data).hexdigest()
    with _LOCK:
        previous = ImageFile.LOAD_TRUNCATED_IMAGES
        ImageFile.LOAD_TRUNCATED_IMAGES = False
        try:
            with Image.open(io.BytesIO(data)) as image:
                size = image.size
                if image.format == "JPEG":
                    image.draft("RGB", (max(1, size[0] // 8), max(1, size[1] // 8)))
                image.load()
        except Exception as error:
            raise ValueError(f"not a readable image ({type(error).__name__}: {error})") from None
        finally:
            ImageFile.LOAD_TRUNCATED_IMAGES = previous
    image_cache().stats.checks += 1
    if size[0] < 1 or size[1] < 1:
        raise ValueError("image has no pixels")
    return Checked(sha256=digest, size=size)


def check_image_file(path: str) -> Checked:
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read the file ({error.strerror or error})") from None
    return check_image_bytes(data)
