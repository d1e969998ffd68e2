"""Rescaled stratified bootstrap for the IRIS understanding intervals (harness-agnostic).

The IRIS understanding designs fix how many units each stratum holds, and their strata are small: 5 probe
rounds per attribute combination, 1-5 corpus images per occupation x combination cell, 1-2 counterfactual
sets per occupation. The plain stratified bootstrap (``metrics.bootstrap`` with ``strata=``) draws ``n_s``
units from a stratum of ``n_s``; the variance of a stratum mean it implies is ``(n_s - 1)/n_s`` of the
unbiased one (Davison & Hinkley 1997, eq. 3.16), so with 2-5 units per stratum its intervals are 10-30%
too narrow. Here each stratum of ``n_s >= 2`` units draws ``m_s = n_s - 1`` units with replacement and
weights them ``n_s / m_s`` (the "with-replacement bootstrap of size n - 1" of McCarthy & Snowden 1985;
Rao & Wu 1988 with ``m = n - 1``), which makes the resampled stratum total unbiased with the unbiased
variance ``n_s s_s^2``. A stratum of one unit cannot show its variance: it is kept fixed (merge such units
into a pooled stratum first, :func:`collapse_singletons`, where the design allows it).

Two forms, as in :mod:`metrics.bootstrap`: one cell per unit (:func:`rescaled_cell_counts`, a multinomial
per stratum over the outcomes seen in it, which is the distribution of drawing its units) and a unit x cell
matrix (:func:`rescaled_unit_counts`). Strata are visited in sorted label order and every draw comes from
``numpy.random.default_rng(seed)``, so the result depends on the multiset of (stratum, outcome) pairs only,
never on the order of the units.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["collapse_singletons", "rescaled_cell_counts", "rescaled_unit_counts"]


def _codes(strata: ArrayLike, n_units: int) -> NDArray[np.int64]:
    arr = np.asarray(strata)
    if arr.ndim != 1 or arr.size != n_units:
        raise ValueError(f"strata must be 1-D with one label per unit ({n_units}), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"strata must hold integer labels, got dtype {arr.dtype}")
    return np.unique(arr, return_inverse=True)[1].astype(np.int64).ravel()


def _check(n_resamples: int, seed: int) -> None:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")


def collapse_singletons(strata: ArrayLike, pools: ArrayLike) -> NDArray[np.int64]:
    """Stratum labels with every one-unit stratum replaced by its unit's pool (a "collapsed stratum").

    ``pools`` gives each unit a coarser label (e.g. the attribute combination of an occupation x combination
    cell); units of strata with a single unit are pooled by it, so their variance is estimated from the pool
    (conservatively: the pool's spread includes the differences between the merged strata). Pool labels are
    offset past the largest stratum label, so they never merge with a real stratum.
    """
    s = np.asarray(strata, dtype=np.int64).ravel()
    p = np.asarray(pools, dtype=np.int64).ravel()
    if s.shape != p.shape:
        raise ValueError(f"strata and pools must have the same length, got {s.size} and {p.size}")
    if s.size == 0:
        return s
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    single = counts[inverse.ravel()] == 1
    offset = int(s.max()) + 1 - int(p.min())
    return np.where(single, p + offset, s)


def rescaled_cell_counts(
    cell_index: ArrayLike, n_cells: int, strata: ArrayLike, *, n_resamples: int = 1000, seed: int = 0
) -> NDArray[np.float64]:
    """Rescaled stratified bootstrap counts when each unit falls in one cell (``-1``: in no cell).

    For each stratum of ``n_s >= 2`` units: ``(n_s / (n_s - 1)) Multinomial(n_s - 1, observed outcome
    shares)`` per resample; a stratum of one unit adds its observed count to every resample.

    Returns
    -------
    ndarray of float64, shape (n_resamples, n_cells)
    """
    cells = np.asarray(cell_index)
    if cells.ndim != 1 or cells.size == 0 or cells.dtype.kind not in "iu":
        raise ValueError("cell_index must be a non-empty 1-D integer array")
    if np.any(cells < -1) or np.any(cells >= n_cells):
        raise ValueError(f"cell_index values must lie in [0, {n_cells}) or be -1 (no cell)")
    _check(n_resamples, seed)
    codes = _codes(strata, cells.size)
    outcome = np.where(cells < 0, n_cells, cells).astype(np.int64)
    n_strata = int(codes.max()) + 1
    table = np.bincount(codes * (n_cells + 1) + outcome, minlength=n_strata * (n_cells + 1)).reshape(n_strata, -1)
    rng = np.random.default_rng(seed)
    out = np.zeros((n_resamples, n_cells + 1), dtype=np.float64)
    for row in table:
        seen = np.flatnonzero(row)
        total = int(row.sum())
        if total == 1 or seen.size == 1:
            out[:, seen] += row[seen]
            continue
        m = total - 1
        out[:, seen] += rng.multinomial(m, row[seen] / total, size=n_resamples) * (total / m)
    return out[:, :n_cells]


def rescaled_unit_counts(
    unit_counts: ArrayLike, strata: ArrayLike, *, n_resamples: int = 1000, seed: int = 0
) -> NDArray[np.float64]:
    """Rescaled stratified bootstrap of a unit x cell matrix: ``W @ M`` with ``W[b, u]`` = (draws of unit u in
    its stratum's ``n_s - 1`` draws) x ``n_s / (n_s - 1)``; a one-unit stratum has weight 1 throughout.

    Returns
    -------
    ndarray of float64, shape (n_resamples, n_cells)
    """
    matrix = np.asarray(unit_counts, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError(f"unit_counts must be a non-empty 2-D array, got shape {matrix.shape}")
    _check(n_resamples, seed)
    codes = _codes(strata, matrix.shape[0])
    rng = np.random.default_rng(seed)
    out = np.zeros((n_resamples, matrix.shape[1]), dtype=np.float64)
    rows = np.arange(n_resamples)
    for stratum in range(int(codes.max()) + 1):
        units = np.flatnonzero(codes == stratum)
        n = units.size
        if n == 1:
            out += matrix[units[0]]
            continue
        m = n - 1
        draws = rng.integers(0, n, size=(n_resamples, m))
        weights = np.zeros((n_resamples, n), dtype=np.float64)
        np.add.at(weights, (np.repeat(rows, m), draws.ravel()), n / m)
        out += weights @ matrix[units]
    return out
