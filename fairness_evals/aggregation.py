"""Harness aggregation glue shared by every task: one computation per task run, one record per document.

lm-eval and lmms-eval call each metric's aggregation once, with the list of that metric's per-document items. Our
``process_results`` returns, for each document, its readable *record* under the task's **carrier** metric (the first
key, so the harnesses aggregate it first) and ``None`` under every other metric: a sample line then holds the record
once, and ``"metric": null`` says that the metric has no per-document value (package convention on compact sample
logs). Every metric of a YAML names its own aggregation, ``!function <module>.aggregate_<metric>``, which the
benchmark's scoring module makes on demand (:func:`metric_aggregations`, its module ``__getattr__``); each calls
:func:`aggregate` with its metric's name:

- with the carrier's items (records), it computes every metric of the task once, keeps them as the benchmark's
  latest run, and returns the carrier's value;
- with the ``None`` items of another metric, it returns that metric of the latest run, after checking that the run
  had as many documents (the harnesses aggregate one task's metrics one after another, carrier first, in the order
  ``process_results`` returned them; data-parallel gathering keeps that order). A standard error that is null
  (``<name>_stderr`` of a null score) is returned as ``"N/A"``, the harnesses' own spelling of a missing standard
  error, so the ± column says it one way (a NaN prints as ``nan`` there, and as ``NaN`` in a group row).

lm-eval 0.4 writes ``<metric>_stderr`` for every metric a task lists, and ``<name>_stderr`` is listed (it carries our
standard error into the ± column), so its results file also holds ``<name>_stderr_stderr: "N/A"``: the harness's own
placeholder for a metric with no standard error, in every 0.4.x release (``evaluator_utils.py``, computed per
listed metric, no switch). It is never printed, and no command of ours reads it; 0.5 writes it too.

lm-eval 0.5 also calls every aggregation but ``mean`` on bootstrap resamples of its items (``rnd.choices(items,
k=len(items))``, 100,000 of them, in a process pool or in-process) to fill the ± column. A resample is answered
NaN at once, without computing and without touching the kept run:

- carrier items are a resample when one record object appears twice (a real run holds each document's record once),
  or when they are the kept run's own records in another order (a permutation gives the kept run's value);
- another metric's items are a resample when the run has already reported that metric (each metric is aggregated
  once per run).

So the printed values are the real run's, and the ± column is ours where the task declares ``<name>_stderr`` (that
metric overwrites the harness's bootstrap) and ``nan`` elsewhere (0.4 prints ``N/A`` there): no standard error.

Imported by task modules only when a harness runs them; no harness, numpy or torch import here.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import threading
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field
from typing import Any

from fairness_evals import harness_logging

log = logging.getLogger("fairness_evals")
harness_logging.attach()  # task modules import this module when a harness loads them: warn in its log format

__all__ = ["aggregate", "clear", "metric_aggregations", "payload", "provenance_value"]


@dataclass
class _Run:
    count: int
    values: dict[str, Any]
    records: tuple[Any, ...]  # the carrier's items, held so that their ids stay theirs
    ids: frozenset[int]
    reported: set[str] = field(default_factory=set)  # the metrics aggregated from this run


#: How lm-eval and lmms-eval write a standard error they do not have; ours, when null, are written the same way.
NO_STDERR = "N/A"

_latest: dict[str, _Run] = {}
_lock = threading.Lock()


def clear() -> None:
    """Forget every benchmark's latest run."""
    with _lock:
        _latest.clear()


def _distinct_ids(items: Sequence[Any]) -> frozenset[int] | None:
    """The ids of ``items``, or None as soon as one repeats (in a resample the first repeat comes after about
    sqrt(n) items)."""
    seen: set[int] = set()
    for item in items:
        key = id(item)
        if key in seen:
            return None
        seen.add(key)
    return frozenset(seen)


PREFIX = "aggregate_"


