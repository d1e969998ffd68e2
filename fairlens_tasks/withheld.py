"""Scores and intervals the FairLens tasks withhold (report as null), with the reason noted once.

The closed and open-ended scorings share this decision (beside the coverage rule every benchmark shares,
:func:`fairness_evals.evidence.enforce_coverage`), noted in the task's :class:`~fairness_evals.notes.Notes` (one
warning per task; ``fairness-evals score`` writes the reasons):

- :func:`apply_minima`: the evidence each statistic declares it needs (:mod:`fairlens_tasks.statistics`,
  ``GAP_MINIMUM`` and ``GROUP_INTERVAL``; :func:`fairness_evals.evidence.enforce`): a comparison of groups with too few
  images behind it is null with its interval; an interval the coverage simulations do not back (too few images behind
  a group it rests on) is null, its estimate stays.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

import numpy as np

from fairness_evals import evidence
from fairness_evals.notes import Notes
from fairness_evals.statistics import Statistic


def apply_minima(
    out: MutableMapping[str, float],
    matrix: np.ndarray,
    checks: Sequence[tuple[int, int, Sequence[str]]],
    declared: Mapping[str, Statistic],
    notes: Notes,
    needs: Mapping[str, Sequence[str]] | None = None,
) -> None:
    """Apply each statistic's declared minima (``declared``: metric name -> its statistic) from the unit x cell
    ``matrix``. Each check is (events column, totals column, the metrics resting on that rate): a metric's cells are the
    rates it rests on, each holding the images with an answer (totals > 0), of which those with the outcome
    (events > 0) and those without it (totals - events > 0). A metric of ``needs`` (a mean or maximum of gaps) is null
    too when a part it needs was nulled for its evidence."""
    if not checks:
        return
    events = matrix[:, [c[0] for c in checks]]
    totals = matrix[:, [c[1] for c in checks]]
    images, with_outcome, without = ((x > 0).sum(axis=0) for x in (totals, events, totals - events))
    rests: dict[str, list[int]] = {}
    for i, (_, _, names) in enumerate(checks):
        for name in names:
            rests.setdefault(name, []).append(i)
    nulled = set()
    for name, cells in rests.items():
        found = evidence.enforce(
            out, declared[name], name, images[cells].tolist(), notes, with_outcome=with_outcome[cells].tolist(),
            without_outcome=without[cells].tolist(),
        )  # fmt: skip
        if found == "estimate":
            nulled.add(name)
    for name, parts in (needs or {}).items():
        missing = [part for part in parts if part in nulled]
        if missing and not math.isnan(out[name]):
            names = [name, *(n for n in (f"{name}_ci_low", f"{name}_ci_high") if n in out)]
            for metric in names:
                out[metric] = math.nan
            notes.null(names, f"it needs {', '.join(missing)}, null for too few images")


def finish(
    out: Mapping[str, Any],
    names: Sequence[str],
    notes: Notes,
    log: logging.Logger,
    otherwise: str,
    explained: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The values of ``names``, the reason for each null one noted (a reason noted before stays): its own in
    ``explained``, else, for an interval end, that the bootstrap gave none, else ``otherwise``; then the task's one
    warning."""
    for name in names:
        value = out[name]
        if isinstance(value, float) and math.isnan(value):
            why = (explained or {}).get(name) or (
                "the bootstrap gave no interval (too few distinct resamples)"
                if name.endswith(("_ci_low", "_ci_high"))
                else otherwise
            )
            notes.null(name, why)
    notes.warn(log)
    return {name: out[name] for name in names}
