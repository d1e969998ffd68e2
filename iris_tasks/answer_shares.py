"""The share of a score's answers that counted, the minimum it must reach, and the reason noted when it does not.

Every headline score ``<name>`` of the understanding tasks gets ``<name>_coverage``: the share of its inputs that
counted (occupation answers mapped to one of the 52 classes, probe answers naming a bracket occupation, ratings and
yes/no replies parsed). Below ``min_coverage`` (``IRIS_MIN_COVERAGE`` in the harness, ``iris_min_coverage`` in task
metadata or the score command's ``--metadata``; default :data:`DEFAULT_MIN_COVERAGE`) the score and its interval are
NaN, with the reason noted in the task's :class:`fairness_evals.notes.Notes`. The threshold travels with the
documents into each record (in millionths, so that the integer records stay integers), so an aggregation sees the
threshold its documents were built with.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairness_evals import evidence
from fairness_evals.notes import Notes
from fairness_evals.records import records_array
from fairness_evals.statistics import Statistic
from iris_tasks import statistics as table

log = logging.getLogger("fairness_evals.iris")

#: Default least share of a score's answers that must count. Half: below it a score describes how a model
#: refuses or rambles more than what it judges (a model answering "I cannot tell." to everything would
#: otherwise get the best IFS-Und score, 180, and DHR 0), while a model that answers most questions, in any
#: wording the readers accept, keeps its score (README "Coverage").
DEFAULT_MIN_COVERAGE = table.DEFAULT
#: The setting's name in task metadata and in ``fairness-evals score iris --metadata``.
MIN_COVERAGE_KEY = table.THRESHOLD
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
    """A score's coverage: ``share = counted / total``, the inputs that counted among all its inputs; NaN for no
    inputs (``<score>_coverage``; below the task's ``iris_min_coverage`` the score and its interval are NaN)."""
    return counted / total if total else math.nan


def score_names(dimension: str) -> tuple[str, ...]:
    """The names of a dimension's magnitude, score and score interval (``ifs_und_magnitude``, ``ifs_und_score``,
    ``ifs_und_score_ci_low``, ``ifs_und_score_ci_high``): what is null when the score cannot be computed."""
    return tuple(f"{dimension}_{name}" for name in ("magnitude", "score", "score_ci_low", "score_ci_high"))


@dataclass(frozen=True)
class Understanding:
    """One understanding task's part of :func:`compute_metrics`: its name, its records' width and number type, each
    record's threshold in millionths (``ppm``), the statistics whose declared minima its estimates obey, and
    ``metrics``, every value from the records and the threshold (the reason for each null noted)."""

    task: str
    width: int
    ppm: Callable[[np.ndarray], np.ndarray]
    metrics: Callable[[np.ndarray, float, Notes], dict[str, Any]]
    statistics: Sequence[Statistic]
    dtype: Any = np.int64


def compute_metrics(
    task: Understanding,
    records: Sequence[Sequence[float]] | np.ndarray,
    *,
    min_coverage: float | None = None,
    notes: Notes | None = None,
    design_size: int | None = None,
) -> dict[str, Any]:
    """Every statistic of one understanding task (:mod:`iris_tasks.statistics`) from its records.

    ``min_coverage`` overrides the documents' threshold. ``design_size``: how many documents the task's design holds
    (the documents' ``documents``; None: the records are the whole design); a run that evaluated fewer gets no
    disparity (:data:`iris_tasks.statistics.DESIGN`, :func:`fairness_evals.evidence.enforce_estimates`). The reason
    for every NaN is noted in ``notes`` (a new :class:`~fairness_evals.notes.Notes` when None) and logged as the
    task's one warning."""
    rec = records_array(records, task.width, task.dtype)
    notes = notes if notes is not None else Notes(task.task)
    out = task.metrics(rec, threshold(task.ppm(rec), min_coverage), notes)
    evidence.enforce_estimates(out, task.statistics, evidence.design_counts(len(rec), design_size), notes)
    notes.warn(log)
    return out
