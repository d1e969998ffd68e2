"""The detector calibration set and measurements (issue 18): what the selection rule keeps, how a run is scored."""

from __future__ import annotations

import numpy as np
import pytest
from face_calibration import (
    VARIANTS,
    CalibrationImage,
    RawDetections,
    Rule,
    calibration_set,
    group_layout,
    lfw_portrait,
    measure,
    portrait_layout,
    variant,
)

from fairness_evals.faces.detection import select_detections


def test_select_keeps_by_score_size_and_overlap_in_the_given_order() -> None:
    found = [((0, 0, 99, 99), 0.9), ((10, 10, 109, 109), 1.2), ((300, 300, 309, 309), 2.0), ((0, 200, 99, 299), 0.05)]
    assert select_detections(found, (400, 400), min_score=0.1) == [found[0], found[1], found[2]]
    # 10 px is below 5 % of the shorter side (20 px): the small box goes
    assert select_detections(found, (400, 400), min_score=0.1, min_size=0.05) == [found[0], found[1]]
    # the first two overlap (IoU 0.68): the lower-scoring one goes, whatever the input order
    assert select_detections(found, (400, 400), min_score=0.1, overlap=0.5) == [found[1], found[2]]
    assert select_detections(found[::-1], (400, 400), min_score=0.1, overlap=0.5) == [found[2], found[1]]
    assert select_detections([((0, 0, 9, 9), None)], (10, 10), min_score=5.0) == [((0, 0, 9, 9), None)]


def test_the_set_is_labelled_by_construction_and_deterministic() -> None:
    images = calibration_set(n_lfw=3, variants=("png", "jpeg"), natural=("coffee",), groups=1)
    kinds = [im.kind for im in images]
    assert kinds.count("one") == 2 * 4 and kinds.count("none") == 2 * 5 and kinds.count("several") == 2 * 4
    assert {im.variant for im in images} == {"png", "jpeg"}
    portrait = next(im for im in images if im.name == "lfw-face-001/png")
    left, top = portrait_layout(1)
    assert portrait.face_boxes == ((left, top, left + 127, top + 127),)
    np.testing.assert_array_equal(portrait.build(), lfw_portrait(1))
    np.testing.assert_array_equal(portrait.build(), portrait.build())
    faces, corners, size = group_layout(3, 0)
    assert len(set(faces)) == 3 and size[0] == 3 * 128 + 4 * 64 and [c[0] for c in corners] == [64, 256, 448]
    group = next(im for im in images if im.base == "group3-0" and im.variant == "png")
    assert group.faces == 3 and group.build().shape == (size[1], size[0], 3)


def test_variants_change_the_pixels_not_the_content() -> None:
    rgb = lfw_portrait(0)
    assert set(VARIANTS) == {"png", "jpeg", "grey", "large"}
    assert variant(rgb, "png") is rgb
    jpeg = variant(rgb, "jpeg")
    assert jpeg.shape == rgb.shape and 0 < np.abs(jpeg.astype(int) - rgb).mean() < 8
    grey = variant(rgb, "grey")
    assert np.all(grey[..., 0] == grey[..., 1]) and np.all(grey[..., 1] == grey[..., 2])
    assert variant(rgb, "large").shape == (768, 768, 3)
    with pytest.raises(ValueError, match="unknown variant"):
        variant(rgb, "webp")


def _image(base: str, faces: int, var: str, box: tuple = (0, 0, 99, 99)) -> CalibrationImage:
    return CalibrationImage(base, var, faces, "test", lambda: np.zeros((4, 4, 3), np.uint8), (box,) if faces else ())


