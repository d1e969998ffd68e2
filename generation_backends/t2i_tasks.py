"""lmms-eval entry points that the image-generation tasks (Fact-or-Fair T2I, IRIS generation) share.

A task module binds these to its own settings: :func:`doc_to_text` and :func:`doc_to_visual` as they are,
:func:`process_docs` with its classifier variables and warning, :func:`process_results` with its record.
A configuration error becomes a one-document dataset whose ``doc_to_text`` raises it (lmms-eval would
otherwise retry a failing ``process_docs`` and report only "RetryError").
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from generation_backends.image_outcomes import (
    check_classifier,
    classifier_setting,
    classify_response,
    validation_setting,
)

ERROR_FIELD = "error"
#: The image and document counts every generation task reports (each task adds its own after these).
IMAGE_COUNTS = (
    "documents",
    "images",
    "faces_detected",
    "images_with_faces",
    "no_face_images",
    "failed_images",
    "missing_images",
    "documents_without_images",
)
#: What every generation task records of how its numbers were made.
PROVENANCE = ("classifier", "classifier_version", "classifier_spec", "data_version", "documents_sha256")
#: The log-only key of ``process_results`` (``--log_samples`` only): every image's outcome.
LOG_KEY = "t2i_images"


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
) -> Any:
    """lmms-eval ``process_docs`` of one generation task: the shipped prompt file must hold the ``expected``
    documents of ``task``; the face classifier (``classifier_env``) is built before any image is generated,
    ``warning(spec, attributes it predicts)`` says what it cannot label (None: nothing to say); every document
    gets the classifier spec and the validation set (``validation_env``)."""
    shipped = [(row.get("id"), row.get("prompt")) for row in dataset if row.get("task") == task]
    if shipped != [(d["id"], d["prompt"]) for d in expected]:
        return error_dataset(f"{task}: the prompt file lmms-eval loaded differs from the package's documents", log)
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

    return datasets.Dataset.from_list(
        [{**doc, "classifier_spec": spec, "classifier_validation": validation} for doc in expected]
    )


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
