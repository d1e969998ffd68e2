"""Interval methods: turn bootstrap values of a statistic into a confidence interval.

:mod:`metrics.bootstrap` resamples the sampled units and re-evaluates a statistic; this module
decides which interval of those values is reported. The choice matters: most fairness statistics
are *biased* plug-in estimators (an entropy of observed shares is too low, a KL divergence or a
max - min gap of observed rates too high), and resampling adds that bias a second time, so the
plain percentile interval of a biased statistic sits beside the truth and often beside its own
estimate. Each method below names when it is valid; each benchmark picks one per statistic and
proves the choice with a seeded coverage simulation (``bench/coverage.py``; the tables are in the
benchmark READMEs).

Methods (``alpha = 1 - confidence``; ``q(u)`` the u-quantile of the finite bootstrap values,
linear interpolation; ``theta`` the estimate on the observed sample):

``"percentile"``
    ``[q(alpha/2), q(1 - alpha/2)]`` (Efron & Tibshirani, *An Introduction to the Bootstrap*,
    1993, §13.3). For unbiased, roughly symmetric estimators: shares, rates, differences of rates.
``"basic"``
    The reflected (pivotal) interval ``[2 theta - q(1 - alpha/2), 2 theta - q(alpha/2)]``
    (Davison & Hinkley, *Bootstrap Methods and their Application*, 1997, eq. 5.6). The spread of
    ``theta* - theta`` stands in for that of ``theta - truth``, so the resampling bias is
    subtracted instead of added. Right for smooth biased statistics (entropy, smoothed KL) and
    for statistics at the edge of their range (an entropy score of a uniform distribution).
``"bca"``
    Bias-corrected and accelerated (Efron, JASA 1987; Efron & Tibshirani §14.3): percentile
    levels ``Phi(z0 + (z0 + z) / (1 - a (z0 + z)))`` with ``z0 = Phi^-1(share of values below
    theta, ties counted half)`` and the acceleration ``a`` from jackknife influence values
    (within strata for a stratified design). Undefined (NaN, with a reason) when every value lies
    on one side of the estimate.
``"max_t"``
    For a statistic that is the *maximum of smooth components*, such as a max - min gap (the
    largest of the pairwise differences) or a max/min ratio (the exponential of the largest
    pairwise log difference). A simultaneous band ``component_j +- c se_j`` is built, with ``c``
    the ``confidence``-quantile of ``max_j |component*_j - component_j| / se_j`` over the
    resamples (the max-t method; Romano & Wolf, Econometrica 2005, §4); if every component lies
    in its band, the maximum lies in ``[max_j lower_j, max_j upper_j]``. Unlike a percentile
    or reflected interval of the max itself, this reaches a true gap of 0 at the nominal rate.

Every method clips to the statistic's range (``bounds``), which never lowers coverage of a value
inside that range. With no variation among resamples the interval is the estimate itself.

Each interval also carries its ``centre``: the median of the distribution whose quantiles are its ends
(percentile: ``q(1/2)``; basic: ``2 theta - q(1/2)``, the median of the reflected resamples, i.e. the estimate
with the bootstrap's median bias removed; BCa: the quantile at the bias-corrected level ``Phi(z0 + z0 / (1 - a
z0))``; max-t: the estimate, the band's centre), clipped like the ends, so it always lies in the interval. Where a
method corrects a biased plug-in estimate, the interval can lie beside the estimate (an entropy of observed shares
is too low, so its reflected interval lies above it); the centre is then the bias-corrected estimate the interval
stands for, and the reports print it with the interval.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import ndtr, ndtri

__all__ = [
    "METHODS",
    "BootstrapInterval",
    "Method",
    "basic_interval",
    "bca_interval",
    "binomial_standard_error",
    "check_confidence",
    "interval",
    "jackknife_acceleration",
    "max_t_interval",
    "percentile_interval",
    "standard_error",
    "wilson_interval",
]

Method = Literal["percentile", "basic", "bca", "max_t"]
METHODS: tuple[str, ...] = ("percentile", "basic", "bca", "max_t")
FloatArray = NDArray[np.float64]
Bounds = tuple[float, float]
_NO_BOUNDS: Bounds = (-math.inf, math.inf)


@dataclass(frozen=True)
class BootstrapInterval:
    """A bootstrap confidence interval.

    Attributes
    ----------
    estimate : float
        The statistic on the observed sample (NaN if not computed or undefined).
    low, high : float
        The interval; NaN when it cannot be computed (``reason`` says why).
    confidence : float
        Nominal coverage, e.g. 0.95.
    n_resamples : int
        Number of resamples drawn.
    n_nan : int
        How many resamples gave NaN (e.g. every answer of a resample refused); they are left out.
    seed : int or None
        The seed of ``numpy.random.default_rng`` that produced the resamples.
    method : str
        One of :data:`METHODS`.
    reason : str or None
        Why ``low``/``high`` are NaN, when they are.
    centre : float
        The value the interval is centred on (see the module docstring): within ``[low, high]``; NaN with them.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    n_nan: int
    seed: int | None
    method: str = "percentile"
    reason: str | None = None
    centre: float = math.nan


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float strictly between 0 and 1, else ValueError naming it."""
    if isinstance(confidence, bool) or not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def _check_bounds(bounds: Bounds) -> Bounds:
    low, high = (float(b) for b in bounds)
    if math.isnan(low) or math.isnan(high) or low > high:
        raise ValueError(f"bounds must be (low, high) with low <= high, got {bounds!r}")
    return low, high


_Finish = Callable[..., BootstrapInterval]


def _finisher(*, confidence: float, n: int, n_nan: int, seed: int | None, method: str, bounds: Bounds) -> _Finish:
    """``finish(estimate, low, high, reason=None, centre=estimate)``: the :class:`BootstrapInterval` of one method's
    ends and centre, clipped to ``bounds``; a NaN end makes both NaN (and the centre), with ``reason`` (or, without
    one, "every resample was NaN" when all ``n`` were, else "the interval is undefined")."""

    def finish(
        estimate: float, low: float, high: float, reason: str | None = None, centre: float | None = None
    ) -> BootstrapInterval:
        centre = float(estimate) if centre is None else float(centre)
        if math.isnan(low) or math.isnan(high):
            low = high = centre = math.nan
            if reason is None:
                reason = "every resample was NaN" if n_nan == n else "the interval is undefined"
        else:
            low, high = float(np.clip(low, *bounds)), float(np.clip(high, *bounds))
            centre = float(np.clip(centre, low, high)) if not math.isnan(centre) else centre
            reason = None
        return BootstrapInterval(
            estimate=float(estimate), low=low, high=high, confidence=confidence,
            n_resamples=n, n_nan=n_nan, seed=seed, method=method, reason=reason, centre=centre,
        )  # fmt: skip

    return finish


def _scalar_method(
    values: ArrayLike, confidence: float, seed: int | None, bounds: Bounds, method: str
) -> tuple[FloatArray, FloatArray, _Finish]:
    """The checked inputs of the percentile, basic and BCa methods: the finite bootstrap values, the two tail levels
    ``(alpha/2, 1 - alpha/2)`` with ``alpha = 1 - confidence``, and the method's :func:`_finisher`."""
    confidence = check_confidence(confidence)
    bounds = _check_bounds(bounds)
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {arr.shape}")
    nan = np.isnan(arr)
    alpha = (1.0 - confidence) / 2.0
    finish = _finisher(confidence=confidence, n=arr.size, n_nan=int(nan.sum()), seed=seed, method=method, bounds=bounds)
    return arr[~nan], np.array([alpha, 1.0 - alpha]), finish


