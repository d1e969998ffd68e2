"""The one ``@metric`` of every Inspect task of ours: the task's headline statistics over all its samples.

Each sample's score carries the document's readable record (the lm-eval / lmms-eval carrier's, with ``record``, the
small integers the aggregation reads; an open-ended answer's with the judge's verdicts) in ``Score.metadata``.
:func:`fairness_evals.inspect.metric.headline` receives every sample's score of every epoch
(``@metric(scores="unreduced")``), gives the records to the benchmark's own ``compute_metrics`` (the function the
harness tasks and ``fairness-evals score`` call) once per task, and returns, as a flat dict of floats:

* a task: every metric of its headline statistics (:mod:`fairness_evals.statistics`): each score with its
  ``_ci_low``/``_ci_high``, ``_coverage`` and ``_stderr`` where the statistic declares them;
* a group: its roll-ups under their own names (the benchmark's roll-up function over the member tasks that report
  the metric), then each member task's headline metrics as ``<member task>/<metric>``.

Rules Inspect imposes, and ours:

* **Withheld values are left out.** A value our statistics make null (a coverage below its minimum, no inputs, an
  interval no simulation backs, the epochs rule below) is not in the dict: Inspect drops a ``None`` entry and would
  write NaN as a bare ``NaN``, which is not JSON. A metric that is absent is null; the task's metadata says so
  (:data:`WITHHELD_RULE`), and the reasons are the ones ``fairness-evals score`` writes: Inspect 0.3.285 lets a
  metric return numbers only (no explanation, no metadata), so :func:`fairness_evals.inspect.logs.reasons` recomputes
  them from the logged records, with the same :class:`~fairness_evals.notes.Notes`. At the end of the task the
  benchmark's one warning is logged (:class:`fairness_evals.inspect.metric.TaskEndWarnings`).
* **Epochs pool.** Every epoch's answer to a document is an answer (Inspect's "unreduced": each epoch an
  observation), so the point values are those of all answers together (with greedy decoding, every epoch answers
  alike and the values are those of one epoch). The intervals and standard errors resample answers as independent
  documents, and answers to one document are not: with more than one answer to a document they are withheld
  (:func:`withhold_for_epochs`).
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from fairness_evals import statistics
from fairness_evals.notes import Notes
from fairness_evals.statistics import leaves

#: What the task metadata says about metrics that are absent (``metadata["fairness_evals"]["withheld"]``).
WITHHELD_RULE = (
    "A metric that is absent is null: its coverage is below the minimum, it has no inputs, no coverage simulation "
    "backs its interval, or (intervals and standard errors) a document has answers of several epochs. Inspect "
    "drops None and writes NaN as a bare NaN, so a null value is left out. The reason for each: `fairness-evals "
    "score <log>` (or fairness_evals.inspect.logs.reasons)."
)
#: The separator of a group's member metrics: ``<member task>/<metric>``.
MEMBER_SEPARATOR = "/"


@dataclass(frozen=True)
class Plan:
    """How one Inspect task's scores become its statistics. An *item* is what the task's scorer put in a score's
    metadata: the document's readable record (with ``record``, and the judge's ``judgement`` for open-ended tasks).

    ``task`` is the declared task (or group); ``leaf_of(item)`` the leaf task an item belongs to; ``compute(leaf,
    items, notes)`` the benchmark's every statistic of one leaf task; ``rollup(name, members)`` a group's value of
    one metric from the statistics of the member tasks that report it; ``loggers`` the benchmark's loggers (their
    warnings are said once, at the end of the task); ``item_of(document, reply, logged)`` the item of a reply,
    as the task's scorer makes it (``logged``: the item the log holds, whose judgement an open-ended item keeps).
    :func:`fairness_evals.inspect.plans.plan` gives a task's plan."""

    task: str
    leaf_of: Callable[[Mapping[str, Any]], str]
    compute: Callable[[str, list[Mapping[str, Any]], Notes], dict[str, float]]
    rollup: Callable[[str, list[Mapping[str, float]]], float]
    loggers: tuple[str, ...]
    item_of: Callable[[Mapping[str, Any], str, Mapping[str, Any] | None], dict[str, Any]]


def headline_names(task: str) -> list[str]:
    """Every metric name of the headline statistics of ``task`` (members and their derived names), in table order."""
    return [name for s in statistics.task(task).headline_statistics() for name in s.names()]


def interval_names(task: str) -> list[str]:
    """The interval ends (and centres) and standard errors of every statistic of ``task``."""
    return [name for s in statistics.task(task).statistics for m in s.members for name in s.nullable(m)[1:]]


def withhold_for_epochs(values: dict[str, float], task: str, answers: int, documents: int, notes: Notes) -> None:
    """With ``answers`` > ``documents`` (several epochs answer a document), every interval end and standard error of
    ``task`` in ``values`` becomes NaN, the reason noted: the bootstrap resamples answers as independent documents,
    and answers to one document are not independent (the point values pool every answer)."""
    if answers <= documents:
        return
    names = [name for name in interval_names(task) if name in values]
    for name in names:
        values[name] = math.nan
    notes.null(
        names,
        f"interval withheld: {answers} answers to {documents} documents (several epochs); the intervals resample "
        "answers as independent documents, which answers to one document are not (run one epoch for intervals)",
    )


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Computed:
    """One computation of a task's metric: every statistic of each leaf task, their notes, the dict Inspect gets."""

    statistics: dict[str, dict[str, float]]
    notes: dict[str, Notes]
    values: dict[str, float]
    warnings: tuple[str, ...]


