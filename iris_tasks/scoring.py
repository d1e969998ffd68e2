"""lmms-eval entry points of the three IRIS understanding tasks: prompts, images, the per-document record and the one
aggregation.

``process_results`` reads one reply (the occupation mapper, a rating or a yes/no) and returns the document's readable
record (:func:`readable_record`: the document id, what the reply was read as, the reading rule, and the task's record,
the numbers its aggregation reads) under the task's carrier metric, and ``None`` under each other headline metric
(:mod:`fairness_evals.aggregation`, package convention on compact sample logs). It is thread-safe and never raises:
lmms-eval calls it from a thread pool and retries it when it raises. Every metric of the YAMLs names its own
aggregation, ``aggregate_<metric>``; the carrier's computes every statistic of the task once per run (the task module's
``compute_metrics``; :mod:`iris_tasks.statistics` declares them); the harness prints the headline statistics,
``fairness-evals score iris`` writes them all. The run's provenance (seed, corpus hash, data version, image accounting,
embedder, thresholds) is not a metric: :func:`provenance` reads it from the documents.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fairness_evals import aggregation
from fairness_evals.aggregation import provenance_value
from fairness_evals.reply_window import head_and_tail
from iris_tasks import answer_shares, bis_und, ifs_und, rfs_und
from iris_tasks import statistics as table
from iris_tasks.answers import parse_rating, parse_yes_no
from iris_tasks.documents import ERROR_FIELD
from iris_tasks.mapping import DEFAULT_THRESHOLD, STAGES, Mapped, map_answer

log = logging.getLogger("fairness_evals.iris")

BENCHMARK = "iris"
#: The provenance each logged record carries (lmms-eval logs no document): what names the corpus, its sample and the
#: item data (``None`` where a task has none, e.g. the blank-image probe), and how many documents the task's design
#: holds (:func:`design_of`: a ``--limit`` run evaluates fewer); the rest of :func:`provenance` comes with
#: ``fairness-evals score iris --corpus``.
RECORD_PROVENANCE = ("corpus_sha256", "seed", "sample_fraction", "data_version", "documents")
MODULES = {"iris_ifs_und": ifs_und, "iris_rfs_und": rfs_und, "iris_bis_und": bis_und}
CARRIERS = table.CARRIERS
#: Each task's record width (the aggregation tells the tasks apart by it).
_TASK_OF_WIDTH = {
    len(ifs_und.RECORD_FIELDS): "iris_ifs_und",
    rfs_und.WIDTH: "iris_rfs_und",
    len(bis_und.RECORD_FIELDS): "iris_bis_und",
}
#: The metrics ``process_results`` returns per task: the headline list, carrier first (the YAMLs').
HEADLINE_NAMES = {task: [name for name, _ in table.task_of(task).harness_metrics()] for task in MODULES}


def _threshold(doc: dict[str, Any]) -> float:
    value = doc.get("mapping_threshold")
    return float(value) if value not in (None, "") else DEFAULT_THRESHOLD


def _mapped(doc: dict[str, Any], mapped: Mapped, record: list[int]) -> dict[str, Any]:
    return {"id": str(doc["id"]), "answer": mapped.occupation or "", "rule": mapped.stage, "record": record}


def _numbers(record: list[float]) -> list[float | int]:
    """A BIS-Und record as logged: whole numbers as integers (``3`` rather than ``3.0``; the same values)."""
    return [int(v) if float(v).is_integer() else v for v in record]


def readable_record(doc: dict[str, Any], reply: object) -> dict[str, Any]:
    """The record of one document and its reply as it is logged: ``id`` (the document's), ``answer`` (what the reply
    was read as: the occupation it maps to, ``unmappable``, or ``""`` for a probe answer naming none of the bracket;
    the rating, ``yes`` or ``no``, or ``""`` when unparsed), ``rule`` (the mapper's stage, or the rating / yes-no
    rule) and ``record`` (the task's numbers, which the aggregation reads). Every field keeps one JSON type ("" for no
    answer), as W&B's tables require. Raises on a malformed document (:func:`process_results` catches it).

    A text reply over 1 MiB characters is read through its first and last 512 KiB joined by a line break
    (:func:`fairness_evals.reply_window.head_and_tail`): the occupation mapper reads the first line and the
    occupations named, the rating and yes/no readers the first rating, the first word and the words used."""
    if isinstance(reply, str):
        reply = head_and_tail(reply)
    task, kind = doc["task"], doc["kind"]
    if task == "iris_bis_und":
        value, rule = parse_rating(reply) if kind == "rating" else parse_yes_no(reply)
        if value is None:
            answer = ""
        elif kind == "rating":
            answer = f"{value:g}"
        else:
            answer = "yes" if value else "no"
        record = _numbers(bis_und.steer_record(doc, value))
        return {"id": str(doc["id"]), "answer": answer, "rule": rule, "record": record}
    if kind == "probe":
        mapped = map_answer(reply, candidates=doc["candidates"], threshold=_threshold(doc))
        return _mapped(doc, mapped, rfs_und.probe_record(doc, mapped))
    mapped = map_answer(reply, threshold=_threshold(doc))
    if task == "iris_rfs_und":
        return _mapped(doc, mapped, rfs_und.recognition_probe_record(doc, mapped))
    return _mapped(doc, mapped, ifs_und.recognition_record(doc, mapped))


def read_reply(doc: dict[str, Any], reply: object) -> tuple[list[Any], dict[str, Any]]:
    """(record, readable record) of one document and its reply (:func:`readable_record`)."""
    readable = readable_record(doc, reply)
    return readable["record"], readable


def _fallback(doc: dict[str, Any], error: Exception) -> dict[str, Any]:
    """The readable record of a malformed document: its answer counted as a mapping error (IFS/RFS) or unparsed
    (BIS), never silently dropped."""
    log.error("iris: cannot score document %s: %r", doc.get("id"), error)
    error_stage = STAGES.index("error")

    def number(name: str, default: int = 0) -> int:
        try:
            return int(doc.get(name, default))
        except (TypeError, ValueError):
            return default

    ppm = answer_shares.to_ppm(doc.get("min_coverage"))
    out: dict[str, Any] = {"id": str(doc.get("id") or ""), "answer": "", "rule": "error"}
    if doc.get("task") == "iris_bis_und":
        kind = bis_und.RATING if doc.get("kind") == "rating" else bis_und.YES_NO
        stored = 0 if kind == bis_und.RATING else 2
        out["record"] = [
            number("set_unit"),
            number("image_unit"),
            number("question_index"),
            kind,
            0,
            0,
            0,
            stored,
            1,
            -1,
            -1,
            ppm / answer_shares.PPM,
        ]
    elif doc.get("kind") == "probe":
        out["record"] = [
            rfs_und.PROBE,
            number("image_unit"),
            number("combination_index"),
            -2,
            error_stage,
            number("probe_round"),
            0,
            0,
            ppm,
        ]
    else:
        record = [number("image_unit"), 0, -1, 0, 0, 0, error_stage, ppm]
        out["record"] = [rfs_und.RECOGNITION, *record] if doc.get("task") == "iris_rfs_und" else record
    return out


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """lmms-eval ``process_results`` for every IRIS understanding task (thread-safe, never raises): the readable
    record under the task's carrier, ``None`` under each other headline metric."""
    reply = aggregation.reply_of(results)
    try:
        readable = readable_record(doc, reply)
    except Exception as error:  # a malformed document: counted as an error, never silently dropped
        readable = _fallback(doc, error)
    readable["provenance"] = {name: doc.get(name) for name in RECORD_PROVENANCE}
    task = str(doc.get("task"))
    task = task if task in MODULES else "iris_ifs_und"
    return aggregation.payload(CARRIERS[task], readable, HEADLINE_NAMES[task])