def _quantiles(finite: FloatArray, levels: ArrayLike) -> FloatArray:
    return np.quantile(finite, np.clip(np.asarray(levels, dtype=np.float64), 0.0, 1.0))


def percentile_interval(
    values: ArrayLike,
    *,
    confidence: float = 0.95,
    estimate: float = math.nan,
    seed: int | None = None,
    bounds: Bounds = _NO_BOUNDS,
) -> BootstrapInterval:
    """Percentile interval ``[low, high] = [q(alpha/2), q(1 - alpha/2)]`` of the finite bootstrap values
    (Efron & Tibshirani 1993, §13.3): ``q(u)`` the u-quantile, ``alpha = 1 - confidence``.

    Parameters
    ----------
    values : array_like, shape (B,)
        The statistic on each resample; NaN values are left out and counted in ``n_nan``.
    confidence : float, default 0.95
    estimate : float, default NaN
        The statistic on the observed sample, carried into the result.
    seed : int or None
        Recorded in the result.
    bounds : (float, float)
        The statistic's range; the interval is clipped to it.
    """
    finite, tails, finish = _scalar_method(values, confidence, seed, bounds, "percentile")
    if not finite.size:
        return finish(estimate, math.nan, math.nan)
    low, middle, high = _quantiles(finite, [tails[0], 0.5, tails[1]])
    return finish(estimate, low, high, centre=middle)


