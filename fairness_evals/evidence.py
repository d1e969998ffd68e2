"""Too little evidence for a value: the two rules that null a statistic, or its interval, for the answers behind it.

- :func:`enforce_coverage`: a statistic whose coverage (the share of its inputs that counted: answers parsed, images
  showing a labelled face) is below the task's minimum is null with its interval, one phrasing for every benchmark;
- :func:`enforce`: a statistic whose cells hold less than its declared
  :class:`~fairness_evals.statistics.Minimum` is null (or only its interval).

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
from fairness_evals.statistics import Coverage, Minimum, Statistic

Nulled = Literal["estimate", "interval"]


def _amount(value: float, measured: str) -> str:
    """``"1 parsed answer"``, ``"3 parsed answers"``, ``"2.4 parsed answers"``."""
    if float(value).is_integer():
        return plural(int(value), measured)
    return f"{value:.1f} {measured}s"


def _harmonic_mean(held: Sequence[float]) -> float:
    return len(held) / sum(1.0 / c for c in held)


def _median(counts: Sequence[float]) -> float:
    ordered = sorted(counts)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


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
    hold any hold at least ``answers`` taken ``over`` them (their smallest, harmonic mean or total), or the median
    over every cell given is at least ``answers``; each of those cells has at least ``outcome`` units with the outcome
    and as many without.
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
        if m.over == "median" and _median(counts) < m.answers:
            return f"its {m.per}s hold a median of {_amount(_median(counts), m.measured)}, fewer than {m.answers}"
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
    interval: bool = True,
) -> Nulled | None:
    """Apply ``statistic``'s declared minima to its metric ``member`` of ``out``, from the counts of the cells it is
    computed from (:func:`shortfall`; each minimum :meth:`~fairness_evals.statistics.Minimum.resolved` for the
    member): below the statistic's minimum, ``member``, its interval and its standard error become NaN; else below
    its interval's minimum, the interval and the standard error do (with ``interval=False`` the interval's minimum,
    whose cells are other cells, is left to the caller: :func:`interval_shortfall`). The reason is noted in ``notes``
    under every name nulled. A member that is already NaN is left as it is (its reason is noted already). Returns
    what was nulled, or None."""
    value = out.get(member)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    derived = [name for name in statistic.nullable(member)[1:] if name in out]
    cells = list(counts)
    outcome = {"with_outcome": with_outcome, "without_outcome": without_outcome}
    if statistic.minimum is not None:
        why = shortfall(statistic.minimum.resolved(statistic.values_of(member)), cells, **outcome)
        if why:
            _null(out, [member, *derived], f"too little evidence: {why}", notes)
            return "estimate"
    if interval:
        why = interval_shortfall(statistic, member, cells, **outcome)
        if why:
            _null(out, derived, why, notes)
            return "interval"
    return None


def interval_shortfall(
    statistic: Statistic,
    member: str,
    counts: Iterable[float],
    *,
    with_outcome: Iterable[float] | None = None,
    without_outcome: Iterable[float] | None = None,
) -> str | None:
    """Why the interval of ``statistic``'s ``member`` is withheld by its declared minimum (``"interval withheld:
    ..."``), from the counts of the cells that minimum reads; None when it has none or they meet it."""
    declared = statistic.interval.minimum if statistic.interval is not None else None
    if declared is None:
        return None
    minimum = declared.resolved(statistic.values_of(member))
    why = shortfall(minimum, counts, with_outcome=with_outcome, without_outcome=without_outcome)
    return f"interval withheld: {why}" if why else None


def design_counts(evaluated: int, design: int | None) -> list[float]:
    """One count per document of a task's design, for a minimum over the design's documents: 1 for each of the
    ``evaluated`` documents, 0 for each of the ``design`` left out (a ``--limit`` run's). ``design`` None: the
    documents evaluated are the design (a caller scoring records without knowing it)."""
    total = evaluated if design is None else max(int(design), evaluated)
    return [1.0] * evaluated + [0.0] * (total - evaluated)


