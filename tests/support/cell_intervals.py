"""Bootstrap intervals of units that each fall in one cell (or none, ``-1``), composed from :mod:`metrics.bootstrap`
as the task layers compose it: the observed cell counts, :func:`~metrics.bootstrap.resample_cell_counts`, and
:func:`~metrics.bootstrap.intervals_from_counts` (the BCa jackknife from the units as one-hot count rows)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from metrics import bootstrap as bs


def cell_intervals(
    cell_index: ArrayLike,
    n_cells: int,
    statistics: Mapping[str, Any],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    strata: ArrayLike | None = None,
) -> dict[str, bs.BootstrapInterval]:
    """Each statistic's interval over ``n_resamples`` resamples of the units' cells (within ``strata`` if given)."""
    cells = np.asarray(cell_index, dtype=np.int64)
    observed = np.bincount(cells[cells >= 0], minlength=n_cells).astype(np.float64)
    resampled = bs.resample_cell_counts(cells, n_cells, n_resamples=n_resamples, seed=seed, strata=strata)
    jackknife = None
    if any(isinstance(s, bs.StatisticSpec) and s.method == "bca" for s in statistics.values()):
        onehot = np.zeros((cells.size, n_cells))
        onehot[np.flatnonzero(cells >= 0), cells[cells >= 0]] = 1.0
        jackknife = bs.jackknife_unit_counts(onehot, strata=strata)
    return bs.intervals_from_counts(observed, resampled, statistics, seed=seed, jackknife=jackknife)
