"""Intervals that lie beside their estimate: why, and the value they are centred on.

Most fairness statistics are biased plug-in estimators (an entropy of observed shares is too low, a KL divergence too
high). Where a statistic's interval corrects that bias (a reflected, "basic" bootstrap; :mod:`metrics.intervals`),
its statistics table declares what the interval is centred on (:attr:`fairness_evals.statistics.Interval.centre`)
and the scoring reports that value as ``<name>_ci_centre``: the bias-corrected estimate. The interval can then
exclude the estimate the harness prints (in a full Fact-or-Fair lite run 24 of 34 did: ``S_E 97.80 [98.53,
100.00]``). :func:`beside` says why for each such interval, in one sentence: ``fairness-evals score`` writes them
under ``"intervals"``, and the report shows the centre in the cell with the sentence on hover.

Import-light: no numpy, no harness.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from fairness_evals import statistics

CENTRE = "_ci_centre"


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def declared(task: str, name: str) -> statistics.Statistic | None:
    """The statistic of ``task`` that reports the metric ``name`` (a member of it), None when none does."""
    try:
        found = statistics.task(task).statistics
    except KeyError:
        return None
    return next((s for s in found if s.pattern.fullmatch(name)), None)


def why(task: str, name: str, metrics: Mapping[str, Any], shown: Callable[[float], str] = lambda v: f"{v:.4f}") -> str:
    """Why the interval of ``name`` (a metric of ``task``'s ``metrics``) excludes its estimate, with the value it is
    centred on (``shown`` formats the numbers); "" when it holds its estimate, is not a number, or has no declared
    centre."""
    value, low, high, centre = (_number(metrics.get(n)) for n in (name, f"{name}_ci_low", f"{name}_ci_high",
                                                                    f"{name}{CENTRE}"))  # fmt: skip
    if any(math.isnan(v) for v in (value, low, high, centre)) or low <= value <= high:
        return ""
    statistic = declared(task, name)
    interval = statistic.interval if statistic is not None else None
    if interval is None or not interval.centre:
        return ""
    side, bias = ("above", "low") if value < low else ("below", "high")
    return (
        f"the 95% interval [{shown(low)}, {shown(high)}] lies {side} the estimate {shown(value)}: the plug-in "
        f"estimate is biased {bias}, and the interval ({interval.method}) corrects that bias; it is centred on "
        f"{shown(centre)}, the bias-corrected estimate ({name}{CENTRE}: {interval.centre})"
    )


def beside(task: str, metrics: Mapping[str, Any]) -> dict[str, str]:
    """``{metric: why}`` (:func:`why`) for every metric of ``task`` whose interval excludes its estimate."""
    out = {}
    for key in metrics:
        if key.endswith(CENTRE):
            name = key.removesuffix(CENTRE)
            said = why(task, name, metrics)
            if said:
                out[name] = said
    return out
