"""Coverage beside every IRIS understanding score, the minimum it must reach, and the one warning per task.

Every headline score ``<name>`` gets ``<name>_coverage``: the share of its inputs that counted (occupation
answers mapped to one of the 52 classes, probe answers naming a bracket occupation, ratings and yes/no
replies parsed). Below ``min_coverage`` (``IRIS_MIN_COVERAGE`` in the harness, ``iris_min_coverage`` in the
score command's ``--metadata``; default :data:`DEFAULT_MIN_COVERAGE`) the score and its interval are NaN. The
threshold travels with the documents into each record (in millionths, so that the integer records stay
integers), so an aggregation sees the threshold its documents were built with.

:class:`Notes` gathers everything a task has to say about one computation (scores withheld for coverage,
intervals withheld, empty groups, an unbalanced corpus) and logs it as **one** warning.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from typing import Any

log = logging.getLogger("fairness_evals.iris")

#: Default least share of a score's answers that must count. Half: below it a score describes how a model
#: refuses or rambles more than what it judges (a model answering "I cannot tell." to everything would
#: otherwise get the best IFS-Und score, 180, and DHR 0), while a model that answers most questions, in any
#: wording the readers accept, keeps its score (README "Coverage").
DEFAULT_MIN_COVERAGE = 0.5
#: The setting's name in task metadata and in ``fairness-evals score iris --metadata``.
MIN_COVERAGE_KEY = "iris_min_coverage"
#: Where to change the threshold, named in the warning.
KEYS = "IRIS_MIN_COVERAGE (harness) or iris_min_coverage (fairness-evals score iris --metadata)"
PPM = 1_000_000


def to_ppm(value: Any) -> int:
    """The threshold of a document (a share, default :data:`DEFAULT_MIN_COVERAGE`) in millionths."""
    try:
        share = float(value) if value not in (None, "") else DEFAULT_MIN_COVERAGE
    except (TypeError, ValueError):
        share = DEFAULT_MIN_COVERAGE
    if not math.isfinite(share):
        share = DEFAULT_MIN_COVERAGE
    return round(min(1.0, max(0.0, share)) * PPM)


def threshold(ppm_values: Iterable[float], override: float | None) -> float:
    """The threshold of a computation: ``override`` if given, else the records' (the largest if they differ)."""
    if override is not None:
        value = float(override)
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"min_coverage must be a share in [0, 1], got {override!r}")
        return value
    values = {float(v) for v in ppm_values}
    return max(values) / PPM if values else DEFAULT_MIN_COVERAGE


def share(counted: int, total: int) -> float:
    """``counted / total``, NaN for no inputs."""
    return counted / total if total else math.nan


class Notes:
    """What one computation of a task has to report; :meth:`emit` logs it as one warning."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.items: list[str] = []

    def add(self, text: str) -> None:
        if text not in self.items:
            self.items.append(text)

    def below(self, names: str, counted: int, total: int, inputs: str, minimum: float) -> bool:
        """Note and return True when ``counted / total`` is below ``minimum`` (or there are no inputs)."""
        value = share(counted, total)
        if total and value >= minimum:
            return False
        self.add(
            f"{names} NaN: coverage {counted} of {total} {inputs}"
            + (f" ({value:.2f}) is below the minimum {minimum:g}" if total else "")
            + f" (set by {KEYS})"
        )
        return True

    def emit(self) -> None:
        if self.items:
            log.warning("%s: %s", self.task, "; ".join(self.items))
