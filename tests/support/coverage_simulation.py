"""Coverage simulations: does an interval cover the population value at its nominal rate?

A simulation draws many replicate samples from a population whose statistic is known (the *truth*),
computes the reported interval on each, and counts how often the interval contains the truth. Every
simulator of the benchmarks (``tests/support/coverage_*.py``, which the coverage tests and
``bench/coverage.py`` use) runs its replicates through :func:`simulate`, the one loop: a simulator
supplies only its truths, how a replicate is drawn, how it is scored, and the metrics to judge.

Two kinds of interval are judged per metric: the interval a replicate prints (``<name>_ci_low`` /
``<name>_ci_high``) and, where the scorer reports a bootstrap standard error ``<name>_stderr`` (what
lm-eval shows in its ± column), the normal interval ``estimate ± 1.96 stderr``, summarised in a row of
its own named ``<name>_stderr``.

What is summarised, per statistic (:class:`Coverage`):

* ``coverage``: the share of replicates with a printed (finite) interval that contains the truth;
* ``printed``: the share of replicates whose interval was printed at all (a method may withhold an
  interval, reporting NaN with a reason, where it cannot be trusted);
* ``below`` / ``above``: the share of printed intervals lying entirely below / above the truth
  (a one-sided miss says the interval is biased, not just narrow);
* ``width_ratio``: the mean printed width divided by the central 95% range of the estimates across
  replicates, the width an interval that knew the sampling distribution would have. The project's
  bar is coverage >= 0.93 at the paper's sizes (>= 0.90 at lite sizes) with ``width_ratio <= 2``:
  an interval made wide enough to always cover is not accepted;
* ``bias``: the mean printed estimate minus the truth (:attr:`Coverage.bias`).

**Bias by size** (:class:`Bias`, :func:`measure_bias`): the same loop with the point estimator alone (no interval,
no rule that nulls it), at a given number of answers (or images) per cell, measures how far the plug-in estimate
lies from the truth on average. The declared minima (:class:`fairness_evals.statistics.Minimum`) are chosen from
it: a row measured at a statistic's declared minimum carries the bias the declaration allows (``allowed``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from fairness_evals.harness_logging import silenced

__all__ = [
    "STDERR_SUFFIX", "STDERR_Z", "Bias", "Coverage", "Scored", "measure_bias", "reported", "simulate", "summarise",
]  # fmt: skip

#: Relative tolerance when testing whether a truth lies in an interval (floating-point rounding only).
_TOLERANCE = 1e-9
#: The normal interval of a standard error: ``estimate ± STDERR_Z * stderr``.
STDERR_Z = 1.96
#: The key suffix of a metric's standard error in a scorer's output, and of its interval's coverage row.
STDERR_SUFFIX = "_stderr"

Sample = TypeVar("Sample")


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
    #: Which interval the row judges: "interval" (the printed one) or "stderr" (``estimate ± 1.96 stderr``).
    kind: str = "interval"

    @property
    def bias(self) -> float:
        """The mean printed estimate minus the truth."""
        return self.mean_estimate - self.truth

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
            "bias": self.bias,
        }


def summarise(
    name: str, truth: float, estimates: ArrayLike, lows: ArrayLike, highs: ArrayLike, *, kind: str = "interval"
) -> Coverage:
    """Summarise replicate intervals of one statistic against its truth.

    Parameters
    ----------
    truth : float
        The population value.
    estimates, lows, highs : array_like, shape (R,)
        Per replicate: the point estimate and the interval (NaN ends: not printed).
    kind : str
        Which interval this is: "interval" (the one a task prints) or "stderr" (``estimate ± 1.96 stderr``).
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
        kind=kind,
    )


@dataclass(frozen=True)
class Scored:
    """One metric as one replicate reports it: the estimate, the printed interval (NaN ends: withheld) and the
    bootstrap standard error (None: the scorer reports none; NaN: it withholds it)."""

    estimate: float
    low: float
    high: float
    stderr: float | None = None


def reported(out: Mapping[str, Any], name: str) -> Scored:
    """The metric ``name`` of a scorer's output ``out``: an interval object stored under ``name`` (a :class:`Scored`
    or anything with ``estimate``, ``low``, ``high`` and optionally ``stderr``), or the flat keys a task's
    ``compute_metrics`` writes: ``name``, ``name_ci_low``, ``name_ci_high`` and, where it reports one,
    ``name_stderr``."""
    value = out[name]
    if hasattr(value, "low"):
        return Scored(value.estimate, value.low, value.high, getattr(value, "stderr", None))
    return Scored(value, out[f"{name}_ci_low"], out[f"{name}_ci_high"], out.get(f"{name}{STDERR_SUFFIX}"))


