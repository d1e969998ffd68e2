"""How each Inspect task of ours turns its scores into statistics: the benchmark's own functions, named once.

:func:`plan` gives the :class:`~fairness_evals.inspect.headline.Plan` of a declared task or group: which leaf task an
item (a score's readable record) belongs to, the benchmark's ``compute_metrics``, its group roll-up, how a reply
becomes an item (the same parsing the harness tasks and ``fairness-evals score`` use) and the benchmark's loggers.
Each benchmark builds its plans (its :class:`~fairness_evals.benchmarks.Benchmark`'s ``inspect`` hook). The Inspect
metric (:mod:`fairness_evals.inspect.metric`) and the log reader (:mod:`fairness_evals.inspect.logs`) both call it,
so a log and its reading give the same numbers. No Inspect import here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from fairness_evals import benchmarks, statistics
from fairness_evals.inspect.headline import Plan

Item = Mapping[str, Any]


def plan(task: str, settings: Mapping[str, Any] | None = None) -> Plan:
    """The plan of ``task`` (a declared task or group) under its task-metadata ``settings`` (the benchmark reads
    its own keys from them)."""
    return _plan(task, json.dumps(dict(settings or {}), sort_keys=True))


@functools.lru_cache(maxsize=64)
def _plan(task: str, settings: str) -> Plan:
    declared = statistics.task(task)
    make = benchmarks.get(declared.benchmark).hook("inspect")
    if make is None:
        raise ValueError(f"{task}: {declared.benchmark} has no Inspect task")
    return make(task, json.loads(settings))


def records(items: list[Item]) -> list[Any]:
    return [item["record"] for item in items]
