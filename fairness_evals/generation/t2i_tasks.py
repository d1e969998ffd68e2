"""lmms-eval entry points that the image-generation tasks (Fact-or-Fair T2I, IRIS generation) share.

A task module binds these to its own settings: :func:`doc_to_text` and :func:`doc_to_visual` as they are,
:func:`process_docs` with its classifier variables and warning, :func:`process_results` with its record.
A configuration error becomes a one-document dataset whose ``doc_to_text`` raises it (lmms-eval would
otherwise retry a failing ``process_docs`` and report only "RetryError").
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from fairness_evals.generation.image_outcomes import (
    check_classifier,
    classifier_setting,
    classify_response,
    validation_setting,
)

ERROR_FIELD = "error"
#: The document field carrying the run's settings (``--metadata``-style keys) from ``process_docs`` to the scores.
METADATA_FIELD = "fairness_evals_metadata"
#: The distribution of faces per image (images without a face are ``no_face_images``) and the faces whose
#: detection score is low (:data:`fairness_evals.faces.detection.LOW_CONFIDENCE`).
FACE_COUNTS = ("images_one_face", "images_two_faces", "images_three_or_more_faces", "low_confidence_faces")
#: The image and document counts every generation task reports (each task adds its own after these).
IMAGE_COUNTS = (
    "documents",
    "images",
    "images_expected",
    "faces_detected",
    "images_with_faces",
    "no_face_images",
    "failed_images",
    "missing_images",
    "documents_without_images",
    *FACE_COUNTS,
)
#: What every generation task records of how its numbers were made.
PROVENANCE = ("classifier", "classifier_version", "classifier_spec", "data_version", "documents_sha256")
#: The log-only key of ``process_results`` (``--log_samples`` only): every image's outcome.
LOG_KEY = "t2i_images"


def read_metadata(keys: Sequence[str], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The settings of a harness run: for each ``--metadata`` key (``iris_min_coverage``...) the environment variable
    of the same name in capitals (``IRIS_MIN_COVERAGE``), when set; lmms-eval 0.7.3 passes no task arguments (an
    lmms-eval ``--config`` file can set them under ``env:``). A number is read as a float, anything else as text."""
    env = os.environ if environ is None else environ
    out: dict[str, Any] = {}
    for key in keys:
        raw = env.get(key.upper(), "").strip()
        if not raw:
            continue
        try:
            out[key] = float(raw)
        except ValueError:
            out[key] = raw
    return out


def record_metadata(records: Sequence[Mapping[str, Any]], task: str, log: logging.Logger) -> dict[str, Any]:
    """The settings the documents carried (all documents of one run carry the same; a mix is warned about and
    the first document's are used)."""
    seen = []
    for record in records:
        value = record.get("metadata") or {}
        if value not in seen:
            seen.append(value)
    if len(seen) > 1:
        log.warning("%s: documents carry different settings %s; using the first", task, seen[:3])
    return dict(seen[0]) if seen else {}


def min_coverage_setting(metadata: Mapping[str, Any], key: str, default: float) -> float:
    """``metadata[key]`` as a share in [0, 1] (``default`` when absent); ``ValueError`` naming the key otherwise."""
    value = metadata.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{key} must be a number in [0, 1] (the share of inputs a score needs), got {value!r}")
    return float(value)


