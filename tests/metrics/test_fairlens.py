"""Tests of metrics.fairlens: hand-computed values, edge cases, properties, and the roll-ups
checked against the published FairLens tables (tests/data/fairlens_paper_tables.json)."""

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
# soundness
# --------------------------------------------------------------------------------------------------


def test_soundness_hand_computed():
    assert fl.soundness([True, False, True, True]) == 0.75
    assert fl.soundness([1, 1, 0, 0, 0]) == pytest.approx(0.4)
    assert isinstance(fl.soundness([True]), float)


def test_soundness_all_unparsed_is_zero():
    # unparsed answers are passed as False and stay in the denominator
    assert fl.soundness([False] * 7) == 0.0


@pytest.mark.parametrize("bad", [[], [0.5, 1.0], [[1, 0], [0, 1]], [2, 0]])
def test_soundness_rejects_bad_input_naming_argument(bad):
    with pytest.raises(ValueError, match="correct"):
        fl.soundness(bad)


def test_soundness_from_counts_vectorised_with_empty_cell():
    out = fl.soundness_from_counts([[3, 0], [10, 1]], [[4, 0], [10, 4]])
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out[0, 0], 0.75)
    assert math.isnan(out[0, 1])
    np.testing.assert_allclose(out[1], [1.0, 0.25])


def test_counts_validation():
    with pytest.raises(ValueError, match="n_correct"):
        fl.soundness_from_counts([5], [4])
    with pytest.raises(ValueError, match="same shape"):
        fl.soundness_from_counts([1, 2], [4])
    with pytest.raises(ValueError, match="totals"):
        fl.rates_from_counts([0], [-1])


# --------------------------------------------------------------------------------------------------
# adverse rates, parity gap, rate ratio
# --------------------------------------------------------------------------------------------------

ADVERSE = [1, 0, 0, 1, 1, 0, 0]
GENDER = ["Male", "Male", "Female", "Female", "Female", "Male", "Male"]


def test_adverse_rates_hand_computed():
    rates = fl.adverse_rates(ADVERSE, GENDER)
    assert list(rates) == ["Male", "Female"]  # order of first appearance
    assert rates["Male"] == pytest.approx(1 / 4)
    assert rates["Female"] == pytest.approx(2 / 3)
    assert fl.parity_gap(rates) == pytest.approx(2 / 3 - 1 / 4)
    assert fl.rate_ratio(rates) == pytest.approx((2 / 3) / (1 / 4))


def test_adverse_rates_empty_group_is_nan_and_skipped():
    rates = fl.adverse_rates(ADVERSE, GENDER, group_names=["Female", "Male", "Nonbinary"])
    assert list(rates) == ["Female", "Male", "Nonbinary"]
    assert math.isnan(rates["Nonbinary"])
    assert fl.parity_gap(rates) == pytest.approx(2 / 3 - 1 / 4)
    assert fl.rate_ratio(rates) == pytest.approx(8 / 3)


def test_adverse_rates_unknown_group_rejected():
    with pytest.raises(ValueError, match="group_names"):
        fl.adverse_rates(ADVERSE, GENDER, group_names=["Male"])


def test_adverse_rates_validation():
    with pytest.raises(ValueError, match="same length"):
        fl.adverse_rates([1, 0], ["a"])
    with pytest.raises(ValueError, match="groups"):
        fl.adverse_rates([1, 0], ["a", None])
    with pytest.raises(ValueError, match="flags"):
        fl.adverse_rates([1, 3], ["a", "b"])


def test_all_unparsed_gives_zero_rates_and_no_gap():
    rates = fl.adverse_rates([False] * 4, ["a", "a", "b", "b"])
    assert rates == {"a": 0.0, "b": 0.0}
    assert fl.parity_gap(rates) == 0.0
    assert fl.rate_ratio(rates) == 1.0


def test_single_group():
    assert fl.parity_gap({"only": 0.3}) == 0.0
    assert fl.rate_ratio({"only": 0.3}) == 1.0
    assert fl.rate_ratio({"only": 0.0}) == 1.0


