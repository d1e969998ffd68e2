"""IRIS understanding tasks for ``compare`` (:mod:`iris_tasks.ifs_und`, :mod:`iris_tasks.bis_und`).

- ``iris_bis_und``: counterfactual *sets* are the units (the corpus samples sets), resampled within their occupation
  with the task's rescaled bootstrap (strata of 1-2 sets); the score and the six level values (AC_diff and DHR,
  single / dual / triple) are smooth functions of the per-set pair sums the task resamples
  (:func:`iris_tasks.bis_und.set_design`, :func:`~iris_tasks.bis_und.levels_from_counts`): the basic interval of
  their paired difference.
- ``iris_ifs_und``: the score is a decreasing function of 14 max - min gaps whose plug-in values are biased by several
  times their spread at IRIS's sizes; the task's only valid interval is a conservative simultaneous band over every
  group difference (:mod:`metrics.iris.gap_band`, coverage 1.00). The difference is the Bonferroni combination of the
  two runs' own intervals (:func:`metrics.paired.union_difference`): valid, conservative, and blind to the pairing,
  so only large differences are detected.
- ``iris_rfs_und``: two kinds of units (probe rounds and corpus images, resampled independently) and a score whose
  JSD half is a plug-in divergence of sparse probe wins, biased upward by more than the bootstrap shows; the task's
  valid interval is built from bounds of the two norms, less the bootstrap bias once more
  (:func:`iris_tasks.rfs_und.interval_of_norms`). A basic interval of a resampled difference inherits the bias of
  each run's JSD half, which does not cancel between models with different probes; so, as for IFS-Und, the
  difference is the Bonferroni combination of the two runs' own intervals (:func:`metrics.paired.union_difference`):
  valid, conservative and blind to the pairing. The score is NaN (not comparable) on an unbalanced corpus.

Each ``--log_samples`` line carries the document's readable record (its id and record) under the task's carrier
metric (:func:`iris_tasks.scoring.sample_answer`; task version 2 logged the record under every metric name and the id
under ``iris_answer``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fairness_evals.compare.generation import Generation, images_problem
from fairness_evals.compare.problem import Measure, Problem
from fairness_evals.records import records_array
from iris_tasks.benchmark import BENCHMARK
from metrics.bootstrap import StatisticSpec

TASKS = re.compile(r"iris_(?:ifs|rfs|bis)_und")


class Iris:
    name = "iris"
    provenance = ("seed", "sample_fraction", "corpus_sha256", "data_version", "max_per_cell")
    min_coverage = f"IRIS_MIN_COVERAGE / {BENCHMARK.described('iris_min_coverage')}"

    def owns(self, task: str) -> bool:
        return bool(TASKS.fullmatch(task))

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        from iris_tasks.scoring import MODULES, sample_answer

        for task in MODULES:  # a line names no task: its carrier's readable record tells
            found = sample_answer(row, task)
            if found is not None:
                return found
        raise ValueError(f"{where}: not an IRIS understanding sample (no readable record with an id and a record)")

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        if task == "iris_bis_und":
            return _bis_und(records)
        if task == "iris_ifs_und":
            return _ifs_und(records)
        return _rfs_und(records)


def _bis_und(records: Sequence[Any]) -> Problem:
    from iris_tasks import bis_und

    design = bis_und.set_design(records_array(records, len(bis_und.RECORD_FIELDS), np.float64))
    measures = {"bis_und_score": Measure(StatisticSpec(bis_und.score_from_counts, "basic"))}
    for name in (*bis_und.AC_LEVEL, *bis_und.DHR_LEVEL):
        spec = StatisticSpec(lambda c, name=name: bis_und.levels_from_counts(c)[name], "basic")
        measures[name] = Measure(spec)
    return Problem.of(design, measures, what="counterfactual sets")


def _ifs_und(records: Sequence[Any]) -> Problem:
    from iris_tasks import ifs_und

    rec = records_array(records, len(ifs_und.RECORD_FIELDS))
    measure = Measure(StatisticSpec(ifs_und.score_from_counts), run_interval=_ifs_interval(rec))
    return Problem.of(ifs_und.image_design(rec), {"ifs_und_score": measure}, what="images")


def _ifs_interval(rec: np.ndarray) -> Callable[[float], tuple[float, float]]:
    """The run's ``ifs_und_score`` interval at any level: :func:`iris_tasks.ifs_und.interval_at` (its resamples, seed
    and band), with the level as a parameter."""
    from iris_tasks import ifs_und

    return ifs_und.interval_at(rec)


def _rfs_und(records: Sequence[Any]) -> Problem:
    """RFS-Und: one cell per answer (:func:`iris_tasks.rfs_und.answer_cells`), the score from their counts, and the
    run's interval at any level for :func:`metrics.paired.union_difference`."""
    from iris_tasks import rfs_und

    rec = records_array(records, rfs_und.WIDTH)
    cells, n_cells = rfs_und.answer_cells(rec)
    measure = Measure(
        StatisticSpec(rfs_und.score_from_answer_counts), run_interval=_rfs_interval(*rfs_und.split_records(rec))
    )
    return Problem(units=np.arange(len(rec)), strata=np.zeros(len(rec), dtype=np.int64), n_cells=n_cells,
                   measures={"rfs_und_score": measure}, cells=cells, what="answers")  # fmt: skip