def enforce_estimates(
    out: MutableMapping[str, float], statistics: Iterable[Statistic], counts: Sequence[float], notes: Notes
) -> list[str]:
    """:func:`enforce` the estimate's minimum of every member of every statistic of ``statistics`` that declares one,
    all from the same cells ``counts`` (e.g. :func:`design_counts`); their intervals' minima are the caller's. Returns
    the members nulled."""
    nulled = []
    for statistic in statistics:
        if statistic.minimum is None:
            continue
        for member in statistic.members:
            if enforce(out, statistic, member, counts, notes, interval=False) == "estimate":
                nulled.append(member)
    return nulled


def coverage_shortfall(counted: int, total: int, minimum: float, coverage: Coverage, **fields: str) -> str | None:
    """Why a statistic whose coverage ``counted / total`` is below ``minimum`` is null, or None when the coverage
    meets it. No inputs at all fall short of any minimum (there is nothing to compute the statistic from); else a
    minimum of 0 reports every statistic. The reason names the counts, the share, what counted as the ``coverage``
    declares it (:attr:`~fairness_evals.statistics.Coverage.unit`, its ``what`` with ``fields`` filled in) and the
    task setting that sets the minimum, its ``threshold`` (task metadata, ``--metadata`` of ``lm_eval`` or
    ``fairness-evals score``; in an lmms-eval run, the environment variable of its upper-case name)."""
    (noun, nouns), what, setting = coverage.unit, coverage.what.format(**fields), coverage.threshold or ""
    if not total:
        return f"no {nouns} {what}: none were evaluated"
    if minimum <= 0 or counted / total >= minimum:
        return None
    where = f"{setting}: --metadata, or {setting.upper()} in an lmms-eval run"
    return (
        f"coverage {counted} of {plural(total, noun, nouns)} {what} is {counted / total:.1%}, below the minimum "
        f"{minimum:g} ({where})"
    )


def enforce_coverage(
    out: MutableMapping[str, float],
    names: Sequence[str],
    coverage: Coverage,
    counted: int,
    total: int,
    minimum: float,
    notes: Notes,
    **fields: str,
) -> bool:
    """The coverage rule, for every benchmark: when ``counted / total`` falls short of ``minimum``
    (:func:`coverage_shortfall`, in the words ``coverage`` declares), every metric of ``names`` (the statistics the
    rule nulls with their intervals and standard errors: :func:`covered_names`) is NaN in ``out``, the reason noted
    under each (a reason noted before stays). Returns whether it fell short."""
    why = coverage_shortfall(counted, total, minimum, coverage, **fields)
    if why is not None:
        _null(out, names, why, notes)
    return why is not None


def covered_members(
    statistics: Iterable[Statistic], coverage: Coverage, *, own: bool = False, **values: str
) -> list[tuple[Statistic, str]]:
    """``(statistic, member)`` of every member the rule of ``coverage`` nulls, as the statistics declare it: those of
    each statistic whose own coverage it is or (unless ``own``) that it nulls
    (:attr:`~fairness_evals.statistics.Statistic.nulled_by`), in declaration order; with ``values``
    (``axis="gender"``) only the members whose placeholders take those values."""
    return [
        (s, m) for s in statistics if s.coverage == coverage or (not own and coverage in s.nulled_by)
        for m in s.members if all(s.values_of(m).get(k, v) == v for k, v in values.items())
    ]  # fmt: skip


def covered_names(statistics: Iterable[Statistic], coverage: Coverage, **values: str) -> list[str]:
    """The metrics the rule of ``coverage`` nulls: the members of :func:`covered_members`, then their intervals and
    standard errors."""
    members = covered_members(statistics, coverage, **values)
    return [m for _, m in members] + [name for s, m in members for name in s.nullable(m)[1:]]


def _null(out: MutableMapping[str, float], names: Sequence[str], reason: str, notes: Notes) -> None:
    for name in names:
        out[name] = math.nan
    notes.null(names, reason)
