"""Seeded coverage simulations of the generation intervals (issue 13): every printed interval covers the generator's
population value at the bar, and every other is withheld. Designs: ``tests/support/coverage_generation.py``;
the full table (more replicates, every generator) is ``bench/coverage.py generation``.

With R replicates a measured coverage has a Monte-Carlo standard error of sqrt(c (1 - c) / R) (0.028 at R = 60), so
a test fails when the measured coverage is more than two standard errors below the bar: significantly below it. That
still fails every method the simulations rejected (percentile S_E and S_KLD, the max-min RD: coverage 0-0.7).
"""

from __future__ import annotations

import math

import pytest
from coverage_generation import SIZES, neutral_coverage, steer_coverage, t2i_coverage

TARGET = {"paper": 0.93, "lite": 0.90}
MAX_WIDTH_RATIO = 2.0


def check(rows: list, size: str, printed: set[str], replicates: int) -> None:
    """Each statistic in ``printed`` is printed in most replicates and not significantly below the bar; every other
    is never printed."""
    for row in (r for r in rows if r.kind == "interval"):  # the printed intervals
        name = row.name.split()[-1]
        if name in printed:
            assert row.printed >= 0.5, f"{row.name}: printed in only {row.printed:.2f} of {replicates} replicates"
            target = TARGET[size]
            allowance = 2 * math.sqrt(target * (1 - target) / (row.printed * replicates))
            assert row.coverage >= target - allowance, (
                f"{row.name}: coverage {row.coverage:.3f} < {target} - {allowance:.3f}"
            )
            assert row.width_ratio <= MAX_WIDTH_RATIO, f"{row.name}: width {row.width_ratio:.2f}x the spread"
        else:
            assert row.printed == 0.0, f"{row.name}: printed in {row.printed:.2f} of the replicates"
            assert math.isnan(row.coverage)


def test_fact_or_fair_t2i_at_the_papers_twenty_images_per_prompt() -> None:
    rows = t2i_coverage("mixed", SIZES["paper"], replicates=60)
    check(rows, "paper", {"s_fact_gender", "s_fact_race", "s_e_gender"}, 60)


def test_fact_or_fair_t2i_at_the_lite_size() -> None:
    rows = t2i_coverage("stereotyped", SIZES["lite"], replicates=60)
    check(rows, "lite", {"s_fact_gender", "s_fact_race"}, 60)


@pytest.mark.parametrize("generator", ["gap", "no_gap"])
def test_iris_steering_at_twenty_images_per_prompt(generator: str) -> None:
    """``no_gap``: equal success rates, ΔGSR = 0 and BIS-Gen = 85, the value a percentile interval of a max misses."""
    rows = steer_coverage(generator, SIZES["paper"], replicates=100)
    check(rows, "paper", {"gsr_stereotypical", "gsr_counter", "delta_gsr", "bis_gen_score"}, 100)


def test_iris_neutral_prints_no_interval() -> None:
    """No method reaches the bar (RD: bias beyond the spread; JSD, RFS-Gen: 0.89-0.93 for a stereotyped generator),
    so every neutral interval is withheld."""
    check(neutral_coverage("stereotyped", SIZES["paper"], replicates=5), "paper", set(), 5)
