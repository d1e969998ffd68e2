"""Seeded, vectorised bootstrap intervals that resample the unit that was sampled.

The unit is what the benchmark drew at random: a document (prompt instance) for Fact-or-Fair, an
image for FairLens (one image contributes 38 answers, so one unit can add to many cells). A
resample draws ``U`` units with replacement (a multinomial resample of the ``U`` units); the counts
of every cell are re-aggregated from the drawn units, and any statistic computable from the
aggregated counts is re-evaluated. An interval of those values is returned, by the method valid for the statistic
(the last paragraph; the percentile interval, Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, §13.3,
when none is named).

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

Seeds: every draw comes from ``numpy.random.default_rng(seed)``, and nothing else: the same seed and data give
identical intervals, whatever the statistics. The dense and sparse matrix forms give identical resampled counts; the
cell-index form draws the same distribution with other numbers (one multinomial per stratum, not one draw per unit).
Without ``strata`` (and not ``rescaled``), resample ``b`` is a function of ``(seed, U, b)`` only, so the first B
resamples of a larger run equal a run of B resamples; with strata the draws of a stratum are made for a block of
resamples at once, and a different ``n_resamples`` gives other resamples. (The stream is tied to numpy's
``Generator.integers`` and ``Generator.multinomial``; a numpy release that changed them would change the resamples, as
numpy documents for all its generators.)

Stratified designs: when the benchmark fixes how many units each stratum holds (Fact-or-Fair draws
the same number of documents for every (statistic, target) cell; FairLens samples images per
(gender, race, age) stratum; generation tasks make a fixed number of images per prompt), pass
``strata`` and every resample draws each stratum's units from that stratum alone, ``n_s`` draws
for a stratum of ``n_s`` units (Davison & Hinkley 1997, §3.7). Resampling across strata would add
the variance of stratum sizes that the design does not have. In the one-cell-per-unit form a
stratum's resampled counts are one multinomial draw of its observed outcome shares, which is the
same distribution as drawing its units and costs nothing per unit.

Small strata (``rescaled=True``): the plain stratified bootstrap draws ``n_s`` units from a stratum of ``n_s``, and
the variance of a stratum total it implies is ``(n_s - 1) / n_s`` of the unbiased one (Davison & Hinkley 1997,
eq. 3.16): with the 2-5 units per stratum of the IRIS understanding designs (probe rounds per attribute
combination, images per occupation x combination cell, counterfactual sets per occupation) its intervals are 10-30%
too narrow. The rescaled form draws ``m_s = n_s - 1`` units with replacement in each stratum of ``n_s >= 2`` units
and weights them ``n_s / m_s`` (the "with-replacement bootstrap of size n - 1" of McCarthy & Snowden 1985; Rao & Wu
1988 with ``m = n - 1``), which makes the resampled stratum total unbiased with the unbiased variance ``n_s s_s^2``.
A stratum of one unit cannot show its variance: it is kept fixed (merge such units into a pooled stratum first,
:func:`collapse_singletons`, where the design allows it). Its draws are made for all resamples of a stratum at once,
strata in sorted label order, so its results depend on the multiset of (stratum, outcome) pairs only.

Which interval is reported is a per-statistic choice (:class:`StatisticSpec`, methods in
:mod:`metrics.intervals`): the percentile interval of a biased plug-in statistic (entropy, KL,
max - min gaps) adds the bias a second time and misses the truth.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metrics import intervals
from metrics._inputs import whole_number
from metrics.intervals import (
    BootstrapInterval,
    Bounds,
    Method,
    check_confidence,
    jackknife_acceleration,
    percentile_interval,
)

__all__ = [
    "BootstrapInterval",
    "Design",
    "Jackknife",
    "StatisticSpec",
    "bootstrap_intervals",
    "collapse_singletons",
    "intervals_from_counts",
    "jackknife_unit_counts",
    "percentile_interval",
    "resample_cell_counts",
    "resample_counts",
]

FloatArray = NDArray[np.float64]
Statistic = Callable[[FloatArray], ArrayLike]
if TYPE_CHECKING:
    import scipy.sparse

    UnitCounts = ArrayLike | scipy.sparse.sparray | scipy.sparse.spmatrix

# Each block of resamples draws at most this many unit indices at once (bounded memory: 32 MiB of
# int64 indices, and the same again for the float weights of the matrix form).
_MAX_DRAWS_PER_BLOCK = 1 << 22


def _row_bincount(values: NDArray[np.int64], n_bins: int) -> NDArray[np.int64]:
    """Per-row bincount of a (rows, n) array of ints in [0, n_bins): shape (rows, n_bins)."""
    rows = values.shape[0]
    offsets = (np.arange(rows, dtype=np.int64) * n_bins)[:, None]
    return np.bincount((values + offsets).ravel(), minlength=rows * n_bins).reshape(rows, n_bins)


def _sparse() -> Any:
    """``scipy.sparse`` if something imported it, else None: a sparse matrix cannot exist before its module is
    imported, so the one-cell-per-unit path (Fact-or-Fair) never pays for importing it (0.1 s)."""
    return sys.modules.get("scipy.sparse")


def _issparse(value: object) -> bool:
    sparse = _sparse()
    return sparse is not None and bool(sparse.issparse(value))


def _as_unit_matrix(unit_counts: UnitCounts) -> FloatArray | scipy.sparse.csr_array:
    if _issparse(unit_counts):
        matrix = _sparse().csr_array(unit_counts, dtype=np.float64)
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


def _check_strata(strata: ArrayLike | None, n_units: int) -> NDArray[np.int64] | None:
    """Strata as dense codes 0..S-1 in sorted order of the given labels (order-independent)."""
    if strata is None:
        return None
    arr = np.asarray(strata)
    if arr.ndim != 1 or arr.size != n_units:
        raise ValueError(f"strata must be 1-D with one label per unit ({n_units}), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"strata must hold integer labels, got dtype {arr.dtype}")
    return np.unique(arr, return_inverse=True)[1].astype(np.int64).ravel()


@dataclass(frozen=True)
class StatisticSpec:
    """A statistic and the interval method that is valid for it.

    Attributes
    ----------
    function : callable
        ``f(counts (n, C)) -> (n,)``; for ``method="max_t"`` it returns the components, shape
        ``(n, m)``, whose maximum is the statistic (see :func:`metrics.intervals.max_t_interval`).
    method : str
        ``"percentile"``, ``"basic"``, ``"bca"`` or ``"max_t"`` (:mod:`metrics.intervals`).
    bounds : (float, float)
        The statistic's range; intervals are clipped to it.
    transform : callable, optional
        ``max_t`` only: monotone map applied to the maximum (e.g. ``math.exp`` for a ratio).
    """

    function: Statistic
    method: Method = "percentile"
    bounds: Bounds = (-math.inf, math.inf)
    transform: Callable[[float], float] | None = None


@dataclass(frozen=True)
class Jackknife:
    """Distinct leave-one-unit-out count vectors, for the BCa acceleration.

    ``counts[j]`` are the cell counts without one unit; ``weights[j]`` how many units give that same
    vector; ``strata[j]`` their stratum (0 for an unstratified design).
    """

    counts: FloatArray
    weights: FloatArray
    strata: NDArray[np.int64]


def resample_counts(
    unit_counts: UnitCounts,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    strata: ArrayLike | None = None,
    rescaled: bool = False,
) -> FloatArray:
    """Bootstrap-resampled cell counts from a unit x cell count matrix.

    ``counts[b] = sum_u W[b, u] * M[u]`` where row ``W[b]`` counts how often each of the U units
    was drawn in U draws with replacement (``W[b] ~ Multinomial(U, 1/U, ..., 1/U)``); with
    ``strata``, each stratum's ``n_s`` units are drawn ``n_s`` times from that stratum alone. With
    ``rescaled``, ``W[b, u]`` = (draws of unit u among its stratum's ``n_s - 1`` draws) x ``n_s / (n_s - 1)``,
    and a one-unit stratum has weight 1 throughout (module docstring, "Small strata").

    Parameters
    ----------
    unit_counts : array_like or scipy.sparse matrix/array, shape (U, C)
        ``M[u, c]``: how much unit ``u`` contributes to cell ``c`` (non-negative).
    n_resamples : int, default 1000
        B, the number of resamples.
    seed : int, default 0
        Seed of ``numpy.random.default_rng``; see the module docstring for what it determines.
    strata : array_like of int, shape (U,), optional
        The stratum of each unit, for a stratified design.
    rescaled : bool, default False
        The rescaled bootstrap of small strata (without ``strata``: one stratum of every unit).

    Returns
    -------
    ndarray of float64, shape (B, C)
        Integer-valued when ``M`` is (and not ``rescaled``).
    """
    matrix = _as_unit_matrix(unit_counts)
    n_resamples = whole_number(n_resamples, "n_resamples", minimum=1)
    seed = whole_number(seed, "seed", minimum=0)
    n_units, n_cells = matrix.shape
    codes = _check_strata(strata, n_units)
    if rescaled:
        dense = matrix.toarray() if _issparse(matrix) else matrix
        return _rescaled_unit_counts(dense, np.zeros(n_units, np.int64) if codes is None else codes, n_resamples, seed)
    out = np.empty((n_resamples, n_cells), dtype=np.float64)
    transposed = matrix.T.tocsr() if _issparse(matrix) else None
    blocks = _blocks(n_units, n_resamples, seed) if codes is None else _stratified_blocks(codes, n_resamples, seed)
    for start, weights in blocks:
        if transposed is not None:  # sparse: (C x U) @ (U x rows), transposed back
            out[start : start + weights.shape[0]] = np.asarray(transposed @ weights.T).T
        else:
            out[start : start + weights.shape[0]] = weights @ matrix
    return out


def _blocks(n_units: int, n_resamples: int, seed: int) -> Iterator[tuple[int, FloatArray]]:
    """Yield ``(start, W)`` with W of shape (rows, n_units): each unit's multiplicity per resample.

    The block height depends only on ``n_units``, and a shorter last block draws a prefix of what a
    full block would draw, so resample ``b`` is a function of ``(seed, n_units, b)`` alone.
    """
    rng = np.random.default_rng(seed)
    rows = max(1, _MAX_DRAWS_PER_BLOCK // n_units)
    for start in range(0, n_resamples, rows):
        height = min(rows, n_resamples - start)
        idx = rng.integers(0, n_units, size=(height, n_units), dtype=np.int64)
        yield start, _row_bincount(idx, n_units).astype(np.float64)


def _stratified_blocks(codes: NDArray[np.int64], n_resamples: int, seed: int) -> Iterator[tuple[int, FloatArray]]:
    """As :func:`_blocks`, drawing each stratum's units from that stratum (strata in sorted order)."""
    rng = np.random.default_rng(seed)
    n_units = codes.size
    members = [np.flatnonzero(codes == s) for s in range(int(codes.max()) + 1)]
    rows = max(1, _MAX_DRAWS_PER_BLOCK // n_units)
    for start in range(0, n_resamples, rows):
        height = min(rows, n_resamples - start)
        weights = np.zeros((height, n_units), dtype=np.float64)
        for units in members:
            idx = rng.integers(0, units.size, size=(height, units.size), dtype=np.int64)
            weights[:, units] = _row_bincount(idx, units.size)
        yield start, weights


def _rescaled_unit_counts(matrix: FloatArray, codes: NDArray[np.int64], n_resamples: int, seed: int) -> FloatArray:
    """The rescaled form of :func:`resample_counts`: per stratum (sorted codes), ``n_s - 1`` draws for every resample
    at once, each weighing ``n_s / (n_s - 1)``; a one-unit stratum adds its row to every resample."""
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


def collapse_singletons(strata: ArrayLike, pools: ArrayLike) -> NDArray[np.int64]:
    """Stratum labels with every one-unit stratum replaced by its unit's pool (a "collapsed stratum").

    ``label_u = pool_u + offset`` where u's stratum has one unit, else ``stratum_u``; ``offset = max(strata) + 1 -
    min(pools)``, so pool labels never merge with a real stratum. ``pools`` gives each unit a coarser label (e.g. the
    attribute combination of an occupation x combination cell): units of one-unit strata are pooled by it, so their
    variance is estimated from the pool (conservatively: the pool's spread includes the differences between the merged
    strata). For the rescaled bootstrap, which keeps a one-unit stratum fixed.
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


def _check_cell_index(cell_index: ArrayLike, n_cells: int) -> NDArray[np.int64]:
    idx_arr = np.asarray(cell_index)
    if idx_arr.ndim != 1 or idx_arr.size == 0:
        raise ValueError(f"cell_index must be a non-empty 1-D array, got shape {idx_arr.shape}")
    if idx_arr.dtype.kind not in "iu":
        raise ValueError(f"cell_index must hold integers, got dtype {idx_arr.dtype}")
    whole_number(n_cells, "n_cells", minimum=1)
    if np.any(idx_arr < -1) or np.any(idx_arr >= n_cells):
        raise ValueError(f"cell_index values must lie in [0, {n_cells}) or be -1 (no cell)")
    return idx_arr.astype(np.int64)


def _stratum_outcomes(cells: NDArray[np.int64], codes: NDArray[np.int64], n_cells: int) -> NDArray[np.int64]:
    """(S, C + 1) counts of each outcome per stratum; column C counts units in no cell."""
    outcome = np.where(cells < 0, n_cells, cells)
    n_strata = int(codes.max()) + 1
    flat = np.bincount(codes * (n_cells + 1) + outcome, minlength=n_strata * (n_cells + 1))
    return flat.reshape(n_strata, n_cells + 1)


def resample_cell_counts(
    cell_index: ArrayLike,
    n_cells: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    strata: ArrayLike | None = None,
    rescaled: bool = False,
) -> FloatArray:
    """Bootstrap-resampled cell counts when each unit falls in exactly one cell.

    For each stratum (sorted labels; without ``strata`` one stratum holds every unit), one
    ``Multinomial(n_s, observed shares)`` draw per resample over the outcomes seen in it (the units in
    no cell included): the distribution of drawing its ``n_s`` units with replacement, as
    :func:`resample_counts` of the one-hot matrix does, at a cost that does not grow with the number
    of units. The result depends on the multiset of (stratum, cell) pairs only, never on the order of
    the units, so it is the same however a harness orders or gathers the answers. With ``rescaled``, a stratum of
    ``n_s >= 2`` units gets ``(n_s / (n_s - 1)) Multinomial(n_s - 1, observed shares)`` and a stratum of one unit (or
    of one outcome) its observed counts in every resample (module docstring, "Small strata").

    Parameters
    ----------
    cell_index : array_like of int, shape (U,)
        The cell of each unit, in ``[0, n_cells)``; ``-1`` means the unit counts as sampled but
        falls in no cell (e.g. a refused or unparsed answer).
    n_cells : int
        C, the number of cells.
    n_resamples : int, default 1000
    seed : int, default 0
    strata : array_like of int, shape (U,), optional
    rescaled : bool, default False

    Returns
    -------
    ndarray of float64, shape (B, C)
    """
    cells = _check_cell_index(cell_index, n_cells)
    n_cells = int(n_cells)
    n_resamples = whole_number(n_resamples, "n_resamples", minimum=1)
    seed = whole_number(seed, "seed", minimum=0)
    codes = _check_strata(strata, cells.size)
    if codes is None:  # one stratum holding every unit
        codes = np.zeros(cells.size, dtype=np.int64)
    out = np.zeros((n_resamples, n_cells), dtype=np.float64)
    rng = np.random.default_rng(seed)
    # One call per stratum: the time is numpy's binomial draws (about 8 per stratum and resample), not this loop; one
    # broadcast call over all strata (zero shares first, which draws the same numbers) measured no faster.
    for row in _stratum_outcomes(cells, codes, n_cells):
        seen = np.flatnonzero(row)
        total = int(row.sum())
        in_cell = seen < n_cells
        if rescaled and (total == 1 or seen.size == 1):
            out[:, seen[in_cell]] += row[seen[in_cell]]
            continue
        draws = rng.multinomial(total - 1 if rescaled else total, row[seen] / total, size=n_resamples)
        out[:, seen[in_cell]] += draws[:, in_cell] * (total / (total - 1)) if rescaled else draws[:, in_cell]
    return out


@dataclass
class Design:
    """A sample's resampling design: its units (ids, one per unit), each unit's stratum, and its counts, either one
    cell per unit (``cells``: the unit's cell in ``[0, n_cells)``, -1 in none) or a unit x cell matrix (``matrix``).
    ``rescaled``: the rescaled bootstrap of small strata (module docstring, "Small strata").

    A task declares its design once; its intervals resample it (:meth:`resample`) and ``compare`` resamples two runs of
    it, paired (:mod:`metrics.paired`)."""

    units: np.ndarray
    strata: np.ndarray
    n_cells: int
    cells: np.ndarray | None = None
    matrix: Any = None
    rescaled: bool = False

    def __post_init__(self) -> None:
        if (self.cells is None) == (self.matrix is None):
            raise ValueError("a design has either one cell per unit or a unit x cell matrix")
        counts = self.cells if self.cells is not None else self.matrix
        if not len(self.strata) == counts.shape[0] == len(self.units):
            raise ValueError("units, strata and counts must have one entry per unit")

    def observed(self) -> FloatArray:
        """The cell counts of the whole sample, shape (C,)."""
        if self.cells is not None:
            kept = self.cells[self.cells >= 0].astype(np.int64)
            return np.bincount(kept, minlength=self.n_cells).astype(np.float64)
        return np.asarray(self.matrix.sum(axis=0), dtype=np.float64).ravel()

    def resample(self, n_resamples: int, seed: int) -> FloatArray:
        """(B, C) resampled cell counts: the units drawn again within their strata (:func:`resample_cell_counts` or
        :func:`resample_counts`)."""
        options = {"n_resamples": n_resamples, "seed": seed, "strata": self.strata, "rescaled": self.rescaled}
        if self.cells is not None:
            return resample_cell_counts(self.cells, self.n_cells, **options)
        return resample_counts(self.matrix, **options)


def jackknife_unit_counts(unit_counts: UnitCounts, *, strata: ArrayLike | None = None) -> Jackknife:
    """Leave-one-unit-out count vectors of the matrix form: ``observed - M[u]`` for every unit u."""
    matrix = _as_unit_matrix(unit_counts)
    dense = matrix.toarray() if _issparse(matrix) else matrix
    codes = _check_strata(strata, dense.shape[0])
    if codes is None:
        codes = np.zeros(dense.shape[0], dtype=np.int64)
    observed = dense.sum(axis=0)
    return Jackknife(observed[None, :] - dense, np.ones(dense.shape[0]), codes)


def _evaluate(function: Statistic, counts: FloatArray, name: str, *, components: bool = False) -> FloatArray:
    values = np.asarray(function(counts), dtype=np.float64)
    ok = values.ndim == 2 and values.shape[0] == counts.shape[0] if components else values.shape == (counts.shape[0],)
    if not ok:
        want = (
            f"({counts.shape[0]}, m) components"
            if components
            else f"one value per resample, shape ({counts.shape[0]},)"
        )
        raise ValueError(f"statistic {name!r} must return {want}; got shape {values.shape}")
    return values


def _as_spec(name: str, statistic: Statistic | StatisticSpec) -> StatisticSpec:
    if isinstance(statistic, StatisticSpec):
        if not callable(statistic.function):
            raise ValueError(f"statistics[{name!r}].function must be callable")
        return statistic
    if not callable(statistic):
        raise ValueError(f"statistics[{name!r}] must be callable or a StatisticSpec")
    return StatisticSpec(statistic)


def intervals_from_counts(
    observed: ArrayLike,
    resampled: FloatArray,
    statistics: Mapping[str, Statistic | StatisticSpec],
    *,
    confidence: float = 0.95,
    seed: int | None = None,
    jackknife: Jackknife | None = None,
) -> dict[str, BootstrapInterval]:
    """Apply several statistics to one set of resampled counts, each with its own interval method.

    Parameters
    ----------
    observed : array_like, shape (C,)
        Cell counts of the observed sample (for the point estimates).
    resampled : ndarray, shape (B, C)
        From :func:`resample_counts` or :func:`resample_cell_counts`.
    statistics : mapping of str to callable or StatisticSpec
        A bare callable ``(n, C) -> (n,)`` gets the percentile method.
    confidence : float, default 0.95
    seed : int or None
        Recorded in the results.
    jackknife : Jackknife, optional
        Needed by statistics whose method is ``"bca"``.

    Returns
    -------
    dict of str to BootstrapInterval
    """
    if not isinstance(statistics, Mapping) or not statistics:
        raise ValueError("statistics must be a non-empty mapping of name -> callable")
    confidence = check_confidence(confidence)
    obs = np.asarray(observed, dtype=np.float64)[None, :]
    out = {}
    for name, raw in statistics.items():
        spec = _as_spec(name, raw)
        if spec.method == "max_t":
            components = _evaluate(spec.function, obs, name, components=True)[0]
            boot = _evaluate(spec.function, resampled, name, components=True)
            out[name] = intervals.max_t_interval(components, boot, confidence=confidence, seed=seed, bounds=spec.bounds,
                                       transform=spec.transform)  # fmt: skip
            continue
        estimate = float(_evaluate(spec.function, obs, name)[0])
        values = _evaluate(spec.function, resampled, name)
        acceleration = None
        if spec.method == "bca":
            if jackknife is None:
                raise ValueError(f"statistic {name!r} uses the bca method: pass jackknife counts")
            jack = _evaluate(spec.function, jackknife.counts, name)
            acceleration = jackknife_acceleration(jack, jackknife.weights, jackknife.strata)
        out[name] = intervals.interval(spec.method, values, estimate=estimate, confidence=confidence, seed=seed,
                             bounds=spec.bounds, acceleration=acceleration)  # fmt: skip
    return out


def _intervals(
    observed: FloatArray,
    resampled: FloatArray,
    statistics: Mapping[str, Statistic | StatisticSpec],
    leave_one_out: Callable[[], Jackknife],
    *,
    confidence: float,
    seed: int,
) -> dict[str, BootstrapInterval]:
    """:func:`intervals_from_counts`, calling ``leave_one_out()`` (:func:`jackknife_unit_counts`) only when a
    statistic's method is BCa, the one that needs those counts."""
    needed = any(isinstance(s, StatisticSpec) and s.method == "bca" for s in statistics.values())
    jackknife = leave_one_out() if needed else None
    return intervals_from_counts(observed, resampled, statistics, confidence=confidence, seed=seed, jackknife=jackknife)


def bootstrap_intervals(
    unit_counts: UnitCounts,
    statistics: Mapping[str, Statistic | StatisticSpec],
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    strata: ArrayLike | None = None,
) -> dict[str, BootstrapInterval]:
    """Bootstrap intervals of several statistics from a unit x cell count matrix.

    Resamples units once (:func:`resample_counts`, within ``strata`` if given) and evaluates every
    statistic on the same resampled counts, each with the method of its :class:`StatisticSpec`.

    Parameters
    ----------
    unit_counts : array_like or scipy.sparse, shape (U, C)
    statistics : mapping of str to callable or StatisticSpec
        ``f(counts (n, C)) -> (n,)``; also evaluated on the observed column sums for ``estimate``.
    n_resamples : int, default 1000
    confidence : float, default 0.95
    seed : int, default 0
        Same seed, same data: identical intervals.
    strata : array_like of int, shape (U,), optional

    Returns
    -------
    dict of str to BootstrapInterval

    Notes
    -----
    With one unit every resample equals the sample, so ``low == high == estimate``. A statistic
    that is NaN on a resample (no data) is counted in ``n_nan`` and left out.
    """
    matrix = _as_unit_matrix(unit_counts)
    check_confidence(confidence)
    resampled = resample_counts(matrix, n_resamples=n_resamples, seed=seed, strata=strata)
    observed = np.asarray(matrix.sum(axis=0), dtype=np.float64).ravel()
    leave_one_out = partial(jackknife_unit_counts, matrix, strata=strata)
    return _intervals(observed, resampled, statistics, leave_one_out, confidence=confidence, seed=seed)