def _task_of(records: Sequence[Sequence[Any]]) -> str:
    widths = {len(r) for r in records}
    if len(widths) != 1 or next(iter(widths)) not in _TASK_OF_WIDTH:
        raise ValueError(f"iris: the records are not this version's document records (widths {sorted(widths)})")
    return _TASK_OF_WIDTH[widths.pop()]


def _records(items: Sequence[Any]) -> list[Any]:
    try:
        return [item["record"] for item in items]
    except (TypeError, KeyError):
        raise ValueError(
            "iris: the carrier items are not this version's readable records (run the task again)"
        ) from None


def design_of(provenances: Iterable[Any]) -> int | None:
    """How many documents the task's design holds, from the provenance its records carry (:data:`RECORD_PROVENANCE`;
    the largest if they differ); None when none says (an older log: its records are scored as the whole design)."""
    sizes = [p.get("documents") for p in provenances if isinstance(p, Mapping)]
    found = [int(n) for n in sizes if isinstance(n, (int, float)) and not isinstance(n, bool) and n > 0]
    return max(found) if found else None


def compute_for_items(items: Sequence[Any]) -> dict[str, Any]:
    """Every statistic of one task run from its carrier items (:func:`readable_record`), the task told by its records
    and the design's size by their provenance (:func:`design_of`)."""
    records = _records(items)
    design = design_of(item.get("provenance") for item in items if isinstance(item, Mapping))
    return MODULES[_task_of(records) if records else "iris_ifs_und"].compute_metrics(records, design_size=design)


