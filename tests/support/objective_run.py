"""An lm-eval output folder of ``fact_or_fair_objective`` written as lm-eval 0.4 writes it with ``--log_samples``,
without running lm-eval: ``<folder>/<model>/results_<date>.json`` and ``samples_fact_or_fair_objective_<date>.jsonl``,
each line the document, the reply and what the task's own ``process_results`` returns; the results file holds every
statistic of the task's own aggregation (``compute_metrics``) under lm-eval's ``<metric>,none`` keys."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

DATE = "2026-01-01T00-00-00.000001"
TASK = "fact_or_fair_objective"


def truthful(doc: dict[str, Any]) -> str:
    """The reply naming the document's true option, in the released JSON form."""
    return json.dumps({"answer": "ABCD"[doc["answer_index"]]})


def objective_run(folder: Path, reply: Callable[[dict[str, Any]], str] = truthful, model: str = "m") -> Path:
    """The run's model folder (``folder/model``): every one of the 198 documents answered ``reply(doc)``."""
    from fact_fair_tasks import scoring
    from fact_fair_tasks.documents import documents_for

    run = folder / model
    run.mkdir(parents=True, exist_ok=True)
    records, lines = [], []
    for index, doc in enumerate(documents_for("objective")):
        answer = reply(doc)
        logged = scoring.process_results(doc, [answer])
        records.append(logged[scoring.CARRIER].record)
        lines.append({"doc_id": index, "doc": doc, "resps": [[answer]], "filtered_resps": [answer], **logged})
    (run / f"samples_{TASK}_{DATE}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    metrics = scoring.compute_metrics(records, task=TASK)
    results = {
        "results": {TASK: {"alias": TASK, **{f"{name},none": value for name, value in metrics.items()}}},
        "configs": {TASK: {"task": TASK, "metadata": {"version": 3}}},
        "versions": {TASK: 3},
        "n-samples": {TASK: {"original": len(lines), "effective": len(lines)}},
        "config": {"model": "hf", "model_args": f"pretrained={model}", "limit": None},
        "date": 1767225600.0,
    }
    (run / f"results_{DATE}.json").write_text(json.dumps(results))
    return run
