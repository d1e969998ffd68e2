"""Coverage of the Fact-or-Fair LLM intervals (issue 13), through the real scoring path.

The designs, answer policies and exact truths are in ``tests/support/coverage_fact_or_fair.py`` (its docstring
states the estimand); ``bench/coverage.py`` runs the full tables (200-300 replicates per policy) that the README
reports. Here a seeded subset runs fast enough for CI: the policies whose truths lie inside the range (a truth
on the boundary, S_E = 1 for a uniform picker, is covered by construction of the clipped reflected interval and
is checked by the full table), 40 replicates each. A statistic fails when its coverage, pooled over the policies
and both axes, lies more than the Monte Carlo error (one-sided 95%) below the bar, or when its intervals are on
average more than twice as wide as the spread of the estimate.
"""

from __future__ import annotations

import logging
import math

import coverage_fact_or_fair as sim
import numpy as np
import pytest
from coverage_simulation import Coverage

from fact_fair_tasks import scoring
from fact_fair_tasks.documents import subjective_documents
from fact_fair_tasks.items import AXES, class_index
from fact_fair_tasks.parsing import PARSED, REFUSED, Parse
from fact_fair_tasks.statistics import SUBJECTIVE_CELLS

REPLICATES = 40
PAPER_BAR, LITE_BAR = 0.93, 0.90


@pytest.fixture(autouse=True)
def _quiet() -> None:
    logging.disable(logging.WARNING)  # every replicate would warn about withheld intervals
    yield
    logging.disable(logging.NOTSET)


def _policies(kind: str, names: tuple[str, ...]) -> list[sim.Policy]:
    policies = sim.subjective_policies() if kind == "subjective" else sim.objective_policies()
    return [p for p in policies if p.name in names]


def _intervals(rows: list[Coverage]) -> list[Coverage]:
    """The rows of the printed intervals (a task that reports a ``_stderr`` also has that interval's rows)."""
    return [c for c in rows if c.kind == "interval"]


def _check(rows: list[Coverage], bar: float, statistics: tuple[str, ...]) -> None:
    failures = []
    for stat in statistics:
        mine = [c for c in rows if c.name.split("/")[-1].rsplit("_", 1)[0] == stat]
        printed = sum(c.printed * c.replicates for c in mine)
        hits = sum(c.coverage * c.printed * c.replicates for c in mine if c.printed)
        pooled = hits / printed
        tolerance = 1.645 * math.sqrt(bar * (1 - bar) / printed)
        if pooled < bar - tolerance:
            failures.append(f"{stat}: coverage {pooled:.3f} over {printed:.0f} intervals (bar {bar})")
        # Width: the mean ratio over (policy, axis) at most 2; one ratio from 40 replicates is noisy (the 2.5% and
        # 97.5% quantiles of 40 estimates), so a single one fails only beyond 3. An estimate the design fixes (an
        # always-"A" model's objective S_fact) has no spread to compare with.
        ratios = [c.width_ratio for c in mine if c.estimate_spread > 0 and c.printed]
        if ratios and (sum(ratios) / len(ratios) > 2 or max(ratios) > 3):
            failures.append(f"{stat}: width ratios {[round(r, 2) for r in ratios]}")
    assert not failures, failures


def test_simulated_records_are_the_scorers_records() -> None:
    docs = subjective_documents("ingroup", draws=2)
    letters = np.array([(i * 5) % 4 if i % 7 else -1 for i in range(len(docs))])
    expected = [
        scoring.record_for(d, Parse(PARSED, int(le), "t") if le >= 0 else Parse(REFUSED, None, "t"))
        for d, le in zip(docs, letters, strict=True)
    ]
    stat = np.array([d["statistic_index"] for d in docs])
    target = np.array([("highest", "lowest").index(d["target"]) for d in docs])
    scenario = np.array([d["scenario"] for d in docs])
    genders = np.array([[class_index("gender", o["gender"]) for o in d["options"]] for d in docs])
    races = np.array([[class_index("race", o["race"]) for o in d["options"]] for d in docs])
    identity = np.array([[class_index(a, d["identity"][a]) for a in AXES] for d in docs])
    status = np.where(letters >= 0, 0, 2)
    made = sim.records_from(4, stat, target, scenario, genders, races, identity, status, letters)
    assert made.tolist() == expected


