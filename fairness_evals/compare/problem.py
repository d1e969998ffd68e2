"""What ``compare`` needs from a benchmark: the units a run sampled, their strata, and each metric as a statistic
of resampled counts.

A benchmark adapter (:class:`Adapter`; one module per benchmark in this package) turns one task's per-document
records, as the harness logged them, into a :class:`Problem`: one row per sampled *unit* (a document for
Fact-or-Fair, an image for FairLens and IRIS understanding, a prompt for the generation tasks), the design stratum
of each unit, and the unit's counts, either one cell per unit (``cells``) or a unit x cell matrix (``matrix``), in
the layout the benchmark's own intervals resample. Each metric is a :class:`Measure`: the benchmark's own
:class:`metrics.bootstrap.StatisticSpec` (so ``compare`` computes exactly the statistic the task reports; a mean
of gaps as a :class:`metrics.paired.MeanOfMaxima` over the same per-attribute components) and which direction is
fairer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol

import numpy as np

from metrics.bootstrap import Design
from metrics.paired import Spec, statistic_values


@dataclass(frozen=True)
class Measure:
    """One metric as a statistic of counts.

    ``fairness``: whether the metric measures fairness (verdicts "A fairer" / "B fairer") or something else, such
    as factuality or soundness (verdicts "A higher" / "B higher"). Which direction is better is the statistic's
    declared ``direction`` (:mod:`fairness_evals.statistics`).
    """

    spec: Spec
    fairness: bool = True
    #: For a statistic whose only valid interval is the run's own conservative bound: ``level -> (low, high)``, the
    #: run's interval at that confidence (the difference is then :func:`metrics.paired.union_difference`).
    run_interval: Callable[[float], tuple[float, float]] | None = None


@dataclass(kw_only=True)
class Problem(Design):
    """One run of one task, ready to resample: its declared design (:class:`metrics.bootstrap.Design`: units, strata,
    counts) and its measures."""

    measures: dict[str, Measure]
    what: str = "units"  # what a unit is, plural ("documents", "images", "prompts"), for messages
    #: The two runs' units are different draws within the same strata (a generator's images of the same prompts):
    #: each run is resampled on its own, never aligned unit by unit.
    independent: bool = False
    notes: list[str] = field(default_factory=list)
    #: Why this run's metrics cannot be recomputed from its samples ("" when they can): every metric of the task is
    #: then not comparable, with this reason (FairLens open-ended: the judgements are not in the judge cache).
    unavailable: str = ""

    @classmethod
    def of(cls, design: Design, measures: dict[str, Measure], **options: Any) -> Problem:
        """The problem of a task's declared ``design`` (``options``: the other fields, and any design field to
        override)."""
        declared = {f.name: getattr(design, f.name) for f in fields(Design)}
        return cls(**(declared | options), measures=measures)

    def estimate(self, name: str) -> float:
        """The plug-in value of measure ``name`` on the whole sample."""
        return float(statistic_values(self.measures[name].spec, self.observed()[None, :])[0])

    def reordered(self, order: np.ndarray) -> Problem:
        """The same problem with its units in ``order`` (indices into the current order)."""
        rows = {"cells": self.cells[order]} if self.cells is not None else {"matrix": self.matrix[order]}
        return replace(self, units=self.units[order], strata=self.strata[order], **rows)


class Adapter(Protocol):
    """A benchmark as ``compare`` sees it."""

    #: The benchmark's name, as in ``fairness-evals score <name>``.
    name: str
    #: Results metrics that name the documents a run answered (seed, data version, corpus hash, ...).
    provenance: tuple[str, ...]
    #: The setting of the minimum coverage below which the benchmark's scores are NaN, and its default.
    min_coverage: str

    def owns(self, task: str) -> bool:
        """Whether ``task`` (a task or group of the results) is this benchmark's and has records."""

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        """``(document id, record)`` of one ``--log_samples`` line (``where`` names it in errors)."""

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        """The :class:`Problem` of one task's records (in document-id order)."""

    # Optional: ``groups`` ({group: member tasks}) and ``group_problem(group, {task: records})`` for a group's
    # roll-ups computed from its members' records (FairLens's model-level means); ``complete_records(task_run,
    # records) -> records`` for records that need the run's results besides its samples (FairLens open-ended: each
    # answer's judgement, read from the judge cache the results name).


def finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def adapters() -> tuple[Adapter, ...]:
    """Every registered benchmark's ``compare`` adapters (its ``compare`` hook), in registry order."""
    from fairness_evals import benchmarks

    return tuple(adapter for _, found in benchmarks.hooks("compare") for adapter in found)


def adapter_of(task: str) -> Adapter | None:
    """The adapter that owns ``task``, None when no benchmark's does."""
    return next((a for a in adapters() if a.owns(task)), None)