def test_measure_counts_one_face_false_faces_and_invariance() -> None:
    images = [_image("a", 1, "png"), _image("a", 1, "jpeg"), _image("b", 0, "png"), _image("b", 0, "jpeg"),
              _image("c", 2, "png")]  # fmt: skip
    raws = [
        RawDetections("a/png", ((10, 10, 80, 80),), (1.0,), (200, 200), 0.1),
        RawDetections("a/jpeg", ((10, 10, 80, 80), (150, 150, 190, 190)), (1.0, 0.05), (200, 200), 0.1),
        RawDetections("b/png", (), (), (200, 200), 0.1),
        RawDetections("b/jpeg", ((0, 0, 50, 50),), (0.3,), (200, 200), 0.1),
        RawDetections("c/png", ((0, 0, 50, 50),), (0.9,), (200, 200), 0.1),
    ]
    loose = measure(images, raws, Rule(0.0))
    assert loose.one_face == 0.5 and loose.extra_faces == 0.5 and loose.false_faces == 0.5
    assert loose.invariant == pytest.approx(1 / 3) and loose.variant_changes == ("a", "b")
    assert loose.several_exact == 0.0 and loose.several_recall == 0.5
    strict = measure(images, raws, Rule(0.5))
    assert strict.one_face == 1.0 and strict.false_faces == 0.0 and strict.invariant == 1.0
    assert strict.meets_targets()  # the targets are about one-person and no-person images and invariance
    off_face = [RawDetections("a/png", ((150, 150, 190, 190),), (1.0,), (200, 200), 0.1)]
    assert measure(images[:1], off_face, Rule(0.0)).one_face == 0.0  # one detection, not on the face


# ---------------------------------------------------------------------------------------- the chosen defaults
def _counts(detector, names: list[str]) -> dict[str, int]:
    images = {im.name: im for im in calibration_set(n_lfw=0, natural=(), groups=0)}
    return {name: len(detector.detect(images[name].build())) for name in names}


ASTRONAUT = [f"astronaut/{v}" for v in VARIANTS]
COVERED = [f"astronaut-face-covered/{v}" for v in VARIANTS]
COLLAGE = [f"astronaut-collage/{v}" for v in VARIANTS]


def test_hog_default_counts_one_face_and_no_mission_patch_in_every_copy() -> None:
    """dlib's threshold 0 took the mission patch for a face in the JPEG and enlarged copies; the default does not."""
    from fairness_evals.faces import FaceDetector

    counts = _counts(FaceDetector("hog"), [*ASTRONAUT, *COVERED, *COLLAGE])
    assert {name: counts[name] for name in ASTRONAUT} == dict.fromkeys(ASTRONAUT, 1)
    assert {name: counts[name] for name in COVERED} == dict.fromkeys(COVERED, 0)
    assert {name: counts[name] for name in COLLAGE} == dict.fromkeys(COLLAGE, 2)
    loose = _counts(FaceDetector("hog", min_score=0.0), ["astronaut/jpeg", "astronaut-face-covered/jpeg"])
    assert loose == {"astronaut/jpeg": 2, "astronaut-face-covered/jpeg": 1}  # the patch at 0.072


@pytest.mark.usefixtures("shared_cnn_detections")  # the astronaut and collage as other tests see them
def test_cnn_default_counts_one_face_two_in_the_collage_and_none_without_a_face() -> None:
    """The CNN on its 800-px copy (on a 512-px copy it lost both faces of the 1024-px collage)."""
    from fairness_evals.faces import FaceDetector

    detector = FaceDetector("cnn")
    assert (detector.min_score, detector.resize_longest, detector.upsample) == (0.3, 800, 0)
    counts = _counts(detector, ["astronaut/png", "astronaut/jpeg", "astronaut/grey", "astronaut-face-covered/jpeg",
                                "astronaut-collage/png"])  # fmt: skip
    assert counts == {"astronaut/png": 1, "astronaut/jpeg": 1, "astronaut/grey": 1, "astronaut-face-covered/jpeg": 0,
                      "astronaut-collage/png": 2}  # fmt: skip
    assert _counts(FaceDetector("cnn", resize_longest=512), ["astronaut-collage/png"]) == {"astronaut-collage/png": 0}
