"""Issue 13 for IRIS understanding: the reported intervals cover the true score (tests/support/coverage_iris.py).

Seeded simulations through each task's own ``compute_metrics``, with fewer replicates than ``bench/coverage.py``
(the README's table uses 40 per design, enough for CI time): the designs here are the ones where each method has the
least margin in that table. A test fails when the coverage is below the bar (0.93 at the paper's sizes, 0.90 at the
lite sizes) by more than the simulation's own error allows (1.645 binomial standard errors at the bar for this
number of replicates: a method at its nominal 0.95 must not fail by chance, a method far below the bar fails), or
when the interval is grossly wide: the width ratio's denominator, the central 95% range of 8-40 estimates, is itself
uncertain by a factor up to 2 at these counts (1.79 at 40 replicates read 3.15 at 20), so the bound here is twice
the README's measured ratio; the table (``bench/coverage.py``) holds the bar.
"""

from __future__ import annotations

import math

import coverage_iris as sim
import numpy as np
import pytest

from iris_tasks import bis_und

#: (statistic, design, size, replicates, least coverage, largest width ratio); the README's "Intervals" explains
#: the IFS-Und width (a conservative band: the estimator's bias exceeds its spread, no covering interval is narrow).
CASES = [
    ("ifs_und_score", "gender", "lite", 8, 0.90, 12.0),
    ("ifs_und_score", "fair", "paper", 8, 0.93, 12.0),
    ("rfs_und_score", "greedy-probe/multi", "paper", 20, 0.93, 4.0),
    ("rfs_und_score", "moderate-probe/fair", "lite", 12, 0.90, 4.0),
    ("bis_und_score", "consistent", "paper", 40, 0.93, 4.0),
    ("bis_und_score", "biased", "lite", 30, 0.90, 4.0),
]


def _design(statistic: str, name: str) -> sim.Design:
    return next(d for d in sim.DESIGNS if d.statistic == statistic and d.name == name)


@pytest.mark.parametrize(("statistic", "name", "size", "replicates", "least", "widest"), CASES)
def test_interval_covers_the_true_score(
    statistic: str, name: str, size: str, replicates: int, least: float, widest: float
) -> None:
    rows = sim.simulate_design(_design(statistic, name), size, replicates=replicates, seed=1)
    [result] = [row for row in rows if row.kind == "interval"]
    assert result.printed == 1.0, result
    assert result.coverage >= least - 1.645 * math.sqrt(least * (1 - least) / replicates), result
    assert result.width_ratio <= widest, result


def test_truths() -> None:
    """A model that ignores the person has the perfect IFS-Und score; biased ones less; the BIS truth's pooled pair
    sums equal the task's own pairing."""
    assert sim.ifs_truth(sim.recognition_model("fair"), 5) == 180.0
    assert sim.ifs_truth(sim.recognition_model("gender"), 5) < sim.ifs_truth(sim.recognition_model("fair"), 5)
    probabilities = sim.win_probabilities("moderate")
    assert probabilities.shape == (18, 52) and np.allclose(probabilities.sum(axis=1), 13.0)  # 13 brackets
    rng = np.random.default_rng(3)
    occupations = np.arange(30) % 52
    answers = sim.set_answers("biased", occupations, rng)
    records = sim.bis_records(occupations, *answers)
    ratings = records[records[:, 3] == bis_und.RATING]
    pooled = bis_und.unit_matrix(ratings[ratings[:, 8] == 0], records[records[:, 3] == bis_und.YES_NO], 30).sum(0)
    assert np.allclose(pooled, sim.set_pair_totals(*answers))


def test_table_names_every_design() -> None:
    assert {(d.statistic, d.name) for d in sim.DESIGNS} >= {(c[0], c[1]) for c in CASES}
    with pytest.raises(ValueError, match="size"):
        sim.coverage_table("huge")
    assert math.isfinite(sim.bis_truth("paper"))
