"""The shared shape of the built-in classifiers: detect faces once, then predict attributes per face.

Splitting detection from attribute prediction is what lets :class:`~fairness_evals.faces.combine.Combined`
run one detector and ask several models about the same faces.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from .images import ImageInput, load_rgb

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .detection import DetectedFace, FaceDetector
    from .face import Face


class FaceModel(ABC):
    """A classifier made of a :class:`~fairness_evals.faces.detection.FaceDetector` and a per-face predictor.

    Subclasses set ``name``, ``version``, ``attributes`` (the subset of
    :data:`~fairness_evals.faces.labels.ATTRIBUTES` they predict) and ``detector``, and implement
    :meth:`classify_detections`. Subclasses are thread-safe: each guards its model with a lock.
    """

    name: str
    version: str
    attributes: frozenset[str]
    detector: FaceDetector

    def classify(self, image: ImageInput) -> list[Face]:
        """Detect faces in ``image`` and predict their attributes; ``[]`` when there is no face.

        Raises :class:`~fairness_evals.faces.images.ImageLoadError` when the image cannot be read.
        """
        rgb = load_rgb(image)
        detections = self.detector.detect(rgb)
        if not detections:
            return []
        return self.classify_detections(rgb, detections)

    @abstractmethod
    def classify_detections(self, rgb: NDArray[np.uint8], detections: list[DetectedFace]) -> list[Face]:
        """One :class:`Face` per detection, same order, for faces found in ``rgb`` by any detector."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}: {self.version}>"


def detector_from_options(
    options: dict[str, Any],
    *,
    default_kind: str = "hog",
    default_upsample: int | None = None,
    default_resize_longest: int | str | None = "default",
) -> FaceDetector:
    """Build a :class:`FaceDetector` from spec options, consuming the detector keys from ``options``.

    Keys: ``detector`` (hog/cnn/none), ``cnn_weights`` (path), ``upsample`` (int), ``resize_longest``
    (int, or ``none``), ``min_score`` (float), ``min_size`` (share of the shorter side), ``overlap``
    (IoU), ``landmarks`` (path). Unknown keys are left in place so the caller can reject them. Values may
    be strings (from a spec) or already typed; what is not given takes the detector's calibrated default
    (:data:`~fairness_evals.faces.detection.DETECTOR_DEFAULTS`) unless the caller's ``default_*`` says otherwise.
    """
    from .detection import FaceDetector

    kind = str(options.pop("detector", default_kind))
    resize = options.pop("resize_longest", default_resize_longest)
    if isinstance(resize, str) and resize != "default":
        resize = None if resize.lower() in ("", "none", "0") else int(resize)
    upsample = options.pop("upsample", default_upsample)
    min_score = options.pop("min_score", None)
    return FaceDetector(
        kind,
        cnn_weights=options.pop("cnn_weights", None),
        upsample=None if upsample is None else int(upsample),
        resize_longest=resize,
        min_score=None if min_score is None else float(min_score),
        min_size=float(options.pop("min_size", 0.0)),
        overlap=float(options.pop("overlap", 1.0)),
        landmarks=options.pop("landmarks", None),
    )


def reject_unknown(name: str, options: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming the classifier and the option keys it does not understand."""
    if options:
        raise ValueError(f"classifier {name!r} does not take option(s) {sorted(options)}")
