"""Integrity checks of corpus images: every byte read, truncation an error, one reduced-scale decode.

:func:`check_image_bytes` decodes an image once, at reduced scale where the format allows (JPEG draft mode
still reads every byte of the compressed stream), and hashes it. Truncated files are errors whatever
``PIL.ImageFile.LOAD_TRUNCATED_IMAGES`` says (lmms-eval sets it to True globally): the flag is switched off
for the check under one process-wide lock, as it is global to PIL. The FairLens and IRIS corpus scans both
check their images here and count the checks in their own decode cache's statistics.
"""

from __future__ import annotations

import hashlib
import io
import threading
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageFile

from fairness_evals.corpus.images import DecodeStats

__all__ = ["Checked", "check_image_bytes", "check_image_file"]

_LOCK = threading.Lock()


@dataclass(frozen=True)
class Checked:
    """A readable image: the SHA-256 of its encoded bytes and its size in pixels (width, height)."""

    sha256: str
    size: tuple[int, int]


def check_image_bytes(data: bytes, stats: DecodeStats | None = None) -> Checked:
    """Decode ``data`` once (reduced scale for JPEG) and hash it; ``ValueError`` if it is corrupt.

    ``stats.checks`` (a decode cache's statistics), when given, counts the check.
    """
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
    if stats is not None:
        stats.checks += 1
    if size[0] < 1 or size[1] < 1:
        raise ValueError("image has no pixels")
    return Checked(sha256=digest, size=size)


def check_image_file(path: str, stats: DecodeStats | None = None) -> Checked:
    """:func:`check_image_bytes` of the file at ``path``; ``ValueError`` naming why it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ValueError(f"cannot read the file ({error.strerror or error})") from None
    return check_image_bytes(data, stats)