def simulate(
    truths: Mapping[str, float],
    draw: Callable[[np.random.Generator, int], Sample],
    score: Callable[[Sample, int], Mapping[str, Any]],
    metrics: Sequence[str],
    *,
    replicates: int,
    seed: int | Sequence[int],
    label: Callable[[str], str] | None = None,
    quiet: Sequence[str] = (),
) -> list[Coverage]:
    """The coverage rows of ``metrics`` over ``replicates`` seeded replicates.

    Replicate ``i`` (0, 1, ...) is ``score(draw(rng, i), i)``: ``draw`` draws one sample from the population
    with ``rng``, one generator seeded from ``seed`` for the whole run (so the simulation is reproducible; a
    simulator that needs a seed per replicate derives it from ``i``), and ``score`` scores it through the real
    scoring code, returning each metric as :func:`reported` reads it. Each metric of ``metrics`` (each must
    have a truth) gives one row (:func:`summarise`) named ``label(metric)``, and, where some replicate reports
    its standard error, a second row named ``label(metric + "_stderr")`` judging ``estimate ± 1.96 stderr``
    (a replicate without one counts as withheld). ``quiet``: loggers silenced while the replicates run.
    """
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates!r}")
    unknown = [name for name in metrics if name not in truths]
    if unknown:
        raise ValueError(f"no truth for the metric(s) {unknown}")
    name_of = label or (lambda metric: metric)
    rng = np.random.default_rng(seed)
    values: dict[str, list[Scored]] = {name: [] for name in metrics}
    with silenced(quiet):
        for index in range(replicates):
            out = score(draw(rng, index), index)
            for name in metrics:
                values[name].append(reported(out, name))
    rows = []
    for name in metrics:
        scored = values[name]
        est = np.array([s.estimate for s in scored], dtype=np.float64)
        low, high = (np.array([getattr(s, end) for s in scored], dtype=np.float64) for end in ("low", "high"))
        rows.append(summarise(name_of(name), truths[name], est, low, high))
        if any(s.stderr is not None for s in scored):
            se = np.array([math.nan if s.stderr is None else s.stderr for s in scored], dtype=np.float64)
            low, high = est - STDERR_Z * se, est + STDERR_Z * se
            rows.append(summarise(name_of(f"{name}{STDERR_SUFFIX}"), truths[name], est, low, high, kind="stderr"))
    return rows


@dataclass(frozen=True)
class Bias:
    """The bias of one statistic's point estimate under one true model at one size: the mean over replicates of the
    estimate minus the truth, with its Monte Carlo standard error.

    ``size`` is the number of answers (or images) per cell the replicates were drawn with; ``allowed`` is set on a
    row measured at the statistic's declared minimum: the bias the declaration allows there."""

    name: str
    model: str
    size: float
    truth: float
    replicates: int
    printed: float
    mean_estimate: float
    spread: float
    allowed: float | None = None

    @property
    def bias(self) -> float:
        return self.mean_estimate - self.truth

    @property
    def error(self) -> float:
        """The Monte Carlo standard error of :attr:`bias`."""
        n = self.printed * self.replicates
        return self.spread / math.sqrt(n) if n > 1 else math.nan

    def within(self) -> bool:
        """Whether the measured bias is within what the declaration allows, up to twice its Monte Carlo error (True
        where nothing is declared)."""
        if self.allowed is None:
            return True
        return abs(self.bias) <= self.allowed + 2.0 * (self.error if math.isfinite(self.error) else 0.0)

    def row(self) -> dict[str, float | str | int | None]:
        return {
            "statistic": self.name, "model": self.model, "size": self.size, "truth": self.truth,
            "replicates": self.replicates, "printed": self.printed, "mean_estimate": self.mean_estimate,
            "bias": self.bias, "error": self.error, "allowed": self.allowed,
        }  # fmt: skip


def measure_bias(
    truths: Mapping[str, float],
    draw: Callable[[np.random.Generator, int], Sample],
    estimate: Callable[[Sample], Mapping[str, float]],
    metrics: Sequence[str],
    *,
    model: str,
    size: float,
    replicates: int,
    seed: int | Sequence[int],
    allowed: Mapping[str, float | None] | None = None,
    quiet: Sequence[str] = (),
) -> list[Bias]:
    """The :class:`Bias` rows of ``metrics`` under one true model at one size: replicate ``i`` is
    ``estimate(draw(rng, i))``, the point estimates of one sample (the estimator alone: no interval, no rule that
    nulls it), ``rng`` one generator seeded from ``seed``. ``allowed``: per metric, the bias its declared minimum
    allows, where ``size`` is that minimum."""
    if replicates < 1:
        raise ValueError(f"replicates must be positive, got {replicates!r}")
    rng = np.random.default_rng(seed)
    values: dict[str, list[float]] = {name: [] for name in metrics}
    with silenced(quiet):
        for index in range(replicates):
            out = estimate(draw(rng, index))
            for name in metrics:
                values[name].append(float(out[name]))
    rows = []
    for name in metrics:
        est = np.asarray(values[name], dtype=np.float64)
        finite = est[np.isfinite(est)]
        rows.append(
            Bias(
                name=name, model=model, size=float(size), truth=float(truths[name]), replicates=replicates,
                printed=finite.size / est.size, mean_estimate=float(finite.mean()) if finite.size else math.nan,
                spread=float(finite.std(ddof=1)) if finite.size > 1 else math.nan,
                allowed=(allowed or {}).get(name),
            )
        )  # fmt: skip
    return rows
