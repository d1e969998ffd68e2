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
* :func:`maxima_difference`: the same for a statistic that is a *maximum of components* (a max - min gap;
  :class:`metrics.bootstrap.StatisticSpec` with ``method="max_t"``) or a mean of such maxima (a mean over
  attributes of gaps; :class:`MeanOfMaxima`). The plug-in maximum is biased upward, most where components tie (a
  fair model's gap, true value 0, is the maximum of its noise), and the bootstrap does not reproduce that bias at
  ties, so the basic interval of a difference of gaps covers only 0.84-0.88 when one model is fair
  (``tests/support/coverage_compare.py``). Blocks (attributes) where both runs' maxima are attained by one component
  (in each run's max-t band at level ``1 - alpha / (10 K)``) are smooth near the truth: the basic interval of their
  difference. The others get a conservative interval from each run's simultaneous max-t band (Romano & Wolf 2005),
  ``[low_B - high_A, high_B - low_A]`` per block, which covers whenever both bands do; with both kinds the level
  is split (Bonferroni). The p-value is the smallest level at which the interval excludes 0.
* :func:`union_difference`: for a statistic whose only valid interval is each run's own conservative bound (IRIS
  IFS-Und), the Bonferroni combination of the two runs' intervals (no use of the pairing).
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
from metrics.intervals import check_confidence

__all__ = [
    "Difference",
    "MeanOfMaxima",
    "difference",
    "holm",
    "maxima_difference",
    "paired_cell_counts",
    "paired_unit_counts",
    "spec_difference",
    "statistic_values",
    "union_difference",
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
    rescaled: bool = False,
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
    rescaled : bool
        Draw ``n_s - 1`` units in a stratum of ``n_s`` and weight them ``n_s / (n_s - 1)`` (the rescaled bootstrap
        of :mod:`metrics.bootstrap`, "Small strata": the plain one keeps only ``(n_s - 1) / n_s`` of a stratum's variance,
        10% too little with 10 units); a stratum of one unit stays fixed.

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
        total = int(counts.sum())
        if rescaled and total == 1:
            draws = np.ones((n_resamples, 1))
        elif rescaled:
            draws = rng.multinomial(total - 1, counts / total, size=n_resamples) * (total / (total - 1))
        else:
            draws = rng.multinomial(total, counts / total, size=n_resamples)
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
    rescaled: bool = False,
) -> tuple[FloatArray, FloatArray]:
    """Jointly resampled counts of two unit x cell matrices (rows aligned by unit); ``rescaled`` as in
    :func:`paired_cell_counts` (:func:`metrics.bootstrap.resample_counts`)."""
    ma = np.asarray(units_a, dtype=np.float64)
    mb = np.asarray(units_b, dtype=np.float64)
    if ma.ndim != 2 or mb.ndim != 2 or ma.shape[0] != mb.shape[0]:
        raise ValueError(f"units_a and units_b must be 2-D with the same units (rows), got {ma.shape}, {mb.shape}")
    both = resample_counts(np.hstack([ma, mb]), n_resamples=n_resamples, seed=seed, strata=strata, rescaled=rescaled)
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
    method: str = "basic"  # "basic", or "bounds" (the conservative combination of :func:`maxima_difference`)


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


@dataclass(frozen=True)
class MeanOfMaxima:
    """A mean over blocks of maxima of components, such as FairLens ``parity_gap``: the mean over the attributes
    of each attribute's max - min gap (a block: the pairwise differences of one attribute's group rates).

    ``blocks(counts (n, C)) -> [components (n, m_k) for each block]``; a block whose components are all NaN on a
    row (an attribute without two groups) is left out of that row's mean. ``bounds``: the range of one block's
    maximum (intervals of a block are clipped to it).
    """

    blocks: Callable[[FloatArray], list[FloatArray]]
    bounds: tuple[float, float] = (-math.inf, math.inf)


Spec = StatisticSpec | MeanOfMaxima


def _blocks_of(spec: Spec, counts: FloatArray) -> list[FloatArray]:
    if isinstance(spec, MeanOfMaxima):
        return [np.atleast_2d(np.asarray(b, dtype=np.float64)) for b in spec.blocks(counts)]
    return [np.asarray(spec.function(counts), dtype=np.float64).reshape(counts.shape[0], -1)]


def _mean_of_maxima(blocks: list[FloatArray]) -> FloatArray:
    maxima = np.column_stack([_maximum(b) for b in blocks])
    present = ~np.isnan(maxima)
    with np.errstate(invalid="ignore"):
        return np.where(present.any(axis=1), np.nansum(maxima, axis=1) / present.sum(axis=1), np.nan)


def statistic_values(spec: Spec, counts: ArrayLike) -> FloatArray:
    """The statistic of ``spec`` on each row of ``counts`` (n, C): ``spec.function`` itself, or for a
    ``max_t`` spec the (transformed) maximum of its non-NaN components, which is the statistic it bounds, or for
    :class:`MeanOfMaxima` the mean of its blocks' maxima."""
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))
    if isinstance(spec, MeanOfMaxima):
        return _mean_of_maxima(_blocks_of(spec, c))
    values = np.asarray(spec.function(c), dtype=np.float64)
    if spec.method != "max_t":
        return values.reshape(c.shape[0])
    return _transformed(_maximum(values.reshape(c.shape[0], -1)), spec.transform)


