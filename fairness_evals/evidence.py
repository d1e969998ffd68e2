"""Too little evidence for a value: the one rule that nulls a statistic, or its interval, whose cells hold less than
its declared :class:`~fairness_evals.statistics.Minimum`.

A statistic built from cells (a mean over (statistic, target) cells, a gap between groups) declares two minima in
its statistics table: :attr:`Statistic.minimum <fairness_evals.statistics.Statistic.minimum>` for the estimate and
:attr:`Interval.minimum <fairness_evals.statistics.Interval.minimum>` for its interval. Every benchmark's scoring
calls :func:`enforce` with the declaration, the metric's name and the counts of the cells it is computed from (one
count per cell of the design, 0 for a cell that holds nothing), after computing the value: below the statistic's
minimum the estimate, its interval and its standard error become NaN; else, below the interval's minimum, the
interval and the standard error do. The reason goes into the task's :class:`~fairness_evals.notes.Notes` (the
detail's ``nulls``, and the task's one warning). The numbers are read from the declaration, nowhere else.

Import-light: no numpy (a design has at most a few hundred cells).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, MutableMapping, Sequence
from typing import Literal

from fairness_evals.notes import Notes, indefinite, plural
from fairness_evals.statistics import Minimum, Statistic

Nulled = Literal["estimate", "interval"]


def _amount(value: float, measured: str) -> str:
    """``"1 parsed answer"``, ``"3 parsed answers"``, ``"2.4 parsed answers"``."""
    if float(value).is_integer():
        return plural(int(value), measured)
    return f"{value:.1f} {measured}s"


def _harmonic_mean(held: Sequence[float]) -> float:
    return len(held) / sum(1.0 / c for c in held)


def shortfall(
    minimum: Minimum,
    counts: Iterable[float],
    *,
    with_outcome: Iterable[float] | None = None,
    without_outcome: Iterable[float] | None = None,
) -> str | None:
    """Why the cells fall short of ``minimum``, or None when they meet it.

    ``counts``: per cell of the design, the units it holds (answers, images), 0 for an empty cell. ``with_outcome``
    and ``without_outcome`` (per cell, in the same order): its units with and without the outcome, read when the
    minimum sets ``outcome``. The rule, in order: at least ``cells`` of the design's cells hold any; the cells that
    hold any hold at least ``answers`` taken ``over`` them (their smallest, harmonic mean or total); each of those
    cells has at least ``outcome`` units with the outcome and as many without.
    """
    counts = [float(c) for c in counts]
    held = [c for c in counts if c > 0]
    m = minimum
    needed_cells = math.ceil(m.cells * len(counts) - 1e-9) if counts else 0
    if len(held) < max(needed_cells, 1 if m.answers or m.cells else 0):
        if not held:
            return f"no {m.per} holds {indefinite(m.measured)}"
        return (
            f"only {len(held)} of the design's {len(counts)} {m.per}s hold {indefinite(m.measured)} (it needs {needed_cells}: a "
            f"statistic of the design's {m.per}s is not estimable from a few of them)"
        )
    if held:
        if m.over == "smallest" and min(held) < m.answers:
            return f"a {m.per} has only {_amount(min(held), m.measured)} (fewer than {plural(m.answers, m.measured)})"
        if m.over == "harmonic mean" and _harmonic_mean(held) < m.answers:
            mean = _harmonic_mean(held)
            return (
                f"its {m.per}s hold {_amount(round(mean, 1), m.measured)} each (harmonic mean over the {len(held)} "
                f"that hold any), fewer than {m.answers}"
            )
        if m.over == "total" and sum(held) < m.answers:
            return f"its {m.per}s hold only {_amount(sum(held), m.measured)} in all (fewer than {m.answers})"
    if m.outcome:
        present = [c > 0 for c in counts]
        for side, values in (("with", with_outcome), ("without", without_outcome)):
            if values is None:
                raise ValueError(f"minimum {m!r} asks for {m.outcome} per {m.per} with the outcome: give the counts")
            fewest = min((float(v) for v, p in zip(values, present, strict=True) if p), default=0.0)
            if fewest < m.outcome:
                return (
                    f"a {m.per} has only {_amount(fewest, m.measured)} {side} the outcome (fewer than {m.outcome} "
                    f"{side} it)"
                )
    return None


def enforce(
    out: MutableMapping[str, float],
    statistic: Statistic,
    member: str,
    counts: Iterable[float],
    notes: Notes,
    *,
    with_outcome: Iterable[float] | None = None,
    without_outcome: Iterable[float] | None = None,
) -> Nulled | None:
    """Apply ``statistic``'s declared minima to its metric ``member`` of ``out``, from the counts of the cells it is
    computed from (:func:`shortfall`): below the statistic's minimum, ``member``, its interval and its standard error
    become NaN; else below its interval's minimum, the interval and the standard error do. The reason is noted in
    ``notes`` under every name nulled. A member that is already NaN is left as it is (its reason is noted already).
    Returns what was nulled, or None."""
    value = out.get(member)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    derived = [name for name in statistic.nullable(member)[1:] if name in out]
    cells = list(counts)
    outcome = {"with_outcome": with_outcome, "without_outcome": without_outcome}
    if statistic.minimum is not None:
        why = shortfall(statistic.minimum, cells, **outcome)
        if why:
            _null(out, [member, *derived], f"too little evidence: {why}", notes)
            return "estimate"
    interval = statistic.interval
    if interval is not None and interval.minimum is not None:
        why = shortfall(interval.minimum, cells, **outcome)
        if why:
            _null(out, derived, f"interval withheld: {why}", notes)
            return "interval"
    return None


def _null(out: MutableMapping[str, float], names: Sequence[str], reason: str, notes: Notes) -> None:
    for name in names:
        out[name] = math.nan
    notes.null(names, reason)