def _rfs_interval(probe: np.ndarray, corpus: np.ndarray) -> Callable[[float], tuple[float, float]]:
    """The run's ``rfs_und_score`` interval at any level: the task's resamples (seed and count) and bounds."""
    from iris_tasks import rfs_und

    norms: list[tuple[np.ndarray, np.ndarray, float, float]] = []

    def at(confidence: float) -> tuple[float, float]:
        if not norms:  # resampled once, at the first level asked
            jsd, sds = rfs_und.jsd_values(probe), rfs_und.sds_values(corpus)
            norm_jsd = float(np.linalg.norm([jsd[n] for n in rfs_und.JSD_NAMES]))
            norm_sds = float(np.linalg.norm([sds[n] for n in rfs_und.SDS_NAMES]))
            norms.append((*rfs_und.resampled_norms(probe, corpus), norm_jsd, norm_sds))
        low, high, _ = rfs_und.interval_of_norms(*norms[0], confidence=confidence)
        return low, high

    return at


# --------------------------------------------------------------------------- the generation tasks
def _neutral_problem(records: Sequence[Any]) -> Problem:
    from iris_tasks import neutral_gen

    data = neutral_gen.design(records)
    measures = {name: Measure(spec) for name, spec in neutral_gen.statistic_specs().items()}
    shape = (neutral_gen.N_OCCUPATIONS, neutral_gen.N_COLUMNS)
    for score in ("ifs_gen_score", "rfs_gen_score"):
        spec = StatisticSpec(lambda c, s=score: neutral_gen.score_arrays(c.reshape(len(c), *shape))[s], "basic")
        measures[score] = Measure(spec)
    return images_problem(data, measures, matrix=np.asarray(data.matrix.toarray(), dtype=np.float64))


def _steer_problem(records: Sequence[Any]) -> Problem:
    from iris_tasks import bis_gen

    data = bis_gen.design(records)
    measures = {
        name: Measure(StatisticSpec(lambda c, n=name: bis_gen.score_arrays(c)[n], "basic"))
        for name in ("gsr_stereotypical", "gsr_counter", "bis_gen_score")
    }
    measures["delta_gsr"] = Measure(StatisticSpec(bis_gen.delta_gsr_components, "max_t", (0.0, 1.0)))
    return images_problem(data, measures)


def _generation_problem(task: str, records: Sequence[Any]) -> Problem:
    return _neutral_problem(records) if task == "iris_gen_neutral" else _steer_problem(records)


#: The ``compare`` adapter of the generation tasks.
GENERATION = Generation(
    re.compile(r"iris_gen_(?:neutral|steer)"),
    _generation_problem,
    {"iris_gen_neutral": "ifs_gen_score", "iris_gen_steer": "bis_gen_score"},
    BENCHMARK.described("iris_min_coverage"),
)
#: Every ``compare`` adapter of IRIS.
ADAPTERS = (Iris(), GENERATION)
