"""Decoding FairLens and IRIS images: the two-tier decode cache, and its process-wide instance per task family.

A request for an image goes to a small in-memory tier first (:class:`ImageCache`, at most ``capacity``
decoded images; see there for the eviction rule), then to a disk tier (:class:`SpillFile`): the raw pixels
of every image decoded in this process, appended to one file in a private temporary directory, from which
an image is rebuilt without decoding. Only the first request for an image decodes it, whatever order the
requests come in, and memory holds only the in-memory tier.

Each family has its own cache, sized by its environment variables when first used
(:class:`ProcessImageCache`): ``FAIRLENS_IMAGE_CACHE`` / ``IRIS_IMAGE_CACHE`` (images in memory, default 8)
and ``FAIRLENS_IMAGE_SPILL_MB`` / ``IRIS_IMAGE_SPILL_MB`` (the disk tier's cap in MiB, default 4096; 0
turns it off).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
import threading
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING

from fairness_evals.extras import require

if TYPE_CHECKING:
    from PIL import Image

DEFAULT_CACHE_SIZE = 8
DEFAULT_SPILL_MB = 4096
SPILL_PREFIX = "fairness-evals-images-"
MIB = 2**20

# modes whose tobytes() / frombytes() round trip is exact (no palette or other side data)
_RAW_MODES = frozenset({"1", "L", "LA", "I", "I;16", "F", "RGB", "RGBA", "RGBX", "CMYK", "YCbCr", "LAB", "HSV"})


@dataclass
class DecodeStats:
    """What a cache did, one count per request in the first three (``requests`` is their sum).

    * ``decodes``: full decodes of an encoded image;
    * ``hits``: served from the in-memory tier;
    * ``spill_hits``: rebuilt from the raw pixels in the spill file, no decode;
    * ``spilled`` / ``spill_bytes``: images (and their bytes) written to the spill file;
    * ``spill_refused``: decoded images not written (the cap was reached, the mode has no exact raw form, or
      the disk refused the write): their next miss in memory decodes them again;
    * ``spill_lost``: spill entries that could not be read back (the file was removed or cut short): decoded
      again;
    * ``checks``: integrity checks (reduced-scale decodes, counted by the callers).
    """

    decodes: int = 0
    hits: int = 0
    spill_hits: int = 0
    spilled: int = 0
    spill_bytes: int = 0
    spill_refused: int = 0
    spill_lost: int = 0
    checks: int = 0

    @property
    def requests(self) -> int:
        return self.decodes + self.hits + self.spill_hits


@dataclass(frozen=True)
class _Entry:
    offset: int
    length: int
    mode: str
    size: tuple[int, int]


def _remove_spill(fd: int, directory: str, pid: int) -> None:
    """Close and delete a spill file and its directory (only in the process that made them, not a fork)."""
    if os.getpid() != pid:
        return
    with contextlib.suppress(OSError):
        os.close(fd)
    shutil.rmtree(directory, ignore_errors=True)


if hasattr(os, "pread"):
    _pread, _pwrite = os.pread, os.pwrite
else:  # pragma: no cover - Windows: a seek and a read under one lock
    _SEEK_LOCK = threading.Lock()

    def _pread(fd: int, length: int, offset: int) -> bytes:
        with _SEEK_LOCK:
            os.lseek(fd, offset, os.SEEK_SET)
            return os.read(fd, length)

    def _pwrite(fd: int, data: memoryview, offset: int) -> int:
        with _SEEK_LOCK:
            os.lseek(fd, offset, os.SEEK_SET)
            return os.write(fd, data)


def _write_at(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        written = _pwrite(fd, view, offset)
        if written <= 0:
            raise OSError("the spill file accepted no bytes")
        view, offset = view[written:], offset + written


def _read_at(fd: int, length: int, offset: int) -> bytes:
    parts = []
    while length > 0:
        chunk = _pread(fd, length, offset)
        if not chunk:
            break
        parts.append(chunk)
        length, offset = length - len(chunk), offset + len(chunk)
    return b"".join(parts)


STORED, PRESENT, REFUSED = "stored", "present", "refused"


class SpillFile:
    """The disk tier: raw pixels (mode, size, bytes) of decoded images in one append-only file.

    The file lives in a private directory (``tempfile.mkdtemp``, mode 0700, under ``TMPDIR``) made on the
    first write, and is removed with it when this object is garbage-collected or the interpreter exits
    (``weakref.finalize``; a forked child neither uses nor removes its parent's file). At most ``cap_bytes``
    are written; past the cap, :meth:`put` refuses. Entries are read back with a positioned read
    (``os.pread``): nothing is mapped into the process, so the file's pages never count as its memory, and
    readers need no lock. Writes are serialised by a lock. An image keeps its pixels, mode and size, not its
    ``info`` metadata (EXIF, ICC profile), which decoded-and-converted images do not need.
    """

    def __init__(self, cap_bytes: int) -> None:
        self.cap_bytes = max(0, int(cap_bytes))
        self._index: dict[Hashable, _Entry] = {}
        self._end = 0
        self._fd: int | None = None
        self._directory: str | None = None
        self._pid = os.getpid()
        self._writable = True
        self._finalizer: weakref.finalize | None = None
        self._lock = threading.Lock()

    @property
    def directory(self) -> str | None:
        """The private directory, once something was written (None before, and after :meth:`close`)."""
        return self._directory

    @property
    def path(self) -> str | None:
        return os.path.join(self._directory, "pixels.raw") if self._directory else None

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._index

    def _forget_parent(self) -> None:
        """In a forked child: drop the parent's file (left to the parent) and start afresh."""
        if self._pid != os.getpid():
            if self._finalizer is not None:
                self._finalizer.detach()
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
            self._index, self._end, self._fd, self._directory = {}, 0, None, None
            self._finalizer, self._pid = None, os.getpid()

    def _open(self) -> int | None:
        """The file descriptor, making the directory and the file on first use; None when that failed."""
        if self._fd is not None:
            return self._fd
        directory = None
        try:
            directory = tempfile.mkdtemp(prefix=SPILL_PREFIX)
            fd = os.open(
                os.path.join(directory, "pixels.raw"),
                os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                0o600,
            )
        except OSError:
            if directory is not None:
                shutil.rmtree(directory, ignore_errors=True)
            self._writable = False
            return None
        self._fd, self._directory = fd, directory
        self._finalizer = weakref.finalize(self, _remove_spill, fd, directory, self._pid)
        return fd

    def put(self, key: Hashable, image: Image.Image) -> tuple[str, int]:
        """Append ``image``'s raw pixels under ``key``: (:data:`STORED`, bytes written), or (:data:`PRESENT`
        or :data:`REFUSED`, 0)."""
        if image.mode not in _RAW_MODES:
            return REFUSED, 0
        with self._lock:
            self._forget_parent()
            if key in self._index:
                return PRESENT, 0
            if not self._writable or self._end >= self.cap_bytes:
                return REFUSED, 0
        data = image.tobytes()
        with self._lock:
            self._forget_parent()
            if key in self._index:
                return PRESENT, 0
            if not self._writable or self._end + len(data) > self.cap_bytes:
                return REFUSED, 0
            fd = self._open()
            if fd is None:
                return REFUSED, 0
            try:
                _write_at(fd, data, self._end)
            except OSError:  # a full disk: keep what is there, write no more
                self._writable = False
                return REFUSED, 0
            self._index[key] = _Entry(self._end, len(data), image.mode, image.size)
            self._end += len(data)
            return STORED, len(data)

    def load(self, key: Hashable) -> tuple[Image.Image | None, bool]:
        """(the image rebuilt from its raw pixels, or None; whether an entry existed but could not be read)."""
        with self._lock:
            self._forget_parent()
            entry = self._index.get(key)
            fd = self._fd
        if entry is None or fd is None:
            return None, False
        try:
            data = _read_at(fd, entry.length, entry.offset)
            if len(data) != entry.length:
                raise OSError(f"the spill file ends before this entry ({len(data)} of {entry.length} bytes)")
            return pil_image().frombytes(entry.mode, entry.size, data), False
        except (OSError, ValueError):
            with self._lock:
                if self._index.get(key) is entry:
                    del self._index[key]
            return None, True

    def close(self) -> None:
        """Remove the file and its directory now (not while other threads still use this object)."""
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._index, self._end, self._fd, self._directory, self._finalizer = {}, 0, None, None, None


class ImageCache:
    """A thread-safe two-tier cache of decoded images: ``capacity`` images in memory, the rest on disk.

    **Memory tier.** Eviction keeps the first ``capacity - 1`` images it sees and rotates one slot among the
    others. lmms-eval hands requests over in one of two orders: document order (chat models such as
    ``llava_hf`` and ``internvl_hf``; an image's questions arrive together), where the rotating slot alone
    serves an image's later questions; or sorted by prompt text (``qwen2_5_vl``, ``qwen3_vl`` and the simple
    models), which cycles through all images once per question. Least-recently-used eviction would hit
    nothing in that cycle unless the whole corpus fits; keeping a fixed set hits ``capacity - 1`` images in
    every cycle.

    **Disk tier** (``spill_mb`` > 0, :class:`SpillFile`). The first decode of a key appends its raw pixels to
    the spill file; every later miss of the memory tier rebuilds the image from them (``Image.frombytes``),
    so each key is decoded once per process in any request order, as long as the cap holds. Past the cap,
    misses decode again (counted in ``stats.spill_refused`` when written would have been refused).

    Requests for a key that another thread is decoding wait for it rather than decode it too. Callers get
    copies (or, with ``capacity`` 0, an image nobody else holds), so a model that edits an image in place
    cannot corrupt the cache. ``capacity`` 0 and ``spill_mb`` 0 turn caching off: every request decodes.
    """

    def __init__(self, capacity: int, spill_mb: int = 0) -> None:
        self.capacity = max(0, int(capacity))
        self.spill_mb = max(0, int(spill_mb))
        self.spill: SpillFile | None = SpillFile(self.spill_mb * MIB) if self.spill_mb else None
        self._kept: dict[Hashable, Image.Image] = {}
        self._rotating: tuple[Hashable, Image.Image] | None = None
        self._pending: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        self.stats = DecodeStats()

    def __len__(self) -> int:
        """Images held in memory."""
        return len(self._kept) + (self._rotating is not None)

    def _find(self, key: Hashable) -> Image.Image | None:
        found = self._kept.get(key)
        if found is None and self._rotating is not None and self._rotating[0] == key:
            found = self._rotating[1]
        return found

    def _keep(self, key: Hashable, image: Image.Image) -> None:
        if self._find(key) is None and self.capacity:
            if len(self._kept) < self.capacity - 1:
                self._kept[key] = image
            else:
                self._rotating = (key, image)

    def get(self, key: Hashable, decode: Callable[[], Image.Image]) -> Image.Image:
        """The image of ``key``: from memory, else rebuilt from the spill file, else ``decode()``."""
        while True:
            with self._lock:
                found = self._find(key)
                if found is not None:
                    self.stats.hits += 1
                    return found.copy()
                busy = self._pending.get(key)
                if busy is None:
                    done = self._pending[key] = threading.Event()
                    break
            busy.wait()  # another thread is fetching this key; then look again
        try:
            spill = self.spill
            image, lost = spill.load(key) if spill is not None else (None, False)
            rebuilt = image is not None
            written, nbytes = None, 0
            if image is None:
                image = decode()
                if spill is not None:
                    written, nbytes = spill.put(key, image)
            with self._lock:
                if rebuilt:
                    self.stats.spill_hits += 1
                else:
                    self.stats.decodes += 1
                    self.stats.spill_lost += lost
                    if written == STORED:
                        self.stats.spilled += 1
                        self.stats.spill_bytes += nbytes
                    elif written == REFUSED:
                        self.stats.spill_refused += 1
                self._keep(key, image)
        finally:
            with self._lock:
                del self._pending[key]
            done.set()
        return image.copy() if self.capacity else image

    def clear(self) -> None:
        """Empty both tiers (the spill file is removed) and zero the stats."""
        with self._lock:
            self._kept.clear()
            self._rotating = None
            if self.spill is not None:
                self.spill.close()
                self.spill = SpillFile(self.spill_mb * MIB)
            self.stats = DecodeStats()


def _whole_number_from_env(variable: str, default: int, what: str, zero: str) -> int:
    raw = os.environ.get(variable, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{variable}={raw!r} is not a whole number of {what}") from None
    if value < 0:
        raise ValueError(f"{variable}={raw!r} must be 0 ({zero}) or more")
    return value


def capacity_from_env(variable: str) -> int:
    """The cache size in the environment variable ``variable`` (:data:`DEFAULT_CACHE_SIZE` when unset)."""
    return _whole_number_from_env(variable, DEFAULT_CACHE_SIZE, "images", "no cache")


def spill_mb_from_env(variable: str) -> int:
    """The spill file's cap in MiB in the environment variable ``variable`` (:data:`DEFAULT_SPILL_MB` when
    unset; 0 turns the disk tier off)."""
    return _whole_number_from_env(variable, DEFAULT_SPILL_MB, "MiB", "no spill file")


def file_version(path: str) -> tuple[int, int]:
    """(size, modification time in ns) of an image file, to key what is remembered of it; ``ValueError`` if the
    file cannot be read."""
    try:
        stat = os.stat(path)
    except OSError as error:
        raise ValueError(f"cannot read the file ({error.strerror or error})") from None
    return stat.st_size, stat.st_mtime_ns


def pil_image() -> ModuleType:
    """``PIL.Image``, imported when an image is first decoded: Pillow comes with the ``lmms`` and ``inspect`` extras,
    so a base install (the lm-eval tasks) imports every module without it."""
    return require("PIL.Image", "decoding an image")


def decode_rgb(source: bytes | str) -> Image.Image:
    """The RGB image of encoded bytes or of a file path, decoded in full."""
    with pil_image().open(io.BytesIO(source) if isinstance(source, bytes) else source) as image:
        image.load()
        return image.convert("RGB")


class ProcessImageCache:
    """A process-wide :class:`ImageCache`, sized from the environment when first used: the memory tier from
    ``variable``, the disk tier's cap from ``spill_variable``."""

    def __init__(self, variable: str, spill_variable: str) -> None:
        self.variable = variable
        self.spill_variable = spill_variable
        self._cache: ImageCache | None = None
        self._lock = threading.Lock()

    def _make(self, capacity: int | None, spill_mb: int | None) -> ImageCache:
        return ImageCache(
            capacity_from_env(self.variable) if capacity is None else capacity,
            spill_mb_from_env(self.spill_variable) if spill_mb is None else spill_mb,
        )

    def get(self) -> ImageCache:
        with self._lock:
            if self._cache is None:
                self._cache = self._make(None, None)
            return self._cache

    def reset(self, capacity: int | None = None, spill_mb: int | None = None) -> ImageCache:
        """Replace the cache (tests and the bench); ``None`` re-reads the environment. The old cache's spill
        file goes when nothing holds that cache any more."""
        with self._lock:
            self._cache = self._make(capacity, spill_mb)
            return self._cache
