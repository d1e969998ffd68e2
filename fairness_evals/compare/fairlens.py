"""FairLens closed-ended tasks for ``compare``: images are the units, resampled within the (collapsed) sampling
strata, with the task's own count layout and statistics (:mod:`fairlens_tasks.scoring`).

Each ``--log_samples`` line carries the document's record (under every metric name; ``soundness`` is read) and,
under ``fairlens_answer``, its document id. Both runs of a paired comparison must have evaluated the same images
(same corpus, sample fraction and seed); an image's strata come from its labels, which the corpus fixes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fairlens_tasks.labels import ATTRIBUTES
from fairness_evals.compare.problem import Measure, Problem
from metrics.paired import MeanOfMaxima, Spec

#: The closed-ended domain tasks (the open-ended ones need the judge's scores, which the samples do not carry).
TASKS = re.compile(r"fairlens_(?:hiring|legal|healthcare)")
#: Metrics that do not measure fairness: their verdicts say "higher", not "fairer".
NOT_FAIRNESS = frozenset({"soundness"})


class FairLens:
    name = "fairlens"
    provenance = ("seed", "sample_fraction", "corpus_sha256", "data_version")
    min_coverage = "fairlens_min_coverage, default 0.5"

    def owns(self, task: str) -> bool:
        return bool(TASKS.fullmatch(task))

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        answer = row.get("fairlens_answer")
        record = row.get("soundness")
        if not isinstance(answer, Mapping) or not answer.get("id") or not isinstance(record, list):
            raise ValueError(
                f"{where}: not a FairLens sample (no fairlens_answer id or record); run with --log_samples"
            )
        return str(answer["id"]), record

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        from fairlens_tasks import scoring

        rec = scoring._records_array(records)
        units, matrix = scoring.unit_counts(rec)
        first = np.unique(rec[:, 8], return_index=True)[1]
        strata = scoring.resampling_strata(scoring.stratum_codes(rec[first, 5], rec[first, 6], rec[first, 7]))
        specs: dict[str, Spec] = dict(scoring.interval_specs())
        for mean, part in (("parity_gap", "parity_gap_"), ("association_gap", "association_gap_")):
            # the mean over attributes of gaps, by attribute (metrics.paired.maxima_difference treats an attribute
            # whose groups tie apart from the others)
            blocks = [specs[f"{part}{a}"].function for a in ATTRIBUTES]
            specs[mean] = MeanOfMaxima(lambda c, blocks=blocks: [f(c) for f in blocks], (0.0, 1.0))
        measures = {
            name: Measure(spec, scoring.HIGHER_IS_BETTER[name], name not in NOT_FAIRNESS)
            for name, spec in specs.items()
        }
        return Problem(units=units, strata=strata, n_cells=matrix.shape[1], measures=measures, matrix=matrix,
                       what="images")  # fmt: skip