def compute(plan: Plan, items: Sequence[tuple[str, Mapping[str, Any]]]) -> Computed:
    """The metric of ``plan``'s task from ``(document id, item)`` pairs (one per sample and epoch)."""
    by_leaf: dict[str, list[tuple[str, Mapping[str, Any]]]] = {leaf: [] for leaf in leaves(plan.task)}
    for doc_id, item in items:
        leaf = plan.leaf_of(item)
        if leaf not in by_leaf:
            raise ValueError(f"{plan.task}: document {doc_id!r} is a document of {leaf}, not of this task")
        by_leaf[leaf].append((doc_id, item))
    stats: dict[str, dict[str, float]] = {}
    notes: dict[str, Notes] = {}
    with captured_warnings(plan.loggers) as warnings:
        for leaf, pairs in by_leaf.items():
            if not pairs and leaf != plan.task:
                continue
            notes[leaf] = Notes(leaf)
            values = dict(plan.compute(leaf, [item for _, item in pairs], notes[leaf]))
            withhold_for_epochs(values, leaf, len(pairs), len({doc_id for doc_id, _ in pairs}), notes[leaf])
            stats[leaf] = values
        if plan.task not in stats:
            stats[plan.task] = group_values(plan, stats, notes)
    return Computed(stats, notes, inspect_values(plan.task, stats), tuple(warnings))


def group_values(plan: Plan, stats: dict[str, dict[str, float]], notes: dict[str, Notes]) -> dict[str, float]:
    """A group's roll-ups: ``plan.rollup`` of each headline metric over the member tasks that report it (the group's
    leaves with that headline metric, as a harness group averages the members that print it: Fact-or-Fair's S_fact is
    the objective task's alone); NaN, noted, when one of them has no answer."""
    group = Notes(plan.task)
    notes[plan.task] = group
    out: dict[str, float] = {}
    for name in headline_names(plan.task):
        reporting = [leaf for leaf in leaves(plan.task) if name in headline_names(leaf)]
        missing = [leaf for leaf in reporting if leaf not in stats]
        out[name] = math.nan if missing or not reporting else float(plan.rollup(name, [stats[r] for r in reporting]))
        if missing:
            group.null(name, f"a member task has no answer ({', '.join(missing)})")
        elif not finite(out[name]):
            nulls = [leaf for leaf in reporting if not finite(stats[leaf].get(name))]
            group.null(name, f"null where a member task's value is null ({', '.join(nulls) or 'none'})")
    return out


def inspect_values(task: str, stats: dict[str, dict[str, float]]) -> dict[str, float]:
    """The dict the metric returns: the task's headline metrics (a group: its roll-ups, then every member's headline
    metrics as ``<member>/<metric>``), finite values only (:data:`WITHHELD_RULE`)."""
    out = {name: float(stats[task][name]) for name in headline_names(task) if finite(stats[task].get(name))}
    for leaf in leaves(task):
        if leaf != task and leaf in stats:
            for name in headline_names(leaf):
                if finite(stats[leaf].get(name)):
                    out[f"{leaf}{MEMBER_SEPARATOR}{name}"] = float(stats[leaf][name])
    return out


# --------------------------------------------------------------------------- warnings, said once per task
class _Capture(logging.Filter):
    def __init__(self, sink: list[str]) -> None:
        super().__init__()
        self.sink = sink

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            self.sink.append(record.getMessage())
        return False


@contextmanager
def captured_warnings(names: Sequence[str]) -> Iterator[list[str]]:
    """Within the block, the warnings of the loggers ``names`` are collected (in the list yielded), not logged:
    Inspect computes a task's metrics many times while it runs (for its progress display), and the benchmark's one
    warning is said once, at the end (:class:`fairness_evals.inspect.metric.TaskEndWarnings`)."""
    sink: list[str] = []
    capture = _Capture(sink)
    loggers = [logging.getLogger(name) for name in names]
    for logger in loggers:
        logger.addFilter(capture)
    try:
        yield sink
    finally:
        for logger in loggers:
            logger.removeFilter(capture)


class Latest:
    """The latest computation of each task's metric in this process (Inspect recomputes the metric for its
    progress display; the same scores are computed once) and its warnings, said at the task's end."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[list[tuple[str, dict[str, Any]]], Computed]] = {}

    def get(self, plan: Plan, items: list[tuple[str, dict[str, Any]]]) -> Computed:
        with self._lock:
            entry = self._entries.get(plan.task)
        if entry is not None and entry[0] == items:
            return entry[1]
        computed = compute(plan, items)
        with self._lock:
            self._entries[plan.task] = (items, computed)
        return computed

    def warnings(self, task: str) -> tuple[str, ...]:
        """The warnings of the latest computation of ``task`` (forgotten once read)."""
        with self._lock:
            entry = self._entries.pop(task, None)
        return entry[1].warnings if entry is not None else ()


LATEST = Latest()


def score_items(scores: Sequence[Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(document id, item)`` of every Inspect ``SampleScore``: its sample id and the readable record our scorer put
    in ``Score.metadata`` (samples scored by another scorer are an error naming them)."""
    out = []
    for sample_score in scores:
        metadata = sample_score.score.metadata or {}
        if not isinstance(metadata.get("record"), list):
            raise ValueError(
                f"sample {sample_score.sample_id!r} has no fairness-evals record in its score's metadata (scored by "
                "another scorer?)"
            )
        out.append((str(sample_score.sample_id), dict(metadata)))
    return out
