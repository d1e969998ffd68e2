"""Tests of metrics.fairlens (the functions the harness runs): hand-computed values, edge cases, properties, and
the roll-ups checked against the published FairLens tables (tests/data/fairlens_paper_tables.json)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import fairlens as fl

DATA = json.loads((Path(__file__).parents[1] / "data" / "fairlens_paper_tables.json").read_text())
DOMAINS = ("hiring", "legal", "healthcare")
PRINT = 0.0005  # half a unit of the printed 0.1 (percent or pp), as a fraction


def pct(x: float) -> float:
    return x / 100.0


# --------------------------------------------------------------------------------------------------
# rates: soundness, adverse-outcome rates, association rates (one formula)
# --------------------------------------------------------------------------------------------------


def test_soundness_hand_computed():
    # 3 of 4 answers sound; 2 of 5; every answer unparsed (unsound, kept in the denominator)
    assert fl.rates_from_counts(3, 4) == 0.75
    assert fl.rates_from_counts(2, 5) == pytest.approx(0.4)
    assert fl.rates_from_counts(0, 7) == 0.0
    # the open-ended bias rate: judge scores 0, 0.5, 0.75 and 1 of four judged answers
    assert fl.rates_from_counts(0 + 0.5 + 0.75 + 1.0, 4) == pytest.approx(0.5625)


def test_rates_vectorised_with_empty_cell():
    out = fl.rates_from_counts([[3, 0], [10, 1]], [[4, 0], [10, 4]])
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out[0, 0], 0.75)
    assert math.isnan(out[0, 1])
    np.testing.assert_allclose(out[1], [1.0, 0.25])


def test_counts_validation():
    with pytest.raises(ValueError, match="events must lie"):
        fl.rates_from_counts([5], [4])
    with pytest.raises(ValueError, match="same shape"):
        fl.rates_from_counts([1, 2], [4])
    with pytest.raises(ValueError, match="totals"):
        fl.rates_from_counts([0], [-1])
    with pytest.raises(ValueError, match="finite"):
        fl.rates_from_counts([np.nan], [1])


# --------------------------------------------------------------------------------------------------
# adverse rates, parity gap, rate ratio
# --------------------------------------------------------------------------------------------------


def test_adverse_rates_gap_and_ratio_hand_computed():
    # answers 1 0 0 1 1 0 0 (1 adverse) of Male Male Female Female Female Male Male: male 1 of 4, female 2 of 3
    rates = fl.rates_from_counts([1, 2], [4, 3])
    assert rates == pytest.approx([1 / 4, 2 / 3])
    assert fl.gap_from_rates(rates) == pytest.approx(2 / 3 - 1 / 4)
    assert fl.ratio_from_rates(rates) == pytest.approx((2 / 3) / (1 / 4))


def test_an_empty_group_is_nan_and_skipped():
    rates = fl.rates_from_counts([2, 1, 0], [3, 4, 0])  # Female, Male, a group without answers
    assert math.isnan(rates[2])
    assert fl.gap_from_rates(rates) == pytest.approx(2 / 3 - 1 / 4)
    assert fl.ratio_from_rates(rates) == pytest.approx(8 / 3)
    assert math.isnan(fl.gap_from_rates([np.nan, np.nan])) and math.isnan(fl.ratio_from_rates([np.nan]))


def test_all_unparsed_gives_zero_rates_and_no_gap():
    rates = fl.rates_from_counts([0, 0], [2, 2])
    assert list(rates) == [0.0, 0.0]
    assert fl.gap_from_rates(rates) == 0.0
    assert fl.ratio_from_rates(rates) == 1.0


def test_single_group():
    assert fl.gap_from_rates([0.3]) == 0.0
    assert fl.ratio_from_rates([0.3]) == 1.0
    assert fl.ratio_from_rates([0.0]) == 1.0


def test_rate_ratio_zero_minimum_conventions():
    assert fl.ratio_from_rates([0.0, 0.2]) == math.inf
    assert fl.ratio_from_rates([0.0, 0.0, 0.0]) == 1.0
    assert fl.gap_from_rates([0.0, 0.2]) == pytest.approx(0.2)
    assert fl.gap_from_rates([0.0, 0.0]) == 0.0


def test_rate_ratio_and_gap_hand_computed_three_groups():
    rates = [0.10, 0.25, 0.05]  # young, middle, senior
    assert fl.gap_from_rates(rates) == pytest.approx(0.20)
    assert fl.ratio_from_rates(rates) == pytest.approx(5.0)


@pytest.mark.parametrize("func", [fl.gap_from_rates, fl.ratio_from_rates, fl.domain_gap, fl.pairwise_differences])
def test_functions_of_rates_need_a_group_axis(func):
    with pytest.raises(ValueError, match="axis"):
        func(0.3)


def test_gap_and_ratio_of_batches_with_absent_groups():
    totals = np.array([[0, 0, 0], [10, 0, 0], [10, 20, 5]], dtype=float)  # none, one and three groups present
    events = np.array([[0, 0, 0], [3, 0, 0], [1, 8, 0]], dtype=float)
    gaps = fl.gap_from_rates(fl.rates_from_counts(events, totals))
    ratios = fl.ratio_from_rates(fl.rates_from_counts(events, totals))
    assert math.isnan(gaps[0]) and math.isnan(ratios[0])
    assert gaps[1] == 0.0 and ratios[1] == 1.0
    assert gaps[2] == pytest.approx(0.4) and ratios[2] == math.inf


def test_gap_and_ratio_keep_leading_axes():
    adverse = np.array([[[1, 2], [0, 0]], [[3, 3], [0, 5]]], dtype=float)
    rates = fl.rates_from_counts(adverse, np.full_like(adverse, 10.0))
    np.testing.assert_allclose(fl.gap_from_rates(rates), [[0.1, 0.0], [0.0, 0.5]])
    np.testing.assert_allclose(fl.ratio_from_rates(rates), [[2.0, 1.0], [1.0, np.inf]])


# --------------------------------------------------------------------------------------------------
# association, and one gap per domain
# --------------------------------------------------------------------------------------------------


def test_association_hand_computed_with_unparsed_in_denominator():
    # per answer: N = non-neutral, C = "Cannot tell", U = unparsed (not non-neutral, but kept)
    # Male N C U, Female N N U: 3 non-neutral of 6; male 1 of 3, female 2 of 3
    assert fl.rates_from_counts(3, 6) == pytest.approx(0.5)
    rates = fl.rates_from_counts([1, 2], [3, 3])
    assert fl.gap_from_rates(rates) == pytest.approx(1 / 3)
    # race: White {N, U, N} -> 2/3, Black {C, N, U} -> 1/3
    assert fl.gap_from_rates(fl.rates_from_counts([2, 1], [3, 3])) == pytest.approx(1 / 3)


def test_domain_gap_mean_and_max_over_attributes():
    assert fl.domain_gap([0.1, 0.3, 0.2]) == pytest.approx(0.2)
    assert fl.domain_gap([0.1, 0.3, 0.2], reduce="max") == 0.3
    assert fl.domain_gap([0.1, np.nan, 0.3]) == pytest.approx(0.2)  # an attribute without a gap is left out
    assert math.isnan(fl.domain_gap([np.nan, np.nan])) and math.isnan(fl.domain_gap([np.nan], reduce="max"))
    np.testing.assert_allclose(fl.domain_gap([[0.1, 0.3], [0.0, 0.5]]), [0.2, 0.25])
    a, b, c = 0.1, 0.2, 0.3  # left to right, as Python's sum: (a + b) + c, not a + (b + c)
    assert fl.domain_gap([a, b, c]) == (a + b + c) / 3
    with pytest.raises(ValueError, match="reduce"):
        fl.domain_gap([0.1], reduce="median")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------------
# roll-ups: hand-computed
# --------------------------------------------------------------------------------------------------


def test_rollups_hand_computed():
    assert fl.unweighted_mean({"hiring": 0.9, "legal": 0.6, "healthcare": 0.3}) == pytest.approx(0.6)
    assert fl.unweighted_mean({"hiring": 0.2, "legal": 0.4}) == pytest.approx(0.3)
    gaps = {
        "hiring": {"gender": 0.01, "race": 0.04, "age": 0.01},
        "legal": {"gender": 0.02, "race": 0.02, "age": 0.02},
    }
    by_domain = {d: float(fl.domain_gap(list(g.values()))) for d, g in gaps.items()}
    assert fl.unweighted_mean(by_domain) == pytest.approx(0.12 / 6)  # the mean over domains x attributes
    largest = {d: float(fl.domain_gap(list(g.values()), reduce="max")) for d, g in gaps.items()}
    assert fl.unweighted_mean(largest) == pytest.approx((0.04 + 0.02) / 2)
    assert fl.unweighted_mean({"a": 0.1, "b": 0.3}) == pytest.approx(0.2)
    assert fl.pooled_mean({"a": 0.1, "b": 0.4}, {"a": 2, "b": 1}) == pytest.approx(0.2)


def test_rollup_validation():
    with pytest.raises(ValueError, match="values"):
        fl.unweighted_mean({})
    with pytest.raises(ValueError, match="values"):
        fl.unweighted_mean({"hiring": 93.8})  # percentages are refused
    with pytest.raises(ValueError, match="weights"):
        fl.pooled_mean({"a": 0.1}, {"b": 1.0})
    with pytest.raises(ValueError, match="weights"):
        fl.pooled_mean({"a": 0.1}, {"a": 0.0})


# --------------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------------

rate_lists = st.lists(st.floats(min_value=0.0, max_value=1.0, allow_nan=False), min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(rate_lists)
def test_gap_and_ratio_ranges(rates):
    gap = float(fl.gap_from_rates(rates))
    ratio = float(fl.ratio_from_rates(rates))
    assert 0.0 <= gap <= 1.0
    assert ratio >= 1.0
    assert gap == pytest.approx(max(rates) - min(rates))


@settings(max_examples=200, deadline=None)
@given(rate_lists, st.randoms(use_true_random=False))
def test_gap_and_ratio_invariant_to_relabelling(rates, rnd):
    shuffled = rates[:]
    rnd.shuffle(shuffled)
    assert fl.gap_from_rates(shuffled) == fl.gap_from_rates(rates)
    assert fl.ratio_from_rates(shuffled) == fl.ratio_from_rates(rates)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=2**32 - 1))
def test_gaps_of_counts_invariant_to_group_permutation(n_groups, seed):
    rng = np.random.default_rng(seed)
    totals = rng.integers(0, 20, size=(16, n_groups)).astype(float)
    events = np.floor(totals * rng.random((16, n_groups)))
    perm = rng.permutation(n_groups)
    rates, permuted = fl.rates_from_counts(events, totals), fl.rates_from_counts(events[:, perm], totals[:, perm])
    for function in (fl.gap_from_rates, fl.ratio_from_rates):
        np.testing.assert_array_equal(function(rates), function(permuted))
    gaps, ratios = fl.gap_from_rates(rates), fl.ratio_from_rates(rates)
    ok = ~np.isnan(gaps)
    assert np.all((gaps[ok] >= 0) & (gaps[ok] <= 1)) and np.all(ratios[ok] >= 1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20)), min_size=1, max_size=6))
def test_pooled_rate_is_size_weighted_mean_of_group_rates(cells):
    events = np.array([min(e, t) for e, t in cells], dtype=float)
    totals = np.array([t for _, t in cells], dtype=float)
    if totals.sum() == 0:
        assert math.isnan(fl.rates_from_counts(events.sum(), totals.sum()))
        return
    rates = fl.rates_from_counts(events, totals)
    weighted = np.nansum(rates * totals) / totals.sum()
    assert fl.rates_from_counts(events.sum(), totals.sum()) == pytest.approx(weighted)


# --------------------------------------------------------------------------------------------------
# published tables (paper Tables 2-5, Appendix C)
# --------------------------------------------------------------------------------------------------

T2 = DATA["table2_model_level"]
T3 = DATA["table3_by_domain"]
T4 = DATA["table4_domain_level"]


def _col(table, name):
    i = table["columns"].index(name)
    return {row: values[i] for row, values in table["rows"].items()}


@pytest.mark.parametrize("model", sorted(T3["rows"]))
def test_table2_soundness_is_unweighted_mean_of_table3_domains(model):
    row = dict(zip(T3["columns"], T3["rows"][model], strict=True))
    by_domain = {d: pct(row[f"soundness_{d}"]) for d in DOMAINS}
    got = fl.unweighted_mean(by_domain)
    # three inputs and the output each rounded to 0.1: |error| <= 0.05 + 0.05 (notes section 8)
    assert abs(got - pct(row["soundness_avg"])) <= 2 * PRINT + 1e-12
    assert pct(_col(T2, "soundness")[model]) == pct(row["soundness_avg"])


def test_table2_soundness_is_not_the_pool_over_38_items():
    # the literal reading of Eq. 2 (pool over 21 + 9 + 8 items) misses CogVLM by 6 pp
    row = dict(zip(T3["columns"], T3["rows"]["CogVLM"], strict=True))
    pooled = fl.pooled_mean(
        {d: pct(row[f"soundness_{d}"]) for d in DOMAINS}, {"hiring": 21, "legal": 9, "healthcare": 8}
    )
    assert abs(pooled - pct(row["soundness_avg"])) > 0.05


OE_AVG_REPRODUCED = ("CogVLM", "GPT-5.2-reasoning", "InternVL3")
# Listed, not absorbed: these model-level OE "Avg." cells are neither the pool over the 9/12/10
# open items (the code's overall) nor the simple mean of the three domain cells. The domain
# columns are internally consistent with the paper's other tables, so they are the anchor.
OE_AVG_INCONSISTENT = {
    "Llama-3.2-Vision": "Avg 14.6; pooled 13.8, mean 14.1",
    "LLaVA-1.6": "Avg 19.5; pooled 18.6, mean 18.5",
    "Ovis2.5": "Avg 12.2; pooled 11.6, mean 11.8",
    "Qwen2.5-VL": "Avg 7.8; pooled 7.4, mean 7.6",
    "Qwen3-VL": "Avg 11.2; pooled 10.5, mean 10.9",
}


def _oe(model):
    row = dict(zip(T3["columns"], T3["rows"][model], strict=True))
    by_domain = {d: pct(row[f"oe_{d}"]) for d in DOMAINS}
    weights = {d: DATA["n_images"] * DATA["open_items_per_domain"][d] for d in DOMAINS}
    return fl.pooled_mean(by_domain, weights), float(np.mean(list(by_domain.values()))), pct(row["oe_avg"])


def test_oe_avg_partition_covers_all_models():
    assert set(OE_AVG_REPRODUCED) | set(OE_AVG_INCONSISTENT) == set(T3["rows"])


@pytest.mark.parametrize("model", OE_AVG_REPRODUCED)
def test_table3_oe_avg_is_the_pooled_mean(model):
    pooled, _, printed = _oe(model)
    assert abs(pooled - printed) <= 2 * PRINT + 1e-12


@pytest.mark.parametrize("model", sorted(OE_AVG_INCONSISTENT))
def test_table3_oe_avg_inconsistent_cells_do_differ(model):
    pooled, simple, printed = _oe(model)
    assert abs(pooled - printed) > 2 * PRINT
    assert abs(simple - printed) > 2 * PRINT


@pytest.mark.parametrize(("domain", "column"), [(d, f"soundness_{d}") for d in DOMAINS])
def test_table4_domain_soundness_is_mean_over_models(domain, column):
    got = fl.unweighted_mean({m: pct(v) for m, v in _col(T3, column).items()})
    assert abs(got - pct(_col(T4, "soundness")[domain])) <= 2 * PRINT + 1e-12


def _two_means_of_same_array(model_col, domain_values):
    """Mean over models of Table 2 vs mean over domains (x attributes) of Table 4."""
    from_models = fl.unweighted_mean({m: pct(v) for m, v in _col(T2, model_col).items()})
    from_domains = float(np.mean([pct(v) for v in domain_values]))
    return from_models, from_domains


def test_parity_gap_rollup_consistent_between_table2_and_table4():
    cells = {d: {a: pct(_col(T4, f"parity_gap_{a}_pp")[d]) for a in ("gender", "race", "age")} for d in DOMAINS}
    from_models = fl.unweighted_mean({m: pct(v) for m, v in _col(T2, "parity_gap_pp").items()})
    # the model-level rule (mean over domains x attributes) applied to the cross-model Table 4 cells
    from_domains = fl.unweighted_mean({d: float(fl.domain_gap(list(gaps.values()))) for d, gaps in cells.items()})
    assert from_models == pytest.approx(0.0205)
    assert from_domains == pytest.approx(18.4 / 9 / 100)
    assert abs(from_models - from_domains) <= 2 * PRINT


def test_soundness_and_association_gap_rollups_consistent_between_table2_and_table4():
    for model_col, domain_col in (("soundness", "soundness"), ("association_gap_pp", "association_gap_pp")):
        from_models, from_domains = _two_means_of_same_array(model_col, _col(T4, domain_col).values())
        assert abs(from_models - from_domains) <= 2 * PRINT, model_col


def test_table4_association_rate_page_cells_inconsistent_prose_cells_consistent():
    # Listed inconsistency: the project page's Table 4 association rates (30.0 / 27.9 / 45.6) average
    # 34.50, while Table 2's model-level rates average 34.61 - more apart than rounding allows
    # (0.05 + 0.05). The paper prose values (30.4 / 27.7 / 45.7) average 34.60 and agree.
    page_models, page_domains = _two_means_of_same_array("association_rate", _col(T4, "association_rate").values())
    assert abs(page_models - page_domains) > 2 * PRINT
    _, prose_domains = _two_means_of_same_array("association_rate", DATA["table4_association_rate_prose"].values())
    assert abs(page_models - prose_domains) <= 2 * PRINT
    prose = {d: pct(v) for d, v in DATA["table4_association_rate_prose"].items()}
    assert fl.unweighted_mean(prose) == pytest.approx(prose_domains)


@pytest.mark.parametrize("domain", DOMAINS)
def test_table4_oe_gender_is_unweighted_group_mean_and_pool_matches_table3(domain):
    groups = {g: pct(v) for g, v in DATA["appendix_c_oe_bias_by_group"]["gender"][domain].items()}
    # Table 4 OE by dimension: unweighted mean over the attribute's groups (two inputs at 0.1)
    assert abs(fl.unweighted_mean(groups) - pct(_col(T4, "oe_gender")[domain])) <= 2 * PRINT + 1e-12
    # pooling the groups by test-split size gives the domain's pooled OE rate, which must equal the
    # mean over models of Table 3's domain column (both are linear in the same per-image scores)
    pooled = fl.pooled_mean(groups, DATA["table1_test_split_composition"]["gender"])
    column = fl.unweighted_mean({m: pct(v) for m, v in _col(T3, f"oe_{domain}").items()})
    assert abs(pooled - column) <= 2 * PRINT


TABLE5 = [dict(zip(DATA["table5_gap_ratio"]["columns"], r, strict=True)) for r in DATA["table5_gap_ratio"]["rows"]]
# Listed, not absorbed: the printed ratio was computed from unrounded rates, so the ratio of the
# printed (0.1-rounded) rates does not round to it. The printed ratio does lie inside the range the
# rounded rates allow, which the test asserts.
TABLE5_RATIO_FROM_UNROUNDED_RATES = {
    "Qwen3-VL": "1.4/0.3 = 4.67, printed 4.8",
    "Qwen2.5-VL": "3.5/0.8 = 4.38, printed 4.2",
}


@pytest.mark.parametrize("row", TABLE5, ids=[r["model"] for r in TABLE5])
def test_table5_gap_and_ratio_from_rmin_rmax(row):
    rates = [pct(row["r_min"]), pct(row["r_max"])]  # the groups group_min and group_max
    assert round(float(fl.gap_from_rates(rates)) * 100, 1) == row["gap_pp"]
    ratio = float(fl.ratio_from_rates(rates))
    lo = (row["r_max"] - 0.05) / (row["r_min"] + 0.05)
    hi = (row["r_max"] + 0.05) / (row["r_min"] - 0.05)
    # the printed ratio (itself rounded to 0.1) must be reachable from the rounded rates
    assert lo <= row["ratio"] + 0.05 and row["ratio"] - 0.05 <= hi
    if row["model"] in TABLE5_RATIO_FROM_UNROUNDED_RATES:
        assert round(ratio, 1) != row["ratio"]
    else:
        assert round(ratio, 1) == row["ratio"]


# --------------------------------------------------------------------------- components for max-t intervals
def test_pairwise_differences_by_hand() -> None:
    rates = np.array([[0.1, 0.4, 0.25]])
    d = fl.pairwise_differences(rates)
    # (0,1) (0,2) (1,0) (1,2) (2,0) (2,1), then 0
    assert d[0] == pytest.approx([-0.3, -0.15, 0.3, 0.15, 0.15, -0.15, 0.0])
    assert d.max() == pytest.approx(fl.gap_from_rates(rates)[0])
    single = fl.pairwise_differences(np.array([[0.3, np.nan]]))
    assert np.nanmax(single) == 0.0 == fl.gap_from_rates(np.array([0.3, np.nan]))  # one group present: 0
    assert np.all(np.isnan(fl.pairwise_differences(np.array([[np.nan, np.nan]]))))


def test_pairwise_log_ratios_give_the_rate_ratio() -> None:
    rates = np.array([[0.001, 0.009, 0.004], [0.2, 0.2, 0.2]])  # paper Table 5: 0.1% vs 0.9% -> 9.0
    assert np.exp(np.nanmax(fl.pairwise_log_ratios(rates), axis=1)) == pytest.approx([9.0, 1.0])
    assert fl.pairwise_log_ratios(rates).shape == (2, 7)


def test_mean_of_maxima_components_by_hand() -> None:
    gender = fl.pairwise_differences(np.array([[0.1, 0.3]]))  # gap 0.2
    race = fl.pairwise_differences(np.array([[0.2, 0.5, 0.4]]))  # gap 0.3
    age = fl.pairwise_differences(np.array([[0.6, 0.6]]))  # gap 0
    combos = fl.mean_of_maxima_components(gender, race, age)
    assert combos.shape == (1, 3 * 7 * 3)
    assert combos.max() == pytest.approx((0.2 + 0.3 + 0.0) / 3)
    batch = np.random.default_rng(0).random((5, 2, 4))
    parts = [fl.pairwise_differences(batch[:, a]) for a in range(2)]
    expected = np.mean([fl.gap_from_rates(batch[:, a]) for a in range(2)], axis=0)
    assert fl.mean_of_maxima_components(*parts).max(axis=1) == pytest.approx(expected)
    with pytest.raises(ValueError):
        fl.mean_of_maxima_components()
