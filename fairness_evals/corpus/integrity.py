"""Integrity checks of corpus images: every byte read, truncation an error, one reduced-scale decode, size limits.

:func:`check_image_bytes` decodes an image once, at reduced scale where the format allows (JPEG draft mode
still reads every byte of the compressed stream), and hashes it. Truncated files are errors whatever
``PIL.ImageFile.LOAD_TRUNCATED_IMAGES`` says (lmms-eval sets it to True globally): the check decodes under
:func:`fairness_evals.faces.images.truncated_files_refused`, as the face classifiers' loader does.

**Size limits.** An image of more than :data:`MAX_PIXELS` pixels (50 megapixels: the largest phone photographs
pass, PIL's decompression-bomb warning at 89.5 megapixels never reaches stderr, and the 8-image decode cache stays
under 1.2 GB) is refused before it is decoded, and so is an image (or, for IRIS, a person's crop) narrower or lower
than :data:`MIN_FACE_SIDE` pixels (32: below it a face is a few blobs, and the models' processors upscale noise).
Either is a bad item, named in one line.

:func:`check_source` memoises the check per process and file version (or dataset row and dataset fingerprint), as
the tasks of a benchmark share one corpus; the FairLens and IRIS corpus scans check their images there and count
the checks in their own decode cache's statistics.
"""

from __future__ import annotations

import hashlib
import io
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from fairness_evals.corpus import hub
from fairness_evals.corpus.images import DecodeStats, file_version, pil_image
from fairness_evals.faces.images import truncated_files_refused

__all__ = [
    "MAX_PIXELS",
    "MIN_FACE_SIDE",
    "Checked",
    "check_face_size",
    "check_image_bytes",
    "check_image_file",
    "check_source",
    "clear_checked",
]

#: The most pixels (width x height) an image may have; a larger one is refused unread.
MAX_PIXELS = 50_000_000
#: The fewest pixels each side of a face image (or crop) must have.
MIN_FACE_SIDE = 32

_CHECKED: dict[tuple, Checked] = {}
_CHECKED_LOCK = threading.Lock()


@dataclass(frozen=True)
class Checked:
    """A readable image: the SHA-256 of its encoded bytes and its size in pixels (width, height)."""

    sha256: str
    size: tuple[int, int]


def check_face_size(width: int, height: int, what: str = "image") -> None:
    """``ValueError`` unless both sides of a ``what`` ("image", "crop") reach :data:`MIN_FACE_SIDE` pixels."""
    if width < MIN_FACE_SIDE or height < MIN_FACE_SIDE:
        raise ValueError(
            f"the {what} is {width}x{height} pixels, smaller than the minimum face size of "
            f"{MIN_FACE_SIDE}x{MIN_FACE_SIDE}"
        )


def check_image_bytes(data: bytes, stats: DecodeStats | None = None) -> Checked:
    """Decode ``data`` once (reduced scale for JPEG) and hash it; ``ValueError`` if it is corrupt, larger than
    :data:`MAX_PIXELS` (refused before decoding) or smaller than :data:`MIN_FACE_SIDE` on a side.

    ``stats.checks`` (a decode cache's statistics), when given, counts the check.
    """
    digest = hashlib.sha256(data).hexdigest()
    Image = pil_image()
    with truncated_files_refused(), warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our own limit speaks instead
        try:
            with Image.open(io.BytesIO(data)) as image:
                size = image.size
                if size[0] * size[1] <= MAX_PIXELS:  # a larger one is refused below, undecoded
                    if image.format == "JPEG":
                        image.draft("RGB", (max(1, size[0] // 8), max(1, size[1] // 8)))
                    image.load()
        except Image.DecompressionBombError as error:
            raise ValueError(f"the image is over the limit of {MAX_PIXELS:,} pixels ({error})") from None
        except Exception as error:
            raise ValueError(f"not a readable image ({type(error).__name__}: {error})") from None
    if size[0] * size[1] > MAX_PIXELS:
        raise ValueError(
            f"the image is {size[0]}x{size[1]} = {size[0] * size[1]:,} pixels, over the limit of {MAX_PIXELS:,}; "
            "scale it down"
        )
    if stats is not None:
        stats.checks += 1
    if size[0] < 1 or size[1] < 1:
        raise ValueError("image has no pixels")
    check_face_size(*size)
    return Checked(sha256=digest, size=size)


def check_image_file(path: str, stats: DecodeStats | None = None) -> Checked:
    """:func:`check_image_bytes` of the file at ``path``; ``ValueError`` naming why it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read the file ({error.strerror or error})") from None
    return check_image_bytes(data, stats)


def check_source(
    *,
    path: str | None = None,
    hf: tuple[str, str | None, str, int] | None = None,
    stats: DecodeStats | None = None,
    split_setting: str = hub.SPLIT_SETTING,
) -> Checked:
    """:func:`check_image_file` of ``path``, or :func:`check_image_bytes` of a dataset row ``hf`` = (name, split,
    column, index), once per process and file version (size, modification time) or dataset fingerprint: the tasks
    of a benchmark share one corpus. ``ValueError`` (not memoised) as those raise it."""
    if path is not None:
        key: tuple = ("file", path, *file_version(path))
    elif hf is not None:
        name, split, column, index = hf
        dataset = hub.hf_dataset(name, split, split_setting=split_setting)
        key = ("hf", name, split, column, int(index), dataset._fingerprint)
    else:
        raise ValueError("an image check needs a path or a dataset row")
    with _CHECKED_LOCK:
        found = _CHECKED.get(key)
    if found is not None:
        return found
    if path is not None:
        checked = check_image_file(path, stats)
    else:
        checked = check_image_bytes(hub.hf_image_bytes(*key[1:5], split_setting=split_setting), stats)
    with _CHECKED_LOCK:
        _CHECKED[key] = checked
    return checked


def clear_checked() -> None:
    """Forget every memoised check (tests)."""
    with _CHECKED_LOCK:
        _CHECKED.clear()
