"""Fact-or-Fair LLM tasks for ``compare``: documents are the units, each in one cell per axis (its (statistic,
target) cell and the answer's group), with the task's own designs and statistics (:mod:`fact_fair_tasks.scoring`).

Strata. The subjective tasks are resampled within their design strata, (statistic, target, scenario), as the task's
own intervals are. The objective task holds three documents per (statistic, target) cell, and a bootstrap within
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
            cells = np.where(
                both, (g.cell_index // g.k) * g.k * r.k + (g.cell_index % g.k) * r.k + r.cell_index % r.k, -1
            )
            strata, n_cells, slices = g.strata, g.n_cells * g.k * r.k, None
        measures: dict[str, Measure] = {}
        for i, design in enumerate(designs):
            statistics = _statistics(scoring, design, _projection(designs, i, slices))
            for name in scoring.SCORES:
                if name == "distance" and settings.conventions == "released":
                    continue
                metric = f"{name}_{design.axis}"
                spec = _spec(statistics, name)
                measures[metric] = Measure(spec, scoring.HIGHER_IS_BETTER[metric], name not in NOT_FAIRNESS)
        return Problem(units=units, strata=strata, n_cells=n_cells, measures=measures, cells=cells, what="documents")


def _projection(designs: list[Any], axis: int, slices: list[tuple[int, int]] | None):
    """counts (n, C) of the task's layout -> counts (n, cells * k) of one axis."""
    if slices is not None:
        start, stop = slices[axis]
        return lambda c: c[:, start:stop]
    g, r = designs
    if axis == 0:
        return lambda c: c.reshape(len(c), g.n_cells, g.k, r.k).sum(axis=3).reshape(len(c), -1)
    return lambda c: c.reshape(len(c), g.n_cells, g.k, r.k).sum(axis=2).reshape(len(c), -1)


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
