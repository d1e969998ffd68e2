"""The weight-free Monk Skin Tone estimate: colour maths, uniform synthetic faces, a real face re-toned, the real photo."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mst_swatches import swatch_ita, swatch_rgb

from fairness_evals.faces import FaceDetector, SkinToneClassifier
from fairness_evals.faces.skin import (
    MIN_SKIN_PIXELS,
    estimate_face,
    estimate_from_pixels,
    mst_from_ita,
    srgb_to_lab,
)


def test_lab_conversion_matches_scikit_image() -> None:
    from skimage import color

    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, size=(2000, 3), dtype=np.uint8)
    ours = srgb_to_lab(rgb)
    theirs = color.rgb2lab(rgb[None])[0]
    assert np.abs(ours - theirs).max() < 0.01  # white-point rounding only
    np.testing.assert_allclose(srgb_to_lab(np.array([255, 255, 255])), [100, 0, 0], atol=0.01)


def test_swatches_are_the_published_monk_colours_in_order() -> None:
    assert swatch_rgb()[0].tolist() == [0xF6, 0xED, 0xE4]
    assert swatch_rgb()[-1].tolist() == [0x29, 0x24, 0x20]
    ita = swatch_ita()
    assert np.all(np.diff(ita) < 0), "ITA must fall from MST 1 to MST 10 for nearest-ITA matching"
    np.testing.assert_allclose(ita, [83.0, 80.2, 71.7, 64.7, 50.3, 10.9, -20.1, -55.4, -78.3, -84.3], atol=0.1)
    assert mst_from_ita(ita).tolist() == list(range(1, 11))


@pytest.mark.parametrize("level", range(1, 11))
def test_uniform_swatch_patch_gives_its_level_with_full_agreement(level: int) -> None:
    patch = np.tile(swatch_rgb()[level - 1], (30, 30, 1))
    estimate = estimate_from_pixels(patch)
    assert estimate is not None
    assert estimate.mst == level
    assert estimate.confidence == 1.0
    assert estimate.n_pixels == 900


@pytest.mark.parametrize("level", [1, 3, 5, 6, 7, 8, 10])
def test_synthetic_uniformly_coloured_face(level: int) -> None:
    """A face-sized disc of one swatch colour on blue; the whole image is the face (detector=none)."""
    size = 160
    yy, xx = np.mgrid[:size, :size]
    image = np.empty((size, size, 3), dtype=np.uint8)
    image[:] = (40, 60, 200)
    image[(yy - 80) ** 2 / 70**2 + (xx - 80) ** 2 / 55**2 <= 1] = swatch_rgb()[level - 1]
    (face,) = SkinToneClassifier(detector=FaceDetector("none")).classify(image)
    assert face.skin_mst == level
    assert face.skin_group == ("light" if level <= 5 else "middle" if level <= 7 else "dark")
    assert face.confidences["skin"] == 1.0


def _retoned(astronaut: np.ndarray, level: int) -> np.ndarray:
    """The astronaut with the skin-coloured pixels around her face shifted in CIELAB onto swatch ``level``."""
    from skimage import color

    (face,) = FaceDetector("hog").detect(astronaut)
    reference = np.array(estimate_face(astronaut, face).median_lab)
    y0, y1, x0, x1 = 43, 210, 139, 306  # the face box grown by 40 px
    lab = color.rgb2lab(astronaut[y0:y1, x0:x1])
    chroma = np.hypot(lab[..., 1], lab[..., 2])
    hue = np.degrees(np.arctan2(lab[..., 2], lab[..., 1]))
    skin = (chroma >= 2) & (hue >= 20) & (hue <= 100)
    target = color.rgb2lab(swatch_rgb()[level - 1][None, None])[0, 0]
    lab[skin] += target - reference
    out = astronaut.copy()
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # lab2rgb warns when it clips out-of-gamut colours
            out[y0:y1, x0:x1] = np.clip(np.round(color.lab2rgb(lab) * 255), 0, 255).astype(np.uint8)
    return out


@pytest.mark.parametrize("level", range(1, 11))
def test_real_face_retoned_to_each_swatch_is_found_and_estimated(astronaut: np.ndarray, level: int) -> None:
    """Real face structure, known target colour: the face is still detected, the level is within one
    step of the target and the IRIS group is exact (MST 1 comes out 2: its shift clips at white)."""
    (face,) = SkinToneClassifier().classify(_retoned(astronaut, level))
    assert abs(face.skin_mst - level) <= 1
    assert face.skin_group == ("light" if level <= 5 else "middle" if level <= 7 else "dark")


def test_real_astronaut_photo_is_light(astronaut: np.ndarray) -> None:
    """Eileen Collins: light skin. The photo's median skin pixel is ITA ~59 deg, nearest MST 4 (a human
    rater would pick a lighter level: shading darkens pixels, which is why MST 1-5 count as light)."""
    (face,) = SkinToneClassifier().classify(astronaut)
    assert face.skin_group == "light"
    assert face.skin_mst == 4
    assert 55 < face.details["skin_ita"] < 64
    assert face.confidences["skin"] > 0.9
    assert face.details["skin_pixels"] > 1000
    assert face.sources == {"skin": "skin"}
    assert face.gender is None and face.race is None and face.age_group is None


def test_greyscale_photo_has_no_skin_estimate(astronaut: np.ndarray) -> None:
    grey = np.repeat(astronaut.mean(axis=2, keepdims=True).astype(np.uint8), 3, axis=2)
    faces = SkinToneClassifier().classify(grey)  # HOG still finds the face in grey (and a weak second one)
    assert (179, 83, 266, 170) in [f.box for f in faces]
    for face in faces:
        assert face.skin_mst is None and face.skin_group is None
        assert "skin" not in face.confidences
        assert face.details["skin_estimate"] == f"fewer than {MIN_SKIN_PIXELS} skin-coloured pixels"


def test_non_skin_colours_are_filtered_out() -> None:
    blue_green = np.array([[30, 60, 200], [20, 180, 40], [128, 128, 128]] * 100, dtype=np.uint8)
    assert estimate_from_pixels(blue_green) is None
    mixed = np.concatenate([blue_green, np.tile(swatch_rgb()[7], (200, 1))])
    estimate = estimate_from_pixels(mixed)
    assert estimate is not None and estimate.mst == 8 and estimate.n_pixels == 200


def test_no_face_gives_an_empty_list(blank: np.ndarray) -> None:
    assert SkinToneClassifier().classify(blank) == []


@settings(max_examples=60, deadline=None)
@given(level=st.integers(1, 10), factor=st.floats(0.3, 0.95))
def test_darkening_a_patch_never_makes_it_lighter(level: int, factor: float) -> None:
    colour = swatch_rgb()[level - 1].astype(float)
    base = estimate_from_pixels(np.tile(colour.astype(np.uint8), (50, 1)))
    darker = estimate_from_pixels(np.tile(np.round(colour * factor).astype(np.uint8), (50, 1)))
    assert base is not None
    if darker is not None:  # a very dark, very grey patch can fall below the chroma floor
        assert darker.mst >= base.mst
