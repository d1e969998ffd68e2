"""Reading the runs ``compare`` compares: lm-eval / lmms-eval output folders (or results files) with their
``--log_samples`` files, and ``fairness-evals score`` outputs with the responses they were scored from.

One run is one model's results, read through the report's reader (:func:`fairness_evals.report.load.load_runs`,
which merges the results files of one model that cover different tasks). A folder holding several models, or two
runs of one model that answer the same task, is an error naming them: give each run's own folder or results file.
A task's records come from its samples file beside the results file; every line must name its document, and a
document answered twice is an error naming both lines.

A score output (the JSON ``fairness-evals score <benchmark> --out FILE`` writes) is read by the same module
(:func:`fairness_evals.report.load.load_score_output`): its tasks' records are rebuilt from the responses it recorded
under ``"score_inputs"``, each file checked against its recorded hash, by the benchmark's own ``score`` path; the
run's name is the score output's file name (without ``.json``).

An Inspect log (``.eval`` or ``.json``; a folder of one model's logs) is a run too, read through the same reader
(:func:`fairness_evals.report.load.load_log`): a task's records are the log's replies parsed again
(:meth:`fairness_evals.inspect.logs.LoggedTask.records`; an open-ended answer with its text, as the samples log it).
``compare`` pairs one answer per document, so a log of several epochs is refused.

A ``fairness-evals judge --out`` output (FairLens open-ended answers judged after the run) is read the same way: its
``score_inputs`` (benchmark ``fairlens_judge``) records the samples or responses files it judged and the judgement
cache it used; its answers are read again by the judge's own path (the module its benchmark's ``score_outputs``
names for ``fairlens_judge``: ``compare_records``) and each answer's judgement from that cache (the adapter).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fairness_evals import benchmarks, run_files
from fairness_evals.compare.problem import Adapter, adapter_of
from fairness_evals.jsonio import Answers


@dataclass
class TaskRun:
    """One task (or group) of one run: its results, task metadata and samples file."""

    task: str
    metrics: dict[str, Any]
    metadata: dict[str, Any]
    samples: Path | None
    source: Path  # the results file (or score output)
    run: Any = None  # the report's Run (for the reason a metric is undefined)
    #: A score output's records (document id -> record), rebuilt from its responses; None for a harness run.
    records: dict[str, Any] | None = None
    #: A score output's ``score_inputs`` entry (what it read and its settings; a judge output's judgement cache).
    score_inputs: dict[str, Any] | None = None
    #: The judgement cache ``compare --judge-cache`` names (FairLens open-ended), overriding the one recorded or
    #: ``FAIRLENS_JUDGE_CACHE``; None when not given.
    judge_cache: Path | None = None


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
    """The run at ``path`` (a folder or results file of one model, an Inspect log or a folder of them, or a score
    output), or ValueError naming what is wrong."""
    from fairness_evals.inspect.logs import is_inspect_log
    from fairness_evals.report.load import load_runs, load_score_output, models

    scored = None if is_inspect_log(path) else load_score_output(Path(path))
    if scored is not None:
        return from_score_output(scored, path)
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
    out = RunInput(path=path, model=model.name)
    for run in model.runs:
        for task, metrics in run.results.items():
            if benchmarks.ours(task):
                records = logged_records(run, task)
                out.tasks[task] = TaskRun(
                    task, metrics, run.metadata(task), run.samples_file(task), run.source, run, records
                )
    return out


def logged_records(run: Any, task: str) -> dict[str, Any] | None:
    """Document id -> record of ``task`` in an Inspect log (the form its harness samples log: the record, an
    answer an adapter's ``logged_item`` makes of it); None for a harness run or a group. A log of several epochs is an
    error naming it: ``compare`` pairs one answer per document."""
    entry = run.logged.get(task)
    if entry is None or entry.members:
        return None
    if entry.epochs > 1:
        raise ValueError(
            f"{entry.path}: {task} ran {entry.epochs} epochs; compare pairs one answer per document: compare runs of "
            "one epoch"
        )
    convert = getattr(adapter_of(task), "logged_item", None)  # an adapter whose records need more than the record
    if convert is not None:
        return {doc_id: convert(item) for doc_id, item in entry.items()}
    return dict(run.records(task))


def from_score_output(run: Any, path: str) -> RunInput:
    """The :class:`RunInput` of a score output's :class:`fairness_evals.report.load.Run`: each task's metrics as
    reported, with the records rebuilt from its responses (none for an entry without records, such as a
    ``--by-statistic`` one)."""
    out = RunInput(path=path, model=run.model)
    for task, metrics in run.results.items():
        found = run.records(task)
        records = None if found is None else dict(found)
        out.tasks[task] = TaskRun(task, metrics, {}, None, run.source, run, records, score_inputs=run.score_inputs)
    return out


def read_records(task: TaskRun, adapter: Adapter) -> dict[str, Any]:
    """Document id -> record of ``task``'s samples file, in file order (a score output's task: its rebuilt records,
    in the form the samples log them). A missing file, a line that names no document, a document answered twice and
    lines of two runs (:class:`fairness_evals.jsonio.OneRun`) are errors naming the file (and line)."""
    if task.records is not None:
        if not task.records:
            raise ValueError(f"{task.source}: {task.task} has no records")
        return {doc_id: json.loads(json.dumps(record)) for doc_id, record in task.records.items()}
    if task.samples is None:
        if task.score_inputs is not None:  # a score output's task without records (e.g. a --by-statistic entry)
            raise ValueError(f"{task.source}: {task.task} has no records in the responses it was scored from")
        raise ValueError(
            f"{task.source}: {task.task} has no samples file beside its results; run the harness with --log_samples"
        )
    records = Answers()
    for line in run_files.read_lines([run_files.InputFile(task.samples, task.task)]):
        if not isinstance(line.row, dict):
            raise ValueError(f"{line.where}: expected a JSON object")
        doc_id, record = adapter.sample(line.row, line.where)
        records.add(doc_id, run_files.checked_record(record, line.where, doc_id), line.where, f"document {doc_id!r}")
    records.check()
    return records.replies