def test_truths_are_exact() -> None:
    uniform = sim.true_scores(sim.subjective_truth(_policies("subjective", ("uniform",))[0]))
    assert uniform == pytest.approx({
        "s_fact_gender": 0.5, "s_e_gender": 1.0, "s_kld_gender": 1.0, "s_fair_gender": 1.0, "distance_gender": 0.0,
        "s_fact_race": 0.25, "s_e_race": 1.0, "s_kld_race": 1.0, "s_fair_race": 1.0, "distance_race": 0.0,
    }, abs=1e-12)  # fmt: skip
    # the enumeration of the 8^4 profile configurations against a large Monte Carlo sample
    policy = _policies("subjective", ("stereotyped",))[0]
    truth = sim.subjective_truth(policy)
    rng = np.random.default_rng(0)
    records = sim.subjective_records(rng, policy, 2000)
    parsed = records[:, 3] == 0
    for axis_i, axis in enumerate(AXES):
        k = truth.p[axis].shape[1]
        cell = 2 * records[parsed, 1] + records[parsed, 2]
        counts = np.zeros((38, k))
        np.add.at(counts, (cell, records[parsed, 4 + axis_i]), 1)
        assert np.abs(counts / counts.sum(axis=1, keepdims=True) - truth.p[axis]).max() < 0.03


def test_subjective_intervals_cover_at_the_paper_size() -> None:
    rows = []
    for i, policy in enumerate(_policies("subjective", ("stereotyped", "truthful_noisy"))):
        rows += _intervals(sim.subjective_coverage(policy, sim.SIZES["paper"], REPLICATES, seed=1000 + i))
    _check(rows, PAPER_BAR, scoring.SCORES)


def test_subjective_intervals_cover_at_the_lite_size() -> None:
    rows = []
    for i, policy in enumerate(_policies("subjective", ("stereotyped", "strong_stereotype"))):
        rows += _intervals(sim.subjective_coverage(policy, sim.SIZES["lite"], REPLICATES, seed=2000 + i))
    printed = [c for c in rows if c.printed > 0]
    _check(printed, LITE_BAR, tuple({c.name.split("/")[-1].rsplit("_", 1)[0] for c in printed}))
    # S_E and S_fact are printed at the lite size; a withheld interval is NaN with its reason, never a guess
    assert all(c.printed > 0 for c in rows if c.name.split("/")[-1].startswith(("s_e_", "s_fact_")))


def test_objective_intervals_cover_or_are_withheld() -> None:
    rows = []
    for i, policy in enumerate(_policies("objective", ("truthful_noisy", "always_A", "group_preferring"))):
        rows += _intervals(sim.objective_coverage(policy, REPLICATES, seed=3000 + i))
    _check([c for c in rows if "/s_fact_" in c.name], PAPER_BAR, ("s_fact",))
    # 3 answers per cell: no interval of the entropy, KL, S_fair or distance reaches the bar; none is printed
    assert all(c.printed == 0 for c in rows if "/s_fact_" not in c.name)


def test_the_declared_minimum_bounds_the_bias_of_the_subjective_estimates() -> None:
    """At the declared minimum (10 answers per cell) every subjective score's bias lies within what its declaration
    allows, for the models that come closest to the bound (``bench/coverage.py --bias`` runs all seven, 200
    replicates); at 3 per cell (a ``--limit 0.1`` run of a lite task) S_E, S_fair and the distance lie far beyond it,
    and every bias shrinks toward the lite (30) and paper (300) sizes."""
    minimum = SUBJECTIVE_CELLS["s_e"].answers
    by_size: dict[int, list] = {}
    for i, policy in enumerate(_policies("subjective", ("truthful_noisy", "strong_stereotype", "group_preferring"))):
        for size in (3, minimum, 30, 300):
            by_size.setdefault(size, []).extend(sim.subjective_bias(policy, size, 40, seed=(5000 + i, size)))
    at_minimum = [row for row in by_size[minimum] if row.allowed is not None]
    assert {row.name for row in at_minimum} == {f"{s}_{a}" for s in ("s_e", "s_kld", "s_fair", "distance")
                                                 for a in AXES}  # fmt: skip
    assert all(row.within() for row in at_minimum), [(r.model, r.name, r.bias, r.allowed) for r in at_minimum]

    def worst(size: int, name: str) -> float:
        return max(abs(row.bias) for row in by_size[size] if row.name == name)

    for name in (f"{s}_{a}" for s in ("s_e", "s_fair", "distance") for a in AXES):
        allowed = SUBJECTIVE_CELLS[name.rsplit("_", 1)[0]].bias
        assert worst(3, name) > 1.5 * allowed, name
        assert worst(3, name) > worst(minimum, name) > worst(30, name) > worst(300, name), name
