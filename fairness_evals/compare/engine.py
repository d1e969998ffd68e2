"""Resampling two runs of one task and the difference of each metric (:mod:`metrics.paired`).

Paired (the default): the two runs answered the same units, so one resample draws units and takes *both* runs'
answers to them (within the design strata); where the units are each run's own draws within shared strata (a
generator's images of fixed prompts, :attr:`Problem.independent`) each run is resampled on its own: :func:`metrics.paired.paired_cell_counts` or
:func:`~metrics.paired.paired_unit_counts`. The units must be the same, in the same strata; anything else is an
error naming the first difference (``--unpaired`` resamples each run on its own instead: valid for runs on
different documents, and wider).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from fairness_evals.compare.problem import Problem
from metrics import paired
from metrics.paired import Difference


class NotPaired(ValueError):
    """The two runs did not sample the same units (or not in the same strata)."""


@dataclass(frozen=True)
class Options:
    """How runs are compared: the test level ``alpha`` (intervals at ``1 - alpha``), the resamples, the seed,
    whether each run is resampled on its own (``--unpaired``), and the metrics chosen (empty: the headlines)."""

    alpha: float = 0.05
    n_resamples: int = 2000
    seed: int = 0
    unpaired: bool = False
    metrics: tuple[str, ...] = ()

    @property
    def confidence(self) -> float:
        return 1.0 - self.alpha

    @property
    def paired(self) -> bool:
        return not self.unpaired


def task_seed(seed: int, task: str) -> int:
    """The seed of one task's resampling: from ``seed`` and the task name only, so a task's numbers do not depend
    on which other tasks are compared."""
    return (int(seed) * 1_000_003 + zlib.crc32(task.encode())) % (2**32)


def align(a: Problem, b: Problem) -> Problem:
    """B's units in A's order, or :class:`NotPaired` naming what differs."""
    missing = np.setdiff1d(a.units, b.units)
    extra = np.setdiff1d(b.units, a.units)
    if missing.size or extra.size:
        parts = []
        if missing.size:
            parts.append(f"{missing.size} {a.what} of the baseline are not in the other run (e.g. {missing[0]!r})")
        if extra.size:
            parts.append(f"{extra.size} {b.what} of the other run are not in the baseline (e.g. {extra[0]!r})")
        raise NotPaired("; ".join(parts))
    position = {unit: i for i, unit in enumerate(b.units.tolist())}
    order = np.array([position[unit] for unit in a.units.tolist()], dtype=np.int64)
    aligned = b.reordered(order)
    if not np.array_equal(_codes(a.strata), _codes(aligned.strata)):
        unit = a.units[np.flatnonzero(_codes(a.strata) != _codes(aligned.strata))[0]]
        raise NotPaired(f"the runs put {a.what[:-1]} {unit!r} in different design strata")
    return aligned


def _codes(strata: np.ndarray) -> np.ndarray:
    """Strata as codes in order of first appearance (labels may differ, the partition must not)."""
    _, first, inverse = np.unique(strata, return_index=True, return_inverse=True)
    rank = np.argsort(np.argsort(first))
    return rank[inverse.ravel()]


def resample(a: Problem, b: Problem, settings: Options, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Resampled counts of both runs, (B, C_a) and (B, C_b): jointly when paired (``b`` aligned to ``a``)."""
    n = settings.n_resamples
    if settings.paired and not a.independent:
        kwargs = {"strata": a.strata, "n_resamples": n, "seed": seed, "rescaled": a.rescaled}
        if a.cells is not None and b.cells is not None:
            return paired.paired_cell_counts(a.cells, b.cells, a.n_cells, **kwargs)
        return paired.paired_unit_counts(_matrix(a), _matrix(b), **kwargs)
    return a.resample(n, seed), b.resample(n, seed + 1)


def _matrix(p: Problem) -> np.ndarray:
    if p.matrix is not None:
        return p.matrix
    one_hot = np.zeros((len(p.units), p.n_cells))
    kept = np.flatnonzero(p.cells >= 0)
    one_hot[kept, p.cells[kept]] = 1.0
    return one_hot


def differences(a: Problem, b: Problem, names: Iterable[str], settings: Options, *, task: str) -> dict[str, Difference]:
    """The difference B - A of every measure in ``names`` (both problems must have it)."""
    names = list(names)
    if not names:
        return {}
    if settings.paired and not a.independent:
        b = align(a, b)
    out: dict[str, Difference] = {}
    bounded = [n for n in names if a.measures[n].run_interval is not None and b.measures[n].run_interval is not None]
    for name in bounded:
        out[name] = paired.union_difference(
            a.estimate(name), b.estimate(name), a.measures[name].run_interval, b.measures[name].run_interval,
            confidence=settings.confidence,
        )  # fmt: skip
    rest = [n for n in names if n not in out]
    if not rest:
        return out
    counts_a, counts_b = resample(a, b, settings, task_seed(settings.seed, task))
    observed_a, observed_b = a.observed()[None, :], b.observed()[None, :]  # one array each: specs may cache by it
    for name in rest:
        out[name] = paired.spec_difference(
            a.measures[name].spec, observed_a, observed_b, counts_a, counts_b, confidence=settings.confidence,
            spec_b=b.measures[name].spec,
        )  # fmt: skip
    return out
