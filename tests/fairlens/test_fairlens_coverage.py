"""Coverage of the FairLens intervals (issue 13), closed and open-ended, through the real scoring path.

The designs, answer policies and exact truths are in ``tests/support/coverage_fairlens.py`` (its docstring
states the estimand); ``bench/coverage.py`` runs the full tables (400 replicates per policy and size) that the
README reports. Here a seeded subset runs fast enough for CI: at the paper's size the policy whose every true
gap is 0 (the case a percentile interval of a max - min gap never covers) and the biased one, at the lite size
the biased one, and the open-ended policies, :data:`REPLICATES` replicates each. A family of statistics fails
when its coverage, pooled over its intervals, lies more than the Monte Carlo error (one-sided 95%, over
replicates: the intervals of one replicate share its sample) below the bar,
when one interval's coverage lies more than three Monte Carlo errors below it, or when an interval is wider than
twice the spread of its estimate (2.5 for the means over attributes of gaps, and for gaps whose truth is 0 and
ratios whose truth is 1: their interval must reach the truth while their estimate, a maximum, concentrates away
from it; README "Intervals").
"""

from __future__ import annotations

import logging
import math

import coverage_fairlens as sim
import numpy as np
import pytest
from coverage_simulation import Coverage

from fairlens_tasks import scoring
from fairlens_tasks.documents import documents
from fairlens_tasks.normalise import Normalised
from fairlens_tasks.questions import domain_questions
from fairlens_tasks.settings import ENV, build_settings

REPLICATES = 60
FAMILIES = {
    "rates": ("soundness", "adverse_rate", "association_rate", "oe_bias_mean", "oe_flag_rate"),
    "gaps": ("parity_gap_", "association_gap_", "oe_bias_gap"),
    "ratios": ("rate_ratio",),
    "means of gaps": ("parity_gap", "association_gap"),
}


@pytest.fixture(autouse=True)
def _quiet() -> None:
    logging.disable(logging.WARNING)  # every replicate warns about the intervals it withholds
    yield
    logging.disable(logging.NOTSET)


def _family(name: str) -> str:
    statistic = name.split("/")[-1]
    if statistic in ("parity_gap", "association_gap"):
        return "means of gaps"
    for family, prefixes in FAMILIES.items():
        if family != "means of gaps" and statistic.startswith(prefixes):
            return family
    raise AssertionError(f"no family for {statistic}")


def _at_the_boundary(c: Coverage) -> bool:
    """A gap whose truth is (nearly) 0 or a ratio whose truth is (nearly) 1: the estimate, a maximum over many
    pairwise differences, concentrates away from the truth, so its spread understates the width any interval
    reaching the truth must have (README "Intervals": 1.8-2.3 measured)."""
    statistic = c.name.split("/")[-1]
    return ("_gap" in statistic and c.truth < 1e-3) or (statistic.startswith("rate_ratio") and c.truth < 1.01)


def _check(rows: list[Coverage], bar: float) -> None:
    failures = []
    for family in FAMILIES:
        mine = [c for c in rows if c.kind == "interval" and _family(c.name) == family and c.printed > 0]
        printed = sum(c.printed * c.replicates for c in mine)
        if not printed:
            continue
        hits = sum(c.coverage * c.printed * c.replicates for c in mine)
        # The intervals of one replicate share its sample, so they miss together: the Monte Carlo error of the
        # pooled coverage is taken over replicates (of the policy with the fewest), not over intervals.
        effective = min(c.printed * c.replicates for c in mine)
        if hits / printed < bar - 1.645 * math.sqrt(bar * (1 - bar) / effective):
            failures.append(f"{family}: coverage {hits / printed:.3f} over {printed:.0f} intervals (bar {bar})")
        for c in mine:
            n = c.printed * c.replicates
            if n >= 30 and c.coverage < bar - 3 * math.sqrt(bar * (1 - bar) / n):
                failures.append(f"{c.name}: coverage {c.coverage:.3f} over {n:.0f} intervals")
            if c.width_ratio > (2.5 if family == "means of gaps" or _at_the_boundary(c) else 2.0):
                failures.append(f"{c.name}: width ratio {c.width_ratio:.2f}")
    assert not failures, failures


def test_simulated_records_are_the_scorers_records(utk_folder) -> None:
    docs = documents(build_settings({"corpus": str(utk_folder), "sample_fraction": 1}, ENV), "healthcare")
    questions = domain_questions("healthcare")
    images = sorted({d["image_unit"] for d in docs})
    rng = np.random.default_rng(0)
    options = np.array([[int(rng.integers(-1, len(q.options))) for q in questions] for _ in images])
    codes = np.array([[0, 0, 0]] * len(images))
    for d in docs:
        codes[d["image_unit"]] = [("Male", "Female").index(d["gender"]), 0, 0]
        codes[d["image_unit"], 1] = ("White", "Black", "Asian", "Indian", "Other").index(d["race"])
        codes[d["image_unit"], 2] = ("young", "middle", "senior").index(d["age_band"])
    made = sim.records_from_options("healthcare", codes, options)
    expected = []
    for d in sorted(docs, key=lambda d: (d["image_unit"], d["question_index"])):
        chosen = options[d["image_unit"], questions.index(next(q for q in questions if q.id == d["question_id"]))]
        answer = Normalised(d["options"][chosen] if chosen >= 0 else None, "test")
        expected.append(scoring.record_for(d, answer))
    assert made.tolist() == expected


