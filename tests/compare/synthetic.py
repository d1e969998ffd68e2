"""Harness-shaped output folders of synthetic answer sets, for the ``compare`` tests.

A folder holds what lmms-eval writes with ``--log_samples``: ``<stamp>_results.json`` (every metric as the task
reports it, computed by the benchmark's own scoring from the records) and ``<stamp>_samples_<task>.jsonl`` (one
line per document with its id and record, as ``process_results`` logs them).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from fairlens_tasks import scoring as fairlens_scoring
from fairlens_tasks.questions import closed_questions

STAMP = "20260101_000000"


def _results_file(folder: Path, model: str, results: dict[str, dict[str, Any]], versions: dict[str, int]) -> None:
    data = {
        "results": {task: {f"{k},none": v for k, v in metrics.items()} for task, metrics in results.items()},
        "configs": {task: {"task": task, "metadata": {"version": versions.get(task, 2)}} for task in results},
        "config": {"model": "synthetic", "model_args": f"pretrained={model}"},
        "lmms_eval_version": "0.7.3",
        "date": STAMP,
    }
    (folder / f"{STAMP}_results.json").write_text(json.dumps(data), encoding="utf-8")


def fairlens_run(
    folder: Path,
    model: str,
    records: dict[str, np.ndarray],
    *,
    provenance: dict[str, Any] | None = None,
    versions: dict[str, int] | None = None,
) -> Path:
    """An lmms-eval-shaped FairLens run: ``records`` maps a domain task (``fairlens_hiring``) to its records
    (``fairlens_tasks.scoring.RECORD_FIELDS``); image ``u``'s document for item ``q`` is ``img<u>.jpg/<q.id>``. With
    all three domains the ``fairlens`` group's roll-ups are reported too, as the harness does."""
    folder.mkdir(parents=True, exist_ok=True)
    prov = {"seed": 0, "sample_fraction": 0.1, "corpus_sha256": "0123456789abcdef", "data_version": 1}
    prov.update(provenance or {})
    questions = closed_questions()
    results = {}
    logger = logging.getLogger("fairness_evals.fairlens")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        for task, rec in records.items():
            metrics = dict(fairlens_scoring.compute_metrics(rec, task=task, min_coverage=0.5))
            metrics.update(prov)
            results[task] = metrics
            with (folder / f"{STAMP}_samples_{task}.jsonl").open("w", encoding="utf-8") as out:
                for i, row in enumerate(np.asarray(rec).tolist()):
                    doc_id = f"img{row[8]}.jpg/{questions[row[0]].id}"
                    line = {"doc_id": i, "fairlens_answer": {"id": doc_id}, "soundness": row, **prov}
                    out.write(json.dumps(line) + "\n")
    finally:
        logger.setLevel(level)
    domains = ("fairlens_hiring", "fairlens_legal", "fairlens_healthcare")
    if all(d in results for d in domains):
        results["fairlens"] = {
            name: fairlens_scoring.model_level_mean([results[d][name] for d in domains], [0] * 3)
            for name in fairlens_scoring.ROLLUPS
        }
    _results_file(folder, model, results, versions or {})
    return folder


def iris_run(
    folder: Path, model: str, records: dict[str, np.ndarray], *, versions: dict[str, int] | None = None
) -> Path:
    """An lmms-eval-shaped IRIS understanding run: ``records`` maps ``iris_ifs_und`` / ``iris_bis_und`` to its records;
    a document's id is ``img<unit>`` (IFS-Und) or ``s<set>/i<image>/q<question>`` (BIS-Und)."""
    from iris_tasks import bis_und, ifs_und

    folder.mkdir(parents=True, exist_ok=True)
    prov = {"seed": 0, "sample_fraction": 1.0, "corpus_sha256": "fedcba9876543210", "data_version": 1}
    modules = {"iris_ifs_und": ifs_und, "iris_bis_und": bis_und}
    results = {}
    logger = logging.getLogger("fairness_evals.iris")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        for task, rec in records.items():
            module = modules[task]
            metrics = dict(module.compute_metrics(rec))
            metrics.update(prov)
            results[task] = metrics
            score = f"{task.removeprefix('iris_')}_score"  # the harness logs the record under every metric name
            with (folder / f"{STAMP}_samples_{task}.jsonl").open("w", encoding="utf-8") as out:
                for row in np.asarray(rec).tolist():
                    if task == "iris_ifs_und":
                        doc_id = f"img{int(row[0])}"
                    else:
                        doc_id = f"s{int(row[0])}/i{int(row[1])}/q{int(row[2])}"
                    out.write(json.dumps({"iris_answer": {"id": doc_id}, score: row, **prov}) + "\n")
    finally:
        logger.setLevel(level)
    _results_file(folder, model, results, versions or {})
    return folder


def generation_run(folder: Path, model: str, task: str, records: list[dict]) -> Path:
    """An lmms-eval-shaped generation run of one task (``fact_or_fair_t2i_*``, ``iris_gen_neutral``,
    ``iris_gen_steer``): the document ids are ``<task>/<doc_sha>``."""
    from fact_fair_tasks import t2i_scoring
    from iris_tasks import bis_gen, neutral_gen

    folder.mkdir(parents=True, exist_ok=True)
    compute = {"iris_gen_neutral": neutral_gen.compute_metrics, "iris_gen_steer": bis_gen.compute_metrics}
    key = {"iris_gen_neutral": "ifs_gen_score", "iris_gen_steer": "bis_gen_score"}.get(task, "s_fact_gender")
    loggers = [
        logging.getLogger(n) for n in ("fairness_evals.fact_or_fair", "fairness_evals.iris", "fairness_evals.t2i")
    ]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        if task in compute:
            metrics = dict(compute[task](records))
        else:
            metrics = dict(t2i_scoring.compute_metrics(records, task=task))
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)
    with (folder / f"{STAMP}_samples_{task}.jsonl").open("w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps({"t2i_images": {"id": f"{task}/{record['doc_sha']}"}, key: record}) + "\n")
    _results_file(folder, model, {task: metrics}, {})
    return folder