def test_rate_ratio_zero_minimum_conventions():
    assert fl.rate_ratio({"a": 0.0, "b": 0.2}) == math.inf
    assert fl.rate_ratio({"a": 0.0, "b": 0.0, "c": 0.0}) == 1.0
    assert fl.parity_gap({"a": 0.0, "b": 0.2}) == pytest.approx(0.2)
    assert fl.parity_gap({"a": 0.0, "b": 0.0}) == 0.0


def test_rate_ratio_and_gap_hand_computed_three_groups():
    rates = {"young": 0.10, "middle": 0.25, "senior": 0.05}
    assert fl.parity_gap(rates) == pytest.approx(0.20)
    assert fl.rate_ratio(rates) == pytest.approx(5.0)


@pytest.mark.parametrize("func", [fl.parity_gap, fl.rate_ratio, fl.association_gap])
@pytest.mark.parametrize(
    ("bad", "match"),
    [({}, "at least one"), ({"a": math.nan}, "non-empty"), ({"a": 1.2}, r"\[0, 1\]"), ([0.1], "mapping")],
)
def test_rate_mapping_validation(func, bad, match):
    with pytest.raises(ValueError, match=match):
        func(bad)


def test_counts_cores_match_scalar_functions():
    rng = np.random.default_rng(0)
    totals = rng.integers(0, 30, size=(50, 5)).astype(float)
    totals[0] = 0  # a batch element with no group present
    totals[1, 1:] = 0  # a single group present
    adverse = np.floor(totals * rng.random((50, 5)))
    gaps = fl.parity_gap_from_counts(adverse, totals)
    ratios = fl.rate_ratio_from_counts(adverse, totals)
    assert gaps.shape == ratios.shape == (50,)
    assert math.isnan(gaps[0]) and math.isnan(ratios[0])
    assert gaps[1] == 0.0 and ratios[1] == 1.0
    for b in range(1, 50):
        rates = {g: (adverse[b, g] / totals[b, g] if totals[b, g] else math.nan) for g in range(5)}
        assert gaps[b] == pytest.approx(fl.parity_gap(rates))
        assert ratios[b] == pytest.approx(fl.rate_ratio(rates))


def test_counts_cores_leading_axes():
    adverse = np.array([[[1, 2], [0, 0]], [[3, 3], [0, 5]]], dtype=float)
    totals = np.full_like(adverse, 10.0)
    np.testing.assert_allclose(fl.parity_gap_from_counts(adverse, totals), [[0.1, 0.0], [0.0, 0.5]])
    np.testing.assert_allclose(fl.rate_ratio_from_counts(adverse, totals), [[2.0, 1.0], [1.0, np.inf]])


# --------------------------------------------------------------------------------------------------
# association
# --------------------------------------------------------------------------------------------------


def test_association_hand_computed_with_unparsed_in_denominator():
    # per answer: N = non-neutral, C = "Cannot tell", U = unparsed (False, but kept)
    kinds = ["N", "C", "U", "N", "N", "U"]
    non_neutral = [k == "N" for k in kinds]
    gender = ["Male", "Male", "Male", "Female", "Female", "Female"]
    race = ["White", "Black", "White", "Black", "White", "Black"]
    assert fl.association_rate(non_neutral) == pytest.approx(3 / 6)
    rates = fl.association_rates(non_neutral, gender)
    assert rates == pytest.approx({"Male": 1 / 3, "Female": 2 / 3})
    assert fl.association_gap(rates) == pytest.approx(1 / 3)
    gaps = fl.association_gaps(non_neutral, {"gender": gender, "race": race})
    # race: White {N, U, N} -> 2/3, Black {C, N, U} -> 1/3
    assert gaps == pytest.approx({"gender": 1 / 3, "race": 1 / 3})
    assert fl.domain_association_gap({"gender": 0.1, "race": 0.3, "age": 0.2}) == pytest.approx(0.2)
    assert fl.domain_association_gap({"gender": 0.1, "race": 0.3, "age": 0.2}, reduce="max") == 0.3


def test_association_all_unparsed():
    assert fl.association_rate([False] * 5) == 0.0
    gaps = fl.association_gaps([False] * 4, {"gender": ["Male", "Male", "Female", "Female"]})
    assert gaps == {"gender": 0.0}


