"""Image-generation tasks for ``compare``: Fact-or-Fair T2I (:mod:`fact_fair_tasks.t2i_scoring`) and IRIS generation
(:mod:`iris_tasks.neutral_gen`, :mod:`iris_tasks.bis_gen`).

The prompts are fixed (a census), the images per prompt are the sample (the tasks' estimand). Two generators draw
*different* images for the same prompts, so nothing pairs their images: each run's images are resampled on their
own within their prompts (the tasks' own strata and count layout, :func:`~fact_fair_tasks.t2i_scoring.design`,
:func:`~iris_tasks.neutral_gen.design`, :func:`~iris_tasks.bis_gen.design`), with the rescaled bootstrap (``n - 1``
draws weighted ``n / (n - 1)``: the tasks correct the same ``(n - 1) / n`` shortfall of a plain bootstrap by spreading
their resamples). "Paired" here means the same prompts, checked like the documents of any task. The statistics are
the tasks' own; the scores IFS-Gen, RFS-Gen and BIS-Gen are compared directly (smooth in their inputs, except BIS-Gen
at ΔGSR = 0); ΔGSR is a maximum of ``(GSR_stereo - GSR_counter, 0)``.

Each ``--log_samples`` line of task version 3 carries the document's readable record (its ``id`` and ``record``)
under the task's carrier metric (:data:`CARRIERS`); a line of version 2 the document id under ``t2i_images`` and the
record under every metric name (:data:`RECORD_KEY`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fairness_evals.compare.problem import Measure, Problem
from metrics.bootstrap import StatisticSpec

TASKS = re.compile(r"fact_or_fair_t2i_(?:objective|subjective)|iris_gen_(?:neutral|steer)")
#: Where a sample of task version 3 carries the readable record (the tasks' carriers).
CARRIERS = ("images_with_faces", "images_labelled", "images_stereotypical")
#: Where a sample of task version 2 carries the record, by task.
RECORD_KEY = {
    "fact_or_fair_t2i": "s_fact_gender",
    "iris_gen_neutral": "ifs_gen_score",
    "iris_gen_steer": "bis_gen_score",
}
NOT_FAIRNESS = ("s_fact", "distance")


class Generation:
    name = "generation"
    provenance = ("classifier", "classifier_version", "classifier_spec", "data_version", "documents_sha256")
    min_coverage = "fact_or_fair_min_coverage / iris_min_coverage, default 0.5"

    def owns(self, task: str) -> bool:
        return bool(TASKS.fullmatch(task))

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        readable = next((row[k] for k in CARRIERS if isinstance(row.get(k), Mapping)), None)
        if readable is not None and readable.get("id") and isinstance(readable.get("record"), Mapping):
            return str(readable["id"]), dict(readable["record"])
        log = row.get("t2i_images")
        record = next((row[k] for k in RECORD_KEY.values() if isinstance(row.get(k), Mapping)), None)
        if not isinstance(log, Mapping) or not log.get("id") or record is None:
            raise ValueError(
                f"{where}: not a generation sample (no readable record, no t2i_images id and record); "
                "run with --log_samples"
            )
        return str(log["id"]), record

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        if task.startswith("fact_or_fair_t2i"):
            return _t2i(records)
        if task == "iris_gen_neutral":
            return _neutral(records)
        return _steer(records)


def _problem(units: np.ndarray, strata: np.ndarray, measures: dict[str, Measure]) -> Problem:
    return Problem(units=np.arange(len(units)), strata=strata, n_cells=units.shape[1], measures=measures,
                   matrix=units, what="images", rescaled=True, independent=True)  # fmt: skip


def _t2i(records: Sequence[Any]) -> Problem:
    from fact_fair_tasks import t2i_scoring as t2i
    from fact_fair_tasks.items import AXES
    from fairness_evals.generation import t2i_tasks

    settings = t2i.Settings.from_metadata(t2i_tasks.record_metadata(records, "compare", t2i.log))
    data = t2i.design(records, settings.rows_without_images)
    measures = {}
    for axis in AXES:
        for name, spec in t2i.statistic_specs(axis, data.rows, settings.conventions).items():
            metric = f"{name}_{axis}"
            measures[metric] = Measure(spec, t2i.HIGHER_IS_BETTER[metric], name not in NOT_FAIRNESS)
    return _problem(data.units, data.strata, measures)


def _neutral(records: Sequence[Any]) -> Problem:
    from iris_tasks import neutral_gen

    data = neutral_gen.design(records)
    measures = {
        name: Measure(spec, neutral_gen.HIGHER_IS_BETTER[name]) for name, spec in neutral_gen.statistic_specs().items()
    }
    shape = (neutral_gen.N_OCCUPATIONS, neutral_gen.N_COLUMNS)
    for score in ("ifs_gen_score", "rfs_gen_score"):
        spec = StatisticSpec(lambda c, s=score: neutral_gen.score_arrays(c.reshape(len(c), *shape))[s], "basic")
        measures[score] = Measure(spec, True)
    return _problem(np.asarray(data.units.toarray(), dtype=np.float64), data.strata, measures)


def _steer(records: Sequence[Any]) -> Problem:
    from iris_tasks import bis_gen

    data = bis_gen.design(records)
    measures = {
        name: Measure(
            StatisticSpec(lambda c, n=name: bis_gen.score_arrays(c)[n], "basic"), bis_gen.HIGHER_IS_BETTER[name]
        )
        for name in ("gsr_stereotypical", "gsr_counter", "bis_gen_score")
    }
    measures["delta_gsr"] = Measure(StatisticSpec(bis_gen._difference, "max_t", (0.0, 1.0)), False)
    return _problem(data.units, data.strata, measures)
