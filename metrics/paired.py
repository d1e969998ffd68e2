"""Paired comparisons of two runs on the same units: differences, intervals, p-values, Holm.

Two runs of a benchmark that used the same documents / images / prompts (same seed, data version and
corpus) are a *paired* design: each unit was answered by model A and by model B. Resampling the
units jointly, so that a resample holds A's and B's answers to the same drawn units, keeps the
correlation between the two runs, and the interval of the difference ``stat(B) - stat(A)`` is far
narrower than one built from two separate intervals (Efron & Tibshirani 1993, §15.2; Davison &
Hinkley 1997, §4.4 on bootstrap tests).

* :func:`paired_cell_counts`: one-cell-per-unit form. Each unit's pair of outcomes ``(a, b)`` is one
  joint outcome; within each stratum the resampled joint outcomes are one multinomial draw of their
  observed shares, then split back into A's and B's cell counts.
* :func:`paired_unit_counts`: matrix form; the two unit x cell matrices are resampled with the same
  unit weights.
* Unpaired runs (different units) are resampled independently, each with
  :func:`metrics.bootstrap.resample_cell_counts` / ``resample_counts`` and its own seed; :func:`difference`
  takes either kind.
* :func:`difference`: the difference of one statistic with a reflected ("basic") interval and the
  p-value obtained by inverting that interval: ``p = 2 min(F, 1 - F)`` with ``F`` the share of
  resampled differences below ``2 d``, floored at ``1 / (B + 1)``; the level-``(1 - alpha)`` interval
  excludes 0 exactly when ``p <= alpha`` (up to the quantile interpolation).
* :func:`holm`: Holm's step-down adjustment (Holm, Scand. J. Statist. 1979) over the metrics compared,
  which controls the family-wise error rate at ``alpha`` without assuming independence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metrics.bootstrap import _check_cell_index, _check_strata, resample_counts
from metrics.intervals import check_confidence

__all__ = [
    "Difference",
    "difference",
    "holm",
    "paired_cell_counts",
    "paired_unit_counts",
]

FloatArray = NDArray[np.float64]


def paired_cell_counts(
    cell_a: ArrayLike,
    cell_b: ArrayLike,
    n_cells: int,
    *,
    strata: ArrayLike | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[FloatArray, FloatArray]:
    """Jointly resampled cell counts of two runs on the same units.

    Parameters
    ----------
    cell_a, cell_b : array_like of int, shape (U,)
        Unit u's cell in run A and in run B (``-1``: in no cell, e.g. refused), aligned by unit.
    n_cells : int
    strata : array_like of int, shape (U,), optional
        The design's strata; units are drawn within them.
    n_resamples, seed
        As in :func:`metrics.bootstrap.resample_cell_counts`.

    Returns
    -------
    (counts_a, counts_b), each of shape (B, C).
    """
    a = _check_cell_index(cell_a, n_cells)
    b = _check_cell_index(cell_b, n_cells)
    if a.size != b.size:
        raise ValueError(f"cell_a and cell_b must be aligned by unit, got {a.size} and {b.size} units")
    n_cells = int(n_cells)
    codes = _check_strata(strata, a.size)
    if codes is None:
        codes = np.zeros(a.size, dtype=np.int64)
    width = n_cells + 1
    joint = np.where(a < 0, n_cells, a) * width + np.where(b < 0, n_cells, b)
    rng = np.random.default_rng(seed)
    out_a = np.zeros((n_resamples, n_cells))
    out_b = np.zeros((n_resamples, n_cells))
    for s in range(int(codes.max()) + 1):
        outcomes, counts = np.unique(joint[codes == s], return_counts=True)
        draws = rng.multinomial(int(counts.sum()), counts / counts.sum(), size=n_resamples)
        for column, (cell_of_a, cell_of_b) in enumerate(zip(outcomes // width, outcomes % width, strict=True)):
            if cell_of_a < n_cells:
                out_a[:, cell_of_a] += draws[:, column]
            if cell_of_b < n_cells:
                out_b[:, cell_of_b] += draws[:, column]
    return out_a, out_b


def paired_unit_counts(
    units_a: ArrayLike,
    units_b: ArrayLike,
    *,
    strata: ArrayLike | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
) -> tuple[FloatArray, FloatArray]:
    """Jointly resampled counts of two unit x cell matrices (rows aligned by unit)."""
    ma = np.asarray(units_a, dtype=np.float64)
    mb = np.asarray(units_b, dtype=np.float64)
    if ma.ndim != 2 or mb.ndim != 2 or ma.shape[0] != mb.shape[0]:
        raise ValueError(f"units_a and units_b must be 2-D with the same units (rows), got {ma.shape}, {mb.shape}")
    both = resample_counts(np.hstack([ma, mb]), n_resamples=n_resamples, seed=seed, strata=strata)
    return both[:, : ma.shape[1]], both[:, ma.shape[1] :]


@dataclass(frozen=True)
class Difference:
    """``statistic(B) - statistic(A)`` with its interval and p-value (see the module docstring)."""

    estimate_a: float
    estimate_b: float
    difference: float
    low: float
    high: float
    p_value: float
    confidence: float
    n_resamples: int
    n_nan: int
    reason: str | None = None


def difference(
    estimate_a: float,
    estimate_b: float,
    values_a: ArrayLike,
    values_b: ArrayLike,
    *,
    confidence: float = 0.95,
) -> Difference:
    """Basic interval and p-value of ``B - A`` from jointly (or independently) resampled statistics.

    Parameters
    ----------
    estimate_a, estimate_b : float
        The statistic on each run's observed sample.
    values_a, values_b : array_like, shape (B,)
        The statistic on each resample of A and of B (resample i of both from the same draw when paired).
    """
    confidence = check_confidence(confidence)
    va = np.asarray(values_a, dtype=np.float64)
    vb = np.asarray(values_b, dtype=np.float64)
    if va.shape != vb.shape or va.ndim != 1 or va.size == 0:
        raise ValueError("values_a and values_b must be 1-D arrays of the same, non-zero length")
    d = estimate_b - estimate_a
    diffs = vb - va
    finite = diffs[np.isfinite(diffs)]
    n_nan = int(diffs.size - finite.size)
    if not math.isfinite(d) or finite.size == 0:
        reason = "a run's estimate is NaN" if not math.isfinite(d) else "every resampled difference was NaN"
        return Difference(estimate_a, estimate_b, d, math.nan, math.nan, math.nan, confidence, va.size, n_nan, reason)
    alpha = (1.0 - confidence) / 2.0
    q_low, q_high = np.quantile(finite, [alpha, 1.0 - alpha])
    pivot = 2.0 * d
    below = (np.sum(finite < pivot) + 0.5 * np.sum(finite == pivot)) / finite.size
    floor = 1.0 / (finite.size + 1)
    if np.all(finite == d):  # no variation: identical answers give p = 1, any other difference p = floor
        p = 1.0 if d == 0 else floor
    else:
        p = float(min(1.0, max(floor, 2.0 * min(below, 1.0 - below))))
    return Difference(
        estimate_a, estimate_b, d, float(pivot - q_high), float(pivot - q_low), p, confidence, va.size, n_nan
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order; NaN entries stay NaN and are not counted.

    ``p_adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))`` over the m finite p-values sorted ascending.
    """
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    m = finite.size
    if m == 0:
        return out.tolist()
    order = finite[np.argsort(p[finite], kind="stable")]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        out[index] = running
    return out.tolist()
