"""Reading the runs ``compare`` compares: lm-eval / lmms-eval output folders (or results files) with their
``--log_samples`` files.

One run is one model's results, read through the report's reader (:func:`fairness_evals.report.load.load_runs`,
which merges the results files of one model that cover different tasks). A folder holding several models, or two
runs of one model that answer the same task, is an error naming them: give each run's own folder or results file.
A task's records come from its samples file beside the results file; every line must name its document, and a
document answered twice is an error naming both lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals import jsonio
from fairness_evals.compare.problem import Adapter


@dataclass
class TaskRun:
    """One task (or group) of one run: its results, task metadata and samples file."""

    task: str
    metrics: dict[str, Any]
    metadata: dict[str, Any]
    samples: Path | None
    source: Path  # the results file
    run: Any = None  # the report's Run (for the reason a metric is undefined)


@dataclass
class RunInput:
    """One run as given on the command line."""

    path: str
    model: str
    tasks: dict[str, TaskRun] = field(default_factory=dict)
    label: str = ""

    @property
    def name(self) -> str:
        return self.label or self.model


def load_run(path: str) -> RunInput:
    """The run at ``path`` (a folder or results file of one model), or ValueError naming what is wrong."""
    from fairness_evals.report.load import load_runs, models

    runs = load_runs([path])
    grouped = models(runs)
    if len(grouped) > 1:
        names = "; ".join(f"{m.name} ({m.sources})" for m in grouped)
        raise ValueError(
            f"{path}: holds {len(grouped)} runs ({names}); give one run's folder or results file per argument"
        )
    return from_model(grouped[0], path)


def from_model(model: Any, path: str) -> RunInput:
    """The :class:`RunInput` of one model of the report's reader (:class:`fairness_evals.report.load.ModelRuns`)."""
    from fairness_evals.report.load import OUR_PREFIXES

    out = RunInput(path=path, model=model.name)
    for run in model.runs:
        for task, metrics in run.results.items():
            if task.startswith(OUR_PREFIXES):
                out.tasks[task] = TaskRun(task, metrics, run.metadata(task), run.samples_file(task), run.source, run)
    return out


def read_records(task: TaskRun, adapter: Adapter) -> dict[str, Any]:
    """Document id -> record of ``task``'s samples file, in file order. A missing file, a line that names no
    document and a document answered twice are errors naming the file (and line)."""
    if task.samples is None:
        raise ValueError(
            f"{task.source}: {task.task} has no samples file beside its results; run the harness with --log_samples"
        )
    records: dict[str, Any] = {}
    where_of: dict[str, str] = {}
    text = jsonio.read_text(task.samples, "samples file")
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{task.samples}:{number}"
        try:
            row = json.loads(line)  # the harnesses write NaN as a bare NaN: accepted here
        except (json.JSONDecodeError, RecursionError) as error:
            raise ValueError(f"{where}: not a JSON line ({getattr(error, 'msg', error)})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{where}: expected a JSON object")
        doc_id, record = adapter.sample(row, where)
        if doc_id in records:
            raise ValueError(f"{where}: a second answer to document {doc_id!r} (first at {where_of[doc_id]})")
        records[doc_id] = record
        where_of[doc_id] = where
    if not records:
        raise ValueError(f"{task.samples}: no samples")
    return records