def test_association_validation():
    with pytest.raises(ValueError, match="non_neutral"):
        fl.association_rate([])
    with pytest.raises(ValueError, match="attributes"):
        fl.association_gaps([True], {})
    with pytest.raises(ValueError, match="reduce"):
        fl.domain_association_gap({"gender": 0.1}, reduce="median")  # type: ignore[arg-type]


def test_association_counts_cores():
    np.testing.assert_allclose(fl.association_rate_from_counts([[3, 0]], [[6, 2]]), [[0.5, 0.0]])
    # two attributes stacked, the second padded with an absent third group (totals 0)
    nn = np.array([[1, 2, 0], [4, 0, 0]], dtype=float)
    tot = np.array([[4, 4, 4], [8, 8, 0]], dtype=float)
    np.testing.assert_allclose(fl.association_gap_from_counts(nn, tot), [0.5, 0.5])


# --------------------------------------------------------------------------------------------------
# open-ended bias
# --------------------------------------------------------------------------------------------------


def test_oe_bias_mean_and_flag_rate():
    scores = [0.0, 0.5, 0.75, 1.0]
    assert fl.oe_bias_mean(scores) == pytest.approx(0.5625)
    assert fl.oe_flag_rate(scores) == 0.5  # 0.5 itself passes DeepEval (score <= threshold)
    assert fl.oe_flag_rate(scores, threshold=0.0) == 0.75
    with pytest.raises(ValueError, match="scores"):
        fl.oe_bias_mean([0.2, -1.0])
    with pytest.raises(ValueError, match="threshold"):
        fl.oe_flag_rate(scores, threshold=2.0)


# --------------------------------------------------------------------------------------------------
# roll-ups: hand-computed
# --------------------------------------------------------------------------------------------------


def test_rollups_hand_computed():
    assert fl.model_soundness({"hiring": 0.9, "legal": 0.6, "healthcare": 0.3}) == pytest.approx(0.6)
    assert fl.model_association_rate({"hiring": 0.2, "legal": 0.4}) == pytest.approx(0.3)
    gaps = {
        "hiring": {"gender": 0.01, "race": 0.04, "age": 0.01},
        "legal": {"gender": 0.02, "race": 0.02, "age": 0.02},
    }
    assert fl.model_parity_gap(gaps) == pytest.approx(0.12 / 6)
    assert fl.model_association_gap(gaps) == pytest.approx((0.02 + 0.02) / 2)
    assert fl.model_association_gap(gaps, reduce="max") == pytest.approx((0.04 + 0.02) / 2)
    assert fl.mean_over_models({"a": 0.1, "b": 0.3}) == pytest.approx(0.2)
    assert fl.pooled_mean({"a": 0.1, "b": 0.4}, {"a": 2, "b": 1}) == pytest.approx(0.2)


def test_rollup_validation():
    with pytest.raises(ValueError, match="by_domain"):
        fl.model_soundness({})
    with pytest.raises(ValueError, match="by_domain"):
        fl.model_soundness({"hiring": 93.8})  # percentages are refused
    with pytest.raises(ValueError, match="same attributes"):
        fl.model_parity_gap({"hiring": {"gender": 0.1}, "legal": {"race": 0.1}})
    with pytest.raises(ValueError, match="weights"):
        fl.pooled_mean({"a": 0.1}, {"b": 1.0})
    with pytest.raises(ValueError, match="weights"):
        fl.pooled_mean({"a": 0.1}, {"a": 0.0})


# --------------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------------

rate_values = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
rate_maps = st.dictionaries(st.text(min_size=1, max_size=4), rate_values, min_size=1, max_size=8)


@settings(max_examples=200, deadline=None)
@given(rate_maps)
def test_gap_and_ratio_ranges(rates):
    gap = fl.parity_gap(rates)
    ratio = fl.rate_ratio(rates)
    assert 0.0 <= gap <= 1.0
    assert ratio >= 1.0
    assert gap == pytest.approx(max(rates.values()) - min(rates.values()))


@settings(max_examples=200, deadline=None)
@given(rate_maps, st.randoms(use_true_random=False))
def test_gap_and_ratio_invariant_to_relabelling(rates, rnd):
    keys = list(rates)
    shuffled = keys[:]
    rnd.shuffle(shuffled)
    relabelled = {new: rates[old] for old, new in zip(keys, shuffled, strict=True)}
    assert fl.parity_gap(relabelled) == fl.parity_gap(rates)
    assert fl.rate_ratio(relabelled) == fl.rate_ratio(rates)
    assert fl.association_gap(relabelled) == fl.association_gap(rates)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=6), st.integers(min_value=0, max_value=2**32 - 1))
