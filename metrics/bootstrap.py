"""Seeded, vectorised bootstrap intervals that resample the unit that was sampled.

The unit is what the benchmark drew at random: a document (prompt instance) for Fact-or-Fair, an
image for FairLens (one image contributes 38 answers, so one unit can add to many cells). A
resample draws ``U`` units with replacement (a multinomial resample of the ``U`` units); the counts
of every cell are re-aggregated from the drawn units, and any statistic computable from the
aggregated counts is re-evaluated. The percentile interval of those values is returned
(Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, §13.3).

Two input forms:

* a unit x cell count matrix ``M`` (U x C; dense ndarray or ``scipy.sparse``): the resampled counts
  are ``W @ M`` with ``W`` (B x U) the multiplicity of each unit in each resample, computed in row
  blocks so memory stays bounded (:func:`resample_counts`);
* one cell index per unit, for the common case where each unit falls in exactly one cell
  (``-1`` = in no cell, e.g. a refused answer that was still sampled): the counts are a
  ``bincount`` of the drawn cells, with no ``W`` at all (:func:`resample_cell_counts`).

A *statistic* is a callable ``f(counts) -> values`` taking an array of shape (B, C) and returning
shape (B,); it is called once on all resamples, so it must be vectorised over the leading axis
(the ``*_batch`` functions of :mod:`metrics.fact_fair` are). Several statistics are evaluated on
the same resampled counts, so asking for many costs one resampling.

Seeds: every draw comes from ``numpy.random.default_rng(seed)``. Resample ``b`` is a function of
``(seed, U, b)`` only, not of the input form, the statistic or ``n_resamples``: the same seed and
data give identical intervals, the dense, sparse and cell-index forms give identical resampled
counts for the same units, and the first B resamples of a larger run equal a run of B resamples.
(The stream is tied to numpy's ``Generator.integers``; a numpy release that changed it would change
the resamples, as numpy documents for all its generators.)

Caveat: the percentile interval inherits the bootstrap's bias. A plug-in statistic near a boundary,
such as S_E near 1, is biased down under resampling (duplicated units make the resampled
distributions less even), so the interval can lie below the estimate; report both.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "BootstrapInterval",
    "bootstrap_cell_intervals",
    "bootstrap_interval",
    "bootstrap_intervals",
    "intervals_from_counts",
    "percentile_interval",
    "resample_cell_counts",
    "resample_counts",
]

FloatArray = NDArray[np.float64]
Statistic = Callable[[FloatArray], ArrayLike]
UnitCounts = ArrayLike | scipy.sparse.sparray | scipy.sparse.spmatrix

# Each block of resamples draws at most this many unit indices at once (bounded memory: 32 MiB of
# int64 indices, and the same again for the float weights of the matrix form).
_MAX_DRAWS_PER_BLOCK = 1 << 22


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile bootstrap interval.

    Attributes
    ----------
    estimate : float
        The statistic on the observed sample (NaN if not computed or undefined).
    low, high : float
        The ``(1 - confidence)/2`` and ``(1 + confidence)/2`` quantiles of the finite resample
        values (linear interpolation); NaN when no resample gave a finite value.
    confidence : float
        Nominal coverage, e.g. 0.95.
    n_resamples : int
        Number of resamples drawn.
    n_nan : int
        How many resamples gave NaN (e.g. every answer of a resample refused); they are left out
        of the quantiles.
    seed : int or None
        The seed of ``numpy.random.default_rng`` that produced the resamples.
    """

    estimate: float
    low: float
    high: float
    confidence: float
    n_resamples: int
    n_nan: int
    seed: int | None


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def _check_n_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return int(n_resamples)