#: The basic interval is used for a block's difference of maxima only when each run's maximum is clearly attained by
#: one component (:func:`_clear_maximum`) in a max-t band at level ``1 - alpha * SELECTION_SHARE / K`` (K blocks): a
#: run with tied components (a fair model: every gap 0) passes this pre-test with probability at most ``alpha / 10``,
#: so the basic interval's failure there costs at most that much coverage (with the pre-test at level 1 - alpha, 5% of
#: fair runs passed and the coverage fell to 0.93).
SELECTION_SHARE = 0.1


def _standardised(observed: FloatArray, resampled: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Standard errors of the components over the resamples (0 where they do not vary or are undefined) and each
    resample's largest standardised deviation (0 for a resample without one)."""
    with np.errstate(invalid="ignore"):
        se = np.nanstd(resampled, axis=0) if resampled.shape[1] else np.zeros(0)
    se = np.where(np.isnan(se) | np.isnan(observed), 0.0, se)
    varying = se > 0
    if not varying.any():
        return se, np.zeros(resampled.shape[0])
    dev = np.abs(resampled[:, varying] - observed[varying]) / se[varying]
    t = np.max(np.where(np.isnan(dev), -np.inf, dev), axis=1)
    return se, np.where(np.isfinite(t), t, 0.0)


def _clear_maximum(observed: FloatArray, resampled: FloatArray, confidence: float) -> bool:
    """Whether one component is the maximum in every point of the simultaneous max-t band at ``confidence``
    (Romano & Wolf 2005; the band of :func:`metrics.intervals.max_t_interval`): its lower end is above every other
    component's upper end (components equal to it in every resample, such as a gap counted twice, are the same
    component). Then the maximum is a smooth function of the counts near the truth."""
    keep = ~np.isnan(observed)
    if not keep.any():
        return False
    obs, boot = observed[keep], resampled[:, keep]
    se, t = _standardised(obs, boot)
    c = float(np.quantile(t, confidence))
    top = int(np.argmax(obs))
    same = np.all((boot == boot[:, [top]]) | (np.isnan(boot) & np.isnan(boot[:, [top]])), axis=0) & (obs == obs[top])
    return bool(np.all(obs[~same] + c * se[~same] < obs[top] - c * se[top]))


@dataclass(frozen=True)
class _Band:
    """A simultaneous max-t band over the components of both runs and of their differences ``b_j - a_j``: each set's
    observed values and standard errors, and the largest standardised deviation of each resample over all three."""

    a: tuple[FloatArray, FloatArray]
    b: tuple[FloatArray, FloatArray]
    d: tuple[FloatArray, FloatArray]
    t: FloatArray

    @staticmethod
    def of(oa: FloatArray, ob: FloatArray, ra: FloatArray, rb: FloatArray) -> _Band:
        od, rd = ob - oa, rb - ra
        (sa, ta), (sb, tb), (sd, td) = (_standardised(o, r) for o, r in ((oa, ra), (ob, rb), (od, rd)))
        return _Band((oa, sa), (ob, sb), (od, sd), np.maximum(np.maximum(ta, tb), td))


def _block_interval(
    oa: FloatArray, ob: FloatArray, se: _Band, start: int, c: float, f: Callable[[float], float],
    bounds: tuple[float, float], paired_bounds: bool,
) -> tuple[float, float]:  # fmt: skip
    """Bounds of ``max(B) - max(A)`` for one block (components ``start : start + m``) when every component of A, B
    and B - A lies in the band ``o +- c se``: the difference of the runs' bounds of their maxima,
    ``[low_B - high_A, high_B - low_A]``, narrowed by the paired differences: with ``P_A`` the components that can be
    A's maximum in the band (upper end at least every lower end), ``max(B) - max(A) >= b_k - a_k`` for A's true
    argmax k in ``P_A``, so it is at least ``min over P_A`` of the lower ends of ``b - a``; and at most ``max over
    P_B`` of their upper ends."""
    m = oa.size
    part = slice(start, start + m)
    (va, ea), (vb, eb), (vd, ed) = ((o[part], e[part]) for o, e in (se.a, se.b, se.d))
    la, ua = np.where(np.isnan(va), -np.inf, va - c * ea), np.where(np.isnan(va), -np.inf, va + c * ea)
    lb, ub = np.where(np.isnan(vb), -np.inf, vb - c * eb), np.where(np.isnan(vb), -np.inf, vb + c * eb)
    low_a, high_a = (float(np.clip(x, *bounds)) for x in (la.max(), ua.max()))
    low_b, high_b = (float(np.clip(x, *bounds)) for x in (lb.max(), ub.max()))
    low, high = f(low_b) - f(high_a), f(high_b) - f(low_a)
    if paired_bounds:
        plausible_a, plausible_b = ua >= la.max(), ub >= lb.max()
        if not np.any(plausible_a & np.isnan(vd)):
            low = max(low, float(np.min((vd - c * ed)[plausible_a])))
        if not np.any(plausible_b & np.isnan(vd)):
            high = min(high, float(np.max((vd + c * ed)[plausible_b])))
    return low, high


def maxima_difference(
    blocks_a: Sequence[ArrayLike],
    blocks_b: Sequence[ArrayLike],
    resampled_a: Sequence[ArrayLike],
    resampled_b: Sequence[ArrayLike],
    *,
    confidence: float = 0.95,
    transform: Callable[[float], float] | None = None,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> Difference:
    """Difference of a mean over blocks of maxima of components (one block: a maximum, such as a gap), B - A.

    Each block is *regular* when both runs' maxima are clearly attained by one component (:func:`_clear_maximum`),
    else *irregular*. The difference of the regular blocks is smooth near the truth: its basic interval (paired
    resamples). The irregular ones get conservative bounds from one simultaneous max-t band over the components of
    A, of B and of their differences B - A (:class:`_Band`, :func:`_block_interval`), which hold whenever the band
    does. With both kinds the level is split (Bonferroni: ``alpha / 2`` each), so the interval covers with
    probability at least ``1 - alpha``; the p-value is the smallest level at which it excludes 0
    (:func:`_bounds_p_value`). ``method`` is "basic" when every block is regular, else "bounds".

    Parameters
    ----------
    blocks_a, blocks_b : sequences of array_like, shape (m_k,)
        Each block's components on each run's observed counts (NaN: not part of the maximum).
    resampled_a, resampled_b : sequences of array_like, shape (B, m_k)
        The same on each resample (resample i of both runs from the same draw when paired).
    transform : callable, optional
        One block only: a monotone map of the maximum (e.g. ``math.exp`` for a ratio of rates).
    bounds : (float, float)
        The range of one block's maximum, before ``transform``.
    """
    confidence = check_confidence(confidence)
    oa = [np.asarray(b, dtype=np.float64).ravel() for b in blocks_a]
    ob = [np.asarray(b, dtype=np.float64).ravel() for b in blocks_b]
    ra = [np.atleast_2d(np.asarray(b, dtype=np.float64)) for b in resampled_a]
    rb = [np.atleast_2d(np.asarray(b, dtype=np.float64)) for b in resampled_b]
    if not (len(oa) == len(ob) == len(ra) == len(rb)) or not oa:
        raise ValueError("both runs need the same, non-empty list of blocks")
    if transform is not None and len(oa) != 1:
        raise ValueError("a transform needs a single block")
    f = transform or (lambda x: x)
    n = ra[0].shape[0]
    values_a = _transformed(_mean_of_maxima(ra), transform)
    values_b = _transformed(_mean_of_maxima(rb), transform)
    est_a = float(_transformed(_mean_of_maxima([o[None, :] for o in oa]), transform)[0])
    est_b = float(_transformed(_mean_of_maxima([o[None, :] for o in ob]), transform)[0])
    if not (math.isfinite(est_a) and math.isfinite(est_b)):
        return difference(est_a, est_b, values_a, values_b, confidence=confidence)
    same = all(np.array_equal(x, y, equal_nan=True) for x, y in zip(oa + ra, ob + rb, strict=True))
    if same:  # identical answers
        return difference(est_a, est_b, values_a, values_b, confidence=confidence)
    present = [k for k in range(len(oa)) if (~np.isnan(oa[k])).any() or (~np.isnan(ob[k])).any()]
    if any(not ((~np.isnan(oa[k])).any() and (~np.isnan(ob[k])).any()) for k in present):
        return Difference(est_a, est_b, est_b - est_a, math.nan, math.nan, math.nan, confidence, n, 0,
                          "a block (e.g. an attribute's groups) is defined in one run only", "bounds")  # fmt: skip
    selection = 1.0 - (1.0 - confidence) * SELECTION_SHARE / len(present)
    regular = [
        k for k in present if _clear_maximum(oa[k], ra[k], selection) and _clear_maximum(ob[k], rb[k], selection)
    ]
    irregular = [k for k in present if k not in regular]
    if not irregular:
        return difference(est_a, est_b, values_a, values_b, confidence=confidence)
    weight = 1.0 / len(present)
    smooth_hat = sum(float(_maximum(ob[k][None, :])[0] - _maximum(oa[k][None, :])[0]) for k in regular)
    smooth = np.zeros(n)
    for k in regular:
        smooth = smooth + _maximum(rb[k]) - _maximum(ra[k])
    smooth = smooth[np.isfinite(smooth)]

    sizes = [oa[k].size for k in irregular]
    band = _Band.of(*(np.concatenate([x[k] for k in irregular]) for x in (oa, ob)),
                    *(np.hstack([x[k] for k in irregular]) for x in (ra, rb)))  # fmt: skip
    paired_bounds = transform is None and all(oa[k].size == ob[k].size for k in irregular)

    def interval(level_alpha: float) -> tuple[float, float]:
        alpha_smooth = level_alpha / 2.0 if regular else 0.0
        low = high = 0.0
        if regular:
            q_low, q_high = np.quantile(smooth, [alpha_smooth / 2.0, 1.0 - alpha_smooth / 2.0])
            low, high = 2.0 * smooth_hat - q_high, 2.0 * smooth_hat - q_low
        c = float(np.quantile(band.t, 1.0 - (level_alpha - alpha_smooth)))
        start = 0
        for k, size in zip(irregular, sizes, strict=True):
            block_low, block_high = _block_interval(oa[k], ob[k], band, start, c, f, bounds, paired_bounds)
            low, high = low + block_low, high + block_high
            start += size
        return weight * low, weight * high

    low, high = interval(1.0 - confidence)
    n_nan = int(np.sum(~np.isfinite(values_b - values_a)))
    if not (math.isfinite(low) and math.isfinite(high)):
        return Difference(est_a, est_b, est_b - est_a, math.nan, math.nan, math.nan, confidence, n, n_nan,
                          "the runs' max-t bounds are undefined", "bounds")  # fmt: skip
    p = _bounds_p_value(interval, n)
    return Difference(est_a, est_b, est_b - est_a, low, high, p, confidence, n, n_nan, None, "bounds")


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
    for _ in range(30):
        middle = 0.5 * (low + high)
        if excludes(middle):
            high = middle
        else:
            low = middle
    return float(high)


#: The levels at which :func:`union_difference` looks for the smallest one whose interval excludes 0 (its p-value is
#: that level, a conservative rounding up of the exact one).
P_GRID = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)


def union_difference(
    estimate_a: float,
    estimate_b: float,
    interval_a: Callable[[float], tuple[float, float]],
    interval_b: Callable[[float], tuple[float, float]],
    *,
    confidence: float = 0.95,
    n_resamples: int = 0,
) -> Difference:
    """``B - A`` from each run's own interval of the statistic (``interval_x(level) -> (low, high)``), for statistics
    whose only valid interval is a conservative bound of the run (IRIS IFS-Und's simultaneous gap band): the
    Bonferroni combination ``[low_B - high_A, high_B - low_A]`` of the two runs' intervals at level ``1 - alpha / 2``
    covers whenever both do (probability >= ``1 - alpha``). It does not use the pairing. The p-value is the smallest
    level of :data:`P_GRID` (and ``alpha``) whose interval excludes 0, 1 if none: rounded up, so conservative."""
    confidence = check_confidence(confidence)
    alpha = 1.0 - confidence
    d = estimate_b - estimate_a
    if not (math.isfinite(estimate_a) and math.isfinite(estimate_b)):
        return Difference(estimate_a, estimate_b, d, math.nan, math.nan, math.nan, confidence, n_resamples, 0,
                          "a run's estimate is NaN", "bounds")  # fmt: skip

    def at(level_alpha: float) -> tuple[float, float]:
        low_a, high_a = interval_a(1.0 - level_alpha / 2.0)
        low_b, high_b = interval_b(1.0 - level_alpha / 2.0)
        return low_b - high_a, high_b - low_a

    low, high = at(alpha)
    if not (math.isfinite(low) and math.isfinite(high)):
        return Difference(estimate_a, estimate_b, d, math.nan, math.nan, math.nan, confidence, n_resamples, 0,
                          "a run's interval is undefined", "bounds")  # fmt: skip
    p = 1.0
    for level in sorted({*P_GRID, alpha}):
        lo, hi = at(level)
        if lo > 0.0 or hi < 0.0:
            p = level
            break
    return Difference(estimate_a, estimate_b, d, low, high, p, confidence, n_resamples, 0, None, "bounds")


def spec_difference(
    spec: Spec,
    observed_a: ArrayLike,
    observed_b: ArrayLike,
    resampled_a: ArrayLike,
    resampled_b: ArrayLike,
    *,
    confidence: float = 0.95,
    spec_b: Spec | None = None,
) -> Difference:
    """``statistic(B) - statistic(A)`` of ``spec`` from each run's observed counts (C,) and resampled counts
    (B, C): :func:`maxima_difference` for a ``max_t`` spec or a :class:`MeanOfMaxima`, else :func:`difference`
    (basic). ``spec_b`` is B's spec when its statistic function is bound to B's own design (the same statistic,
    e.g. a different counted set)."""
    other = spec_b or spec
    obs_a = np.atleast_2d(np.asarray(observed_a, dtype=np.float64))
    obs_b = np.atleast_2d(np.asarray(observed_b, dtype=np.float64))
    res_a = np.asarray(resampled_a, dtype=np.float64)
    res_b = np.asarray(resampled_b, dtype=np.float64)
    maxima = isinstance(spec, MeanOfMaxima) or spec.method == "max_t"
    if maxima:
        transform = None if isinstance(spec, MeanOfMaxima) else spec.transform
        return maxima_difference(
            [b[0] for b in _blocks_of(spec, obs_a)], [b[0] for b in _blocks_of(other, obs_b)],
            _blocks_of(spec, res_a), _blocks_of(other, res_b), confidence=confidence, transform=transform,
            bounds=spec.bounds if transform is None else (-math.inf, math.inf),
        )  # fmt: skip
    est_a = float(statistic_values(spec, obs_a)[0])
    est_b = float(statistic_values(other, obs_b)[0])
    return difference(
        est_a, est_b, statistic_values(spec, res_a), statistic_values(other, res_b), confidence=confidence
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