#: lmms-eval's aggregation of each IRIS understanding metric in the YAMLs, ``aggregate_<metric>``:
#: :func:`fairness_evals.aggregation.aggregate` of each task module's ``compute_metrics`` (:func:`compute_for_items`),
#: whose carriers are :data:`CARRIERS`. What each metric is, with its formula and paper section:
#: ``fairness-evals metrics NAME`` (declared in :mod:`iris_tasks.statistics`).
__getattr__ = aggregation.metric_aggregations(__name__, BENCHMARK, compute_for_items, set(CARRIERS.values()))


def provenance(docs: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The run's provenance from the documents of one task: for each field of the task's ``PROVENANCE`` (seed, sample
    fraction, corpus hash, data version, image and set accounting, mapping threshold, embedder, minimum coverage...),
    the value the documents share (:func:`fairness_evals.aggregation.provenance_value`: NaN, with a warning, when they
    differ or there is none)."""
    docs = list(docs)
    task = str(docs[0].get("task")) if docs else ""
    names = MODULES[task].PROVENANCE if task in MODULES else ()
    return {name: provenance_value(name, [[doc.get(name)] for doc in docs], task=task) for name in names}


def sample_answer(row: Mapping[str, Any], task: str) -> tuple[str, list[Any]] | None:
    """(document id, record) of one ``--log_samples`` line of ``task``: the readable record under the task's carrier
    (task version 3 on), or the record under the score metric with the id under ``iris_answer`` (version 2); None
    for another line."""
    readable = row.get(CARRIERS.get(task, ""))
    if isinstance(readable, Mapping) and readable.get("id") and isinstance(readable.get("record"), list):
        return str(readable["id"]), readable["record"]
    answer = row.get("iris_answer")
    record = row.get(f"{task.removeprefix('iris_')}_score")
    if isinstance(answer, Mapping) and answer.get("id") and isinstance(record, list):
        return str(answer["id"]), record
    return None


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    error = doc.get(ERROR_FIELD)
    if error:
        raise ValueError(error)
    return doc["prompt"]


def doc_to_target(doc: dict[str, Any]) -> str:
    return doc.get("occupation") or ""


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """One RGB image: the probe's blank image, or the document's image (cropped to its box)."""
    from iris_tasks import images

    if doc.get(ERROR_FIELD):
        raise ValueError(doc[ERROR_FIELD])
    if doc["kind"] == "probe":
        return [images.blank_image()]
    box = tuple(doc["box"]) if doc.get("box") else None
    if doc.get("hf_dataset"):
        hf = (doc["hf_dataset"], doc.get("hf_split") or None, doc["hf_image_column"], int(doc["image_index"]))
        return [images.load_image(hf=hf, box=box)]
    return [images.load_image(path=doc["image"], box=box)]


def doc_to_messages(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> list[dict]:
    """One user turn: the image, then the prompt."""
    text = {"type": "text", "text": doc_to_text(doc)}
    visuals = [{"type": "image", "url": image} for image in doc_to_visual(doc)]
    return [{"role": "user", "content": [*visuals, text]}]
