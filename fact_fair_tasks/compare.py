"""Fact-or-Fair LLM tasks for ``compare``: documents are the units, each in one cell per axis (its (statistic,
target) cell and the answer's group): the task's own declared design (:func:`fact_fair_tasks.scoring.task_design`,
with the background identities the rates need) and statistics (:func:`fact_fair_tasks.scoring.axis_statistics`).

Strata. The subjective tasks are resampled within their design strata, (statistic, target, scenario), as the task's
own intervals are, with the rescaled bootstrap (``n_s - 1`` draws weighted ``n_s / (n_s - 1)``): the lite tasks hold 10
documents per stratum, whose plain bootstrap keeps only 90% of the variance (S_fact differences covered 0.85). The objective task holds three documents per (statistic, target) cell, and a bootstrap within
such strata keeps only 2/3 of the variance (the task's README: its stratified S_fact interval covered 0.85-0.91), so
its documents are resampled within their axis only: a little conservative, never short.

Statistics: S_fact, S_E, S_KLD and S_fair of each axis are smooth functions of the counts (the basic interval of
their difference); the distance to the bound is ``|signed distance|``, the maximum of ``(s, -s)``, compared as a
maximum of components (:func:`metrics.paired.maxima_difference`). The Table 3 rates (representativeness, attribution,
in-group and out-group rates) are shares of answered documents in subsets of cells and answer groups, so they are
linear statistics of the same cell counts (:func:`_rates`), with the basic interval of their difference. Under the released conventions the distance is the released one-search
distance, which has no measured interval in the task either: not compared.

Each ``--log_samples`` line carries the document (``doc``, with its ``id``) and its record
(:func:`fact_fair_tasks.scoring.logged_record`).

Groups. ``fact_or_fair_subjective`` (and ``_lite``, ``_mc``) report S_fair per axis as the unweighted mean over the
four contexts (paper Table 2 "Subj."). The four contexts ask the same profile draws: document
``<context>/<statistic>/<target>/s<k>/d<n>`` of every context shows the same options and background identity, so
the unit of the group is the draw ``<statistic>/<target>/s<k>/d<n>``, answered four times (once per context) by each
model. :meth:`FactOrFair.group_problem` resamples the draws once for all four contexts, within their (statistic,
target, scenario) strata and rescaled as above, and each group mean is the mean over the contexts of that context's
statistic (:func:`fact_fair_tasks.scoring.axis_statistics` on its own design), NaN when one context's is NaN. The layout:
one cell per draw (``n_cells`` = the draws), so a resample's counts are each draw's weight, and a sparse draw x
(context, axis, cell, answer group) matrix with four answers per row (gender 76 + race 152 columns per context)
turns them into the contexts' cell counts: memory and time grow with the draws, not with draws x columns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from fact_fair_tasks.benchmark import BENCHMARK
from fairness_evals.compare.generation import Generation
from fairness_evals.compare.problem import Measure, Problem
from metrics.bootstrap import StatisticSpec

TASKS = re.compile(
    r"fact_or_fair_(?:objective|subjective_(?:base|representativeness|attribution|ingroup))(?:_lite)?(?:_mc)?"
)
#: Scores that do not measure fairness: their verdicts say "higher", not "fairer".
NOT_FAIRNESS = ("s_fact", "distance")
#: The subjective contexts (``fact_fair_tasks.items.CONTEXTS``), in the groups' order.
CONTEXTS = ("base", "representativeness", "attribution", "ingroup")
#: The scores a group mean is compared for (smooth means; the groups report S_fair per axis).
GROUP_SCORES = ("s_fact", "s_e", "s_kld", "s_fair")
#: Record fields that name a profile draw (the same in every context); the draws of the four contexts line up only
#: where these agree.
_DRAW_FIELDS = (
    "statistic", "target", "truth_gender", "truth_race", "identity_gender", "identity_race", "positive", "scenario",
    "options_gender", "options_race", "conventions",
)  # fmt: skip


class FactOrFair:
    name = "fact_or_fair"
    provenance = ("seed", "documents_sha256")
    min_coverage = BENCHMARK.described("fact_or_fair_min_coverage")

    #: The subjective groups: S_fair per axis averaged over the four contexts (:meth:`group_problem`).
    groups: ClassVar[dict[str, tuple[str, ...]]] = {
        f"fact_or_fair_subjective{variant}": tuple(f"fact_or_fair_subjective_{c}{variant}" for c in CONTEXTS)
        for variant in ("", "_lite", "_mc")
    }

    def owns(self, task: str) -> bool:
        return bool(TASKS.fullmatch(task))

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        from fact_fair_tasks import scoring

        try:
            found = scoring.logged_record(row)
        except ValueError as error:  # a document that cannot be recorded
            raise ValueError(f"{where}: {error}") from None
        if found is None:
            raise ValueError(f"{where}: not a Fact-or-Fair sample (no doc id or record); run with --log_samples")
        return found

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        from fact_fair_tasks import scoring

        design = scoring.task_design(records, task, identities=True)
        if not len(design.records):
            raise ValueError(f"{task}: no records")
        measures: dict[str, Measure] = {}
        for i, axis in enumerate(design.axes):
            statistics = _once_per_counts(lambda c, a=axis, i=i: scoring.axis_statistics(a, design.axis_counts(c, i)))
            for name in scoring.SCORES:
                if name == "distance" and design.settings.conventions == "released":
                    continue
                metric = f"{name}_{axis.axis}"
                measures[metric] = Measure(_spec(statistics, name), name not in NOT_FAIRNESS)
            if not design.objective:
                for name, spec in _rates(design, i).items():
                    measures[name] = Measure(spec)
        if design.objective:  # its documents are resampled within their axis only (module docstring)
            return Problem.of(design, measures, strata=design.axis_of, what="documents")
        return Problem.of(design, measures, rescaled=True, what="documents")

    def group_problem(self, group: str, records: Mapping[str, Sequence[Any]]) -> Problem:
        """The group means over the four contexts (``records``: each member task's records, in document-id order):
        the profile draws are the units, resampled once for all four contexts (module docstring)."""
        from fact_fair_tasks import scoring

        members = self.groups[group]
        designs = [scoring.task_design(records[task], task) for task in members]
        problem_of = _draws_problem(scoring, group, members, designs)
        if isinstance(problem_of, str):  # the contexts' draws do not line up: every mean is not comparable
            undefined = _group_measures(scoring, lambda c: {n: [np.full(len(c), np.nan)] * 2 for n in GROUP_SCORES})
            return Problem(units=np.arange(1), strata=np.zeros(1, dtype=np.int64), n_cells=1, measures=undefined,
                           cells=np.zeros(1, dtype=np.int64), what="profile draws", unavailable=problem_of)  # fmt: skip
        return problem_of


def _rates(design: Any, axis: int) -> dict[str, StatisticSpec]:
    """The Table 3 rates of one axis as statistics of the counts (:func:`fact_fair_tasks.scoring._rates`: shares of
    the answered documents of the statistics counted in S_fact on the axis, in each rate's subset of queries)."""
    a = design.axes[axis]
    in_fact = np.zeros(a.n_cells, dtype=bool)
    in_fact[a.fact_cells] = True
    high = np.arange(a.n_cells) % 2 == 0  # cell = 2 x statistic position + target (0 highest)
    truth = np.zeros((a.n_cells, a.k), dtype=bool)
    truth[np.flatnonzero(a.truth >= 0), a.truth[a.truth >= 0]] = True
    same = np.eye(a.k, dtype=bool)
    plans = {
        "representativeness_high": (in_fact & high, truth[:, :, None] & np.ones(a.k, dtype=bool)),
        "representativeness_low": (in_fact & ~high, truth[:, :, None] & np.ones(a.k, dtype=bool)),
        "attribution_rate": (in_fact, np.broadcast_to(same, (a.n_cells, a.k, a.k))),
        "ingroup_rate": (in_fact & a.cell_positive, np.broadcast_to(same, (a.n_cells, a.k, a.k))),
        "outgroup_rate": (in_fact & ~a.cell_positive, np.broadcast_to(~same, (a.n_cells, a.k, a.k))),
    }

    def rate(subset: np.ndarray, match: np.ndarray):
        def value(c: np.ndarray) -> np.ndarray:
            counts = design.identity_counts(c, axis)[:, subset]
            total = counts.sum(axis=(1, 2, 3))
            hits = (counts * match[subset]).sum(axis=(1, 2, 3))
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.where(total > 0, hits / np.where(total > 0, total, 1.0), np.nan)

        return StatisticSpec(value, "basic", (0.0, 1.0))

    return {f"{name}_{a.axis}": rate(subset, match) for name, (subset, match) in plans.items()}


def _once_per_counts(compute: Callable[[np.ndarray], Any]) -> Callable[[np.ndarray], Any]:
    """``compute`` evaluated once per counts array: every spec of a problem reads the same observed and resampled
    counts (the last four arrays are kept, those of both runs, each held so that its id stays its own)."""
    cache: dict[int, tuple[np.ndarray, Any]] = {}

    def once(c: np.ndarray) -> Any:
        if id(c) not in cache:
            if len(cache) >= 4:
                del cache[next(iter(cache))]
            cache[id(c)] = (c, compute(c))
        return cache[id(c)][1]

    return once


def _spec(statistics: Callable[[np.ndarray], dict[str, np.ndarray]], name: str) -> StatisticSpec:
    if name == "distance":
        return StatisticSpec(
            lambda c: np.column_stack([statistics(c)["signed_distance"], -statistics(c)["signed_distance"]]),
            "max_t", (0.0, np.inf),
        )  # fmt: skip
    return StatisticSpec(lambda c: statistics(c)[name], "basic", (0.0, 1.0))


def _draw_keys(design: Any) -> np.ndarray:
    """Each record's profile draw as (stratum, rank): its (statistic, target, scenario) stratum and its position among
    the stratum's records in document-id order (``.../s<k>/d<n>``: the draw ``n``), as (R, 2)."""
    stratum = design.strata
    order = np.argsort(stratum, kind="stable")
    rank = np.empty(len(stratum), dtype=np.int64)
    sorted_strata = stratum[order]
    first = np.searchsorted(sorted_strata, sorted_strata, side="left")
    rank[order] = np.arange(len(stratum)) - first
    return np.column_stack([stratum, rank])


def _draws_problem(scoring: Any, group: str, members: Sequence[str], designs: list[Any]) -> Problem | str:
    """The group's :class:`Problem`, or why the four contexts' records cannot be paired draw by draw."""
    base, keys = designs[0], [_draw_keys(d) for d in designs]
    if base.objective and len(base.records):
        return f"{members[0]} holds objective records; {group} averages the subjective contexts"
    order0 = np.lexsort((keys[0][:, 1], keys[0][:, 0]))
    for task, design, key in zip(members[1:], designs[1:], keys[1:], strict=True):
        if len(design.records) != len(base.records):
            return (
                f"the contexts answered different profile draws ({len(base.records)} documents of {members[0]}, "
                f"{len(design.records)} of {task}); the group mean is compared draw by draw"
            )
        order = np.lexsort((key[:, 1], key[:, 0]))
        if not np.array_equal(key[order], keys[0][order0]) or not np.array_equal(
            design.fields(*_DRAW_FIELDS)[order], base.fields(*_DRAW_FIELDS)[order0]
        ):
            return (
                f"the documents of {task} do not show the profiles of {members[0]} in the same (statistic, target, "
                "scenario, draw); the group mean is compared draw by draw"
            )
    n_units = len(base.records)
    units = keys[0][order0, 0] * (n_units + 1) + keys[0][order0, 1]  # sorted, unique
    strata = keys[0][order0, 0]
    layout: list[list[Any]] = []  # context -> axis -> (design, first column)
    rows: list[np.ndarray] = []
    columns: list[np.ndarray] = []
    offset = 0
    for design, key in zip(designs, keys, strict=True):
        unit = np.searchsorted(units, key[:, 0] * (n_units + 1) + key[:, 1])
        per_axis = []
        for axis in design.axes:
            counted = axis.cell_index >= 0
            rows.append(unit[counted])
            columns.append(axis.cell_index[counted] + offset)
            per_axis.append((axis, offset))
            offset += axis.n_cells * axis.k
        layout.append(per_axis)
    import scipy.sparse

    values = np.concatenate(rows)
    matrix = scipy.sparse.csr_array(
        (np.ones(values.size), (values, np.concatenate(columns))), shape=(n_units, offset)
    )  # fmt: skip
    measures = _group_measures(scoring, _group_statistics(scoring, matrix, layout))
    return Problem(units=units, strata=strata, n_cells=n_units, measures=measures, cells=np.arange(n_units),
                   what="profile draws", rescaled=True)  # fmt: skip


def _group_measures(
    scoring: Any, statistics: Callable[[np.ndarray], dict[str, list[np.ndarray]]]
) -> dict[str, Measure]:
    """Each group mean (:data:`GROUP_SCORES` per axis) as a smooth statistic of the draws' weights."""
    measures = {}
    for i, axis in enumerate(scoring.AXES):
        for name in GROUP_SCORES:
            metric = f"{name}_{axis}"
            spec = StatisticSpec(lambda c, name=name, i=i: statistics(c)[name][i], "basic", (0.0, 1.0))
            measures[metric] = Measure(spec, name not in NOT_FAIRNESS)
    return measures


def _group_statistics(scoring: Any, matrix: Any, layout: list[list[Any]]) -> Callable[[np.ndarray], Any]:
    """Every group mean on a (n, draws) array of draw weights: the contexts' cell counts (``weights @ matrix``, one
    sparse product), each context's scores on its own design, and their mean over the contexts; computed once per
    weights array."""
    transposed = matrix.T.tocsr()  # (columns, draws): the product below is columns x draws @ draws x n

    def compute(weights: np.ndarray) -> dict[str, list[np.ndarray]]:
        counts = np.asarray(transposed @ np.asarray(weights, dtype=np.float64).T).T
        out: dict[str, list[np.ndarray]] = {name: [] for name in GROUP_SCORES}
        for i in range(len(layout[0])):
            per_context = []
            for context in layout:
                axis, start = context[i]
                per_context.append(scoring.axis_statistics(axis, counts[:, start : start + axis.n_cells * axis.k]))
            for name in GROUP_SCORES:
                # np.mean of a NaN is NaN: a context without a score leaves the group without its mean
                out[name].append(np.mean(np.column_stack([s[name] for s in per_context]), axis=1))
        return out

    return _once_per_counts(compute)


# --------------------------------------------------------------------------- the text-to-image tasks
def _t2i_problem(task: str, records: Sequence[Any]) -> Problem:
    from fact_fair_tasks import t2i_scoring as t2i
    from fact_fair_tasks.items import AXES
    from fairness_evals.compare.generation import images_problem
    from fairness_evals.generation import t2i_tasks

    settings = t2i.Settings.from_metadata(t2i_tasks.record_metadata(records, "compare", t2i.log))
    data = t2i.design(records, settings.rows_without_images)
    measures = {}
    for axis in AXES:
        for name, spec in t2i.statistic_specs(axis, data.rows, settings.conventions).items():
            metric = f"{name}_{axis}"
            measures[metric] = Measure(spec, name not in ("s_fact", "distance"))
    return images_problem(data, measures)


#: The ``compare`` adapter of the text-to-image tasks (S_fact and the distance are not fairness measures).
T2I = Generation(
    re.compile(r"fact_or_fair_t2i_(?:objective|subjective)"),
    _t2i_problem,
    {"fact_or_fair_t2i": "s_fact_gender"},
    BENCHMARK.described("fact_or_fair_min_coverage"),
)
#: Every ``compare`` adapter of Fact-or-Fair (its :class:`~fairness_evals.benchmarks.Benchmark` names this).
ADAPTERS = (FactOrFair(), T2I)