def _check_confidence(confidence: float) -> float:
    if not (isinstance(confidence, (int, float)) and 0 < confidence < 1):
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def _blocks(n_units: int, n_resamples: int, seed: int) -> Iterator[tuple[int, NDArray[np.int64]]]:
    """Yield ``(start, indices)`` with indices of shape (rows, n_units): the units drawn.

    The block height depends only on ``n_units``, and a shorter last block draws a prefix of what a
    full block would draw, so resample ``b`` is a function of ``(seed, n_units, b)`` alone.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _MAX_DRAWS_PER_BLOCK // n_units)
    for start in range(0, n_resamples, rows):
        height = min(rows, n_resamples - start)
        yield start, rng.integers(0, n_units, size=(height, n_units), dtype=np.int64)


def _row_bincount(values: NDArray[np.int64], n_bins: int) -> NDArray[np.int64]:
    """Per-row bincount of a (rows, n) array of ints in [0, n_bins): shape (rows, n_bins)."""
    rows = values.shape[0]
    offsets = (np.arange(rows, dtype=np.int64) * n_bins)[:, None]
    return np.bincount((values + offsets).ravel(), minlength=rows * n_bins).reshape(rows, n_bins)


def _as_unit_matrix(unit_counts: UnitCounts) -> FloatArray | scipy.sparse.csr_array:
    if scipy.sparse.issparse(unit_counts):
        matrix = scipy.sparse.csr_array(unit_counts, dtype=np.float64)
        data = matrix.data
    else:
        try:
            matrix = np.asarray(unit_counts, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"unit_counts must be a 2-D numeric array: {exc}") from None
        data = matrix
    if matrix.ndim != 2:
        raise ValueError(f"unit_counts must be 2-D (n_units, n_cells), got shape {matrix.shape}")
    if matrix.shape[0] == 0:
        raise ValueError("unit_counts must hold at least one unit (row)")
    if not np.all(np.isfinite(data)) or np.any(data < 0):
        raise ValueError("unit_counts must contain finite, non-negative counts")
    return matrix


def resample_counts(
    unit_counts: UnitCounts,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> FloatArray:
    """Bootstrap-resampled cell counts from a unit x cell count matrix.

    ``counts[b] = sum_u W[b, u] * M[u]`` where row ``W[b]`` counts how often each of the U units
    was drawn in U draws with replacement (``W[b] ~ Multinomial(U, 1/U, ..., 1/U)``).

    Parameters
    ----------
    unit_counts : array_like or scipy.sparse matrix/array, shape (U, C)
        ``M[u, c]``: how much unit ``u`` contributes to cell ``c`` (non-negative).
    n_resamples : int, default 1000
        B, the number of resamples.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``; see the module docstring for what it determines.

    Returns
    -------
    ndarray of float64, shape (B, C)
        Integer-valued when ``M`` is.
    """
    matrix = _as_unit_matrix(unit_counts)
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    n_units, n_cells = matrix.shape
    out = np.empty((n_resamples, n_cells), dtype=np.float64)
    sparse = scipy.sparse.issparse(matrix)
    transposed = matrix.T.tocsr() if sparse else None
    for start, idx in _blocks(n_units, n_resamples, seed):
        weights = _row_bincount(idx, n_units).astype(np.float64)
        if transposed is not None:  # sparse: (C x U) @ (U x rows), transposed back
            out[start : start + idx.shape[0]] = np.asarray(transposed @ weights.T).T
        else:
            out[start : start + idx.shape[0]] = weights @ matrix
    return out


def resample_cell_counts(
    cell_index: ArrayLike, n_cells: int, *, n_resamples: int = 1000, seed: int = 0
) -> FloatArray:
    """Bootstrap-resampled cell counts when each unit falls in exactly one cell.

    Equal, for the same seed, to :func:`resample_counts` of the one-hot matrix of ``cell_index``,
    but computed with one ``bincount`` per block of resamples and no weight matrix.

    Parameters
    ----------
    cell_index : array_like of int, shape (U,)
        The cell of each unit, in ``[0, n_cells)``; ``-1`` means the unit counts as sampled but
        falls in no cell (e.g. a refused or unparsed answer).
    n_cells : int
        C, the number of cells.
    n_resamples : int, default 1000
    seed : int, default 0

    Returns
    -------
    ndarray of float64, shape (B, C)
    """
    idx_arr = np.asarray(cell_index)
    if idx_arr.ndim != 1 or idx_arr.size == 0:
        raise ValueError(f"cell_index must be a non-empty 1-D array, got shape {idx_arr.shape}")
    if idx_arr.dtype.kind not in "iu":
        raise ValueError(f"cell_index must hold integers, got dtype {idx_arr.dtype}")
    if isinstance(n_cells, bool) or not isinstance(n_cells, (int, np.integer)) or n_cells < 1:
        raise ValueError(f"n_cells must be a positive integer, got {n_cells!r}")
    if np.any(idx_arr < -1) or np.any(idx_arr >= n_cells):
        raise ValueError(f"cell_index values must lie in [0, {n_cells}) or be -1 (no cell)")
    n_resamples = _check_n_resamples(n_resamples)
    seed = _check_seed(seed)
    # Map -1 to an overflow bin n_cells that is dropped at the end.
    cells = np.where(idx_arr < 0, n_cells, idx_arr).astype(np.int64)
    out = np.empty((n_resamples, int(n_cells)), dtype=np.float64)
    for start, idx in _blocks(cells.size, n_resamples, seed):
        counts = _row_bincount(cells[idx], int(n_cells) + 1)
        out[start : start + idx.shape[0]] = counts[:, :-1]
    return out


def percentile_interval(
    values: ArrayLike,
    *,
    confidence: float = 0.95,
    estimate: float = math.nan,
    seed: int | None = None,
) -> BootstrapInterval:
    """Percentile interval of bootstrap values, leaving out (and counting) NaN resamples.

    Parameters
    ----------
    values : array_like, shape (B,)
        The statistic on each resample.
    confidence : float, default 0.95
        The interval is ``[q((1-c)/2), q((1+c)/2)]`` of the non-NaN values (``numpy.quantile``,
        linear interpolation).
    estimate : float, default NaN
        The statistic on the observed sample, carried into the result.
    seed : int or None
        Recorded in the result.

    Returns
    -------
    BootstrapInterval
        ``low`` and ``high`` are NaN when every value is NaN.
    """
    confidence = _check_confidence(confidence)
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"values must be a non-empty 1-D array, got shape {arr.shape}")
    nan = np.isnan(arr)
    finite = arr[~nan]
    if finite.size:
        alpha = (1.0 - confidence) / 2.0
        low, high = (float(v) for v in np.quantile(finite, [alpha, 1.0 - alpha]))
    else:
        low = high = math.nan
    return BootstrapInterval(
        estimate=float(estimate),
        low=low,
        high=high,
        confidence=confidence,
        n_resamples=int(arr.size),
        n_nan=int(nan.sum()),
        seed=seed,
    )


def _evaluate(statistic: Statistic, counts: FloatArray, name: str) -> FloatArray:
    values = np.asarray(statistic(counts), dtype=np.float64)
    if values.shape != (counts.shape[0],):
        raise ValueError(
            f"statistic {name!r} must return one value per resample, shape ({counts.shape[0]},); "
            f"got shape {values.shape}"
        )
    return values


def intervals_from_counts(
    observed: ArrayLike,
    resampled: FloatArray,
    statistics: Mapping[str, Statistic],
    *,
    confidence: float = 0.95,
    seed: int | None = None,
) -> dict[str, BootstrapInterval]:
    """Apply several statistics to one set of resampled counts.

    Parameters
    ----------
    observed : array_like, shape (C,)
        Cell counts of the observed sample (for the point estimates).
    resampled : ndarray, shape (B, C)
        From :func:`resample_counts` or :func:`resample_cell_counts`.
    statistics : mapping of str to callable
        Each maps counts of shape (n, C) to values of shape (n,).
    confidence : float, default 0.95
    seed : int or None
        Recorded in the results.

    Returns
    -------
    dict of str to BootstrapInterval
    """
    if not isinstance(statistics, Mapping) or not statistics:
        raise ValueError("statistics must be a non-empty mapping of name -> callable")
    obs = np.asarray(observed, dtype=np.float64)[None, :]
    out = {}
    for name, statistic in statistics.items():
        if not callable(statistic):
            raise ValueError(f"statistics[{name!r}] must be callable")
        estimate = float(_evaluate(statistic, obs, name)[0])
        values = _evaluate(statistic, resampled, name)
        out[name] = percentile_interval(values, confidence=confidence, estimate=estimate, seed=seed)
    return out


def bootstrap_intervals(
    unit_counts: UnitCounts,
    statistics: Mapping[str, Statistic],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, BootstrapInterval]:
    """Percentile bootstrap intervals of several statistics from a unit x cell count matrix.

    Resamples units once (:func:`resample_counts`) and evaluates every statistic on the same
    resampled counts.

    Parameters
    ----------
    unit_counts : array_like or scipy.sparse, shape (U, C)
    statistics : mapping of str to callable
        ``f(counts (n, C)) -> (n,)``; also evaluated on the observed column sums for ``estimate``.
    n_resamples : int, default 1000
    confidence : float, default 0.95
    seed : int, default 0
        Same seed, same data: identical intervals.

    Returns
    -------
    dict of str to BootstrapInterval

    Notes
    -----
    With one unit every resample equals the sample, so ``low == high == estimate``. A statistic
    that is NaN on a resample (no data) is counted in ``n_nan`` and left out of the quantiles.
    """
    matrix = _as_unit_matrix(unit_counts)
    _check_confidence(confidence)
    resampled = resample_counts(matrix, n_resamples=n_resamples, seed=seed)
    observed = np.asarray(matrix.sum(axis=0), dtype=np.float64).ravel()
    return intervals_from_counts(observed, resampled, statistics, confidence=confidence, seed=seed)


def bootstrap_cell_intervals(
    cell_index: ArrayLike,
    n_cells: int,
    statistics: Mapping[str, Statistic],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> dict[str, BootstrapInterval]:
    """As :func:`bootstrap_intervals`, for units that each fall in one cell (or none, ``-1``).

    Parameters
    ----------
    cell_index : array_like of int, shape (U,)
    n_cells : int
    statistics, n_resamples, confidence, seed
        As in :func:`bootstrap_intervals`.

    Returns
    -------
    dict of str to BootstrapInterval
    """
    _check_confidence(confidence)
    resampled = resample_cell_counts(cell_index, n_cells, n_resamples=n_resamples, seed=seed)
    idx = np.asarray(cell_index)
    observed = np.bincount(idx[idx >= 0].astype(np.int64), minlength=int(n_cells)).astype(np.float64)
    return intervals_from_counts(observed, resampled, statistics, confidence=confidence, seed=seed)


def bootstrap_interval(
    unit_counts: UnitCounts,
    statistic: Statistic,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> BootstrapInterval:
    """Percentile bootstrap interval of one statistic; see :func:`bootstrap_intervals`."""
    if not callable(statistic):
        raise ValueError("statistic must be callable: counts (n, C) -> values (n,)")
    return bootstrap_intervals(
        unit_counts, {"statistic": statistic}, n_resamples=n_resamples, confidence=confidence, seed=seed
    )["statistic"]