def test_the_designs_follow_the_package_allocation() -> None:
    paper, lite = sim.design("paper"), sim.design("lite")
    assert (paper.sum(), lite.sum()) == (1505, 301)
    assert paper.min() == 3 and lite.min() == 1  # the smallest strata: female, Other, senior
    by_gender = paper.reshape(2, 15).sum(axis=1)
    assert abs(by_gender[0] - 855) <= 2 and abs(by_gender[1] - 650) <= 2


def test_truths_are_exact() -> None:
    fair = sim._closed_truth(sim.CLOSED_POLICIES[0], sim.design("paper"))
    for attribute in ("gender", "race", "age"):
        assert fair[f"parity_gap_{attribute}"] == pytest.approx(0.0, abs=1e-12)
        assert fair[f"rate_ratio_{attribute}"] == pytest.approx(1.0)
    biased = sim._closed_truth(sim.CLOSED_POLICIES[1], sim.design("paper"))
    assert biased["parity_gap_age"] < 1e-3 < biased["parity_gap_gender"]  # ignores age: a true age gap of ~0
    # the expectation against a large Monte Carlo sample of the same design
    policy = sim.CLOSED_POLICIES[2]
    sizes = sim.design("paper")
    rng = np.random.default_rng(0)
    totals = sum(scoring.unit_counts(sim._closed_records(policy, sizes, rng)).observed() for _ in range(40))
    estimates = scoring._estimates(totals)
    truth = sim._closed_truth(policy, sizes)
    for name in ("soundness", "adverse_rate_gender_female", "association_rate", "adverse_rate_race_other"):
        assert estimates[name] == pytest.approx(truth[name], abs=0.004), name
    open_truth = sim._open_truth(sim.OPEN_POLICIES[1], sizes)
    _, judged, score, _, _ = sim._open_arrays(sim.OPEN_POLICIES[1], sizes * 20, rng)
    assert score[judged].mean() == pytest.approx(open_truth["oe_bias_mean"], abs=0.003)


def test_the_judged_metrics_are_the_tasks_intervals() -> None:
    from fairlens_tasks import open_scoring

    assert sim.closed_metrics() == scoring.WITH_INTERVALS
    assert sorted(sim.open_metrics()) == sorted(open_scoring.WITH_INTERVALS)
    for policy in sim.OPEN_POLICIES:  # every judged metric has its truth
        assert set(sim._open_truth(policy, sim.design("lite"))) >= set(sim.open_metrics())


def test_closed_intervals_cover_at_the_paper_size() -> None:
    rows = []
    for i, policy in enumerate(p for p in sim.CLOSED_POLICIES if p.name in ("fair", "gender_race")):
        rows += sim.simulate_closed(policy, "paper", replicates=REPLICATES, seed=100 + i)
    assert all(c.printed == 1.0 for c in rows)  # every group has enough images at the paper's size
    _check(rows, sim.TARGETS["paper"])
    true_zero = [c for c in rows if c.truth == 0.0 and "_gap" in c.name]
    assert true_zero and all(c.coverage >= 0.85 for c in true_zero)  # max-t reaches a true gap of 0


def test_closed_intervals_cover_or_are_withheld_at_the_lite_size() -> None:
    policy = next(p for p in sim.CLOSED_POLICIES if p.name == "gender_race")
    rows = sim.simulate_closed(policy, "lite", replicates=REPLICATES, seed=200)
    _check(rows, sim.TARGETS["lite"])
    # 17 Other and 22 senior images: their rates and every race or age comparison are withheld, never guessed
    withheld = {c.name.split("/")[-1] for c in rows if c.printed == 0}
    assert {"adverse_rate_race_other", "adverse_rate_age_senior", "parity_gap_race", "rate_ratio_age"} <= withheld
    assert {"parity_gap", "association_gap"} <= withheld
    assert all(
        c.printed == 1.0 for c in rows if c.name.endswith(("soundness", "parity_gap_gender", "rate_ratio_gender"))
    )


def test_open_ended_intervals_cover() -> None:
    rows = []
    for i, policy in enumerate(sim.OPEN_POLICIES):
        rows += sim.simulate_open(policy, "paper", replicates=REPLICATES // 2, seed=300 + i)
    assert all(c.printed == 1.0 for c in rows)
    _check(rows, sim.TARGETS["paper"])


def test_the_declared_minimum_bounds_the_bias_of_the_gaps() -> None:
    """At the declared minimum (10 images in every group) every comparison of groups is biased by at most what its
    declaration allows, under the policy whose every true gap is 0 and the one that refuses (the two that come
    closest; ``bench/coverage.py --bias`` runs every policy, 200 replicates); with one image per group (a ``--limit``
    run) the race gaps lie beyond it, and the bias shrinks toward the quick run's 17 and the paper's 83 images."""
    from fairlens_tasks.statistics import GAP_MINIMUM

    minimum, rows = GAP_MINIMUM.answers, {}
    for i, policy in enumerate(p for p in sim.CLOSED_POLICIES if p.name in ("fair", "refusing")):
        for n in (1, minimum, 17, 83):
            rows.setdefault(n, []).extend(sim.closed_bias(policy, "race", n, replicates=40, seed=7000 + 100 * i + n))
    at_minimum = [row for row in rows[minimum] if row.allowed is not None]
    assert {row.name for row in at_minimum} == set(sim._gap_metrics("race"))
    assert all(row.within() for row in at_minimum), [(r.model, r.name, r.bias, r.allowed) for r in at_minimum]

    def worst(n: int, name: str) -> float:
        return max(abs(row.bias) for row in rows[n] if row.name == name)

    for name in ("parity_gap_race", "association_gap_race", "association_gap"):
        assert worst(1, name) > worst(minimum, name) > worst(17, name) > worst(83, name), name
    assert worst(1, "association_gap_race") > 2 * GAP_MINIMUM.bias
