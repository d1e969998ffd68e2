"""The toy for ``fairness-evals compare``: documents are the units, each in one cell (picked the stereotyped option,
picked another; none when the reply named no option), and the rate is the first cell's share of the two, the
statistic the task reports. Two runs are compared document by document (a paired bootstrap, basic interval)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fairness_evals.compare.problem import Measure, Problem
from metrics.bootstrap import StatisticSpec
from toy_tasks.benchmark import BENCHMARK


def _rate(counts: np.ndarray) -> np.ndarray:
    """The stereotype rate of each row of cell counts (stereotyped, other), NaN where no answer named an option."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts[:, 0] / (counts[:, 0] + counts[:, 1])


class Toy:
    name = "toy"
    #: What the results record about the documents: two runs must agree on it to be paired.
    provenance = ("data_sha256",)
    min_coverage = BENCHMARK.described("toy_min_coverage")

    def owns(self, task: str) -> bool:
        return task == "toy"

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        from toy_tasks.scoring import logged_record

        found = logged_record(row)
        if found is None:
            raise ValueError(f"{where}: not a toy sample (no readable record); run with --log_samples")
        return found

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        rec = np.asarray(records, dtype=np.int64).reshape(-1, 2)
        cells = np.where(rec[:, 0] == 1, 1 - rec[:, 1], -1)
        measure = Measure(StatisticSpec(_rate, "basic", (0.0, 1.0)))
        return Problem(units=np.arange(len(rec)), strata=np.zeros(len(rec), dtype=np.int64), n_cells=2,
                       measures={"stereotype_rate": measure}, cells=cells, what="documents")  # fmt: skip


#: The toy's ``compare`` adapters.
ADAPTERS = (Toy(),)
