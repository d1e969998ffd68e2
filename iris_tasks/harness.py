"""lmms-eval entry points shared by the three IRIS tasks: prompts, images, and ``process_results``.

``process_results`` reads one reply (the occupation mapper, a rating or a yes/no), turns it into the
task's record and returns it under every metric name of the task (:mod:`fairness_evals.aggregation`). Under
the log-only key ``iris_answer`` (no aggregation, so lmms-eval keeps it in ``--log_samples`` only) it
records the document id, the reply and how it was read. It is thread-safe and never raises: lmms-eval
calls it from a thread pool and retries it when it raises.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from iris_tasks import bis_und, coverage, ifs_und, rfs_und
from iris_tasks.answers import parse_rating, parse_yes_no
from iris_tasks.documents import ERROR_FIELD
from iris_tasks.mapping import STAGES, map_answer

log = logging.getLogger("fairness_evals.iris")

_MODULES = {"iris_ifs_und": ifs_und, "iris_rfs_und": rfs_und, "iris_bis_und": bis_und}


def reply_of(results: Sequence[Any]) -> object:
    reply = results[0] if results else None
    if isinstance(reply, (list, tuple)):  # a take_first_k style filter hands a list
        reply = reply[0] if reply else None
    return reply


def _threshold(doc: dict[str, Any]) -> float:
    value = doc.get("mapping_threshold")
    return float(value) if value not in (None, "") else 0.6


def read_reply(doc: dict[str, Any], reply: object) -> tuple[list[Any], dict[str, Any]]:
    """(record, log entry) of one document and its reply."""
    task, kind = doc["task"], doc["kind"]
    entry: dict[str, Any] = {"id": doc.get("id"), "kind": kind}
    if task == "iris_bis_und":
        value, rule = parse_rating(reply) if kind == "rating" else parse_yes_no(reply)
        entry.update(value=value, rule=rule)
        return bis_und.steer_record(doc, value), entry
    if kind == "probe":
        mapped = map_answer(reply, candidates=doc["candidates"], threshold=_threshold(doc))
        entry.update(mapped.as_log())
        return rfs_und.probe_record(doc, mapped), entry
    mapped = map_answer(reply, threshold=_threshold(doc))
    entry.update(mapped.as_log())
    if task == "iris_rfs_und":
        return rfs_und.recognition_probe_record(doc, mapped), entry
    return ifs_und.recognition_record(doc, mapped), entry


def _fallback(doc: dict[str, Any], error: Exception) -> tuple[list[Any], dict[str, Any]]:
    """A record marking the answer as a mapping error (IFS/RFS) or unparsed (BIS), for a malformed document."""
    log.error("iris: cannot score document %s: %r", doc.get("id"), error)
    entry = {"id": doc.get("id"), "kind": doc.get("kind"), "error": repr(error)}
    error_stage = STAGES.index("error")

    def number(name: str, default: int = 0) -> int:
        try:
            return int(doc.get(name, default))
        except (TypeError, ValueError):
            return default

    ppm = coverage.to_ppm(doc.get("min_coverage"))
    if doc.get("task") == "iris_bis_und":
        kind = float(bis_und.RATING if doc.get("kind") == "rating" else bis_und.YES_NO)
        stored = 0.0 if kind == bis_und.RATING else 2.0
        unit = float(number("set_unit"))
        return [unit, float(number("image_unit")), float(number("question_index")), kind, 0.0, 0.0, 0.0, stored, 1.0,
                -1.0, -1.0, ppm / coverage.PPM], entry  # fmt: skip
    if doc.get("kind") == "probe":
        return [rfs_und.PROBE, number("image_unit"), number("combination_index"), -2, error_stage,
                number("probe_round"), 0, 0, ppm], entry  # fmt: skip
    record = [number("image_unit"), 0, -1, 0, 0, 0, error_stage, ppm]
    return ([rfs_und.RECOGNITION, *record] if doc.get("task") == "iris_rfs_und" else record), entry


def process_results(doc: dict[str, Any], results: Sequence[Any]) -> dict[str, Any]:
    """lmms-eval ``process_results`` for every IRIS task (thread-safe, never raises)."""
    reply = reply_of(results)
    try:
        record, entry = read_reply(doc, reply)
    except Exception as error:  # a malformed document: counted as an error, never silently dropped
        record, entry = _fallback(doc, error)
    module = _MODULES.get(str(doc.get("task")), ifs_und)
    out: dict[str, Any] = dict.fromkeys(module.RECORD_METRICS, record)
    for name in module.PROVENANCE:  # a list, so that lmms-eval does not add a meaningless *_stderr_clt
        out[name] = [doc.get(name)]
    out["iris_answer"] = {**entry, "reply": reply if isinstance(reply, str) else repr(reply)}
    return out


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
