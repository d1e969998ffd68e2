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
* :func:`max_difference`: the same for a statistic that is a *maximum of components* (a max - min gap, a
  mean of gaps; :class:`metrics.bootstrap.StatisticSpec` with ``method="max_t"``). The plug-in maximum is
  biased upward, most where components tie (a fair model's gap, true value 0, is the maximum of its noise), and
  the bootstrap does not reproduce that bias at ties, so the basic interval of a difference of gaps covers
  only 0.84-0.88 when one model is fair (``tests/support/coverage_compare.py``). Where both runs' maxima are
  attained by one component (in each run's max-t band at level ``1 - alpha / 10``; a gap clearly above 0, and
  for a mean of gaps every attribute's) the difference is smooth near the truth and the basic interval is used;
  otherwise a conservative interval: the Bonferroni combination of the two runs' own max-t intervals at level ``1 - alpha/2`` each, ``[low_B - high_A, high_B - low_A]``, which covers whenever
  both intervals do (probability >= 1 - alpha), and the p-value is the smallest level at which it excludes 0.
* :func:`spec_difference`: the difference of one :class:`~metrics.bootstrap.StatisticSpec` from observed
  and resampled counts, choosing between the two.
* :func:`holm`: Holm's step-down adjustment (Holm, Scand. J. Statist. 1979) over the metrics compared,
  which controls the family-wise error rate at ``alpha`` without assuming independence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metrics.bootstrap import StatisticSpec, _check_cell_index, _check_strata, resample_counts
from metrics.intervals import check_confidence, max_t_interval

__all__ = [
    "Difference",
    "difference",
    "holm",
    "max_difference",
    "paired_cell_counts",
    "paired_unit_counts",
    "spec_difference",
    "statistic_values",
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
    method: str = "basic"  # "basic", or "bounds" (the conservative combination of :func:`max_difference`)


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


def _maximum(components: FloatArray) -> FloatArray:
    """Row-wise maximum over the non-NaN components (NaN for a row without one)."""
    c = np.atleast_2d(components)
    finite = ~np.isnan(c)
    return np.where(finite.any(axis=1), np.max(np.where(finite, c, -np.inf), axis=1), np.nan)


def _transformed(values: FloatArray, transform: Callable[[float], float] | None) -> FloatArray:
    if transform is None:
        return values
    with np.errstate(all="ignore"):
        return np.array([transform(float(v)) if math.isfinite(v) else v for v in values])


def statistic_values(spec: StatisticSpec, counts: ArrayLike) -> FloatArray:
    """The statistic of ``spec`` on each row of ``counts`` (n, C): ``spec.function`` itself, or for a
    ``max_t`` spec the (transformed) maximum of its non-NaN components, which is the statistic it bounds."""
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    values = np.asarray(spec.function(c), dtype=np.float64)
    if spec.method != "max_t":
        return values.reshape(c.shape[0])
    return _transformed(_maximum(values.reshape(c.shape[0], -1)), spec.transform)


#: The basic interval is used for a difference of maxima only when each run's maximum is clearly attained by one
#: component (:func:`_clear_maximum`) in a max-t band at level ``1 - alpha * SELECTION_SHARE``: a run with tied
#: components (a fair model: every gap 0) passes this pre-test with probability at most ``alpha / 10``, so the basic
#: interval's failure there costs at most that much coverage (with the pre-test at level 1 - alpha, 5% of fair
#: runs passed and the coverage fell to 0.93).
SELECTION_SHARE = 0.1


def _clear_maximum(observed: FloatArray, resampled: FloatArray, confidence: float) -> bool:
    """Whether one component is the maximum in every point of the simultaneous max-t band at ``confidence``
    (Romano & Wolf 2005; the band of :func:`metrics.intervals.max_t_interval`): its lower end is above every
    other component's upper end (components equal to it in every resample, such as a gap counted twice, are the
    same component). Then the maximum is a smooth function of the counts near the truth."""
    keep = ~np.isnan(observed)
    if not keep.any():
        return False
    obs, boot = observed[keep], resampled[:, keep]
    with np.errstate(invalid="ignore"):
        se = np.nanstd(boot, axis=0)
    se = np.where(np.isnan(se), 0.0, se)
    varying = se > 0
    c = 0.0
    if varying.any():
        dev = np.abs(boot[:, varying] - obs[varying]) / se[varying]
        t = np.nanmax(np.where(np.isnan(dev), -np.inf, dev), axis=1)
        t = t[np.isfinite(t)]
        c = float(np.quantile(t, confidence)) if t.size else 0.0
    top = int(np.argmax(obs))
    same = np.all((boot == boot[:, [top]]) | (np.isnan(boot) & np.isnan(boot[:, [top]])), axis=0) & (obs == obs[top])
    return bool(np.all(obs[~same] + c * se[~same] < obs[top] - c * se[top]))


def max_difference(
    components_a: ArrayLike,
    components_b: ArrayLike,
    resampled_a: ArrayLike,
    resampled_b: ArrayLike,
    *,
    confidence: float = 0.95,
    transform: Callable[[float], float] | None = None,
) -> Difference:
    """Difference ``max(B) - max(A)`` of a maximum-of-components statistic (see the module docstring).

    Parameters
    ----------
    components_a, components_b : array_like, shape (m,)
        The components on each run's observed counts (NaN: not part of the maximum).
    resampled_a, resampled_b : array_like, shape (B, m_a) and (B, m_b)
        The components on each resample (resample i of both runs from the same draw when paired).
    transform : callable, optional
        Monotone map of the maximum (e.g. ``math.exp`` for a ratio of rates), as in the spec.
    """
    confidence = check_confidence(confidence)
    oa, ob = np.asarray(components_a, dtype=np.float64).ravel(), np.asarray(components_b, dtype=np.float64).ravel()
    ra, rb = (
        np.atleast_2d(np.asarray(resampled_a, dtype=np.float64)),
        np.atleast_2d(np.asarray(resampled_b, dtype=np.float64)),
    )
    est_a = float(_transformed(_maximum(oa[None, :]), transform)[0])
    est_b = float(_transformed(_maximum(ob[None, :]), transform)[0])
    values_a, values_b = _transformed(_maximum(ra), transform), _transformed(_maximum(rb), transform)
    if not (math.isfinite(est_a) and math.isfinite(est_b)):
        return difference(est_a, est_b, values_a, values_b, confidence=confidence)
    if np.array_equal(oa, ob, equal_nan=True) and np.array_equal(ra, rb, equal_nan=True):  # identical answers
        return difference(est_a, est_b, values_a, values_b, confidence=confidence)

    def intervals(level: float) -> tuple[float, float, float, float]:
        a = max_t_interval(oa, ra, confidence=level, transform=transform)
        b = max_t_interval(ob, rb, confidence=level, transform=transform)
        return a.low, a.high, b.low, b.high

    selection = 1.0 - (1.0 - confidence) * SELECTION_SHARE
    if _clear_maximum(oa, ra, selection) and _clear_maximum(ob, rb, selection):  # smooth near the truth
        return difference(est_a, est_b, values_a, values_b, confidence=confidence)
    alpha = 1.0 - confidence

    def bounds(level_alpha: float) -> tuple[float, float]:
        la, ha, lb, hb = intervals(1.0 - level_alpha / 2.0)
        return lb - ha, hb - la

    low, high = bounds(alpha)
    n = ra.shape[0]
    n_nan = int(np.sum(~np.isfinite(values_b - values_a)))
    d = est_b - est_a
    if math.isnan(low) or math.isnan(high):
        return Difference(est_a, est_b, d, math.nan, math.nan, math.nan, confidence, n, n_nan,
                          "the runs' max-t intervals are undefined", "bounds")  # fmt: skip
    return Difference(est_a, est_b, d, low, high, _bounds_p_value(bounds, n), confidence, n, n_nan, None, "bounds")


def _bounds_p_value(bounds: Callable[[float], tuple[float, float]], n_resamples: int) -> float:
    """The smallest ``alpha'`` at which ``bounds(alpha')`` excludes 0 (the intervals shrink as ``alpha'`` grows),
    by bisection; 1 when even the narrowest interval holds 0, floored at ``1 / (B + 1)``."""

    def excludes(level_alpha: float) -> bool:
        low, high = bounds(level_alpha)
        return low > 0.0 or high < 0.0

    floor = 1.0 / (n_resamples + 1)
    top = 1.0 - 1e-9
    if not excludes(top):
        return 1.0
    if excludes(floor):
        return floor
    low, high = floor, top  # excludes(high), not excludes(low)
    for _ in range(40):
        middle = 0.5 * (low + high)
        if excludes(middle):
            high = middle
        else:
            low = middle
    return float(high)


def spec_difference(
    spec: StatisticSpec,
    observed_a: ArrayLike,
    observed_b: ArrayLike,
    resampled_a: ArrayLike,
    resampled_b: ArrayLike,
    *,
    confidence: float = 0.95,
    spec_b: StatisticSpec | None = None,
) -> Difference:
    """``statistic(B) - statistic(A)`` of ``spec`` from each run's observed counts (C,) and resampled counts
    (B, C): :func:`max_difference` for a ``max_t`` spec, else :func:`difference` (basic). ``spec_b`` is B's spec
    when its statistic function is bound to B's own design (the same statistic, e.g. a different counted set)."""
    other = spec_b or spec
    if spec.method == "max_t" and other.method == "max_t":
        oa = np.asarray(spec.function(np.atleast_2d(np.asarray(observed_a, dtype=np.float64))), dtype=np.float64)
        ob = np.asarray(other.function(np.atleast_2d(np.asarray(observed_b, dtype=np.float64))), dtype=np.float64)
        ra = np.asarray(spec.function(np.asarray(resampled_a, dtype=np.float64)), dtype=np.float64)
        rb = np.asarray(other.function(np.asarray(resampled_b, dtype=np.float64)), dtype=np.float64)
        return max_difference(oa[0], ob[0], ra, rb, confidence=confidence, transform=spec.transform)
    est_a = float(statistic_values(spec, observed_a)[0])
    est_b = float(statistic_values(other, observed_b)[0])
    return difference(
        est_a, est_b, statistic_values(spec, resampled_a), statistic_values(other, resampled_b), confidence=confidence
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
