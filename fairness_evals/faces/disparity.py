"""How accurate, and how unequally accurate, a classifier is on a labelled set (as IRIS reports for ARES).

IRIS reports ARES's accuracy per attribute and its *accuracy disparity*: max - min per-group recall
(V-720: 0.042 age, 0.006 gender, 0.058 skin). A substitute classifier should report the same numbers
on whatever labelled set the user has. The disparity uses :func:`metrics.iris.accuracy_disparity_from_counts`,
so the rule is the one of the IRIS metric: groups with at most one sample are left out, and with fewer
than two groups left the disparity is 0.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .batch import BatchResult, classify_many
from .face import Classifier, Face
from .images import ImageInput

#: The Face field compared with the true label, per attribute.
PREDICTED_FIELD: dict[str, str] = {"gender": "gender", "race": "race", "age": "age_group", "skin": "skin_group"}


@dataclass(frozen=True)
class ClassifierDisparity:
    """Accuracy of one attribute overall and per group.

    ``recall[g]`` = correct / ``support[g]`` among items of group ``g`` (by default the true label, so
    this is per-class recall). ``disparity`` = max - min recall over groups with more than one item
    (IRIS AD rule). ``n_missing`` = items with no prediction (no face, or the classifier has no such
    attribute); they count as wrong.
    """

    attribute: str
    n: int
    accuracy: float
    recall: dict[Hashable, float]
    support: dict[Hashable, int]
    disparity: float
    n_missing: int

    def to_dict(self) -> dict[str, Any]:
        """Plain form; group labels become strings."""
        return {
            "attribute": self.attribute,
            "n": self.n,
            "accuracy": self.accuracy,
            "recall": {str(k): v for k, v in self.recall.items()},
            "support": {str(k): v for k, v in self.support.items()},
            "disparity": self.disparity,
            "n_missing": self.n_missing,
        }


def classifier_disparity(
    predicted: Sequence[Hashable | None],
    true: Sequence[Hashable],
    *,
    groups: Sequence[Hashable] | None = None,
    attribute: str = "",
) -> ClassifierDisparity:
    """Accuracy, per-group recall and accuracy disparity of predictions against true labels.

    ``predicted[i]`` may be None (no prediction: counted wrong and in ``n_missing``). ``groups``
    (default: ``true``) says which group item ``i`` belongs to, e.g. the true skin group to see how
    gender accuracy varies with skin tone. Raises ``ValueError`` for empty or unequal-length inputs or
    a missing true label.
    """
    import numpy as np

    from metrics.iris import accuracy_disparity_from_counts

    pred = list(predicted)
    truth = list(true)
    grp = truth if groups is None else list(groups)
    if not truth:
        raise ValueError("true must not be empty")
    if not len(pred) == len(truth) == len(grp):
        raise ValueError(
            f"predicted, true and groups must have equal lengths, got {len(pred)}, {len(truth)}, {len(grp)}"
        )
    if any(t is None for t in truth) or any(g is None for g in grp):
        raise ValueError("true labels and groups must not be None")
    order: dict[Hashable, int] = {}
    for g in grp:
        order.setdefault(g, len(order))
    correct = np.zeros(len(order))
    total = np.zeros(len(order))
    for p, t, g in zip(pred, truth, grp, strict=True):
        total[order[g]] += 1
        correct[order[g]] += p is not None and p == t
    return ClassifierDisparity(
        attribute=attribute,
        n=len(truth),
        accuracy=float(correct.sum() / total.sum()),
        recall={g: float(correct[i] / total[i]) for g, i in order.items()},
        support={g: int(total[i]) for g, i in order.items()},
        disparity=float(accuracy_disparity_from_counts(correct, total)),
        n_missing=sum(p is None for p in pred),
    )


def main_face(faces: Sequence[Face]) -> Face | None:
    """The largest face by box area (first on ties), or None: the face a one-person label refers to."""
    best: Face | None = None
    best_area = -1
    for face in faces:
        left, top, right, bottom = face.box
        area = (right - left + 1) * (bottom - top + 1)
        if area > best_area:
            best, best_area = face, area
    return best


@dataclass(frozen=True)
class ValidationReport:
    """A classifier's own accuracy on a labelled set: per attribute, plus the batch counts."""

    classifier: str
    version: str
    counts: dict[str, int]
    attributes: dict[str, ClassifierDisparity]

    def to_dict(self) -> dict[str, Any]:
        return {
            "classifier": self.classifier,
            "version": self.version,
            "counts": dict(self.counts),
            "attributes": {a: d.to_dict() for a, d in self.attributes.items()},
        }


def validate(
    classifier: Classifier,
    images: Sequence[ImageInput],
    labels: Sequence[Mapping[str, Hashable]],
    attributes: Sequence[str] | None = None,
) -> ValidationReport:
    """Run ``classifier`` on labelled one-person images and report accuracy and disparity per attribute.

    ``labels[i]`` maps attribute names (``gender``, ``race``, ``age`` (IRIS group), ``skin`` (IRIS
    group)) to the true label of image ``i``; ``attributes`` defaults to every attribute that all
    labels give. The prediction for an image is its largest face; an image with no face, or that
    failed, has no prediction (counted wrong). Raises ``ValueError`` for mismatched lengths or an
    unknown attribute.
    """
    if len(images) != len(labels):
        raise ValueError(f"{len(images)} images but {len(labels)} labels")
    if attributes is None:
        attributes = [a for a in PREDICTED_FIELD if labels and all(a in row for row in labels)]
    for attribute in attributes:
        if attribute not in PREDICTED_FIELD:
            raise ValueError(f"unknown attribute {attribute!r}; expected one of {list(PREDICTED_FIELD)}")
    batch: BatchResult = classify_many(classifier, images)
    faces = [main_face(r.faces) for r in batch.results]
    report = {}
    for attribute in attributes:
        field = PREDICTED_FIELD[attribute]
        predicted = [None if f is None else getattr(f, field) for f in faces]
        report[attribute] = classifier_disparity(predicted, [row[attribute] for row in labels], attribute=attribute)
    return ValidationReport(
        classifier=batch.classifier, version=batch.version, counts=batch.counts(), attributes=report
    )
