"""FairLens closed-ended tasks for ``compare``: images are the units, resampled within the (collapsed) sampling
strata, with the task's own count layout and statistics (:mod:`fairlens_tasks.scoring`).

Each ``--log_samples`` line carries the document's readable record under the carrier ``unparsed_rate``: its id and
its integer record (:func:`fairlens_tasks.scoring.logged_record`, which also reads the lines of task version 2). Both
runs of a paired comparison must have evaluated the same images
(same corpus, sample fraction and seed); an image's strata come from its labels, which the corpus fixes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from fairlens_tasks.benchmark import BENCHMARK
from fairlens_tasks.labels import ATTRIBUTES
from fairness_evals.compare.problem import Measure, Problem
from metrics.bootstrap import StatisticSpec
from metrics.paired import MeanOfMaxima, Spec

#: The closed-ended domain tasks (the open-ended ones: :mod:`fairlens_tasks.compare_open`).
TASKS = re.compile(r"fairlens_(?:hiring|legal|healthcare)")
#: Metrics that do not measure fairness: their verdicts say "higher", not "fairer".
NOT_FAIRNESS = frozenset({"soundness"})


class FairLens:
    name = "fairlens"
    provenance = ("seed", "sample_fraction", "corpus_sha256", "data_version")
    min_coverage = BENCHMARK.described("fairlens_min_coverage")

    def owns(self, task: str) -> bool:
        return bool(TASKS.fullmatch(task))

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        from fairlens_tasks.scoring import CARRIER, logged_record

        found = logged_record(row)
        if found is None:
            raise ValueError(
                f"{where}: not a FairLens sample (no {CARRIER} record with its id); run with --log_samples"
            )
        return found

    #: The group roll-ups: the unweighted means over the three domains (``fairlens_tasks.scoring.model_level_mean``).
    groups: ClassVar[dict[str, tuple[str, ...]]] = {
        "fairlens": ("fairlens_hiring", "fairlens_legal", "fairlens_healthcare")
    }

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        from fairlens_tasks import scoring

        return Problem.of(scoring.unit_counts(records), _measures(), what="images")

    def group_problem(self, group: str, records: Mapping[str, Sequence[Any]]) -> Problem:
        """The ``fairlens`` roll-ups over the three domains: every image answers every domain's items, so the images
        are resampled once for all three (each domain's counts side by side; an image a domain lacks adds nothing
        there), and each roll-up is the mean of the three domain statistics, NaN when one is NaN."""
        from fairlens_tasks import scoring

        parts = [scoring.unit_counts(records[task]) for task in self.groups[group]]
        width = scoring.LAYOUT.n_cells
        design = scoring.side_by_side(parts, width)
        domain = _measures()
        measures = {}
        for name in ("soundness", "association_rate", "parity_gap", "association_gap"):
            measures[name] = Measure(_mean_over_domains(domain[name].spec, len(parts), width), name not in NOT_FAIRNESS)
        return Problem.of(design, measures, what="images")


def _measures() -> dict[str, Measure]:
    from fairlens_tasks import scoring

    specs: dict[str, Spec] = dict(scoring.interval_specs())
    for mean, part in (("parity_gap", "parity_gap_"), ("association_gap", "association_gap_")):
        # the mean over attributes of gaps, by attribute (metrics.paired.maxima_difference treats an attribute whose
        # groups tie apart from the others)
        blocks = [specs[f"{part}{a}"].function for a in ATTRIBUTES]
        specs[mean] = MeanOfMaxima(lambda c, blocks=blocks: [f(c) for f in blocks], (0.0, 1.0))
    return {name: Measure(spec, name not in NOT_FAIRNESS) for name, spec in specs.items()}


def _mean_over_domains(spec: Spec, n: int, width: int) -> Spec:
    """The mean over ``n`` domains, laid side by side in blocks of ``width`` columns, of one domain statistic. A mean
    of gaps stays a :class:`MeanOfMaxima` (all domains' attribute blocks); NaN when a domain's value is NaN."""
    parts = [slice(d * width, (d + 1) * width) for d in range(n)]
    if isinstance(spec, MeanOfMaxima):
        return MeanOfMaxima(lambda c: [b for part in parts for b in spec.blocks(c[:, part])], spec.bounds)

    def mean(c: np.ndarray) -> np.ndarray:
        return np.mean(np.column_stack([np.asarray(spec.function(c[:, part])) for part in parts]), axis=1)

    return StatisticSpec(mean, "basic", spec.bounds)


def _adapters() -> tuple:
    from fairlens_tasks.compare_open import FairLensOpen

    return (FairLens(), FairLensOpen())


#: Every ``compare`` adapter of FairLens: the closed-ended tasks and the open-ended ones.
ADAPTERS = _adapters()