def aggregate(
    benchmark: str,
    metric: str,
    items: Sequence[Any],
    compute: Callable[[list[Any]], dict[str, Any]],
    carriers: Container[str],
) -> Any:
    """``metric``'s value from its per-document ``items`` (see the module docstring).

    ``compute(records)`` returns every metric of one task run from the carrier's items; ``carriers`` names the
    benchmark's carrier metrics (those whose items are records; an empty list is a carrier's when ``metric`` is
    one). A metric whose run cannot be found (its task's carrier was not aggregated just before it) is NaN, with an
    error naming it. A bootstrap resample of either kind of items is NaN (module docstring).
    """
    if not isinstance(items, (list, tuple)):
        items = list(items)
    if (items[0] is None) if items else metric not in carriers:  # another metric's items: read the latest run
        with _lock:
            run = _latest.get(benchmark)
            found = run is not None and run.count == len(items) and metric in run.values
            resample = found and metric in run.reported
            if found:
                run.reported.add(metric)
        if not found:
            if multiprocessing.parent_process() is not None:
                return math.nan  # a resample in a spawned pool worker, which holds no run
            log.error(
                "%s: cannot report %s: the task's carrier items were not aggregated just before it (its %d documents "
                "have no run); reported as NaN",
                benchmark, metric, len(items),
            )  # fmt: skip
            return math.nan
        if resample:
            return math.nan
        value = run.values[metric]
        if metric.endswith("_stderr") and (value is None or (isinstance(value, float) and math.isnan(value))):
            return NO_STDERR
        return value
    ids = _distinct_ids(items)
    if ids is None:
        return math.nan
    with _lock:
        run = _latest.get(benchmark)
        if run is not None and run.ids == ids:
            run.reported.clear()
            return run.values[metric]
    records = list(items)
    values = compute(records)
    with _lock:
        _latest[benchmark] = _Run(len(records), values, tuple(records), ids)
    return values[metric]


def metric_aggregations(
    module: str, benchmark: str, compute: Callable[[list[Any]], dict[str, Any]], carriers: Container[str]
) -> Callable[[str], Callable[[Sequence[Any]], Any]]:
    """The ``__getattr__`` of a benchmark's scoring module ``module``: its attribute ``aggregate_<metric>`` is
    ``metric``'s aggregation (:func:`aggregate` of ``compute``), what ``!function <module>.aggregate_<metric>`` in a
    YAML names. Each is made once, so the module gives the same function each time (lm-eval 0.5 pickles it by name
    for its bootstrap pool)."""
    made: dict[str, Callable[[Sequence[Any]], Any]] = {}

    def __getattr__(name: str) -> Callable[[Sequence[Any]], Any]:
        if not name.startswith(PREFIX) or name == PREFIX:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        with _lock:
            function = made.get(name)
            if function is None:
                metric = name[len(PREFIX) :]

                def function(items: Sequence[Any]) -> Any:
                    return aggregate(benchmark, metric, items, compute, carriers)

                function.__name__ = function.__qualname__ = name
                function.__module__ = module
                function.__doc__ = (
                    f"The harness aggregation of {metric} ({benchmark}, fairness_evals.aggregation). What it is, with "
                    f"its formula and paper section: ``fairness-evals metrics {metric}``."
                )
                made[name] = function
        return function

    return __getattr__


def reply_of(results: Sequence[Any]) -> object:
    """The model's reply among a ``process_results`` call's ``results``: the first, or the first of the list a
    ``take_first_k`` style filter hands; None when there is none."""
    reply = results[0] if results else None
    if isinstance(reply, (list, tuple)):
        reply = reply[0] if reply else None
    return reply


def payload(carrier: str, record: Any, names: Sequence[str]) -> dict[str, Any]:
    """What ``process_results`` returns for one document: ``record`` under ``carrier`` (first), and ``None`` under
    each other metric of ``names`` (it has no per-document value)."""
    out: dict[str, Any] = {carrier: record}
    for name in names:
        if name != carrier:
            out[name] = None
    return out


def provenance_value(name: str, items: Sequence[Any], *, task: str) -> Any:
    """One provenance metric from its items (``[value]`` per document; all equal in one run). Documents that
    disagree give NaN with a warning naming the task and the first few values."""
    distinct = {item[0] if isinstance(item, (list, tuple)) and item else item for item in items}
    if len(distinct) != 1:
        if distinct:
            shown = ", ".join(sorted(map(str, distinct))[:5])
            log.warning("%s: %s differs between documents (%s); reported as NaN", task, name, shown)
        return math.nan
    value = next(iter(distinct))
    return math.nan if value is None else value
