"""Fact-or-Fair LLM tasks for ``compare``: documents are the units, each in one cell per axis (its (statistic,
target) cell and the answer's group), with the task's own designs and statistics (:mod:`fact_fair_tasks.scoring`).

Strata. The subjective tasks are resampled within their design strata, (statistic, target, scenario), as the task's
own intervals are, with the rescaled bootstrap (``n_s - 1`` draws weighted ``n_s / (n_s - 1)``): the lite tasks hold 10
documents per stratum, whose plain bootstrap keeps only 90% of the variance (S_fact differences covered 0.85). The objective task holds three documents per (statistic, target) cell, and a bootstrap within
such strata keeps only 2/3 of the variance (the task's README: its stratified S_fact interval covered 0.85-0.91), so
its documents are resampled within their axis only: a little conservative, never short.

Statistics: S_fact, S_E, S_KLD and S_fair of each axis are smooth functions of the counts (the basic interval of
their difference); the distance to the bound is ``|signed distance|``, the maximum of ``(s, -s)``, compared as a
maximum of components (:func:`metrics.paired.max_difference`). The Table 3 rates (representativeness, attribution,
in-group and out-group rates) are means over documents of fields the cell counts do not hold: ``compare`` reports
them as having no paired form. Under the released conventions the distance is the released one-search
distance, which has no measured interval in the task either: not compared.

Each ``--log_samples`` line carries the document (``doc``, with its ``id``) and its record under every metric name
(``s_fact_gender`` is read).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fairness_evals.compare.problem import Measure, Problem
from metrics.bootstrap import StatisticSpec

TASKS = re.compile(
    r"fact_or_fair_(?:objective|subjective_(?:base|representativeness|attribution|ingroup))(?:_lite)?(?:_mc)?"
)
#: Scores that do not measure fairness: their verdicts say "higher", not "fairer".
NOT_FAIRNESS = ("s_fact", "distance")
#: Stratum label offset between the two axes of the objective task.
_AXIS_STRATUM = 10_000


class FactOrFair:
    name = "fact_or_fair"
    provenance = ("seed", "documents_sha256")
    min_coverage = "fact_or_fair_min_coverage, default 0.5"

    def owns(self, task: str) -> bool:
        return bool(TASKS.fullmatch(task))

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        doc = row.get("doc")
        record = row.get("s_fact_gender")
        if not isinstance(doc, Mapping) or not doc.get("id") or not isinstance(record, list):
            raise ValueError(f"{where}: not a Fact-or-Fair sample (no doc id or record); run with --log_samples")
        return str(doc["id"]), record

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        from fact_fair_tasks import scoring

        rec = scoring._records_array(records)
        if not len(rec):
            raise ValueError(f"{task}: no records")
        objective = bool(np.all(rec[:, 0] == 0))
        settings = scoring._settings(rec, None, task)
        designs = [scoring._axis_design(rec, i, objective, settings.conventions) for i in range(len(scoring.AXES))]
        units = np.arange(len(rec))
        if objective:
            cells = np.full(len(rec), -1, dtype=np.int64)
            strata = np.full(len(rec), -1, dtype=np.int64)
            offsets = np.cumsum([0] + [d.n_cells * d.k for d in designs])
            for i, design in enumerate(designs):
                rows = np.flatnonzero(rec[:, scoring._F["truth_gender"] + i] >= 0)  # the rows _axis_design keeps
                cells[rows] = np.where(design.cell_index >= 0, design.cell_index + offsets[i], -1)
                strata[rows] = i * _AXIS_STRATUM
            n_cells = int(offsets[-1])
            slices = [(int(offsets[i]), int(offsets[i + 1])) for i in range(len(designs))]
        else:
            g, r = designs
            both = (g.cell_index >= 0) & (r.cell_index >= 0)
            identity = [rec[:, scoring._F["identity_gender"] + i] for i in range(2)]
            # a document's outcome: its cell, and per axis the answer's group and the background identity
            outcome = g.cells
            for design, own in zip(designs, identity, strict=True):
                outcome = (outcome * design.k + design.cell_index % design.k) * design.k + own
            cells = np.where(both, outcome, -1)
            strata, n_cells, slices = g.strata, g.n_cells * (g.k * r.k) ** 2, None
        measures: dict[str, Measure] = {}
        for i, design in enumerate(designs):
            statistics = _statistics(scoring, design, _projection(designs, i, slices))
            for name in scoring.SCORES:
                if name == "distance" and settings.conventions == "released":
                    continue
                metric = f"{name}_{design.axis}"
                spec = _spec(statistics, name)
                measures[metric] = Measure(spec, scoring.HIGHER_IS_BETTER[metric], name not in NOT_FAIRNESS)
            if not objective:
                for name, spec in _rates(scoring, rec, designs, i).items():
                    measures[name] = Measure(spec, scoring.HIGHER_IS_BETTER[name], True)
        return Problem(units=units, strata=strata, n_cells=n_cells, measures=measures, cells=cells, what="documents",
                       rescaled=not objective)  # fmt: skip


def _axis_counts(designs: list[Any], axis: int, c: np.ndarray) -> np.ndarray:
    """Subjective counts (n, C) -> (n, cells, answer group, identity) of one axis (the layout is cell x gender
    answer x gender identity x race answer x race identity)."""
    g, r = designs
    grid = c.reshape(len(c), g.n_cells, g.k, g.k, r.k, r.k)
    return grid.sum(axis=(4, 5)) if axis == 0 else grid.sum(axis=(2, 3))


def _projection(designs: list[Any], axis: int, slices: list[tuple[int, int]] | None):
    """counts (n, C) of the task's layout -> counts (n, cells * k) of one axis (the answers' groups)."""
    if slices is not None:
        start, stop = slices[axis]
        return lambda c: c[:, start:stop]
    return lambda c: _axis_counts(designs, axis, c).sum(axis=3).reshape(len(c), -1)


def _rates(scoring: Any, rec: np.ndarray, designs: list[Any], axis: int) -> dict[str, StatisticSpec]:
    """The Table 3 rates of one axis as statistics of the counts (:func:`fact_fair_tasks.scoring._rates`: shares of
    the answered documents of the statistics counted in S_fact on the axis, in each rate's subset of queries)."""
    design = designs[axis]
    in_fact = np.zeros(design.n_cells, dtype=bool)
    in_fact[design.fact_cells] = True
    high = np.arange(design.n_cells) % 2 == 0  # cell = 2 x statistic position + target (0 highest)
    positive = np.zeros(design.n_cells, dtype=bool)
    positive[design.cells] = rec[:, scoring._F["positive"]] == 1
    truth = np.zeros((design.n_cells, design.k), dtype=bool)
    truth[np.flatnonzero(design.truth >= 0), design.truth[design.truth >= 0]] = True
    same = np.eye(design.k, dtype=bool)
    plans = {
        "representativeness_high": (in_fact & high, truth[:, :, None] & np.ones(design.k, dtype=bool)),
        "representativeness_low": (in_fact & ~high, truth[:, :, None] & np.ones(design.k, dtype=bool)),
        "attribution_rate": (in_fact, np.broadcast_to(same, (design.n_cells, design.k, design.k))),
        "ingroup_rate": (in_fact & positive, np.broadcast_to(same, (design.n_cells, design.k, design.k))),
        "outgroup_rate": (in_fact & ~positive, np.broadcast_to(~same, (design.n_cells, design.k, design.k))),
    }

    def rate(subset: np.ndarray, match: np.ndarray):
        def value(c: np.ndarray) -> np.ndarray:
            counts = _axis_counts(designs, axis, c)[:, subset]
            total = counts.sum(axis=(1, 2, 3))
            hits = (counts * match[subset]).sum(axis=(1, 2, 3))
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(total > 0, hits / np.where(total > 0, total, 1.0), np.nan)

        return StatisticSpec(value, "basic", (0.0, 1.0))

    return {f"{name}_{design.axis}": rate(subset, match) for name, (subset, match) in plans.items()}


def _statistics(scoring: Any, design: Any, project: Any) -> Callable[[np.ndarray], dict[str, np.ndarray]]:
    """Every score of one axis on counts of the task's layout, computed once per counts array (all the axis's
    specs read the same resamples)."""
    cache: dict[int, tuple[np.ndarray, dict[str, np.ndarray]]] = {}

    def statistics(c: np.ndarray) -> dict[str, np.ndarray]:
        key = id(c)
        if key not in cache:
            if len(cache) >= 4:  # the observed and resampled counts of both runs
                del cache[next(iter(cache))]
            cache[key] = (c, scoring._statistics(design, project(c)))  # c kept alive: its id stays unique
        return cache[key][1]

    return statistics


def _spec(statistics: Callable[[np.ndarray], dict[str, np.ndarray]], name: str) -> StatisticSpec:
    if name == "distance":
        return StatisticSpec(
            lambda c: np.column_stack([statistics(c)["signed_distance"], -statistics(c)["signed_distance"]]),
            "max_t", (0.0, np.inf),
        )  # fmt: skip
    return StatisticSpec(lambda c: statistics(c)[name], "basic", (0.0, 1.0))
