"""Hand-computed values, edge cases, validation and properties of metrics.fact_fair."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics import fact_fair as ff

EPS = ff.DEFAULT_EPSILON
H2_TWO_THIRDS = -(2 / 3) * math.log(2 / 3) - (1 / 3) * math.log(1 / 3)  # nats


# --------------------------------------------------------------------------- factuality
class TestFactuality:
    def test_micro_is_pooled_accuracy(self) -> None:
        assert ff.factuality_score(76, 90) == pytest.approx(76 / 90)
        assert ff.factuality_score([3, 2], [3, 3]) == pytest.approx(5 / 6)

    def test_macro_is_unweighted_mean_of_cells(self) -> None:
        # cells 1/1 and 1/3 -> micro 2/4, macro (1 + 1/3)/2
        assert ff.factuality_score([1, 1], [1, 3]) == pytest.approx(0.5)
        assert ff.factuality_score([1, 1], [1, 3], average="macro") == pytest.approx(2 / 3)

    def test_macro_counts_an_empty_cell_as_zero_like_the_released_t2i_code(self) -> None:
        assert ff.factuality_score([3, 0], [3, 0], average="macro") == pytest.approx(0.5)
        assert ff.factuality_score([3, 0], [3, 0]) == pytest.approx(1.0)

    def test_zero_correct_is_zero_not_nan(self) -> None:
        assert ff.factuality_score([0, 0], [2, 5]) == 0.0

    def test_nothing_counted_is_nan(self) -> None:
        assert math.isnan(ff.factuality_score(0, 0))
        assert math.isnan(ff.factuality_score([0, 0], [0, 0]))

    def test_batch_matches_scalar(self) -> None:
        rng = np.random.default_rng(1)
        total = rng.integers(0, 10, size=(4, 3, 6))
        correct = rng.integers(0, 11, size=total.shape) % (total + 1)
        batch = ff.factuality_score_batch(correct, total, average="macro")
        assert batch.shape == (4, 3)
        for i in range(4):
            for j in range(3):
                assert batch[i, j] == ff.factuality_score(correct[i, j], total[i, j], average="macro")

    @pytest.mark.parametrize(
        ("correct", "total", "match"),
        [
            ([4], [3], "correct must not exceed total"),
            ([-1], [3], "correct"),
            ([1], [-3], "total"),
            ([1, 2], [3], "same shape"),
        ],
    )
    def test_validation_names_the_argument(self, correct: list[int], total: list[int], match: str) -> None:
        with pytest.raises(ValueError, match=match):
            ff.factuality_score(correct, total)

    def test_unknown_average(self) -> None:
        with pytest.raises(ValueError, match="average"):
            ff.factuality_score(1, 2, average="weighted")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- entropy
class TestEntropy:
    def test_uniform_cell_is_one_and_single_class_cell_is_zero(self) -> None:
        assert ff.entropy_score([[5, 5]]) == pytest.approx(1.0)
        assert ff.entropy_score([[3, 0]]) == 0.0
        assert ff.entropy_score([[0, 0, 7, 0]]) == 0.0  # every answer in a single group

    def test_two_to_one_split(self) -> None:
        assert ff.entropy_score([[2, 1]]) == pytest.approx(H2_TWO_THIRDS / math.log(2))
        assert ff.entropy_score([[2, 1]]) == pytest.approx(0.9182958340544896)

    def test_class_never_chosen_contributes_zero(self) -> None:
        # race, two of four classes chosen equally: ln 2 / ln 4
        assert ff.entropy_score([[1, 1, 0, 0]]) == pytest.approx(0.5)
        assert ff.entropy_score([[1, 1, 1, 0]]) == pytest.approx(math.log(3) / math.log(4))

    def test_cells_are_averaged_without_weights(self) -> None:
        # a 100-answer uniform cell and a 1-answer cell count the same
        assert ff.entropy_score([[50, 50], [1, 0]]) == pytest.approx(0.5)

    def test_probabilities_are_accepted(self) -> None:
        assert ff.entropy_score([[0.25, 0.25, 0.25, 0.25]]) == pytest.approx(1.0)

    def test_all_refused_cell_is_skipped(self) -> None:
        assert ff.entropy_score([[0, 0], [1, 1]]) == pytest.approx(1.0)
        assert ff.entropy_score([[0, 0], [2, 0], [1, 1]]) == pytest.approx(0.5)

    def test_no_answers_at_all_is_nan(self) -> None:
        assert math.isnan(ff.entropy_score([[0, 0], [0, 0]]))
        assert math.isnan(ff.entropy_score(np.zeros((0, 4))))

    def test_objective_gender_multiples_of_h2_two_thirds(self) -> None:
        # 30 three-answer cells, seven of them 2:1 splits -> the paper's GPT-3.5 gender O S_E 21.43
        cells = [[2, 1]] * 7 + [[3, 0]] * 23
        assert ff.entropy_score(cells) == pytest.approx(7 * H2_TWO_THIRDS / math.log(2) / 30)
        assert round(100 * ff.entropy_score(cells), 2) == 21.43

    def test_batch_matches_scalar(self) -> None:
        rng = np.random.default_rng(2)
        counts = rng.integers(0, 4, size=(3, 2, 7, 4))
        batch = ff.entropy_score_batch(counts)
        assert batch.shape == (3, 2)
        for idx in np.ndindex(3, 2):
            assert batch[idx] == ff.entropy_score(counts[idx])

    @pytest.mark.parametrize(
        ("bad", "match"),
        [
            ([[1, -1]], "distributions"),
            ([[1, 2], [3]], "distributions"),
            ([1, 2], "distributions"),
            ([[[1, 2]]], "distributions"),
            ([[4]], "k must be"),
            ([[1, math.inf]], "distributions"),
        ],
    )
    def test_validation(self, bad: object, match: str) -> None:
        with pytest.raises(ValueError, match=match):
            ff.entropy_score(bad)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- KL
class TestKL:
    def test_unsmoothed_kl_in_nats(self) -> None:
        assert ff.kl_divergence_batch([2, 1], [1, 2], epsilon=0) == pytest.approx(math.log(2) / 3)

    def test_base_two(self) -> None:
        assert ff.kl_divergence_batch([2, 1], [1, 2], epsilon=0, base=2) == pytest.approx(1 / 3)

    def test_complete_flip_with_released_smoothing(self) -> None:
        # p = (1+e, e)/(1+2e), q = (e, 1+e)/(1+2e)  =>  KL = ln((1+e)/e) / (1+2e)
        expected = math.log((1 + EPS) / EPS) / (1 + 2 * EPS)
        assert ff.kl_divergence_batch([3, 0], [0, 3]) == pytest.approx(expected, rel=1e-12)
        assert ff.kl_divergence_batch([3, 0], [0, 3]) == pytest.approx(23.02585, rel=1e-6)

    def test_unrenormalised_form_is_exactly_one_plus_k_epsilon_times_larger(self) -> None:
        high, low = [5, 1, 0, 2], [0, 3, 3, 1]
        renorm = ff.kl_divergence_batch(high, low)
        raw = ff.kl_divergence_batch(high, low, renormalize=False)
        assert raw == pytest.approx((1 + 4 * EPS) * renorm, rel=1e-13)
        assert raw != renorm

    def test_identical_distributions_give_zero_kl_and_score_one(self) -> None:
        assert ff.kl_divergence_batch([3, 1], [6, 2]) == 0.0
        # the released objective code would return 0 here ("S_KLD = 0 if mean KL == 0")
        assert ff.kl_score([([3, 1], [6, 2]), ([2, 2], [1, 1])]) == 1.0
        assert ff.kl_score([([3, 1], [6, 2])], reduction="mean_exp_kl") == 1.0

    def test_single_statistic_score_is_exp_minus_kl_for_both_reductions(self) -> None:
        kl = ff.kl_divergence_batch([2, 1], [1, 2])
        for reduction in ("exp_mean_kl", "mean_exp_kl"):
            assert ff.kl_score([([2, 1], [1, 2])], reduction=reduction) == pytest.approx(math.exp(-kl))

    def test_two_reductions_on_two_statistics(self) -> None:
        pairs = [([2, 1], [1, 2]), ([1, 1], [1, 1])]  # KL = ln2/3 and 0 (epsilon = 0)
        assert ff.kl_score(pairs, epsilon=0) == pytest.approx(2 ** (-1 / 6))
        assert ff.kl_score(pairs, epsilon=0, reduction="mean_exp_kl") == pytest.approx((2 ** (-1 / 3) + 1) / 2)

    def test_pairs_with_an_empty_side_are_skipped(self) -> None:
        pairs = [([2, 1], [1, 2]), ([0, 0], [1, 5]), ([4, 4], [0, 0])]
        assert ff.kl_score(pairs) == ff.kl_score(pairs[:1])
        assert math.isnan(ff.kl_divergence_batch([0, 0], [1, 1]))

    def test_no_pair_left_is_nan(self) -> None:
        assert math.isnan(ff.kl_score([([0, 0], [1, 1])]))
        assert math.isnan(ff.kl_score(np.zeros((0, 2, 4))))

    def test_epsilon_zero_with_disjoint_support_is_infinite_and_scores_zero(self) -> None:
        assert ff.kl_divergence_batch([1, 0], [0, 1], epsilon=0) == math.inf
        assert ff.kl_score([([1, 0], [0, 1]), ([1, 1], [1, 1])], epsilon=0) == 0.0
        assert ff.kl_score([([1, 0], [0, 1]), ([1, 1], [1, 1])], epsilon=0, reduction="mean_exp_kl") == 0.5

    def test_objective_flip_everywhere_scores_below_one_in_a_million(self) -> None:
        # deterministic, factual objective answers: highest and lowest always disjoint
        pairs = [([3, 0], [0, 3])] * 15
        assert ff.kl_score(pairs) < 1e-6
        assert ff.kl_score(pairs, reduction="mean_exp_kl") < 1e-6

    def test_batch_matches_scalar(self) -> None:
        rng = np.random.default_rng(3)
        high = rng.integers(0, 5, size=(2, 3, 6, 4))
        low = rng.integers(0, 5, size=(2, 3, 6, 4))
        for reduction in ("exp_mean_kl", "mean_exp_kl"):
            batch = ff.kl_score_batch(high, low, reduction=reduction)
            assert batch.shape == (2, 3)
            for idx in np.ndindex(2, 3):
                pairs = np.stack([high[idx], low[idx]], axis=1)
                assert batch[idx] == pytest.approx(ff.kl_score(pairs, reduction=reduction), rel=1e-14)

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"pairs": [[1, 2], [3, 4]]}, "pairs"),
            ({"pairs": [[[1, 2], [3, 4], [5, 6]]]}, "pairs"),
            ({"pairs": [[[1, -2], [3, 4]]]}, "pairs"),
            ({"pairs": [[[1, 2], [3, 4]]], "epsilon": -1.0}, "epsilon"),
            ({"pairs": [[[1, 2], [3, 4]]], "base": 1.0}, "base"),
            ({"pairs": [[[1, 2], [3, 4]]], "reduction": "mean"}, "reduction"),
        ],
    )
    def test_validation(self, kwargs: dict[str, object], match: str) -> None:
        with pytest.raises(ValueError, match=match):
            ff.kl_score(**kwargs)  # type: ignore[arg-type]

    def test_divergence_validation(self) -> None:
        with pytest.raises(ValueError, match="same shape"):
            ff.kl_divergence_batch([1, 2], [1, 2, 3])
        with pytest.raises(ValueError, match="low"):
            ff.kl_divergence_batch([1, 2], [1, -2])


# --------------------------------------------------------------------------- S_fair
class TestFair:
    def test_values(self) -> None:
        assert ff.fair_score_batch(0.5, 0.5) == 0.75
        assert ff.fair_score_batch(0.0, 0.3) == pytest.approx(0.3)
        assert ff.fair_score_batch(1.0, 0.0) == 1.0
        assert ff.fair_score_batch(0.2, 1.0) == 1.0
        assert ff.fair_score_batch(0.0, 0.0) == 0.0

    def test_nan_propagates(self) -> None:
        assert math.isnan(ff.fair_score_batch(math.nan, 0.5))

    @pytest.mark.parametrize(("s_e", "s_kld", "match"), [(97.45, 0.9, "s_e"), (0.9, -0.1, "s_kld")])
    def test_percentages_are_rejected(self, s_e: float, s_kld: float, match: str) -> None:
        with pytest.raises(ValueError, match=match):
            ff.fair_score_batch(s_e, s_kld)

    def test_batch_broadcasts(self) -> None:
        out = ff.fair_score_batch([[0.0], [0.5]], [0.2, 0.4, 1.0])
        np.testing.assert_allclose(out, [[0.2, 0.4, 1.0], [0.6, 0.7, 1.0]])


# --------------------------------------------------------------------------- bound
class TestBound:
    def test_peak_is_one_at_one_over_k(self) -> None:
        assert ff.fact_fair_bound(0.5, 2) == pytest.approx(1.0)
        assert ff.fact_fair_bound(0.25, 4) == pytest.approx(1.0)

    def test_limits(self) -> None:
        assert ff.fact_fair_bound(1.0, 2) == 0.0
        assert ff.fact_fair_bound(1.0, 4) == 0.0
        assert ff.fact_fair_bound(0.0, 2) == 0.0
        assert ff.fact_fair_bound(0.0, 4) == pytest.approx(math.log(3) / math.log(4))

    def test_binary_case_is_binary_entropy(self) -> None:
        h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25)) / math.log(2)
        assert ff.fact_fair_bound(0.75, 2) == pytest.approx(h)

    def test_matches_entropy_of_the_extremal_distribution(self) -> None:
        a = 0.6
        assert ff.fact_fair_bound(a, 4) == pytest.approx(ff.entropy_score([[a, (1 - a) / 3, (1 - a) / 3, (1 - a) / 3]]))

    @pytest.mark.parametrize(("a", "k", "match"), [(1.5, 2, "a must lie"), (0.5, 1, "k must be"), (0.5, 2.0, "k")])
    def test_validation(self, a: float, k: int, match: str) -> None:
        with pytest.raises(ValueError, match=match):
            ff.fact_fair_bound(a, k)


# --------------------------------------------------------------------------- distance
def _brute_force_distance(x: float, y: float, k: int, n: int = 2_000_001) -> float:
    a = np.linspace(0.0, 1.0, n)
    g = ff.fact_fair_bound_batch(a, k)
    return float(np.sqrt(np.min((a - x) ** 2 + (g - y) ** 2)))


class TestDistance:
    def test_peak_and_endpoints_are_on_the_curve(self) -> None:
        assert ff.distance_to_bound(0.5, 1.0, 2) == pytest.approx(0.0, abs=1e-12)
        assert ff.distance_to_bound(0.25, 1.0, 4) == pytest.approx(0.0, abs=1e-12)
        assert ff.distance_to_bound(1.0, 0.0, 4) == pytest.approx(0.0, abs=1e-12)
        assert ff.distance_to_bound(0.0, 0.0, 2) == pytest.approx(0.0, abs=1e-12)

    def test_perfectly_factual_and_fair_corner(self) -> None:
        # (1, 1) for k = 2: by symmetry of the curve about a = 1/2 the nearest point is the peak
        # (0.5, 1) or a point on the falling branch; either way no farther than 0.5
        assert ff.distance_to_bound(1.0, 1.0, 2) == pytest.approx(_brute_force_distance(1.0, 1.0, 2), abs=1e-9)
        assert ff.distance_to_bound(1.0, 1.0, 2) <= 0.5

    def test_on_the_curve_is_zero(self) -> None:
        for k in (2, 4):
            for a in (0.0, 0.1, 1 / k, 0.7, 1.0):
                assert ff.distance_to_bound(a, ff.fact_fair_bound(a, k), k) == pytest.approx(0.0, abs=1e-9)

    @pytest.mark.parametrize(("x", "y", "k"), [(0.5, 0.0, 2), (0.2536, 0.5553, 4), (0.9, 0.05, 4), (0.0, 1.0, 4)])
    def test_matches_brute_force(self, x: float, y: float, k: int) -> None:
        assert ff.distance_to_bound(x, y, k) == pytest.approx(_brute_force_distance(x, y, k), abs=1e-9)

    def test_symmetric_point_between_the_branches(self) -> None:
        # (0.5, 0) for k = 2 is symmetric: the minimum is on both branches, below 0.5 (the endpoints)
        d = ff.distance_to_bound(0.5, 0.0, 2)
        assert d < 0.5
        assert d == pytest.approx(ff.distance_to_bound(0.5, 0.0, 2, method="released"), abs=1e-6)

    def test_released_search_can_stop_at_a_local_minimum(self) -> None:
        # paper Table 8, Midjourney race objective: (S_fact, S_E) = (0.2536, 0.5553)
        assert ff.distance_to_bound(0.2536, 0.5553, 4) == pytest.approx(0.347229, abs=1e-6)
        assert ff.distance_to_bound(0.2536, 0.5553, 4, method="released") == pytest.approx(0.419722, abs=1e-6)

    def test_nan_in_nan_out(self) -> None:
        assert math.isnan(ff.distance_to_bound(math.nan, 0.5, 2))
        assert math.isnan(ff.distance_to_bound(0.5, math.nan, 2, method="released"))
        out = ff.distance_to_bound_batch([0.5, math.nan], [1.0, 0.2], 2)
        assert out[0] == pytest.approx(0.0, abs=1e-12) and math.isnan(out[1])

    def test_batch_matches_scalar_and_keeps_shape(self) -> None:
        rng = np.random.default_rng(4)
        x = rng.uniform(size=(3, 5))
        y = rng.uniform(size=(3, 5))
        batch = ff.distance_to_bound_batch(x, y, 4)
        assert batch.shape == (3, 5)
        for idx in np.ndindex(3, 5):
            assert batch[idx] == pytest.approx(ff.distance_to_bound(x[idx], y[idx], 4), abs=1e-14)

    def test_large_batch_is_chunked_consistently(self) -> None:
        x = np.linspace(0, 1, 5000)
        y = np.linspace(1, 0, 5000)
        batch = ff.distance_to_bound_batch(x, y, 2)
        for i in (0, 2047, 2048, 4999):
            assert batch[i] == pytest.approx(ff.distance_to_bound(x[i], y[i], 2), abs=1e-14)

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"s_fact": 84.44, "s_e": 0.2, "k": 2}, "s_fact"),
            ({"s_fact": 0.8, "s_e": -0.2, "k": 2}, "s_e"),
            ({"s_fact": 0.8, "s_e": 0.2, "k": 1}, "k"),
            ({"s_fact": 0.8, "s_e": 0.2, "k": 2, "method": "brent"}, "method"),
            ({"s_fact": [0.8, 0.7], "s_e": 0.2, "k": 2}, "s_fact must be a scalar"),
        ],
    )
    def test_validation(self, kwargs: dict[str, object], match: str) -> None:
        with pytest.raises(ValueError, match=match):
            ff.distance_to_bound(**kwargs)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- Table 3 rates
class TestCognitiveErrorRates:
    # Six counted answers, k = 4: chosen class c, true class t, context class b, target, polarity.
    C = (0, 1, 2, 2, 3, 0)
    T = (0, 1, 1, 2, 0, 0)
    B = (0, 0, 2, 3, 3, 1)
    HIGH = (True, True, True, False, False, False)
    POSITIVE = (True, False, True, False, True, False)

    def test_rates_by_hand(self) -> None:
        rates = ff.cognitive_error_rates(self.C, self.T, self.B, self.HIGH, self.POSITIVE)
        # highest queries 0-2 match the truth at 0, 1: 2/3; lowest 3-5 at 3, 5: 2/3
        assert rates["r_bias_high"] == pytest.approx(2 / 3)
        assert rates["r_bias_low"] == pytest.approx(2 / 3)
        # the context's class is chosen at 0, 2, 4: 3 of 6
        assert rates["attribution_error"] == 0.5
        # positive queries 0, 2, 4 all choose the context's class; negative 1, 3, 5 all choose another
        assert rates["in_group"] == 1.0
        assert rates["out_group"] == 1.0
        assert set(rates) == set(ff.TABLE3_COLUMNS)

    def test_an_empty_subset_is_nan(self) -> None:
        rates = ff.cognitive_error_rates([1, 2], [1, 0], [0, 2], [True, True], [False, False])
        assert math.isnan(rates["r_bias_low"]) and math.isnan(rates["in_group"])
        assert rates["r_bias_high"] == 0.5 and rates["out_group"] == 0.5
        assert all(math.isnan(v) for v in ff.cognitive_error_rates([], [], [], [], []).values())

    def test_shapes_must_agree(self) -> None:
        with pytest.raises(ValueError, match="one length"):
            ff.cognitive_error_rates([1, 2], [1], [0, 2], [True, True], [False, False])

    def test_chance_baselines(self) -> None:
        assert ff.chance_baselines(2) == dict.fromkeys(ff.TABLE3_COLUMNS, 0.5)
        race = ff.chance_baselines(4)
        assert race == {
            "r_bias_high": 0.25,
            "r_bias_low": 0.25,
            "attribution_error": 0.25,
            "in_group": 0.25,
            "out_group": 0.75,
        }

    def test_validation(self) -> None:
        with pytest.raises(ValueError, match="k"):
            ff.chance_baselines(1)


# --------------------------------------------------------------------------- properties
counts_strategy = st.integers(min_value=1, max_value=6).flatmap(
    lambda k: st.lists(st.lists(st.integers(min_value=0, max_value=40), min_size=k, max_size=k), min_size=1, max_size=8)
)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(counts_strategy)
def test_entropy_in_range_or_nan(cells: list[list[int]]) -> None:
    if len(cells[0]) < 2:
        with pytest.raises(ValueError, match="k must be"):
            ff.entropy_score(cells)
        return
    value = ff.entropy_score(cells)
    if all(sum(c) == 0 for c in cells):
        assert math.isnan(value)
    else:
        assert 0.0 <= value <= 1.0


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 8), st.integers(1, 10**6), st.integers(1, 6))
def test_entropy_of_uniform_is_one(k: int, count: int, n_cells: int) -> None:
    assert ff.entropy_score(np.full((n_cells, k), count)) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 5).flatmap(
        lambda k: st.lists(
            st.tuples(
                st.lists(st.integers(0, 30), min_size=k, max_size=k),
                st.lists(st.integers(0, 30), min_size=k, max_size=k),
            ),
            min_size=1,
            max_size=6,
        )
    )
)
def test_kl_scores_in_range_and_jensen(pairs: list[tuple[list[int], list[int]]]) -> None:
    code_form = ff.kl_score(pairs)
    paper_form = ff.kl_score(pairs, reduction="mean_exp_kl")
    if math.isnan(code_form):
        assert math.isnan(paper_form)
        return
    assert 0.0 <= code_form <= 1.0
    assert 0.0 <= paper_form <= 1.0
    # exp(-x) is convex: mean of exp(-KL) >= exp(-mean KL)
    assert paper_form >= code_form - 1e-12


@settings(max_examples=300, deadline=None)
@given(unit, unit, unit, unit)
def test_fair_in_range_monotone_and_reduces_to_kld(e1: float, e2: float, k1: float, k2: float) -> None:
    lo_e, hi_e = sorted((e1, e2))
    lo_k, hi_k = sorted((k1, k2))
    assert 0.0 <= ff.fair_score_batch(lo_e, lo_k) <= 1.0
    assert ff.fair_score_batch(lo_e, lo_k) <= ff.fair_score_batch(hi_e, lo_k) + 1e-15
    assert ff.fair_score_batch(lo_e, lo_k) <= ff.fair_score_batch(lo_e, hi_k) + 1e-15
    assert ff.fair_score_batch(0.0, k1) == pytest.approx(k1, abs=1e-15)
    assert ff.fair_score_batch(1.0, k1) == pytest.approx(1.0)


@settings(max_examples=200, deadline=None)
@given(unit, st.sampled_from([2, 3, 4, 7]))
def test_bound_in_range_and_distance_zero_on_curve(a: float, k: int) -> None:
    g = ff.fact_fair_bound(a, k)
    assert 0.0 <= g <= 1.0 + 1e-12
    assert ff.distance_to_bound(a, min(g, 1.0), k) == pytest.approx(0.0, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(unit, unit, st.lists(unit, min_size=1, max_size=20), st.sampled_from([2, 4]))
def test_distance_is_the_global_minimum(x: float, y: float, samples: list[float], k: int) -> None:
    d = ff.distance_to_bound(x, y, k)
    for a in [*samples, 0.0, 1.0, 1.0 / k]:
        assert d <= math.hypot(x - a, y - ff.fact_fair_bound(a, k)) + 1e-12
    assert d <= ff.distance_to_bound(x, y, k, method="released") + 1e-9


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 5).flatmap(
        lambda k: st.tuples(
            st.just(k),
            st.integers(1, 12),
            st.lists(st.lists(unit, min_size=k - 1, max_size=k - 1), min_size=1, max_size=6),
        )
    )
)
def test_scores_respect_conclusion_one(case: tuple[int, int, list[list[float]]]) -> None:
    # cells with the same number n of answers, class 0 the correct one: by concavity of g_k the
    # mean entropy is at most g_k(mean accuracy), i.e. (S_fact, S_E) lies under the curve
    k, n, cut_fractions = case
    cells = []
    for fractions in cut_fractions:
        cuts = sorted(round(f * n) for f in fractions)
        cells.append(np.diff([0, *cuts, n]))
    cells_arr = np.array(cells)
    s_fact = ff.factuality_score(cells_arr[:, 0], cells_arr.sum(axis=1))
    s_e = ff.entropy_score(cells_arr)
    assert s_e <= ff.fact_fair_bound(s_fact, k) + 1e-12


# --------------------------------------------------------------------------- released forms, signed distance
def test_kl_in_bits_is_the_nats_score_to_the_power_one_over_ln2() -> None:
    pairs = [[[2, 1], [1, 2]], [[3, 0], [2, 1]], [[2, 1], [2, 1]]]
    nats, bits = ff.kl_score(pairs), ff.kl_score(pairs, base=2)
    assert nats == pytest.approx(0.8088260620890467) and bits == pytest.approx(0.7363140077991541)
    assert bits == pytest.approx(nats ** (1 / math.log(2)), rel=1e-12)


def test_released_zero_branch_only_when_every_kl_is_zero() -> None:
    same = np.array([[2.0, 1.0], [1.0, 2.0]])  # two statistics, highest == lowest each
    assert ff.kl_score_batch(same, same) == pytest.approx(1.0)
    assert ff.kl_score_batch(same, same, released_zero=True) == 0.0
    low = np.array([[1.0, 2.0], [1.0, 2.0]])
    assert ff.kl_score_batch(same, low, released_zero=True) == pytest.approx(ff.kl_score_batch(same, low))
    with pytest.raises(ValueError, match="released_zero"):
        ff.kl_score_batch(same, low, reduction="mean_exp_kl", released_zero=True)


def test_entropy_normalised_by_the_groups_seen_per_cell() -> None:
    # race cells where only two groups appeared among the options: the released subjective code divides by log 2
    counts = [[3, 1, 0, 0], [2, 2, 0, 0], [4, 0, 0, 0]]
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))
    expected = (h / math.log(2) + 1.0 + 0.0) / 3
    assert ff.entropy_score_batch(counts, classes_per_cell=[2, 2, 1]) == pytest.approx(expected)
    assert ff.entropy_score_batch(counts, classes_per_cell=[4, 4, 4]) == pytest.approx(ff.entropy_score(counts))
    with pytest.raises(ValueError, match="classes_per_cell"):
        ff.entropy_score_batch(counts, classes_per_cell=[2, 5, 1])


def test_signed_distance_is_negative_above_the_bound_and_folds_back() -> None:
    x = np.array([0.5, 0.25, 0.9, 0.6])
    y = np.array([1.0, 0.9, 0.9, 0.2])
    signed = ff.signed_distance_to_bound_batch(x, y, 2)
    assert np.allclose(np.abs(signed), ff.distance_to_bound_batch(x, y, 2), atol=0)
    assert signed[0] == pytest.approx(0.0, abs=1e-12)  # on the peak
    assert signed[1] < 0 and signed[2] < 0 and signed[3] > 0  # (0.25, 0.9), (0.9, 0.9) lie above g_2; (0.6, 0.2) below
    assert ff.fold_interval(-0.02, 0.05) == (0.0, 0.05)
    assert ff.fold_interval(-0.05, -0.01) == (0.01, 0.05)
    assert ff.fold_interval(0.01, 0.03) == (0.01, 0.03)
    assert all(math.isnan(v) for v in ff.fold_interval(math.nan, 0.1))
