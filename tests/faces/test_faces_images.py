"""Image input: every accepted form decodes to the same array; every bad input raises ImageLoadError naming it."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageFile

from fairness_evals.faces import ImageLoadError, load_rgb


def _png_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG")
    return buffer.getvalue()


def test_path_bytes_pil_and_array_give_the_same_pixels(astronaut: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "astronaut.png"
    path.write_bytes(_png_bytes(astronaut))
    forms = [path, str(path), path.read_bytes(), bytearray(path.read_bytes()), Image.open(path), astronaut]
    for form in forms:
        rgb = load_rgb(form)
        assert rgb.dtype == np.uint8 and rgb.shape == (512, 512, 3) and rgb.flags["C_CONTIGUOUS"]
        np.testing.assert_array_equal(rgb, astronaut)


def test_array_input_is_copied_not_aliased(astronaut: np.ndarray) -> None:
    rgb = load_rgb(astronaut)
    assert not np.shares_memory(rgb, astronaut)
    assert rgb.flags["WRITEABLE"]


def test_other_modes_become_rgb() -> None:
    grey = np.arange(64, dtype=np.uint8).reshape(8, 8)
    assert load_rgb(grey).shape == (8, 8, 3)
    np.testing.assert_array_equal(load_rgb(grey)[:, :, 2], grey)
    rgba = Image.new("RGBA", (5, 4), (10, 20, 30, 0))
    np.testing.assert_array_equal(load_rgb(rgba)[0, 0], [10, 20, 30])
    palette = Image.new("P", (3, 3), 0)
    assert load_rgb(palette).shape == (3, 3, 3)
    assert load_rgb(Image.fromarray(grey)).shape == (8, 8, 3)


def test_exif_orientation_is_applied(tmp_path: Path) -> None:
    """A camera JPEG stored sideways with Orientation=6 (rotate 90 CW to view) is returned upright."""
    stored = Image.new("RGB", (40, 20), (200, 0, 0))
    stored.paste((0, 0, 200), (0, 0, 10, 20))  # blue strip on the stored image's left
    exif = Image.Exif()
    exif[0x0112] = 6
    path = tmp_path / "sideways.jpg"
    stored.save(path, exif=exif, quality=95)
    rgb = load_rgb(path)
    assert rgb.shape == (40, 20, 3)  # height and width swapped
    assert rgb[2, 10, 2] > 150 and rgb[-3, 10, 0] > 150  # the blue strip is now on top


def test_missing_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.png"
    with pytest.raises(ImageLoadError, match=r"nope\.png: no such file") as info:
        load_rgb(missing)
    assert info.value.source == str(missing) and info.value.reason == "no such file"


def test_directory_is_not_an_image(tmp_path: Path) -> None:
    with pytest.raises(ImageLoadError, match="not a regular file"):
        load_rgb(tmp_path)


def test_truncated_jpeg_fails_at_load_time(astronaut: np.ndarray, tmp_path: Path) -> None:
    path = tmp_path / "cut.jpg"
    Image.fromarray(astronaut).save(path, quality=90)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImageLoadError, match=r"cut\.jpg: OSError: image file is truncated"):
        load_rgb(path)


def test_truncated_jpeg_fails_where_lmms_eval_lets_pillow_decode_cut_files(
    astronaut: np.ndarray, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Importing lmms-eval sets LOAD_TRUNCATED_IMAGES = True for the process; a cut file still fails, as a path, as
    bytes and as a lazily opened PIL image, and the process's flag is left as it was."""
    path = tmp_path / "cut.jpg"
    Image.fromarray(astronaut).save(path, quality=90)
    path.write_bytes(path.read_bytes()[:5000])
    monkeypatch.setattr(ImageFile, "LOAD_TRUNCATED_IMAGES", True)
    assert Image.open(path).convert("RGB").size == (512, 512)  # what Pillow alone does under the flag
    for form in (path, path.read_bytes(), Image.open(path)):
        with pytest.raises(ImageLoadError, match="truncated"):
            load_rgb(form)
        assert ImageFile.LOAD_TRUNCATED_IMAGES is True


def test_text_file_is_not_an_image(tmp_path: Path) -> None:
    path = tmp_path / "notes.png"
    path.write_text("not an image at all")
    with pytest.raises(ImageLoadError, match=r"notes\.png: not a recognised image format"):
        load_rgb(path)


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"", "<0 bytes>: empty bytes"), (b"\x89PNG garbage", "<12 bytes>: not a recognised image format")],
)
def test_bad_bytes(data: bytes, message: str) -> None:
    with pytest.raises(ImageLoadError, match=message):
        load_rgb(data)


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((4, 4, 3), dtype=np.float32), "must be uint8"),
        (np.zeros((4, 4, 4), dtype=np.uint8), r"H x W x 3"),
        (np.zeros((0, 4, 3), dtype=np.uint8), "empty image"),
        (np.zeros((2, 2, 2, 3), dtype=np.uint8), r"H x W x 3"),
    ],
)
def test_bad_arrays(array: np.ndarray, message: str) -> None:
    with pytest.raises(ImageLoadError, match=message):
        load_rgb(array)


def test_unsupported_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="path, bytes, a PIL image or a numpy array"):
        load_rgb(42)  # type: ignore[arg-type]
