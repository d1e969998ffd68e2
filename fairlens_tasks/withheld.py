"""Scores and intervals withheld from a task's results, and the one warning that says why.

A FairLens task reports NaN (written ``null``) for a score whose coverage is below its threshold (the score
and its interval), and for an interval that cannot be trusted (a group without answers, a ratio of a zero
rate). Every such decision is noted here with its reason, and :meth:`Withheld.warn` logs **one** warning per
task naming the scores, the coverage as "k of n <inputs>", the threshold and the key that changes it
(package conventions 2-3).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass, field

from fairlens_tasks.settings import Threshold

log = logging.getLogger("fairness_evals.fairlens")


@dataclass
class Withheld:
    """What one task withholds, in the order noted."""

    task: str
    reasons: list[str] = field(default_factory=list)
    scores: set[str] = field(default_factory=set)

    def below_threshold(
        self,
        out: MutableMapping[str, float],
        names: Iterable[str],
        *,
        covered: int,
        total: int,
        inputs: str,
        threshold: Threshold,
        label: str,
        with_intervals: Iterable[str] = (),
    ) -> bool:
        """NaN every score of ``names`` (and the interval of those in ``with_intervals``) when
        ``covered / total`` is below ``threshold``; returns whether it did. ``label`` names the scores in the
        warning (e.g. "parity_gap, parity_gap_* and adverse_rate_*"). No input at all is below any threshold
        above 0."""
        share = covered / total if total else math.nan
        if not (math.isnan(share) or share < threshold.value):
            return False
        if math.isnan(share) and threshold.value == 0:
            return False
        listed = list(names)
        for name in listed:
            out[name] = math.nan
        self.scores.update(listed)
        for name in with_intervals:
            out[f"{name}_ci_low"] = out[f"{name}_ci_high"] = math.nan
        self.reasons.append(
            f"{label} NaN: coverage {covered} of {total} {inputs} "
            f"({'no input' if not total else f'{share:.3f}'}) is below {threshold.key} = {threshold.value:g} "
            f"({threshold.how_to_change()})"
        )
        return True

    def interval(self, out: MutableMapping[str, float], names: Iterable[str], reason: str) -> None:
        """NaN the intervals of ``names`` (their estimates stay) because of ``reason``."""
        listed = [n for n in names if not (math.isnan(out[f"{n}_ci_low"]) and math.isnan(out[f"{n}_ci_high"]))]
        if not listed:
            return
        for name in listed:
            out[f"{name}_ci_low"] = out[f"{name}_ci_high"] = math.nan
        self.reasons.append(f"interval of {', '.join(listed)} withheld: {reason}")

    def note(self, reason: str) -> None:
        self.reasons.append(reason)

    def warn(self) -> None:
        if self.reasons:
            log.warning("%s: %s", self.task, "; ".join(self.reasons))
