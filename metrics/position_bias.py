"""Position bias of multiple-choice answers: do the answers follow where an option is listed?

One statistic for every benchmark that lists options (Fact-or-Fair's lettered A-D options, FairLens's listed option
texts), under one naming scheme: ``position_share_<k>`` (k = 1, 2, ..., the k-th listed option) and
``position_bias`` with its chance level ``position_bias_chance_high``. The benchmark layers decide when the answers
are explained by position rather than content (their warnings differ, because their option orders differ).

No harness, no I/O: numpy in, floats out.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["expected_shares", "position_metrics", "position_names"]


def position_names(max_options: int) -> tuple[str, ...]:
    """The metric names of :func:`position_metrics` for questions of at most ``max_options`` options."""
    return (*[f"position_share_{k}" for k in range(1, max_options + 1)], "position_bias", "position_bias_chance_high")


def expected_shares(n_options: ArrayLike, max_options: int) -> np.ndarray:
    """``expected_k = (1/n) sum_i 1[k <= m_i] / m_i``: the share of answers expected at each position k if every
    answer were equally likely to sit at any of its question's ``m_i`` positions (the chance level). Computed from
    the counts of answers per number of options, ``(1/n) sum_{m >= k} count_m / m``, so that the order of the
    answers never changes a bit of it."""
    m = np.asarray(n_options, dtype=np.int64)
    counts = np.bincount(m - 1, minlength=max_options)[:max_options]
    sizes = np.arange(1, max_options + 1)
    return np.array([np.sum(counts[k:] / sizes[k:]) for k in range(max_options)]) / m.size


def _chance_high(n_options: np.ndarray, expected: np.ndarray, max_options: int, draws: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    simulated = np.zeros((draws, max_options))
    counts = np.bincount(n_options, minlength=max_options + 1)
    for m in range(1, max_options + 1):
        if counts[m]:
            simulated[:, :m] += rng.multinomial(int(counts[m]), np.full(m, 1.0 / m), size=draws)
    tv = 0.5 * np.abs(simulated / n_options.size - expected).sum(axis=1)
    return float(np.quantile(tv, 0.95))


def position_metrics(
    positions: ArrayLike, n_options: ArrayLike, *, max_options: int, null_draws: int, seed: int = 0
) -> dict[str, float]:
    """Position shares and position bias of parsed multiple-choice answers.

    - ``position_share_k = (1/n) sum_i 1[o_i = k]``: the share of the n parsed answers that chose the k-th listed
      option (``positions`` holds ``o_i - 1``, 0 for the first option);
    - ``position_bias = (1/2) sum_k |position_share_k - expected_k|``: the total-variation distance from the shares
      expected by chance (:func:`expected_shares`, each answer uniform over its question's ``m_i`` options);
    - ``position_bias_chance_high``: the 95th percentile of ``position_bias`` under that null, from ``null_draws``
      seeded multinomial draws of these n answers' option counts; ``position_bias`` above it is more than chance.

    No parsed answer gives NaN everywhere. (Package convention 6; neither paper reports position bias.)

    Parameters
    ----------
    positions : array_like of int, shape (n,)
        The 0-based position of each parsed answer's chosen option.
    n_options : array_like of int, shape (n,)
        The number of options of each answer's question (1..max_options).
    max_options : int
        The most options any question of the benchmark has (the number of ``position_share_k`` metrics).
    null_draws, seed : int
        Draws and seed of the null distribution.
    """
    names = position_names(max_options)
    pos = np.asarray(positions, dtype=np.int64)
    m = np.asarray(n_options, dtype=np.int64)
    n = int(pos.size)
    if n == 0:
        return dict.fromkeys(names, math.nan)
    if m.shape != pos.shape or np.any(pos < 0) or np.any(pos >= m) or np.any(m > max_options):
        raise ValueError(f"positions must lie in [0, n_options) and n_options in [1, {max_options}], one per answer")
    observed = np.bincount(pos, minlength=max_options)[:max_options] / n
    expected = expected_shares(m, max_options)
    out = {f"position_share_{k + 1}": float(observed[k]) for k in range(max_options)}
    out["position_bias"] = float(0.5 * np.abs(observed - expected).sum())
    out["position_bias_chance_high"] = _chance_high(m, expected, max_options, null_draws, seed)
    return out
