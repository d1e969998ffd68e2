"""Simultaneous confidence bounds for several max - min gaps at once (the IFS-Und interval).

The IFS-Und score ``180 exp(-5 m)`` is a decreasing function of a norm ``m`` of 14 gaps (AD and SPD over 7
group definitions), each a maximum of differences between group rates. The plug-in gaps are biased upward
(a max of noisy differences exceeds the max of the true ones), by several times their spread at the sizes
IRIS runs at, and the bootstrap reproduces only part of that bias: percentile and reflected ("basic")
intervals of the score miss a fair model's true 180 almost always (``tests/support/coverage_iris.py``).

What does cover is a **simultaneous max-t band** over every component of every gap (Romano & Wolf,
Econometrica 2005, section 4; the same construction as :func:`metrics.intervals.max_t_interval`, here over
several statistics jointly):

- components: for every family f (one gap), every class k and every ordered pair of eligible groups
  (i, j), the difference ``d = r_ik - r_jk`` of the observed rates;
- ``se`` of a difference: ``sqrt(v_ik + v_jk)`` with ``v`` the variance of a rate over the resamples (the
  groups of one family are disjoint and resampled within strata nested in them, so their rates are
  independent under the resampling; another choice of ``se`` would change only the band's shape, not its
  calibration);
- ``c``: the ``confidence`` quantile over the resamples of ``max |d* - d| / se`` over all components of all
  families;
- if every true difference lies in ``d +- c se`` (probability ~ ``confidence``), every true gap lies in
  ``[max(0, max(d - c se)), max(d + c se)]`` at once, and so does any quantity increasing in the gaps, such
  as ``m``: the bounds hold **simultaneously**, so the interval is conservative (measured coverage 1.00; it
  is wide, because the true gaps can be anywhere from 0 to above the plug-in values at these sizes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["GapFamily", "gap_bounds"]

# Resamples per block when forming pairwise differences (bounded memory: about 250 x 153 pairs x 53 classes).
_BLOCK = 250


@dataclass(frozen=True)
class GapFamily:
    """The rates behind one gap ``max_k (max_g r_gk - min_g r_gk)`` over the eligible groups g.

    Attributes
    ----------
    observed : ndarray, shape (G, K)
        Observed rate of class k in group g (K = 1 for an accuracy gap).
    resampled : ndarray, shape (B, G, K)
        The same rates on each resample.
    eligible : ndarray of bool, shape (G,)
        Groups that take part (e.g. AD: more than one image). Fewer than two: the gap is 0.
    """

    observed: NDArray[np.float64]
    resampled: NDArray[np.float64]
    eligible: NDArray[np.bool_]


def _prepared(family: GapFamily) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    obs = np.asarray(family.observed, dtype=np.float64)
    boot = np.asarray(family.resampled, dtype=np.float64)
    keep = np.asarray(family.eligible, dtype=bool)
    if obs.ndim != 2 or boot.ndim != 3 or boot.shape[1:] != obs.shape or keep.shape != obs.shape[:1]:
        raise ValueError(
            f"a gap family needs observed (G, K), resampled (B, G, K) and eligible (G,); got {obs.shape}, "
            f"{boot.shape}, {keep.shape}"
        )
    obs, boot = obs[keep], boot[:, keep]
    with np.errstate(invalid="ignore"):
        var = np.nanvar(boot, axis=0) if boot.shape[1] else np.zeros(obs.shape)
    return np.nan_to_num(obs), np.nan_to_num(boot), np.where(np.isnan(var), 0.0, var)


def gap_bounds(
    families: Mapping[str, GapFamily], *, confidence: float = 0.95
) -> tuple[dict[str, tuple[float, float]], float]:
    """Simultaneous lower and upper bounds of every family's gap (module docstring).

    Returns
    -------
    (bounds, c)
        ``bounds[name] = (low, high)`` with ``0 <= low <= high``; ``c`` the critical value (0 when nothing
        varies under resampling: the bounds are then the observed gaps).
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    prepared = {name: _prepared(family) for name, family in families.items()}
    n_resamples = next(iter(prepared.values()))[1].shape[0] if prepared else 0
    t = np.zeros(n_resamples)
    pairs: dict[str, tuple[NDArray[np.intp], NDArray[np.intp]]] = {}
    for name, (obs, boot, var) in prepared.items():
        first, second = np.triu_indices(obs.shape[0], 1)
        pairs[name] = (first, second)
        if first.size == 0:
            continue
        se = np.sqrt(var[first] + var[second])
        inverse = np.where(se > 0, 1.0 / np.where(se > 0, se, 1.0), 0.0)
        deviation = boot - obs
        for start in range(0, n_resamples, _BLOCK):
            block = deviation[start : start + _BLOCK]
            standardised = np.abs(block[:, first] - block[:, second]) * inverse
            t[start : start + _BLOCK] = np.maximum(
                t[start : start + _BLOCK], standardised.reshape(block.shape[0], -1).max(axis=1)
            )
    c = float(np.quantile(t, confidence)) if n_resamples else 0.0
    bounds: dict[str, tuple[float, float]] = {}
    for name, (obs, _, var) in prepared.items():
        first, second = pairs[name]
        if first.size == 0:
            bounds[name] = (0.0, 0.0)
            continue
        difference = np.abs(obs[first] - obs[second])
        half = c * np.sqrt(var[first] + var[second])
        low = float(np.max(difference - half))
        bounds[name] = (max(0.0, low), float(np.max(difference + half)))
    return bounds, c if math.isfinite(c) else 0.0
