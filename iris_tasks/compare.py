"""IRIS understanding tasks for ``compare`` (:mod:`iris_tasks.ifs_und`, :mod:`iris_tasks.bis_und`).

- ``iris_bis_und``: counterfactual *sets* are the units (the corpus samples sets), resampled within their occupation
  with the task's rescaled bootstrap (strata of 1-2 sets); the score and the six level values (AC_diff and DHR,
  single / dual / triple) are smooth functions of the per-set pair sums the task resamples
  (:func:`iris_tasks.bis_und.unit_matrix`, :func:`~iris_tasks.bis_und.levels_from_counts`): the basic interval of
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
    from iris_tasks.scoring import HIGHER_IS_BETTER

    f = bis_und._F
    rec = records_array(records, len(bis_und.RECORD_FIELDS), np.float64)
    is_rating = rec[:, f["type"]] == bis_und.RATING
    ratings, yes_no = rec[is_rating], rec[~is_rating]
    ac = ratings[ratings[:, f["unparsed"]] == 0]
    n_sets = int(rec[:, f["set"]].max()) + 1
    present = np.unique(rec[:, f["set"]].astype(np.int64))
    matrix = bis_und.unit_matrix(ac, yes_no, n_sets)[present]
    measures = {"bis_und_score": Measure(StatisticSpec(bis_und.score_from_counts, "basic"), True)}
    for name in (*bis_und.AC_LEVEL, *bis_und.DHR_LEVEL):
        spec = StatisticSpec(lambda c, name=name: bis_und.levels_from_counts(c)[name], "basic")
        measures[name] = Measure(spec, HIGHER_IS_BETTER[name])
    return Problem(units=present, strata=bis_und.set_strata(rec, present), n_cells=matrix.shape[1], measures=measures,
                   matrix=matrix, what="counterfactual sets", rescaled=True)  # fmt: skip


def _ifs_und(records: Sequence[Any]) -> Problem:
    from iris_tasks import ifs_und

    rec = records_array(records, len(ifs_und.RECORD_FIELDS))
    cells = ifs_und.cell_index(rec)
    strata = ifs_und.combination_index(rec)
    measure = Measure(StatisticSpec(ifs_und.score_from_counts), True, run_interval=_ifs_interval(rec))
    units = rec[:, ifs_und._F["image"]]
    return Problem(units=units, strata=strata, n_cells=ifs_und.N_CELLS, measures={"ifs_und_score": measure},
                   cells=cells, what="images")  # fmt: skip


def _ifs_interval(rec: np.ndarray) -> Callable[[float], tuple[float, float]]:
    """The run's ``ifs_und_score`` interval at any level: :func:`iris_tasks.ifs_und.interval_at` (its resamples, seed
    and band), with the level as a parameter."""
    from iris_tasks import ifs_und

    return ifs_und.interval_at(rec)


def _rfs_und(records: Sequence[Any]) -> Problem:
    """RFS-Und: one cell per answer (a probe answer's combination x winner, then a corpus answer's predicted class x
    combination; unparsed and unmapped answers none), the score from the two count tables, and the run's interval at
    any level for :func:`metrics.paired.union_difference`."""
    from iris_tasks import ifs_und, rfs_und
    from iris_tasks.scoring import HIGHER_IS_BETTER
    from iris_tasks.vocabulary import COMBINATIONS, UNMAPPABLE_INDEX

    f = rfs_und._F
    rec = records_array(records, rfs_und.WIDTH)
    probe, corpus = rfs_und.split_records(rec)
    n_comb, n_probe = len(COMBINATIONS), len(COMBINATIONS) * rfs_und.N_OCC
    cells = np.full(len(rec), -1, dtype=np.int64)
    is_probe = rec[:, f["kind"]] == rfs_und.PROBE
    won = is_probe & (rec[:, f["winner"]] >= 0)
    cells[won] = rec[won, f["combination"]] * rfs_und.N_OCC + rec[won, f["winner"]]
    is_corpus = np.flatnonzero(rec[:, f["kind"]] == rfs_und.RECOGNITION)
    mapped = corpus[:, ifs_und._F["predicted"]] >= 0
    cells[is_corpus[mapped]] = n_probe + rfs_und._recognition_cells(corpus[mapped])
    n_cells = n_probe + (UNMAPPABLE_INDEX + 1) * n_comb

    def score(c: np.ndarray) -> np.ndarray:
        wins = c[:, :n_probe].reshape(-1, n_comb, rfs_und.N_OCC)
        counts = c[:, n_probe:].reshape(-1, UNMAPPABLE_INDEX + 1, n_comb)
        return rfs_und.score_from_parts(rfs_und.jsd_from_wins(wins), rfs_und.sds_from_counts(counts))

    measure = Measure(StatisticSpec(score), HIGHER_IS_BETTER["rfs_und_score"],
                      run_interval=_rfs_interval(probe, corpus))  # fmt: skip
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
    measures = {
        name: Measure(spec, neutral_gen.HIGHER_IS_BETTER[name]) for name, spec in neutral_gen.statistic_specs().items()
    }
    shape = (neutral_gen.N_OCCUPATIONS, neutral_gen.N_COLUMNS)
    for score in ("ifs_gen_score", "rfs_gen_score"):
        spec = StatisticSpec(lambda c, s=score: neutral_gen.score_arrays(c.reshape(len(c), *shape))[s], "basic")
        measures[score] = Measure(spec, True)
    return images_problem(np.asarray(data.units.toarray(), dtype=np.float64), data.strata, measures)


def _steer_problem(records: Sequence[Any]) -> Problem:
    from iris_tasks import bis_gen

    data = bis_gen.design(records)
    measures = {
        name: Measure(
            StatisticSpec(lambda c, n=name: bis_gen.score_arrays(c)[n], "basic"), bis_gen.HIGHER_IS_BETTER[name]
        )
        for name in ("gsr_stereotypical", "gsr_counter", "bis_gen_score")
    }
    measures["delta_gsr"] = Measure(StatisticSpec(bis_gen._difference, "max_t", (0.0, 1.0)), False)
    return images_problem(data.units, data.strata, measures)


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