def basic_interval(
    values: ArrayLike,
    *,
    estimate: float,
    confidence: float = 0.95,
    seed: int | None = None,
    bounds: Bounds = _NO_BOUNDS,
) -> BootstrapInterval:
    """Basic (reflected) interval ``[low, high] = [2 theta - q(1 - alpha/2), 2 theta - q(alpha/2)]``, clipped to
    ``bounds`` (Davison & Hinkley 1997, eq. 5.6): ``theta`` the estimate, ``q(u)`` the u-quantile of the finite
    bootstrap values, ``alpha = 1 - confidence``. The spread of ``theta* - theta`` stands in for that of
    ``theta - truth``, so the resampling bias of a biased plug-in statistic is subtracted instead of added.
    Parameters as :func:`percentile_interval`.

    NaN (with a reason) when the estimate is NaN or no resample is finite.
    """
    finite, tails, finish = _scalar_method(values, confidence, seed, bounds, "basic")
    if math.isnan(estimate) or not finite.size:
        return finish(estimate, math.nan, math.nan, "the estimate is NaN" if finite.size else None)
    q_low, q_middle, q_high = _quantiles(finite, [tails[0], 0.5, tails[1]])
    return finish(estimate, 2 * estimate - q_high, 2 * estimate - q_low, centre=2 * estimate - q_middle)


def jackknife_acceleration(
    jackknife_values: ArrayLike, weights: ArrayLike | None = None, strata: ArrayLike | None = None
) -> float:
    """BCa acceleration ``a = sum w U^3 / (6 (sum w U^2)^(3/2))`` from leave-one-out values.

    ``U_i = (n_s - 1)(mean_s - theta_(i))`` with ``mean_s`` the (weighted) mean of the leave-one-out
    values of unit i's stratum s and ``n_s`` its number of units (Efron & Tibshirani eq. 14.15, applied
    within strata). ``weights`` counts how many units share a leave-one-out value (units with the
    same outcome in the same stratum give the same value), so distinct values suffice. Returns 0
    when every ``U`` is 0, NaN when a leave-one-out value is NaN.
    """
    values = np.asarray(jackknife_values, dtype=np.float64).ravel()
    w = np.ones_like(values) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    s = np.zeros(values.size, dtype=np.int64) if strata is None else np.asarray(strata).ravel()
    if not (values.size == w.size == s.size) or values.size == 0:
        raise ValueError("jackknife values, weights and strata must be non-empty and of equal length")
    if np.any(np.isnan(values)):
        return math.nan
    _, group = np.unique(s, return_inverse=True)
    n_s = np.bincount(group, weights=w)
    mean_s = np.bincount(group, weights=w * values) / n_s
    u = (n_s[group] - 1.0) * (mean_s[group] - values)
    denom = float(np.sum(w * u * u))
    if denom <= 0.0:
        return 0.0
    return float(np.sum(w * u**3) / (6.0 * denom**1.5))