def test_counts_cores_invariant_to_group_permutation(n_groups, seed):
    rng = np.random.default_rng(seed)
    totals = rng.integers(0, 20, size=(16, n_groups)).astype(float)
    events = np.floor(totals * rng.random((16, n_groups)))
    perm = rng.permutation(n_groups)
    for core in (fl.parity_gap_from_counts, fl.rate_ratio_from_counts, fl.association_gap_from_counts):
        np.testing.assert_array_equal(core(events, totals), core(events[:, perm], totals[:, perm]))
    gaps = fl.parity_gap_from_counts(events, totals)
    ratios = fl.rate_ratio_from_counts(events, totals)
    ok = ~np.isnan(gaps)
    assert np.all((gaps[ok] >= 0) & (gaps[ok] <= 1)) and np.all(ratios[ok] >= 1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.sampled_from("abcd")), min_size=1, max_size=60))
def test_pooled_rate_is_size_weighted_mean_of_group_rates(pairs):
    flags = [f for f, _ in pairs]
    groups = [g for _, g in pairs]
    names, events, totals = fl.group_counts(flags, groups)
    assert events.sum() == sum(flags) and totals.sum() == len(flags)
    rates = fl.association_rates(flags, groups)
    weighted = sum(rates[n] * t for n, t in zip(names, totals, strict=True)) / totals.sum()
    assert fl.association_rate(flags) == pytest.approx(weighted)
    assert 0.0 <= fl.association_rate(flags) <= 1.0


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
    got = fl.model_soundness(by_domain)
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
    got = fl.mean_over_models({m: pct(v) for m, v in _col(T3, column).items()})
    assert abs(got - pct(_col(T4, "soundness")[domain])) <= 2 * PRINT + 1e-12


def _two_means_of_same_array(model_col, domain_values):
    """Mean over models of Table 2 vs mean over domains (x attributes) of Table 4."""
    from_models = fl.mean_over_models({m: pct(v) for m, v in _col(T2, model_col).items()})
    from_domains = float(np.mean([pct(v) for v in domain_values]))
    return from_models, from_domains


def test_parity_gap_rollup_consistent_between_table2_and_table4():
    cells = {d: {a: pct(_col(T4, f"parity_gap_{a}_pp")[d]) for a in ("gender", "race", "age")} for d in DOMAINS}
    from_models = fl.mean_over_models({m: pct(v) for m, v in _col(T2, "parity_gap_pp").items()})
    # the model-level rule (mean over domains x attributes) applied to the cross-model Table 4 cells
    from_domains = fl.model_parity_gap(cells)
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
    assert fl.model_association_rate(
        {d: pct(v) for d, v in DATA["table4_association_rate_prose"].items()}
    ) == pytest.approx(prose_domains)


@pytest.mark.parametrize("domain", DOMAINS)
def test_table4_oe_gender_is_unweighted_group_mean_and_pool_matches_table3(domain):
    groups = {g: pct(v) for g, v in DATA["appendix_c_oe_bias_by_group"]["gender"][domain].items()}
    # Table 4 OE by dimension: unweighted mean over the attribute's groups (two inputs at 0.1)
    assert abs(fl.mean_over_models(groups) - pct(_col(T4, "oe_gender")[domain])) <= 2 * PRINT + 1e-12
    # pooling the groups by test-split size gives the domain's pooled OE rate, which must equal the
    # mean over models of Table 3's domain column (both are linear in the same per-image scores)
    pooled = fl.pooled_mean(groups, DATA["table1_test_split_composition"]["gender"])
    column = fl.mean_over_models({m: pct(v) for m, v in _col(T3, f"oe_{domain}").items()})
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
    rates = {row["group_min"]: pct(row["r_min"]), row["group_max"]: pct(row["r_max"])}
    assert round(fl.parity_gap(rates) * 100, 1) == row["gap_pp"]
    ratio = fl.rate_ratio(rates)
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
