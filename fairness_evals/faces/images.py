"""Turn whatever a task holds (a path, encoded bytes, a PIL image, an array) into an RGB array.

Every failure to read or decode an image raises one error type, :class:`ImageLoadError`, whose
message names the file, so a batch can record the reason and move on.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from PIL import Image

#: What :func:`load_rgb` accepts: a file path, the encoded bytes of an image file, a PIL image, or an
#: ``H x W x 3`` (or ``H x W``) uint8 numpy array.
ImageInput = Union[str, os.PathLike, bytes, bytearray, memoryview, "Image.Image", "np.ndarray"]


class ImageLoadError(ValueError):
    """An image could not be read: missing, unreadable, not an image, truncated, or of a bad shape.

    ``source`` is a short description of the input (the path, or ``"<1234 bytes>"``); ``reason`` is
    what went wrong. ``str(error)`` is ``"cannot read image {source}: {reason}"``.
    """

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"cannot read image {source}: {reason}")
        self.source = source
        self.reason = reason


_STRICT = threading.RLock()


@contextmanager
def truncated_files_refused() -> Iterator[None]:
    """Within the block Pillow fails on a truncated file (``OSError: image file is truncated``) whatever
    ``PIL.ImageFile.LOAD_TRUNCATED_IMAGES`` says. lmms-eval sets that flag to True for its whole process when it is
    imported (``lmms_eval/api/task.py``), which would decode a cut file as a partly grey picture. The flag is global
    to Pillow, so it is switched off under one process-wide lock and put back after."""
    from PIL import ImageFile

    with _STRICT:
        previous = ImageFile.LOAD_TRUNCATED_IMAGES
        ImageFile.LOAD_TRUNCATED_IMAGES = False
        try:
            yield
        finally:
            ImageFile.LOAD_TRUNCATED_IMAGES = previous


def describe_source(image: Any) -> str:
    """A short, human-readable name of an image input, for error messages and batch reports."""
    if isinstance(image, (str, os.PathLike)):
        return str(Path(image))
    if isinstance(image, (bytes, bytearray, memoryview)):
        return f"<{len(image)} bytes>"
    filename = getattr(image, "filename", "")
    if filename:
        return str(filename)
    shape = getattr(image, "shape", None)
    if shape is not None:
        return f"<array {tuple(shape)}>"
    size = getattr(image, "size", None)
    return f"<{type(image).__name__} {size}>" if size is not None else f"<{type(image).__name__}>"


def load_rgb(image: ImageInput) -> NDArray[np.uint8]:
    """Decode ``image`` into a C-contiguous ``H x W x 3`` uint8 RGB array.

    - a path is opened with Pillow, fully decoded (a truncated file fails here, not later, also inside an
      lmms-eval process: :func:`truncated_files_refused`) and rotated by its EXIF orientation; bytes are decoded
      the same way;
    - a PIL image is converted to RGB (an alpha channel is dropped, a palette or grey image expanded);
    - a numpy array must be uint8, ``H x W x 3`` (RGB order) or ``H x W`` (grey, replicated).

    Returns a new array (never a view of the caller's), so callers may not mutate it in place.
    Raises :class:`ImageLoadError` for a missing or unreadable file, bytes that are not an image, an
    empty image, or an array of the wrong dtype or shape; ``TypeError`` for any other input type.
    """
    import numpy as np
    from PIL import Image, ImageOps, UnidentifiedImageError

    source = describe_source(image)
    if isinstance(image, np.ndarray):
        return _array_rgb(image, source)
    if isinstance(image, Image.Image):
        try:
            with truncated_files_refused():  # a lazily opened image decodes here
                return _pil_rgb(image)
        except (OSError, ValueError) as error:
            raise ImageLoadError(source, f"{type(error).__name__}: {error}") from error
    if isinstance(image, (str, os.PathLike)):
        path = Path(image)
        if not path.exists():
            raise ImageLoadError(source, "no such file")
        if not path.is_file():
            raise ImageLoadError(source, "not a regular file")
        opener: Any = path
    elif isinstance(image, (bytes, bytearray, memoryview)):
        if len(image) == 0:
            raise ImageLoadError(source, "empty bytes")
        import io

        opener = io.BytesIO(bytes(image))
    else:
        raise TypeError(f"an image must be a path, bytes, a PIL image or a numpy array, got {type(image).__name__}")
    try:
        with truncated_files_refused(), Image.open(opener) as handle:
            handle.load()
            oriented = ImageOps.exif_transpose(handle)
            return _pil_rgb(oriented)
    except UnidentifiedImageError as error:
        raise ImageLoadError(source, "not a recognised image format") from error
    except Image.DecompressionBombError as error:
        raise ImageLoadError(source, f"too large to decode safely ({error})") from error
    except (OSError, ValueError, SyntaxError, EOFError) as error:
        # Pillow reports truncated or corrupt data as OSError ("image file is truncated"), and some
        # plugins as SyntaxError/ValueError; permission errors are OSError too.
        raise ImageLoadError(source, f"{type(error).__name__}: {error}") from error


def _pil_rgb(image: Image.Image) -> NDArray[np.uint8]:
    import numpy as np

    rgb = image if image.mode == "RGB" else image.convert("RGB")
    array = np.array(rgb, dtype=np.uint8)
    if array.ndim != 3 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"empty image of size {image.size}")
    return np.ascontiguousarray(array)


def _array_rgb(array: np.ndarray, source: str) -> NDArray[np.uint8]:
    import numpy as np

    if array.dtype != np.uint8:
        raise ImageLoadError(source, f"an image array must be uint8, got {array.dtype}")
    if array.ndim == 2:
        array = np.repeat(array[:, :, None], 3, axis=2)
    if array.ndim != 3 or array.shape[2] != 3:
        raise ImageLoadError(source, f"an image array must be H x W x 3 (RGB) or H x W, got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ImageLoadError(source, f"empty image array of shape {array.shape}")
    return np.array(array, dtype=np.uint8, order="C", copy=True)
