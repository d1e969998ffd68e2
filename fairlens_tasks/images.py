"""Image access: a small bounded decode cache, integrity checks, and Hugging Face dataset handles.

Every question of a domain is asked of every image, and the documents are ordered image by image, so a
model that keeps the document order sees an image's questions one after the other: a cache of a few decoded
images turns 21 decodes (hiring) into one. The cache is keyed by the file (path, size, modification time) or
by (dataset, row), holds at most ``FAIRLENS_IMAGE_CACHE`` images (default 8; see :class:`ImageCache` for the
eviction rule), and hands out copies, so a model that edits an image in place cannot corrupt it. Memory
stays flat however large the corpus: nothing else keeps pixels.

Models that sort requests by prompt text group them by question instead; then an image is decoded once per
question unless it is among the images the cache keeps (README, "Image decoding").

:func:`check_image` decodes an image once, at reduced scale where the format allows (JPEG draft mode
still reads every byte of the compressed stream), with truncated files treated as errors whatever
``PIL.ImageFile.LOAD_TRUNCATED_IMAGES`` says (lmms-eval sets it to True globally).
"""

from __future__ import annotations

import hashlib
import io
import os
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageFile

DEFAULT_CACHE_SIZE = 8
CACHE_ENV = "FAIRLENS_IMAGE_CACHE"

_LOCK = threading.RLock()


@dataclass
class DecodeStats:
    decodes: int = 0
    hits: int = 0
    checks: int = 0


class ImageCache:
    """A thread-safe cache of decoded RGB images holding at most ``capacity`` images.

    Eviction keeps the first ``capacity - 1`` images it sees and rotates one slot among the others. lmms-eval
    hands requests over in one of two orders: document order (chat models such as ``llava_hf`` and
    ``internvl_hf``; an image's questions arrive together), where the rotating slot alone gives one decode per
    image; or sorted by prompt text (``qwen2_5_vl``, ``qwen3_vl`` and the simple models), which cycles through
    all images once per question. Least-recently-used eviction would hit nothing in that cycle unless the
    whole corpus fits; keeping a fixed set hits ``capacity - 1`` images in every cycle.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = max(0, int(capacity))
        self._kept: dict[Hashable, Image.Image] = {}
        self._rotating: tuple[Hashable, Image.Image] | None = None
        self._lock = threading.Lock()
        self.stats = DecodeStats()

    def __len__(self) -> int:
        return len(self._kept) + (self._rotating is not None)

    def _find(self, key: Hashable) -> Image.Image | None:
        found = self._kept.get(key)
        if found is None and self._rotating is not None and self._rotating[0] == key:
            found = self._rotating[1]
        return found

    def get(self, key: Hashable, decode: Callable[[], Image.Image]) -> Image.Image:
        with self._lock:
            found = self._find(key)
            if found is not None:
                self.stats.hits += 1
                return found.copy()
        image = decode()
        with self._lock:
            self.stats.decodes += 1
            if self._find(key) is None and self.capacity:
                if len(self._kept) < self.capacity - 1:
                    self._kept[key] = image
                else:
                    self._rotating = (key, image)
        return image.copy() if self.capacity else image

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._rotating = None
            self.stats = DecodeStats()


def _capacity_from_env() -> int:
    raw = os.environ.get(CACHE_ENV, "").strip()
    if not raw:
        return DEFAULT_CACHE_SIZE
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{CACHE_ENV}={raw!r} is not a whole number of images") from None
    if value < 0:
        raise ValueError(f"{CACHE_ENV}={raw!r} must be 0 (no cache) or more")
    return value


_CACHE: ImageCache | None = None


def image_cache() -> ImageCache:
    """The process-wide cache, sized from ``FAIRLENS_IMAGE_CACHE`` when first used."""
    global _CACHE
    with _LOCK:
        if _CACHE is None:
            _CACHE = ImageCache(_capacity_from_env())
        return _CACHE


def reset_image_cache(capacity: int | None = None) -> ImageCache:
    """Replace the process-wide cache (tests and the bench); ``None`` re-reads the environment."""
    global _CACHE
    with _LOCK:
        _CACHE = ImageCache(_capacity_from_env() if capacity is None else capacity)
        return _CACHE


def _decode_bytes(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        return image.convert("RGB")


def _file_key(path: str) -> tuple[str, int, int]:
    stat = os.stat(path)
    return (path, stat.st_size, stat.st_mtime_ns)


def load_file(path: str) -> Image.Image:
    """The RGB image at ``path``, through the cache."""
    key = _file_key(path)

    def decode() -> Image.Image:
        with Image.open(path) as image:
            image.load()
            return image.convert("RGB")

    return image_cache().get(key, decode)


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
        ("hf", name, split, column, int(index)), lambda: _decode_bytes(hf_image_bytes(name, split, column, index))
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
