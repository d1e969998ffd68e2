"""Scores and intervals the FairLens tasks withhold (report as null), with the reason noted once.

The closed and open-ended scorings share these two decisions, each noted in the task's
:class:`~fairness_evals.notes.Notes` (one warning per task; ``fairness-evals score`` writes the reasons):

- :func:`below_threshold`: a score whose coverage (the share of its inputs that counted) is below its threshold is
  null, with its interval (package conventions 2-3);
- :func:`withhold_unsupported`: an interval the coverage simulations do not back
  (:func:`fairlens_tasks.interval_support.supported`: too few images behind a group it depends on) is null, its
  estimate stays.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, MutableMapping, Sequence

import numpy as np

from fairlens_tasks.interval_support import REASON, supported
from fairlens_tasks.settings import Threshold
from fairness_evals.notes import Notes


def coverage_reason(covered: int, total: int, inputs: str, threshold: Threshold) -> str:
    """Why a score is null for its coverage: "coverage k of n <inputs> (share) is below <key> = <value> (...)"."""
    share = "no input" if not total else f"{covered / total:.3f}"
    return (
        f"coverage {covered} of {total} {inputs} ({share}) is below {threshold.key} = {threshold.value:g} "
        f"({threshold.how_to_change()})"
    )


def below_threshold(
    out: MutableMapping[str, float],
    names: Iterable[str],
    *,
    covered: int,
    total: int,
    inputs: str,
    threshold: Threshold,
    notes: Notes,
    with_intervals: Iterable[str] = (),
) -> bool:
    """Null every score of ``names`` (and the interval of those in ``with_intervals``) when its coverage
    ``covered / total`` is below ``threshold``, noting why; returns whether it did. No input at all is below any
    threshold above 0."""
    share = covered / total if total else math.nan
    if not (math.isnan(share) or share < threshold.value) or (math.isnan(share) and threshold.value == 0):
        return False
    nulled = list(names)
    for name in with_intervals:
        nulled += [f"{name}_ci_low", f"{name}_ci_high"]
    for name in nulled:
        out[name] = math.nan
    notes.null(nulled, coverage_reason(covered, total, inputs, threshold))
    return True


def withhold_unsupported(
    out: MutableMapping[str, float],
    matrix: np.ndarray,
    checks: Sequence[tuple[int, int, Sequence[str]]],
    notes: Notes,
) -> None:
    """Null the intervals the coverage simulations do not back. Each check is (events column, totals column, the
    metrics whose intervals rest on that rate) of the unit x cell ``matrix``; a rate without enough images behind
    it (:func:`fairlens_tasks.interval_support.supported`) withholds every interval that rests on it."""
    if not checks:
        return
    events = matrix[:, [c[0] for c in checks]]
    totals = matrix[:, [c[1] for c in checks]]
    backed = supported(events, totals)
    names = dict.fromkeys(name for check, ok in zip(checks, backed, strict=True) if not ok for name in check[2])
    nulled = [end for name in names for end in (f"{name}_ci_low", f"{name}_ci_high")]
    for name in nulled:
        out[name] = math.nan
    notes.null(nulled, f"interval withheld: {REASON}")