def bca_interval(
    values: ArrayLike,
    *,
    estimate: float,
    acceleration: float,
    confidence: float = 0.95,
    seed: int | None = None,
    bounds: Bounds = _NO_BOUNDS,
) -> BootstrapInterval:
    """BCa interval; ``acceleration`` from :func:`jackknife_acceleration`.

    NaN with a reason when the estimate or acceleration is NaN or when every finite resample lies on
    one side of the estimate (``z0`` infinite: the method is undefined there, as in
    ``scipy.stats.bootstrap``).
    """
    finite, tails, finish = _scalar_method(values, confidence, seed, bounds, "bca")
    if not finite.size:
        return finish(estimate, math.nan, math.nan)
    if math.isnan(estimate) or math.isnan(acceleration):
        return finish(estimate, math.nan, math.nan, "the estimate or its jackknife is NaN")
    if np.all(finite == estimate):
        return finish(estimate, estimate, estimate)
    share = (np.sum(finite < estimate) + 0.5 * np.sum(finite == estimate)) / finite.size
    if share <= 0.0 or share >= 1.0:
        reason = "every resample lies on one side of the estimate (BCa bias correction undefined)"
        return finish(estimate, math.nan, math.nan, reason)
    z0 = float(ndtri(share))
    z = ndtri([tails[0], 0.5, tails[1]])
    levels = ndtr(z0 + (z0 + z) / (1.0 - acceleration * (z0 + z)))
    low, middle, high = _quantiles(finite, levels)
    return finish(estimate, low, high, centre=middle)


def max_t_interval(
    observed: ArrayLike,
    resampled: ArrayLike,
    *,
    confidence: float = 0.95,
    seed: int | None = None,
    bounds: Bounds = _NO_BOUNDS,
    transform: Callable[[float], float] | None = None,
) -> BootstrapInterval:
    """Interval of ``transform(max_j component_j)`` from a simultaneous max-t band over the components.

    Parameters
    ----------
    observed : array_like, shape (m,)
        The components on the observed sample; NaN components (e.g. a group with no answers) are
        not part of the maximum.
    resampled : array_like, shape (B, m)
        The components on each resample (NaN entries are left out of that resample's max-t).
    transform : callable, optional
        A monotone increasing map applied to the estimate and both ends (e.g. ``math.exp`` for a
        ratio computed as the largest log difference).
    bounds : (float, float)
        Range of the *transformed* statistic.

    Notes
    -----
    ``se_j`` is the standard deviation of component j over the finite resamples. Components with
    ``se_j = 0`` (no variation under resampling, e.g. two groups that both always answer yes) get a
    band of width 0. A resample counts as NaN (``n_nan``) when all its components are NaN.
    """
    confidence = check_confidence(confidence)
    bounds = _check_bounds(bounds)
    obs = np.asarray(observed, dtype=np.float64).ravel()
    boot = np.asarray(resampled, dtype=np.float64)
    if boot.ndim != 2 or boot.shape[1] != obs.size or boot.shape[0] == 0 or obs.size == 0:
        raise ValueError(f"resampled must have shape (B, {obs.size}), got {boot.shape}")
    f = transform or (lambda x: x)
    n_nan = int(np.all(np.isnan(boot), axis=1).sum())
    finish = _finisher(confidence=confidence, n=boot.shape[0], n_nan=n_nan, seed=seed, method="max_t", bounds=bounds)
    keep = ~np.isnan(obs)
    estimate = f(float(np.max(obs[keep]))) if keep.any() else math.nan
    if not keep.any() or n_nan == boot.shape[0]:
        return finish(estimate, math.nan, math.nan, None if n_nan == boot.shape[0] else "no component is defined")
    obs, boot = obs[keep], boot[:, keep]
    with np.errstate(invalid="ignore"):
        se = np.nanstd(boot, axis=0)
    se = np.where(np.isnan(se), 0.0, se)
    varying = se > 0
    if varying.any():
        dev = np.abs(boot[:, varying] - obs[varying]) / se[varying]
        t = np.nanmax(np.where(np.isnan(dev), -np.inf, dev), axis=1)
        t = t[np.isfinite(t)]
        c = float(np.quantile(t, confidence)) if t.size else 0.0
    else:
        c = 0.0
    low = float(np.max(obs - c * se))
    high = float(np.max(obs + c * se))
    return finish(estimate, f(low), f(high))


