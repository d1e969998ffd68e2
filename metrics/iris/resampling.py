"""The rescaled stratified bootstrap under its former names, for the callers not yet moved to :mod:`metrics.bootstrap`.

The resampler is :func:`metrics.bootstrap.resample_cell_counts` / :func:`metrics.bootstrap.resample_counts` with
``rescaled=True`` (``n_s - 1`` draws in a stratum of ``n_s``, weighted ``n_s / (n_s - 1)``) and
:func:`metrics.bootstrap.collapse_singletons`; this module only forwards to them (``metrics.paired`` and
``fairness_evals.compare.engine`` import these names), and goes once they call :mod:`metrics.bootstrap`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metrics.bootstrap import collapse_singletons, resample_cell_counts, resample_counts

__all__ = ["collapse_singletons", "rescaled_cell_counts", "rescaled_unit_counts"]


def rescaled_cell_counts(
    cell_index: ArrayLike, n_cells: int, strata: ArrayLike, *, n_resamples: int = 1000, seed: int = 0
) -> NDArray[np.float64]:
    """``metrics.bootstrap.resample_cell_counts(..., rescaled=True)``."""
    return resample_cell_counts(cell_index, n_cells, n_resamples=n_resamples, seed=seed, strata=strata, rescaled=True)


def rescaled_unit_counts(
    unit_counts: ArrayLike, strata: ArrayLike, *, n_resamples: int = 1000, seed: int = 0
) -> NDArray[np.float64]:
    """``metrics.bootstrap.resample_counts(..., rescaled=True)``."""
    return resample_counts(unit_counts, n_resamples=n_resamples, seed=seed, strata=strata, rescaled=True)