def choice_setting(metadata: Mapping[str, Any], key: str, choices: Sequence[str]) -> str:
    """``metadata[key]``, one of ``choices`` (the first is the default); ``ValueError`` naming the key otherwise."""
    value = metadata.get(key, choices[0])
    if value not in choices:
        raise ValueError(f"{key} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return str(value)


def face_counts(images: Sequence[Sequence[int]], *, status: int, faces: int, low: int) -> dict[str, float]:
    """:data:`FACE_COUNTS` of image records whose fields ``status``, ``faces`` (faces found) and ``low``
    (low-confidence faces) sit at those positions."""
    found = [int(image[faces]) for image in images if image[status] == 0]  # STATUS_CODES["faces"]
    return {
        "images_one_face": float(sum(n == 1 for n in found)),
        "images_two_faces": float(sum(n == 2 for n in found)),
        "images_three_or_more_faces": float(sum(n >= 3 for n in found)),
        "low_confidence_faces": float(sum(int(image[low]) for image in images if len(image) > low)),
    }


def images_expected(records: Sequence[Mapping[str, Any]]) -> int:
    """Images the run asked for: per document the number the response said it was asked for, else the number
    it returned; a document that said neither and returned nothing counts the most any document was asked for."""
    known = [int(r["expected"]) for r in records if r.get("expected") is not None]
    fallback = max(known, default=0)
    total = 0
    for record in records:
        expected = record.get("expected")
        returned = len(record.get("images", ()))
        total += max(int(expected), returned) if expected is not None else (returned or fallback)
    return total


def failed_images_note(records: Sequence[Mapping[str, Any]], shown: int = 3) -> str | None:
    """The note "N images could not be read and are left out: path (reason); ...", or None when all were read."""
    failed = [tuple(item) for r in records for item in r.get("failed", ())]
    if not failed:
        return None
    listed = "; ".join(f"{path} ({reason})" for path, reason in failed[:shown])
    more = f"; and {len(failed) - shown} more (the samples log names each)" if len(failed) > shown else ""
    return f"{len(failed)} image(s) could not be read and are left out (failed_images): {listed}{more}"


def coverage_note(names: Sequence[str], counted: int, total: int, what: str, threshold: float, key: str) -> str:
    """The warning text for scores withheld for low coverage (CONVENTIONS 2)."""
    share = counted / total if total else 0.0
    return (
        f"{', '.join(names)} withheld (NaN): coverage {share:.3f} = {counted} of {total} {what}, below the "
        f"threshold {threshold:g} (set {key.upper()} or the task metadata {key} to change it)"
    )


def warn_once(log: logging.Logger, task: str, problems: Sequence[str]) -> None:
    """One WARNING line for a task, naming every problem."""
    if problems:
        log.warning("%s: %s", task, " | ".join(problems))


def stratum_correction(strata: Any) -> float:
    """``sqrt(n / (n - 1))`` for the median stratum size n (1 when n < 2).

    Resampling ``n`` images from a prompt's ``n`` gives its mean a variance ``(n - 1) / n`` of the unbiased one
    (Davison & Hinkley 1997, eq. 3.16): 5 % too small at 20 images per prompt, 20 % at 5. Spreading the
    bootstrap values around the estimate by this factor removes that (:func:`corrected_intervals`).
    """
    import numpy as np

    codes = np.asarray(strata)
    if codes.size == 0:
        return 1.0
    n = float(np.median(np.unique(codes, return_counts=True)[1]))
    return math.sqrt(n / (n - 1.0)) if n >= 2 else 1.0


def corrected_intervals(
    observed: Any, resampled: Any, specs: Mapping[str, Any], *, factor: float, confidence: float, seed: int
) -> dict[str, Any]:
    """:func:`metrics.bootstrap.intervals_from_counts` with every statistic's bootstrap values (or, for
    ``max_t``, components) spread around the estimate by ``factor`` (:func:`stratum_correction`) before the
    statistic's own interval method (:mod:`metrics.intervals`) is applied."""
    import numpy as np

    from metrics.intervals import interval, max_t_interval

    obs = np.asarray(observed, dtype=np.float64)[None, :]
    out = {}
    for name, spec in specs.items():
        point = np.asarray(spec.function(obs), dtype=np.float64)[0]
        values = np.asarray(spec.function(resampled), dtype=np.float64)
        with np.errstate(invalid="ignore"):
            spread = point + (values - point) * factor
        if spec.method == "max_t":
            out[name] = max_t_interval(point, spread, confidence=confidence, seed=seed, bounds=spec.bounds,
                                       transform=spec.transform)  # fmt: skip
        else:
            out[name] = interval(spec.method, spread, estimate=float(point), confidence=confidence, seed=seed,
                                 bounds=spec.bounds)  # fmt: skip
    return out


def outcome_fields(doc: Mapping[str, Any], outcome: Any) -> dict[str, Any]:
    """What every generation record keeps besides its images: the images asked for (None when the response did not
    say), the failed images as ``[path, reason]``, and the run's settings from the document."""
    raw = doc.get(METADATA_FIELD) or "{}"
    try:
        metadata = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except (json.JSONDecodeError, TypeError, ValueError):
        metadata = {}
    return {
        "expected": outcome.response.expected,
        "failed": [[image.path, image.error or "failed"] for image in outcome.images if image.status == "failed"],
        "metadata": metadata,
    }


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    if doc.get(ERROR_FIELD):
        raise ValueError(doc[ERROR_FIELD])
    return doc["prompt"]


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """No input image: text-to-image (lmms-eval's convention)."""
    if doc.get(ERROR_FIELD):
        raise ValueError(doc[ERROR_FIELD])
    return []


def error_dataset(message: str, log: logging.Logger) -> Any:
    """The one-document dataset that carries ``message`` to :func:`doc_to_text` (logged on ``log`` too)."""
    import datasets

    log.error(message)
    return datasets.Dataset.from_list([{ERROR_FIELD: message}])


def process_docs(
    dataset: Any,
    task: str,
    expected: Sequence[dict[str, Any]],
    *,
    classifier_env: str,
    validation_env: str,
    warning: Callable[[str, frozenset[str]], str | None],
    log: logging.Logger,
    settings: Sequence[str] = (),
    check_metadata: Callable[[dict[str, Any]], Any] | None = None,
) -> Any:
    """lmms-eval ``process_docs`` of one generation task: the shipped prompt file must hold the ``expected``
    documents of ``task``; the face classifier (``classifier_env``) is built before any image is generated,
    ``warning(spec, attributes it predicts)`` says what it cannot label (None: nothing to say); every document
    gets the classifier spec, the validation set (``validation_env``) and the run's ``settings`` (:func:`read_metadata`,
    checked by ``check_metadata``, which raises ``ValueError`` naming a bad key)."""
    shipped = [(row.get("id"), row.get("prompt")) for row in dataset if row.get("task") == task]
    if shipped != [(d["id"], d["prompt"]) for d in expected]:
        return error_dataset(f"{task}: the prompt file lmms-eval loaded differs from the package's documents", log)
    try:
        metadata = read_metadata(settings)
        if check_metadata is not None:
            check_metadata(metadata)
    except ValueError as error:
        return error_dataset(f"{task}: {error}", log)
    spec, source = classifier_setting(classifier_env)
    try:
        _, _, attributes = check_classifier(spec)
    except Exception as error:  # bad spec, missing weights or package: stop before any image is generated
        return error_dataset(f"{task}: cannot build the face classifier {spec!r} (from {source}): {error}", log)
    message = warning(spec, attributes)
    if message:
        log.warning("%s: %s", task, message)
    validation = validation_setting(validation_env)
    import datasets

    settings = json.dumps(metadata, sort_keys=True)
    extra = {"classifier_spec": spec, "classifier_validation": validation, METADATA_FIELD: settings}
    return datasets.Dataset.from_list([{**doc, **extra} for doc in expected])


def process_results(
    doc: dict[str, Any],
    results: Sequence[Any],
    *,
    record_for: Callable[[dict[str, Any], Any], dict[str, Any]],
    log_extra: Callable[[dict[str, Any]], dict[str, Any]],
    failure_record: Callable[[dict[str, Any], Exception], dict[str, Any]],
    metrics: Sequence[str],
) -> dict[str, Any]:
    """lmms-eval ``process_results``: classify the response's images (thread-safe, never raises).

    The document's record (``record_for(doc, outcome)``, or ``failure_record(doc, error)`` when it cannot be
    scored at all) goes under every name of ``metrics``; the images' outcomes, with ``log_extra(record)``,
    under :data:`LOG_KEY`.
    """
    reply = results[0] if results else None
    try:
        outcome = classify_response(reply, doc["classifier_spec"], doc_index=int(doc["doc_index"]))
        record = record_for(doc, outcome)
        entry = outcome.to_log()
        entry.update(log_extra(record))
    except Exception as error:  # a malformed document: counted as a document without images, never a crash
        record = failure_record(doc, error)
        entry = {"error": f"{type(error).__name__}: {error}"}
    out: dict[str, Any] = dict.fromkeys(metrics, record)
    out[LOG_KEY] = {"id": doc.get("id"), "prompt": doc.get("prompt"), **entry}
    return out