def interval(
    method: Method,
    values: ArrayLike,
    *,
    estimate: float,
    confidence: float = 0.95,
    seed: int | None = None,
    bounds: Bounds = _NO_BOUNDS,
    acceleration: float | None = None,
) -> BootstrapInterval:
    """Dispatch to the scalar methods (``"max_t"`` needs components: call :func:`max_t_interval`)."""
    if method == "percentile":
        return percentile_interval(values, confidence=confidence, estimate=estimate, seed=seed, bounds=bounds)
    if method == "basic":
        return basic_interval(values, estimate=estimate, confidence=confidence, seed=seed, bounds=bounds)
    if method == "bca":
        if acceleration is None:
            raise ValueError("the bca method needs an acceleration (jackknife_acceleration)")
        return bca_interval(values, estimate=estimate, acceleration=acceleration, confidence=confidence,
                            seed=seed, bounds=bounds)  # fmt: skip
    raise ValueError(f"method must be one of {METHODS[:3]} here (max_t takes components), got {method!r}")


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``p = k / n`` (no continuity correction; Newcombe 1998, method 3).

    ``center +- delta`` with ``center = (2 n p + z^2) / (2 (n + z^2))``, ``delta = z / (2 (n + z^2)) *
    sqrt(4 n p q + z^2)``, ``q = 1 - p``, ``z`` the ``(1 + confidence) / 2`` normal quantile; the ends are 0 and 1
    exactly at ``k = 0`` and ``k = n``. The same operations, in the same order, as
    ``scipy.stats.binomtest(k, n).proportion_ci(confidence, method="wilson")`` (scipy 1.11-1.16), so the values are
    bit-identical (tested), without importing ``scipy.stats`` or computing the test's p-value. For answers that are
    independent documents of one accuracy it is exact; for cells of different accuracy it is conservative
    (stratification only lowers the binomial variance).
    """
    from scipy.special import ndtri

    k, n = int(k), int(n)
    if n < 1 or not 0 <= k <= n:
        raise ValueError(f"Wilson interval needs 0 <= k <= n and n >= 1, got k={k}, n={n}")
    confidence = check_confidence(confidence)
    p = k / n
    z = ndtri(0.5 + 0.5 * confidence)
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    q = 1 - p
    delta = z / denom * math.sqrt(4 * n * p * q + z**2)
    low = 0.0 if k == 0 else center - delta
    high = 1.0 if k == n else center + delta
    return float(low), float(high)


def standard_error(values: ArrayLike) -> float:
    """The bootstrap standard error of a statistic: ``se = sqrt((1/(B-1)) sum_b (t*_b - mean(t*))^2)``, the standard
    deviation of its B finite resampled values ``t*`` (Efron & Tibshirani 1993, §6.2); NaN with fewer than two.
    What a harness's ± column shows; ``estimate ± 1.96 se`` is a 95% interval only where a simulation shows it covers
    (a biased plug-in statistic's does not)."""
    arr = np.asarray(values, dtype=np.float64)
    finite = arr[np.isfinite(arr)]
    return float(np.std(finite, ddof=1)) if finite.size >= 2 else math.nan


def binomial_standard_error(k: int, n: int) -> float:
    """The standard error of a proportion ``p = k / n`` of independent answers: ``se = sqrt(p (1 - p) / n)``; NaN for
    ``n = 0``."""
    if n <= 0:
        return math.nan
    p = k / n
    return math.sqrt(p * (1.0 - p) / n)
