"""One real CNN face detection per distinct image in a test session, shared by every test and xdist worker.

dlib's MMOD CNN detector takes 1.5-5 s per photograph on a CPU, and the tests that use it (the default classifier's
outcomes in ``tests/generation``, the detector's own tests in ``tests/faces``) show it the same few photographs many
times: the same astronaut, collage and re-toned photo in each test, once per attribute in a validation set, in
several modules on both workers. :func:`share_cnn_detections` wraps :meth:`FaceDetector.candidates` so that a CNN
detector's candidates for an image are computed by the real detector the first time they are asked for and read back
after that. A result is reused only for the same pixels (shape, dtype and a SHA-256 of the bytes) and the same
detector (weights file, its size and modification time, upsampling, resize and score threshold): everything the
candidates depend on. Scores are written as JSON, whose float text reads back to the same double. The HOG and
``none`` detectors (milliseconds) are not wrapped, nor is anything after the candidates (selection, landmarks,
alignment, the classifiers): those run as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from fairness_evals.faces.detection import FaceDetector

#: ``(box, score)`` of each candidate, as :meth:`FaceDetector.candidates` returns them.
Candidates = list[tuple[tuple[int, int, int, int], float | None]]


def detection_key(detector: FaceDetector, rgb: Any) -> str:
    """A hex digest naming the detector's settings and weights file, and the image's shape, dtype and bytes."""
    weights = Path(detector.cnn_weights).resolve() if detector.cnn_weights is not None else None
    stat = weights.stat() if weights is not None else None
    settings = {
        "kind": detector.kind,
        "weights": str(weights),
        "weights_size": stat.st_size if stat else None,
        "weights_mtime_ns": stat.st_mtime_ns if stat else None,
        "upsample": detector.upsample,
        "resize_longest": detector.resize_longest,
        "min_score": repr(detector.min_score),
        "shape": list(rgb.shape),
        "dtype": str(rgb.dtype),
    }
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    digest.update(rgb.tobytes())
    return digest.hexdigest()


def share_cnn_detections(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Make every CNN :class:`FaceDetector` read its candidates from ``folder`` (one JSON file per image and detector,
    written under a file lock by the first process to ask), until ``monkeypatch`` is undone."""
    original: Callable[[FaceDetector, Any], Candidates] = FaceDetector.candidates
    folder.mkdir(parents=True, exist_ok=True)

    def candidates(self: FaceDetector, rgb: Any) -> Candidates:
        if self.kind != "cnn":
            return original(self, rgb)
        path = folder / f"{detection_key(self, rgb)}.json"
        with FileLock(str(path) + ".lock"):
            if path.exists():
                return [(tuple(box), score) for box, score in json.loads(path.read_text())]  # type: ignore[misc]
            found = original(self, rgb)
            path.write_text(json.dumps([[list(box), score] for box, score in found]))
            return found

    monkeypatch.setattr(FaceDetector, "candidates", candidates)
