"""Coverage simulations: does an interval cover the population value at its nominal rate?

A simulation draws many replicate samples from a population whose statistic is known (the *truth*),
computes the reported interval on each, and counts how often the interval contains the truth. The
benchmarks' coverage tests (``tests/*/test_*_coverage.py``) and ``bench/coverage.py`` use this to
justify each statistic's interval method (:mod:`metrics.intervals`).

What is summarised, per statistic (:class:`Coverage`):

* ``coverage``: the share of replicates with a printed (finite) interval that contains the truth;
* ``printed``: the share of replicates whose interval was printed at all (a method may withhold an
  interval, reporting NaN with a reason, where it cannot be trusted);
* ``below`` / ``above``: the share of printed intervals lying entirely below / above the truth
  (a one-sided miss says the interval is biased, not just narrow);
* ``width_ratio``: the mean printed width divided by the central 95% range of the estimates across
  replicates, the width an interval that knew the sampling distribution would have. The project's
  bar is coverage >= 0.93 at the paper's sizes (>= 0.90 at lite sizes) with ``width_ratio <= 2``:
  an interval made wide enough to always cover is not accepted.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from metrics.intervals import BootstrapInterval

__all__ = ["Coverage", "simulate", "summarise"]

#: Relative tolerance when testing whether a truth lies in an interval (floating-point rounding only).
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Coverage:
    """Coverage of one statistic's interval over a simulation (see the module docstring)."""

    name: str
    truth: float
    replicates: int
    printed: float
    coverage: float
    below: float
    above: float
    mean_width: float
    estimate_spread: float
    width_ratio: float
    mean_estimate: float

    def meets(self, minimum: float, *, max_width_ratio: float = 2.0) -> bool:
        """Coverage at least ``minimum`` and width at most ``max_width_ratio`` times the estimate spread."""
        return self.coverage >= minimum and not (self.width_ratio > max_width_ratio)

    def row(self) -> dict[str, float | str | int]:
        """A flat dict for tables and JSON."""
        return {
            "statistic": self.name,
            "truth": self.truth,
            "replicates": self.replicates,
            "printed": self.printed,
            "coverage": self.coverage,
            "below": self.below,
            "above": self.above,
            "width_ratio": self.width_ratio,
            "mean_width": self.mean_width,
            "mean_estimate": self.mean_estimate,
        }


def summarise(name: str, truth: float, estimates: ArrayLike, lows: ArrayLike, highs: ArrayLike) -> Coverage:
    """Summarise replicate intervals of one statistic against its truth.

    Parameters
    ----------
    truth : float
        The population value.
    estimates, lows, highs : array_like, shape (R,)
        Per replicate: the point estimate and the interval (NaN ends: not printed).
    """
    est = np.asarray(estimates, dtype=np.float64)
    lo = np.asarray(lows, dtype=np.float64)
    hi = np.asarray(highs, dtype=np.float64)
    if not (est.shape == lo.shape == hi.shape) or est.ndim != 1 or est.size == 0:
        raise ValueError("estimates, lows and highs must be 1-D arrays of the same, non-zero length")
    printed = np.isfinite(lo) & np.isfinite(hi)
    tol = _TOLERANCE * max(1.0, abs(truth))
    below = printed & (hi < truth - tol)
    above = printed & (lo > truth + tol)
    hit = printed & ~below & ~above
    n_printed = int(printed.sum())
    finite_est = est[np.isfinite(est)]
    spread = float(np.subtract(*np.quantile(finite_est, [0.975, 0.025]))) if finite_est.size else math.nan
    width = float(np.mean(hi[printed] - lo[printed])) if n_printed else math.nan
    # an estimate that never varies admits only a zero-width interval
    ratio = width / spread if spread > 0 else (1.0 if width == 0 else math.inf)
    share = (lambda mask: float(mask.sum() / n_printed)) if n_printed else (lambda mask: math.nan)
    return Coverage(
        name=name,
        truth=float(truth),
        replicates=int(est.size),
        printed=n_printed / est.size,
        coverage=share(hit),
        below=share(below),
        above=share(above),
        mean_width=width,
        estimate_spread=spread,
        width_ratio=ratio,
        mean_estimate=float(np.mean(finite_est)) if finite_est.size else math.nan,
    )


def simulate(
    replicate: Callable[[np.random.Generator], Mapping[str, BootstrapInterval]],
    truths: Mapping[str, float],
    *,
    replicates: int,
    seed: int,
) -> dict[str, Coverage]:
    """Run ``replicate(rng)`` ``replicates`` times and summarise every statistic named in ``truths``.

    ``replicate`` draws one sample from the population with the generator it is given (seeded from
    ``seed``, so the simulation is reproducible) and returns the reported intervals by name.
    """
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates!r}")
    rng = np.random.default_rng(seed)
    rows: dict[str, list[tuple[float, float, float]]] = {name: [] for name in truths}
    for _ in range(replicates):
        out = replicate(rng)
        for name in truths:
            iv = out[name]
            rows[name].append((iv.estimate, iv.low, iv.high))
    result = {}
    for name, truth in truths.items():
        est, lo, hi = (np.array(col) for col in zip(*rows[name], strict=True))
        result[name] = summarise(name, truth, est, lo, hi)
    return result
