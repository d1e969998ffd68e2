"""Decoding FairLens and IRIS images: the bounded decode cache, and its process-wide instance per task family.

See :class:`ImageCache` for the eviction rule. Each family has its own cache, sized by its environment
variable (``FAIRLENS_IMAGE_CACHE``, ``IRIS_IMAGE_CACHE``; default 8) when first used
(:class:`ProcessImageCache`).
"""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from PIL import Image

DEFAULT_CACHE_SIZE = 8


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


def capacity_from_env(variable: str) -> int:
    """The cache size in the environment variable ``variable`` (:data:`DEFAULT_CACHE_SIZE` when unset)."""
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return DEFAULT_CACHE_SIZE
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{variable}={raw!r} is not a whole number of images") from None
    if value < 0:
        raise ValueError(f"{variable}={raw!r} must be 0 (no cache) or more")
    return value


def file_version(path: str) -> tuple[int, int]:
    """(size, modification time in ns) of an image file, to key what is remembered of it; ``ValueError`` if the
    file cannot be read."""
    try:
        stat = os.stat(path)
    except OSError as error:
        raise ValueError(f"cannot read the file ({error.strerror or error})") from None
    return stat.st_size, stat.st_mtime_ns


def decode_rgb(source: bytes | str) -> Image.Image:
    """The RGB image of encoded bytes or of a file path, decoded in full."""
    with Image.open(io.BytesIO(source) if isinstance(source, bytes) else source) as image:
        image.load()
        return image.convert("RGB")


class ProcessImageCache:
    """A process-wide :class:`ImageCache`, sized from the environment variable ``variable`` when first used."""

    def __init__(self, variable: str) -> None:
        self.variable = variable
        self._cache: ImageCache | None = None
        self._lock = threading.Lock()

    def get(self) -> ImageCache:
        with self._lock:
            if self._cache is None:
                self._cache = ImageCache(capacity_from_env(self.variable))
            return self._cache

    def reset(self, capacity: int | None = None) -> ImageCache:
        """Replace the cache (tests and the bench); ``None`` re-reads the environment."""
        with self._lock:
            self._cache = ImageCache(capacity_from_env(self.variable) if capacity is None else capacity)
            return self._cache
