"""Comparing runs: every metric of every task both runs cover, its difference, interval, p-value and verdict.

For each run against the baseline:

1. The tasks both runs report that a benchmark adapter knows (:func:`~fairness_evals.compare.problem.adapters`). Their documents must be the
   same: the provenance the results record (seed, data version, documents or corpus hash, sample fraction), the
   task version, and the set of document ids in the samples; the first difference is an error naming it, unless
   ``unpaired``.
2. The metrics: by default the task's *headline* metrics (:func:`headlines`: those its statistics table declares)
   that the adapter resamples (not the unparsed and refused rates), or those matching ``metrics`` patterns (``name`` or ``task/name`` globs) among the headlines and the measures
   the benchmark's adapter recomputes.
3. Each metric is *not comparable*, with the reason, when either run reports it as NaN (e.g. its coverage is below
   the task's minimum, or its answers follow the option position), when either run's answers to the task (or to a
   member of the group) follow the option position and the metric is one of the scores that finding nulls
   (:func:`fairness_evals.position.finding`; a setting kept the number for study), when either run withholds its
   interval (too few units back it: no difference interval
   is backed then either), or when the samples do not reproduce the reported value. Otherwise the runs are
   resampled (:mod:`fairness_evals.compare.engine`) and the difference gets its interval and p-value.
4. Holm's adjustment over all comparable metrics of the pair (:func:`metrics.paired.holm`), and the verdict at
   ``alpha``: "B fairer" / "A fairer" (fairness metrics, by the metric's fairer direction), "B higher" /
   "A higher" (other metrics, such as S_fact or soundness), or "no detectable difference".

Group roll-ups that an adapter computes from its member tasks' records (FairLens's ``fairlens`` means over the
three domains) are compared after the members, in the same family.

Two runs whose answers are identical on every unit of a task differ by exactly 0 on every metric: they are
reported as "no detectable difference" (p = 1) even where the runs withhold their intervals.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from fairness_evals import position, statistics
from fairness_evals.compare import engine
from fairness_evals.compare.engine import Options
from fairness_evals.compare.problem import Adapter, Problem, adapter_of, adapters, finite
from fairness_evals.compare.runs import RunInput, TaskRun, read_records
from metrics.paired import holm

FAIRER = {True: "B fairer", False: "A fairer"}
HIGHER = {True: "B higher", False: "A higher"}
NO_DIFFERENCE = "no detectable difference"
NOT_COMPARABLE = "not comparable"


@dataclass
class Row:
    """One metric of one task, run B against the baseline A."""

    task: str
    metric: str
    baseline: str
    run: str
    a: float
    b: float
    difference: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    p_value: float = math.nan
    p_holm: float = math.nan
    verdict: str = NOT_COMPARABLE
    better: str = ""  # "higher is fairer", "lower is fairer", "higher is better", ...
    method: str = ""
    units: int = 0
    unit: str = ""  # what the units are: documents, images, counterfactual sets
    reason: str = ""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def compare_pair(baseline: RunInput, other: RunInput, options: Options) -> tuple[list[Row], list[str]]:
    """Rows for every compared metric of every task both runs cover, and notes (tasks left out and why)."""
    rows: list[Row] = []
    notes: list[str] = []
    shared = sorted(set(baseline.tasks) & set(other.tasks))
    for one, two in ((baseline, other), (other, baseline)):
        only = sorted(t for t in set(one.tasks) - set(two.tasks) if adapter_of(t) is not None)
        if only:
            notes.append(f"only in {one.name}, not compared: {', '.join(only)}")
    records: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for task in shared:
        adapter = adapter_of(task)
        if adapter is None:
            continue
        rows.extend(_compare_task(adapter, baseline, other, task, options, records))
    for adapter in adapters():
        for group, members in getattr(adapter, "groups", {}).items():
            if group in baseline.tasks and group in other.tasks and all(m in records for m in members):
                rows.extend(_compare_task(adapter, baseline, other, group, options, records, members))
            elif group in baseline.tasks and group in other.tasks:
                rows.extend(_without_members(baseline, other, group, members, options))
    comparable = [i for i, row in enumerate(rows) if row.verdict != NOT_COMPARABLE]
    adjusted = holm([rows[i].p_value for i in comparable])
    for i, p in zip(comparable, adjusted, strict=True):
        rows[i].p_holm = p
        rows[i].verdict = _verdict(rows[i], options.alpha)
    if not shared or not any(adapter_of(t) for t in shared):
        notes.append(f"{baseline.name} and {other.name} share no task that compare knows")
    return rows, notes


def _verdict(row: Row, alpha: float) -> str:
    if not (row.p_holm <= alpha) or row.difference == 0:
        return NO_DIFFERENCE
    b_up = row.difference > 0
    if row.better.endswith("fairer"):
        return FAIRER[b_up == row.better.startswith("higher")]
    return HIGHER[b_up]


def check_same_documents(adapter: Adapter, a: TaskRun, b: TaskRun) -> None:
    """:class:`engine.NotPaired` naming the first provenance value or task version that differs."""
    for key in adapter.provenance:
        va, vb = a.metrics.get(key), b.metrics.get(key)
        if va is not None and vb is not None and va != vb and not (_nan(va) and _nan(vb)):
            hint = (
                "; a run made without a judge can be judged afterwards: fairness-evals judge RUN --out FILE, then "
                "compare FILE"
                if key == "judge" and "none" in (str(va), str(vb))
                else ""
            )
            raise engine.NotPaired(f"{a.task}: {key} differs ({va} in the baseline, {vb} in the other run){hint}")
    derived = getattr(adapter, "derived_provenance", None)  # values an adapter reads out of the results
    if derived is not None:
        da, db = derived(a), derived(b)
        for key in da.keys() & db.keys():
            if da[key] != db[key]:
                raise engine.NotPaired(
                    f"{a.task}: {key} differs ({da[key]} in the baseline, {db[key]} in the other run)"
                )
    va, vb = a.metadata.get("version"), b.metadata.get("version")
    if va is not None and vb is not None and va != vb:
        raise engine.NotPaired(
            f"{a.task}: task version differs ({va} in the baseline, {vb} in the other run: documents or scoring changed)"
        )


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def headlines(task: str, *tables: dict[str, Any]) -> list[str]:
    """The headline metrics of ``task`` that any of ``tables`` (a run's metrics) reports: those its statistics table
    declares (standard errors aside); for a task it does not declare, every ``<name>`` reported with
    ``<name>_coverage`` beside it (package convention 1)."""
    from fairness_evals import statistics

    try:
        declared = [n for n, _ in statistics.task(task).harness_metrics() if not n.endswith("_stderr")]
    except KeyError:
        declared = [
            n for table in tables for n in table if f"{n}_coverage" in table and not n.endswith("_coverage")
        ]  # fmt: skip
    return [n for n in dict.fromkeys(declared) if any(n in table for table in tables)]


def _chosen(task: str, names: Sequence[str], patterns: Sequence[str]) -> list[str]:
    """``names`` that match ``patterns`` (``name`` or ``task/name`` globs)."""
    return [
        name for name in names
        if any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(f"{task}/{name}", p) for p in patterns)
    ]  # fmt: skip


def _names(adapter_problem: Problem, a: TaskRun, b: TaskRun, patterns: Sequence[str]) -> list[str]:
    """The metrics compared: the headlines the adapter resamples, or those of them and of the adapter's measures that
    ``patterns`` match; a headline it does not resample (an unparsed or refused rate) only where a pattern names it
    exactly (its row says so)."""
    headline = headlines(a.task, a.metrics, b.metrics)
    measured = [name for name in headline if name in adapter_problem.measures]
    if not patterns:
        return measured
    named = [name for name in headline if name not in measured and (name in patterns or f"{a.task}/{name}" in patterns)]
    return _chosen(a.task, list(dict.fromkeys([*measured, *adapter_problem.measures])), patterns) + named


def _compare_task(
    adapter: Adapter,
    baseline: RunInput,
    other: RunInput,
    task: str,
    options: Options,
    seen: dict[str, tuple[dict[str, Any], dict[str, Any]]],
    members: Sequence[str] = (),
) -> list[Row]:
    """The rows of one task, or of a group roll-up over ``members`` (tasks already read into ``seen``)."""
    a, b = baseline.tasks[task], other.tasks[task]
    if members:
        problem_a, problem_b = (
            adapter.group_problem(task, {m: [seen[m][i][k] for k in sorted(seen[m][i])] for m in members})
            for i in (0, 1)
        )
        identical = not options.unpaired and all(seen[m][0] == seen[m][1] for m in members)
        pairs = [(baseline.tasks[m], other.tasks[m]) for m in members]
        return _rows(adapter, baseline, other, task, options, a, b, problem_a, problem_b, identical, pairs)
    if not options.unpaired:
        check_same_documents(adapter, a, b)
    records_a, records_b = _records(adapter, a), _records(adapter, b)
    seen[task] = (records_a, records_b)
    if not options.unpaired and set(records_a) != set(records_b):
        missing = sorted(set(records_a) - set(records_b))
        extra = sorted(set(records_b) - set(records_a))
        parts = (
            [f"{len(missing)} documents of the baseline are not in {other.name} (e.g. {missing[0]!r})"]
            if missing
            else []
        )
        parts += (
            [f"{len(extra)} documents of {other.name} are not in the baseline (e.g. {extra[0]!r})"] if extra else []
        )
        raise engine.NotPaired(f"{task}: the runs answered different documents: {'; '.join(parts)}")
    problem_a = adapter.problem(task, [records_a[k] for k in sorted(records_a)])
    problem_b = adapter.problem(task, [records_b[k] for k in sorted(records_b)])
    identical = not options.unpaired and all(records_a[k] == records_b[k] for k in records_a)
    return _rows(adapter, baseline, other, task, options, a, b, problem_a, problem_b, identical)


def _without_members(
    baseline: RunInput, other: RunInput, group: str, members: Sequence[str], options: Options
) -> list[Row]:
    """A roll-up both runs report while a run lacks one of its members: each of its metrics is not comparable (the
    roll-up is recomputed from every member's samples), naming the members missing."""
    a, b = baseline.tasks[group], other.tasks[group]
    absent = [f"{m} (not in {run.name})" for m in members for run in (baseline, other) if m not in run.tasks]
    reason = f"{group} is compared from all its members' samples; missing: {', '.join(absent)}"
    names = headlines(group, a.metrics, b.metrics)
    if options.metrics:
        names = _chosen(group, names, options.metrics)
    return [Row(group, n, baseline.name, other.name, _value(a, n), _value(b, n), reason=reason) for n in names]


def _records(adapter: Adapter, task: TaskRun) -> dict[str, Any]:
    """Document id -> record of ``task``'s samples, completed from its results where the adapter needs them."""
    records = read_records(task, adapter)
    complete = getattr(adapter, "complete_records", None)
    return records if complete is None else complete(task, records)


def _rows(
    adapter: Adapter,
    baseline: RunInput,
    other: RunInput,
    task: str,
    options: Options,
    a: TaskRun,
    b: TaskRun,
    problem_a: Problem,
    problem_b: Problem,
    identical: bool,
    members: Sequence[tuple[TaskRun, TaskRun]] = (),
) -> list[Row]:
    method = ("paired" if not (options.unpaired or problem_a.independent) else "unpaired") + " bootstrap"
    rows: list[Row] = []
    to_compute: list[Row] = []
    for name in _names(problem_a, a, b, options.metrics):
        row = Row(task, name, baseline.name, other.name, _value(a, name), _value(b, name), units=len(problem_a.units),
                  unit=problem_a.what)  # fmt: skip
        rows.append(row)
        measure = problem_a.measures.get(name)
        if measure is None or name not in problem_b.measures:
            row.reason = "compare has no paired form of this metric"
            continue
        row.better = statistics.task(task).statistic(name).direction + (
            " is fairer" if measure.fairness else " is better"
        )
        reason = _position_finding([(a, b), *members], name, baseline.name, other.name)
        reason = reason or _not_comparable(a, b, name, baseline.name, other.name, identical, adapter.min_coverage)
        reason = reason or next(
            (f"{label}: {p.unavailable}" for p, label in ((problem_a, baseline.name), (problem_b, other.name))
             if p.unavailable), "",
        )  # fmt: skip
        for member_a, member_b in members:  # a roll-up's interval is backed where its members' are
            reason = reason or _withheld(member_a, member_b, name, baseline.name, other.name, identical)
        reason = (
            reason
            or _not_reproduced(problem_a, a, name, baseline.name)
            or _not_reproduced(problem_b, b, name, other.name)
        )
        if reason:
            row.reason = reason
            continue
        row.method = method
        to_compute.append(row)
    if to_compute:
        found = engine.differences(problem_a, problem_b, [r.metric for r in to_compute], options, task=task)
        for row in to_compute:
            d = found[row.metric]
            if d.reason or math.isnan(d.p_value):
                row.reason = d.reason or "the difference is undefined"
                continue
            row.difference, row.ci_low, row.ci_high, row.p_value = d.difference, d.low, d.high, d.p_value
            row.method = f"{method}, {'basic' if d.method == 'basic' else 'conservative bounds'}"
            row.verdict = NO_DIFFERENCE  # until Holm decides
    return rows


def _value(task: TaskRun, name: str) -> float:
    value = task.metrics.get(name)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _not_comparable(
    a: TaskRun, b: TaskRun, name: str, label_a: str, label_b: str, identical: bool, minimum: str
) -> str:
    for task, label in ((a, label_a), (b, label_b)):
        if name not in task.metrics:
            return f"not reported by {label}"
        if not finite(task.metrics.get(name)):
            why = task.run.nan_reason(task.task, name) if task.run is not None else ""
            coverage = task.metrics.get(f"{name}_coverage")
            if not why and finite(coverage):
                why = (
                    f"coverage {coverage:.0%} (a score is withheld below the task's minimum coverage, {minimum}; "
                    "otherwise the run's warning says why)"
                )
            return f"NaN in {label}" + (f": {why}" if why else "")
    return _withheld(a, b, name, label_a, label_b, identical)


def _position_finding(pairs: Sequence[tuple[TaskRun, TaskRun]], name: str, label_a: str, label_b: str) -> str:
    """Why ``name`` cannot be compared when a run's answers to one of the tasks of ``pairs`` (the task, or a group's
    members) follow the option position and ``name`` is one of the scores that finding nulls (null, or kept by a
    setting for study: either way no result); "" otherwise."""
    for pair in pairs:
        for task, label in zip(pair, (label_a, label_b), strict=True):
            found = position.finding(task.metrics) if name in position.sensitive_of(task.task) else ""
            if found:
                return f"{label}: {found}, so its {task.task} {name} is not a result"
    return ""


def _withheld(a: TaskRun, b: TaskRun, name: str, label_a: str, label_b: str, identical: bool) -> str:
    """Why the difference has no backed interval when a run withholds its own interval of ``name``, else ""."""
    if identical:
        return ""
    for task, label in ((a, label_a), (b, label_b)):
        low, high = task.metrics.get(f"{name}_ci_low"), task.metrics.get(f"{name}_ci_high")
        if f"{name}_ci_low" in task.metrics and not (finite(low) and finite(high)):
            return (
                f"{label} withholds its interval of {task.task} {name} (too few units back it, see the task's "
                "warning); no difference interval is backed either"
            )
    return ""


def _not_reproduced(problem: Problem, task: TaskRun, name: str, label: str) -> str:
    value = _value(task, name)
    recomputed = problem.estimate(name)
    if math.isfinite(value) and not np.isclose(recomputed, value, rtol=1e-9, atol=1e-12):
        return f"the samples of {label} do not reproduce its reported value ({value:.6g}; recomputed {recomputed:.6g})"
    return ""
