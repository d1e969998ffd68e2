"""Image-generation tasks for ``compare``: one adapter class, which a benchmark instantiates for its generation tasks
with the pattern of their names and the function that builds a task's :class:`~fairness_evals.compare.problem.Problem`.

The prompts are fixed (a census), the images per prompt are the sample (the tasks' estimand). Two generators draw
*different* images for the same prompts, so nothing pairs their images: each run's images are resampled on their
own within their prompts (the task's own strata and count layout), with the rescaled bootstrap (``n - 1``
draws weighted ``n / (n - 1)``: the tasks correct the same ``(n - 1) / n`` shortfall of a plain bootstrap by spreading
their resamples). "Paired" here means the same prompts, checked like the documents of any task. The statistics are
the tasks' own.

Each ``--log_samples`` line of task version 3 carries the document's readable record (its ``id`` and ``record``)
under the task's carrier metric (:data:`CARRIERS`); a line of version 2 the document id under ``t2i_images`` and the
record under the metric the benchmark names (``record_keys``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fairness_evals.compare.problem import Measure, Problem
from metrics.bootstrap import Design

#: Where a sample of task version 3 carries the readable record (the tasks' carriers).
CARRIERS = ("images_with_faces", "images_labelled", "images_stereotypical")
PROVENANCE = ("classifier", "classifier_version", "classifier_spec", "data_version", "documents_sha256")


@dataclass(frozen=True)
class Generation:
    """The ``compare`` adapter of a benchmark's generation tasks: those whose name ``tasks`` matches whole, each
    made a :class:`Problem` by ``build(task, records)``; ``record_keys`` (task-name prefix -> metric) says where a
    version-2 sample line carries its record."""

    tasks: re.Pattern[str]
    build: Callable[[str, Sequence[Any]], Problem]
    record_keys: Mapping[str, str] = field(default_factory=dict)
    min_coverage: str = "its declared default"
    name: str = "generation"
    provenance: tuple[str, ...] = PROVENANCE

    def owns(self, task: str) -> bool:
        return bool(self.tasks.fullmatch(task))

    def sample(self, row: Mapping[str, Any], where: str) -> tuple[str, Any]:
        readable = next((row[k] for k in CARRIERS if isinstance(row.get(k), Mapping)), None)
        if readable is not None and readable.get("id") and isinstance(readable.get("record"), Mapping):
            return str(readable["id"]), dict(readable["record"])
        log = row.get("t2i_images")
        record = next((row[k] for k in self.record_keys.values() if isinstance(row.get(k), Mapping)), None)
        if not isinstance(log, Mapping) or not log.get("id") or record is None:
            raise ValueError(
                f"{where}: not a generation sample (no readable record, no t2i_images id and record); "
                "run with --log_samples"
            )
        return str(log["id"]), record

    def problem(self, task: str, records: Sequence[Any]) -> Problem:
        return self.build(task, records)


def images_problem(design: Design, measures: dict[str, Measure], **options: Any) -> Problem:
    """The :class:`Problem` of one generation task: its declared design (one unit per image, its prompt the stratum),
    resampled with the rescaled bootstrap, each run on its own (:attr:`Problem.independent`)."""
    return Problem.of(design, measures, what="images", rescaled=True, independent=True, **options)
