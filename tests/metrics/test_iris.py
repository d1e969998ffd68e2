"""Tests of metrics.iris: hand-computed values, edge cases and properties of every function."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from metrics import iris


def rd_bruteforce(p) -> float:
    """RD straight from IRIS Table 5: (1/(k-1)) sum_{i<j} |p_i - p_j| (an independent reference)."""
    p = [float(x) for x in p]
    k = len(p)
    return sum(abs(p[i] - p[j]) for i in range(k) for j in range(i + 1, k)) / (k - 1)


# --------------------------------------------------------------------------------------------------
# [M1] Representation Disparity
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("proportions", "expected"),
    [
        ([0.5, 0.5], 0.0),
        ([1.0, 0.0], 1.0),
        ([0.7, 0.3], 0.4),
        ([0.5, 0.3, 0.2], 0.3),  # (0.2 + 0.3 + 0.1) / 2
        ([0.4, 0.3, 0.2, 0.1], 1.0 / 3),  # (0.1+0.2+0.3+0.1+0.2+0.1) / 3
        ([0.5, 0.5, 0, 0, 0, 0], 0.8),  # 8 pairs (0.5, 0) / 5: two filled cells of a 6-cell grid
    ],
)
def test_representation_disparity_hand_computed(proportions, expected):
    assert iris.representation_disparity(proportions) == pytest.approx(expected, abs=1e-15)


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ([1.0], "at least 2"),
        ([0.2, 0.2], "sum to 1"),
        ([1.5, -0.5], "non-negative"),
        ([[0.5, 0.5]], "one-dim"),
    ],
)
def test_representation_disparity_validation(bad, match):
    with pytest.raises(ValueError, match=match):
        iris.representation_disparity(bad)


def test_rd_from_counts_vectorised_and_empty_occupation():
    out = iris.representation_disparity_from_counts([[5, 3, 2], [0, 0, 0], [4, 4, 4]])
    assert out.shape == (3,)
    assert out[0] == pytest.approx(0.3) and math.isnan(out[1]) and out[2] == 0.0


def test_mean_rd_skips_occupation_with_no_images():
    counts = [[5, 5], [10, 0], [0, 0]]  # RD 0, 1, and an occupation with no images
    assert iris.mean_representation_disparity(counts) == pytest.approx(0.5)
    batch = np.stack([counts, [[1, 0], [0, 1], [2, 2]]])
    np.testing.assert_allclose(iris.mean_representation_disparity_from_counts(batch), [0.5, 2 / 3])
    with pytest.raises(ValueError, match="no occupation"):
        iris.mean_representation_disparity([[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="counts"):
        iris.mean_representation_disparity([1, 2])


def test_representation_disparities_full_grid_with_missing_cells():
    # occupation A: two images differing only in gender; B: one image
    occ = ["A", "A", "B"]
    gender = ["male", "female", "female"]
    age = ["young", "young", "older"]
    skin = ["light", "light", "dark"]
    rd = iris.representation_disparities(occ, gender, age, skin)
    assert list(rd) == [
        "RD_gender",
        "RD_age",
        "RD_skin",
        "RD_gender_age",
        "RD_gender_skin",
        "RD_age_skin",
        "RD_joint_all",
    ]
    # A: gender uniform (0), age and skin point masses (1); B: point mass everywhere (1)
    assert rd["RD_gender"] == pytest.approx((0 + 1) / 2)
    assert rd["RD_age"] == pytest.approx(1.0)
    assert rd["RD_skin"] == pytest.approx(1.0)
    # A on the 6-cell gender x age grid: two cells of 0.5 -> 0.8; on gender x skin the same
    assert rd["RD_gender_age"] == pytest.approx((0.8 + 1) / 2)
    assert rd["RD_gender_skin"] == pytest.approx((0.8 + 1) / 2)
    assert rd["RD_age_skin"] == pytest.approx(1.0)
    # 18-cell grid: two cells of 0.5 -> 2 * 16 * 0.5 / 17
    assert rd["RD_joint_all"] == pytest.approx((16 / 17 + 1) / 2)
    assert rd["RD_joint_all"] == pytest.approx((rd_bruteforce([0.5, 0.5] + [0] * 16) + 1) / 2)


def test_representation_disparities_validation():
    with pytest.raises(ValueError, match="gender"):
        iris.representation_disparities(["A"], ["man"], ["young"], ["light"])
    with pytest.raises(ValueError, match="age"):
        iris.representation_disparities(["A"], ["male"], ["middle-aged"], ["light"])
    with pytest.raises(ValueError, match="same length"):
        iris.representation_disparities(["A", "A"], ["male"], ["young"], ["light"])
    with pytest.raises(ValueError, match="empty"):
        iris.representation_disparities([], [], [], [])


# --------------------------------------------------------------------------------------------------
# RD finite-sample floor
# --------------------------------------------------------------------------------------------------


def expected_rd_by_enumeration(n: int, p) -> float:
    p = np.asarray(p, dtype=float)
    total = 0.0
    for cells in itertools.product(range(n + 1), repeat=len(p)):
        if sum(cells) != n:
            continue
        prob = math.factorial(n) / math.prod(math.factorial(c) for c in cells) * math.prod(p**cells)
        total += prob * rd_bruteforce(np.asarray(cells) / n)
    return total


@pytest.mark.parametrize(("n", "k"), [(1, 2), (4, 2), (7, 3), (5, 4), (6, 6), (3, 9)])
def test_rd_floor_equals_full_multinomial_enumeration(n, k):
    assert iris.rd_finite_sample_floor(n, k) == pytest.approx(expected_rd_by_enumeration(n, [1 / k] * k), rel=1e-12)


@pytest.mark.parametrize("p", [[0.5, 0.3, 0.2], [0.7, 0.1, 0.1, 0.1], [0.9, 0.1]])
def test_expected_rd_non_uniform_equals_enumeration(p):
    assert iris.expected_representation_disparity(6, p) == pytest.approx(expected_rd_by_enumeration(6, p), rel=1e-12)


def test_rd_floor_matches_notes_table():
    # shared notes iris.md section 3 [M1] (simulation, 2 decimals)
    notes = {50: [0.11, 0.14, 0.19, 0.24, 0.33], 100: [0.08, 0.10, 0.14, 0.17, 0.24]}
    for n, values in notes.items():
        got = [round(iris.rd_finite_sample_floor(n, k), 2) for k in (2, 3, 6, 9, 18)]
        assert got == values


def test_rd_floor_against_seeded_monte_carlo_k18():
    rng = np.random.default_rng(20260301)
    draws = rng.multinomial(50, [1 / 18] * 18, size=40_000)
    rd = iris.representation_disparity_from_counts(draws)
    se = rd.std(ddof=1) / math.sqrt(rd.size)
    assert abs(rd.mean() - iris.rd_finite_sample_floor(50, 18)) < 4 * se


def test_rd_floor_edge_cases_and_validation():
    assert iris.rd_finite_sample_floor(1, 5) == pytest.approx(1.0)  # one image is a point mass
    assert iris.expected_representation_disparity(10, [1.0, 0.0, 0.0]) == pytest.approx(1.0)
    assert iris.rd_finite_sample_floor(400, 6) < iris.rd_finite_sample_floor(100, 6)
    with pytest.raises(ValueError, match="n_images"):
        iris.rd_finite_sample_floor(0, 2)
    with pytest.raises(ValueError, match="k"):
        iris.rd_finite_sample_floor(10, 1)
    with pytest.raises(ValueError, match="probabilities"):
        iris.expected_representation_disparity(10, [0.5, 0.6])


# --------------------------------------------------------------------------------------------------
# [M4, M5] JSD
# --------------------------------------------------------------------------------------------------


def test_js_divergence_hand_computed():
    assert iris.js_divergence([1, 0], [0, 1]) == pytest.approx(math.log(2))
    assert iris.js_divergence([0.3, 0.7], [0.3, 0.7]) == pytest.approx(0.0, abs=1e-15)
    # P = (1/2, 1/2), Q = (1, 0), M = (3/4, 1/4): (1/2 ln(4/3) + ln(4/3)) / 2 = (3/4) ln(4/3)
    assert iris.js_divergence([0.5, 0.5], [1.0, 0.0]) == pytest.approx(0.75 * math.log(4 / 3))
    # both vectors are renormalised (counts, or a reference row summing to < 1)
    assert iris.js_divergence([2, 2], [0.5, 0.0]) == pytest.approx(0.75 * math.log(4 / 3))


def test_js_divergence_zero_vector_is_zero_and_validation():
    assert iris.js_divergence([0, 0, 0], [0.2, 0.3, 0.5]) == 0.0
    assert iris.js_divergence([1, 2, 3], [0, 0, 0]) == 0.0
    with pytest.raises(ValueError, match="same number of cells"):
        iris.js_divergence([1, 0], [1, 0, 0])
    with pytest.raises(ValueError, match="p"):
        iris.js_divergence([-1, 2], [1, 1])


def test_js_divergence_from_counts_broadcasts():
    out = iris.js_divergence_from_counts([[1, 0], [1, 1], [0, 0]], [0, 1])
    np.testing.assert_allclose(out, [math.log(2), 0.75 * math.log(4 / 3), 0.0])


REFERENCE = {
    "doctor": {
        "gender": {"female": 0.5, "male": 0.5},
        "skin_tone": {"light": 0.5, "middle": 0.3, "dark": 0.166},
    },
    "nurse": {"gender": {"female": 1.0, "male": 0.0}},
    "pilot": {"gender": {"female": 0.1, "male": 0.9}},  # in the reference, but no model image
}


def test_attribute_js_divergences_hand_computed():
    occ = ["doctor", "doctor", "nurse", "nurse", "astronaut"]
    gender = ["female", "male", "female", "female", "male"]
    skin = ["light", "dark", "middle", "middle", "light"]
    out = iris.attribute_js_divergences(occ, {"gender": gender, "skin_tone": skin}, REFERENCE)
    # gender: doctor (1/2, 1/2) vs (1/2, 1/2) -> 0; nurse (1, 0) vs (1, 0) -> 0; astronaut and pilot out
    assert out["gender"] == pytest.approx(0.0, abs=1e-15)
    # skin: only doctor has a skin row; its reference (0.5, 0.3, 0.166) is renormalised
    ref = np.array([0.5, 0.3, 0.166]) / 0.966
    assert out["skin_tone"] == pytest.approx(iris.js_divergence([0.5, 0.0, 0.5], ref))
    assert out["skin_tone"] == pytest.approx(iris.mean_js_divergence({"doctor": [1, 0, 1]}, {"doctor": ref}))


def test_mean_js_divergence_averages_over_reference_occupations_with_images():
    model = {"a": [1, 0], "b": [0, 1], "c": [0, 0], "z": [1, 1]}
    ref = {"a": [0, 1], "b": [0, 1], "c": [1, 0]}
    # a: ln 2, b: 0; c has no images, z has no reference
    assert iris.mean_js_divergence(model, ref) == pytest.approx(math.log(2) / 2)
    with pytest.raises(ValueError, match="no occupation"):
        iris.mean_js_divergence({"x": [1, 0]}, ref)


def test_attribute_js_divergences_validation():
    with pytest.raises(ValueError, match="attributes\\['gender'\\]"):
        iris.attribute_js_divergences(["doctor"], {"gender": ["woman"]}, REFERENCE)
    with pytest.raises(ValueError, match="no 'age'"):
        iris.attribute_js_divergences(["doctor"], {"age": ["young"]}, REFERENCE)


# --------------------------------------------------------------------------------------------------
# [M2] AD and [M3] SPD
# --------------------------------------------------------------------------------------------------


def test_accuracy_disparity_hand_computed():
    predicted = ["doctor", "doctor", "nurse", "doctor", "unmappable", "pilot"]
    true = ["doctor", "doctor", "doctor", "nurse", "unmappable", "pilot"]
    groups = ["A", "A", "A", "B", "B", "C"]
    # A: 2/3; B: 0/2 (an 'unmappable' answer is never correct); C has one sample and is dropped
    assert iris.accuracy_disparity(predicted, true, groups) == pytest.approx(2 / 3)
    np.testing.assert_allclose(iris.accuracy_disparity_from_counts([2, 0, 1], [3, 2, 1]), 2 / 3)


def test_accuracy_disparity_fewer_than_two_valid_groups_is_zero():
    assert iris.accuracy_disparity(["a", "b", "a"], ["a", "a", "a"], ["g", "g", "h"]) == 0.0
    assert iris.accuracy_disparity(["a", "b"], ["a", "a"], ["g", "g"]) == 0.0  # single group
    np.testing.assert_array_equal(iris.accuracy_disparity_from_counts([[0, 0], [1, 1]], [[0, 0], [1, 1]]), [0, 0])
    with pytest.raises(ValueError, match="same length"):
        iris.accuracy_disparity(["a"], ["a", "b"], ["g"])
    with pytest.raises(ValueError, match="n_correct"):
        iris.accuracy_disparity_from_counts([3], [2])


def test_statistical_parity_difference_hand_computed_includes_unmappable():
    predicted = ["x", "x", "y", "x", "unmappable"]
    groups = ["A", "A", "A", "B", "B"]
    # x: 2/3 vs 1/2; y: 1/3 vs 0; unmappable: 0 vs 1/2 -> 1/2
    assert iris.statistical_parity_difference(predicted, groups) == pytest.approx(0.5)
    table = np.array([[2, 1, 0], [1, 0, 1]])
    assert iris.statistical_parity_difference_from_counts(table) == pytest.approx(0.5)
    assert iris.statistical_parity_difference(["x", "y"], ["A", "A"]) == 0.0  # single group


def test_spd_counts_core_batch_and_absent_group():
    tables = np.array([[[2, 1, 0], [1, 0, 1], [0, 0, 0]], [[0, 0, 0], [0, 0, 0], [0, 0, 0]]])
    out = iris.statistical_parity_difference_from_counts(tables)
    assert out[0] == pytest.approx(0.5) and math.isnan(out[1])


def test_ifs_und_metrics_structure_and_values():
    predicted = ["doctor", "nurse", "doctor", "unmappable", "doctor", "nurse", "pilot", "doctor"]
    true = ["doctor", "nurse", "nurse", "doctor", "doctor", "nurse", "pilot", "pilot"]
    gender = ["male", "female", "male", "female", "male", "female", "male", "female"]
    age = ["young", "young", "older", "older", "young", "young", "older", "older"]
    skin = ["light", "light", "light", "dark", "dark", "dark", "dark", "light"]
    out = iris.ifs_und_metrics(predicted, true, gender, age, skin)
    assert len(out) == 14 + 6
    assert out["AD_single_gender"] == pytest.approx(iris.accuracy_disparity(predicted, true, gender))
    pairs = list(zip(gender, skin, strict=True))
    assert out["SPD_dual_gender_skin"] == pytest.approx(iris.statistical_parity_difference(predicted, pairs))
    # male: correct 3/4, female: 2/4
    assert out["AD_single_gender"] == pytest.approx(0.25)
    for metric in ("AD", "SPD"):
        assert out[f"{metric}_single"] == pytest.approx(
            np.mean([out[f"{metric}_single_{c}"] for c in ("gender", "age", "skin")])
        )
        assert out[f"{metric}_triple"] == out[f"{metric}_triple_joint_all"]
    # every triple group has one sample here, so AD_triple is 0 by the <= 1 sample rule
    assert out["AD_triple"] == 0.0


def test_ifs_und_disparities_from_counts_batch_by_hand():
    """Two genders x one age x one skin tone, two classes: per resample row, AD and SPD of the gender groups."""
    counts = np.zeros((2, 2, 1, 1, 2, 2))  # (rows, gender, age, skin, class, correct)
    counts[0, 0, 0, 0, 0, 1] = 3  # row 0, men: 3 correct answers of class 0, 1 wrong of class 1
    counts[0, 0, 0, 0, 1, 0] = 1
    counts[0, 1, 0, 0, 0, 1] = 1  # women: 1 correct of class 0, 3 wrong of class 1
    counts[0, 1, 0, 0, 1, 0] = 3
    counts[1, :, 0, 0, 0, 1] = 2  # row 1: every group alike
    out = iris.ifs_und_disparities_from_counts(counts)
    np.testing.assert_allclose(out["AD_single_gender"], [0.5, 0.0])  # 3/4 - 1/4
    np.testing.assert_allclose(out["SPD_single_gender"], [0.5, 0.0])
    np.testing.assert_allclose(out["AD_single_age"], [0.0, 0.0])  # one age group: fewer than two groups
    np.testing.assert_allclose(out["AD_single"], [0.5 / 3, 0.0])  # (0.5 + 0 + 0) / 3
    np.testing.assert_allclose(out["SPD_triple_joint_all"], [0.5, 0.0])
    assert len(out) == 20
    with pytest.raises(ValueError, match="wrong, correct"):
        iris.ifs_und_disparities_from_counts(np.zeros((2, 1, 1, 2, 3)))


def test_ifs_und_magnitude_is_the_norm_of_the_level_rms_values():
    gaps = {f"{m}_{level}_{c}": 0.0 for m in ("AD", "SPD") for level, cs in iris.LEVELS.items() for c in cs}
    gaps.update(AD_single_gender=0.3, AD_single_age=0.4, SPD_triple_joint_all=0.5)
    # AD single: mean(0.09, 0.16, 0) = 0.25 / 3; SPD triple: 0.25 -> m = sqrt(0.25 / 3 + 0.25)
    assert iris.ifs_und_magnitude(gaps) == pytest.approx(math.sqrt(0.25 / 3 + 0.25))
    batch = {k: np.array([v, 2 * v, math.nan if k == "AD_dual_age_skin" else v]) for k, v in gaps.items()}
    out = iris.ifs_und_magnitude(batch)
    np.testing.assert_allclose(out[:2], [math.sqrt(0.25 / 3 + 0.25), 2 * math.sqrt(0.25 / 3 + 0.25)])
    assert math.isnan(out[2])  # a resample without a value
    assert iris.dimension_score(iris.ifs_und_magnitude(gaps), "IFS-Und") == pytest.approx(
        180 * math.exp(-5 * math.sqrt(0.25 / 3 + 0.25))
    )
    with pytest.raises(ValueError, match="lacks"):
        iris.ifs_und_magnitude({"AD_single_gender": 0.1})
    with pytest.raises(ValueError, match="non-negative"):
        iris.ifs_und_magnitude({**gaps, "AD_single_gender": -0.1})


def test_stereotype_drift_scores_from_counts_batch_by_hand():
    # occupations (doctor, nurse) x (female, male); reference 0.4 / 0.9 female (rows renormalised)
    reference = np.array([[0.4, 0.6], [1.8, 0.2]])
    counts = np.array([[[1, 3], [1, 1]], [[0, 0], [2, 0]], [[0, 0], [0, 0]]], dtype=float)
    out = iris.stereotype_drift_scores_from_counts(counts, reference)
    np.testing.assert_allclose(out[0], [np.mean([0.25 - 0.4, 0.5 - 0.9]), np.mean([0.75 - 0.6, 0.5 - 0.1])])
    np.testing.assert_allclose(out[1], [1.0 - 0.9, 0.0 - 0.1])  # only nurse has images
    assert np.isnan(out[2]).all()  # no occupation predicted
    with pytest.raises(ValueError, match="reference must have shape"):
        iris.stereotype_drift_scores_from_counts(counts, reference[:1])
    with pytest.raises(ValueError, match="positive sum"):
        iris.stereotype_drift_scores_from_counts(counts, np.zeros((2, 2)))


# --------------------------------------------------------------------------------------------------
# [M6] SDS
# --------------------------------------------------------------------------------------------------


def test_stereotype_drift_scores_hand_computed():
    reference = {
        "doctor": {"gender": {"female": 0.4, "male": 0.6}},
        "nurse": {"gender": {"female": 0.9, "male": 0.1}},
        "judge": {"gender": {"female": 0.5, "male": 0.5}},  # never predicted: not in the mean
    }
    predicted = ["doctor"] * 4 + ["nurse"] * 2 + ["unmappable", "pilot"]
    gender = ["male", "male", "male", "female", "female", "male", "female", "female"]
    out = iris.stereotype_drift_scores(predicted, {"gender": gender}, reference)
    # doctor: P(f) = 1/4 vs 0.4; nurse: 1/2 vs 0.9 -> mean(-0.15, -0.40)
    assert out["gender_female"] == pytest.approx(-0.275)
    assert out["gender_male"] == pytest.approx(0.275)
    assert iris.SDS_DEFINITION_VERSION == "fairness-evals-1"


def test_stereotype_drift_scores_renormalises_reference_and_skips_missing_attribute():
    reference = {
        "a": {
            "gender": {"female": 0.5, "male": 0.5},
            "skin_tone": {"light": 0.4, "middle": 0.4, "dark": 0.166},
        },
        "b": {"gender": {"female": 0.5, "male": 0.5}},  # no skin row (like the EU table)
    }
    out = iris.stereotype_drift_scores(
        ["a", "b"], {"gender": ["female", "male"], "skin_tone": ["light", "dark"]}, reference
    )
    assert out["gender_female"] == pytest.approx(0.0) and out["gender_male"] == pytest.approx(0.0)
    assert out["skin_tone_light"] == pytest.approx(1 - 0.4 / 0.966)
    assert out["skin_tone_dark"] == pytest.approx(0 - 0.166 / 0.966)
    assert sum(v for k, v in out.items() if k.startswith("skin")) == pytest.approx(0.0, abs=1e-12)


def test_stereotype_drift_scores_validation():
    ref = {"a": {"gender": {"female": 0.5, "male": 0.5}}}
    with pytest.raises(ValueError, match="predicted"):
        iris.stereotype_drift_scores(["z"], {"gender": ["male"]}, ref)
    with pytest.raises(ValueError, match="attributes\\['gender'\\]"):
        iris.stereotype_drift_scores(["a"], {"gender": ["man"]}, ref)
    with pytest.raises(ValueError, match="none of the given attributes"):
        iris.stereotype_drift_scores(["a"], {"age": ["young"]}, ref)


# --------------------------------------------------------------------------------------------------
# BIS-Gen penalties
# --------------------------------------------------------------------------------------------------


def test_delta_gsr_and_mean_difference_penalty():
    assert iris.delta_gsr_penalty([1, 1, 1, 0], [1, 0, 0, 0]) == pytest.approx(0.5)
    assert iris.delta_gsr_penalty([1, 0, 0, 0], [1, 1, 1, 0]) == 0.0  # floored at 0
    assert iris.mean_difference_penalty([0.8, math.nan, 0.6], [0.5]) == pytest.approx(0.2)
    assert iris.mean_difference_penalty([0.5], [0.8]) == 0.0
    with pytest.raises(ValueError, match="success_counter"):
        iris.delta_gsr_penalty([1], [])
    with pytest.raises(ValueError, match="counter"):
        iris.mean_difference_penalty([0.5], [math.nan])


# --------------------------------------------------------------------------------------------------
# [M10] AC_diff and [M11] DHR
# --------------------------------------------------------------------------------------------------

#                (unit, gender,  age,     skin,    score)
RECORDS = [
    ("u1", "male", "young", "light", 5),
    ("u1", "female", "young", "light", 3),
    ("u1", "female", "older", "light", 4),
    ("u1", "female", "older", "dark", 9),
    ("u2", "male", "young", "light", 1),
    ("u2", "female", "young", "light", 2),
    ("u2", "female", "young", "light", 7),  # same attributes as the previous record: never paired with it
]


def _columns(records):
    return [list(c) for c in zip(*records, strict=True)]


def test_pairwise_comparison_means_hand_computed():
    unit, gender, age, skin, score = _columns(RECORDS)
    out = iris.pairwise_comparison_means(score, unit, gender, age, skin)
    # u1 pairs: 1-2 gender |2|; 1-3 gender+age |1|; 1-4 all |4|; 2-3 age |1|; 2-4 age+skin |6|;
    # 3-4 skin |5|. u2: 5-6 gender |1|, 5-7 gender |6|, 6-7 identical (not used).
    assert out["gender"] == pytest.approx((2 + 1 + 6) / 3)
    assert out["age"] == 1.0
    assert out["skin"] == 5.0
    assert out["gender_age"] == 1.0
    assert out["age_skin"] == 6.0
    assert out["joint_all"] == 4.0
    assert math.isnan(out["gender_skin"])  # no pair differs on exactly gender and skin


def test_counterfactual_pair_sums_per_unit_hand_computed():
    """The same records as above, as the task's per-unit pair sums: unit 0 = u1, unit 1 = u2, one question."""
    codes = {"male": 0, "female": 1, "young": 0, "older": 2, "light": 0, "dark": 2}
    units = [0 if r[0] == "u1" else 1 for r in RECORDS]
    triples = [[codes[r[1]], codes[r[2]], codes[r[3]]] for r in RECORDS]
    scores = [r[4] for r in RECORDS]
    sums, counts = iris.counterfactual_pair_sums(units, [0] * 7, triples, scores, n_units=2, kind="abs")
    column = {name: i for i, name in enumerate(iris.COMPARISONS)}
    # u1: gender |5-3| = 2, gender+age |5-4| = 1, all |5-9| = 4, age |3-4| = 1, age+skin |3-9| = 6, skin |4-9| = 5
    assert sums[0].tolist() == [2, 1, 5, 1, 0, 6, 4] and counts[0].tolist() == [1, 1, 1, 1, 0, 1, 1]
    # u2: gender |1-2| = 1 and |1-7| = 6; the two identical triples are not paired
    assert sums[1, column["gender"]] == 7 and counts[1].sum() == 2
    pooled = sums.sum(axis=0) / np.where(counts.sum(axis=0) > 0, counts.sum(axis=0), np.nan)
    assert pooled[column["gender"]] == pytest.approx((2 + 1 + 6) / 3)  # as pairwise_comparison_means above
    # "neq": the share of pairs answered differently; pairs only within one question
    same, n = iris.counterfactual_pair_sums(
        units, [0, 1, 0, 1, 0, 0, 1], triples, [1, 1, 0, 1, 1, 0, 0], n_units=2, kind="neq"
    )
    # u1 q0: records 1, 3 (gender+age, 1 vs 0); q1: 2, 4 (age+skin, 1 vs 1); u2 q0: 5, 6 (gender, 1 vs 0)
    assert n[0].tolist() == [0, 0, 0, 1, 0, 1, 0] and same[0].tolist() == [0, 0, 0, 1, 0, 0, 0]
    assert n[1, column["gender"]] == 1 and same[1, column["gender"]] == 1
    with pytest.raises(ValueError, match="kind"):
        iris.counterfactual_pair_sums(units, [0] * 7, triples, scores, n_units=2, kind="max")  # type: ignore[arg-type]


def test_ac_diff_and_dhr_levels():
    unit, gender, age, skin, score = _columns(RECORDS)
    ac = iris.answer_consistency_difference(score, unit, gender, age, skin)
    assert ac["single"] == pytest.approx(3 + 1 + 5)
    assert math.isnan(ac["dual"])  # gender_skin has no pair
    assert ac["triple"] == 4.0
    ac_mean = iris.answer_consistency_difference(score, unit, gender, age, skin, aggregate="mean")
    assert ac_mean["single"] == pytest.approx(3.0)
    correct = [1, 0, 1, 1, 1, 1, 0]
    dhr = iris.differential_hallucination_rate(correct, unit, gender, age, skin)
    # gender pairs: (1,0) (1,1) (1,0) -> 2/3; age: (0,1) -> 1; skin: (1,1) -> 0
    assert dhr["single"] == pytest.approx(2 / 3 + 1 + 0)
    assert dhr["triple"] == 0.0  # (1, 1)
    full = dict.fromkeys(iris.COMPARISONS, 0.5)
    assert iris.level_values(full) == {"single": 1.5, "dual": 1.5, "triple": 0.5}
    assert iris.level_values(full, aggregate="mean") == {"single": 0.5, "dual": 0.5, "triple": 0.5}


def test_ac_diff_validation():
    unit, gender, age, skin, score = _columns(RECORDS)
    with pytest.raises(ValueError, match="scores"):
        iris.answer_consistency_difference([0, *score[1:]], unit, gender, age, skin)
    with pytest.raises(ValueError, match="correct"):
        iris.differential_hallucination_rate([2] * 7, unit, gender, age, skin)
    with pytest.raises(ValueError, match="units"):
        iris.pairwise_comparison_means(score, unit[:-1], gender, age, skin)
    with pytest.raises(ValueError, match="aggregate"):
        iris.level_values(dict.fromkeys(iris.COMPARISONS, 0.5), aggregate="max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="comparison_means"):
        iris.level_values({"gender": 0.5})


# --------------------------------------------------------------------------------------------------
# magnitude, dimension scores, RFS-Und, MBTI
# --------------------------------------------------------------------------------------------------


def test_magnitude():
    assert iris.magnitude([3.0, 4.0]) == 5.0
    assert iris.magnitude({"a": 3.0, "b": 4.0}) == 5.0
    assert iris.magnitude([0.0]) == 0.0
    # one row per resample: the norm of each; a row with a NaN (no value in that resample) is NaN
    np.testing.assert_array_equal(iris.magnitude([[3.0, 4.0], [0.0, 1.0], [math.nan, 1.0]]), [5.0, 1.0, math.nan])
    for bad in ([], [[]], 1.0, [math.nan], [[math.inf, 1.0]]):
        with pytest.raises(ValueError, match="values"):
            iris.magnitude(bad)


@pytest.mark.parametrize(
    ("dimension", "k", "s"),
    [
        ("IFS-Gen", 3, 58000),
        ("RFS-Gen", 3, 132),
        ("BIS-Gen", 1, 85),
        ("IFS-Und", 5, 180),
        ("RFS-Und", 5, 2750),
        ("BIS-Und", 1, 340),
    ],
)
def test_dimension_score_constants(dimension, k, s):
    assert iris.dimension_score(0.0, dimension) == s
    assert iris.dimension_score(1.0, dimension) == pytest.approx(s * math.exp(-k))
    assert iris.dimension_score(0.5, dimension) == pytest.approx(s * math.exp(-k / 2))


def test_dimension_score_of_an_array_keeps_nan_and_the_rfs_und_form_of_arrays():
    np.testing.assert_allclose(iris.dimension_score(np.array([0.0, 1.0]), "BIS-Und"), [340.0, 340 * math.exp(-1)])
    assert math.isnan(iris.dimension_score(np.array([math.nan]), "BIS-Und")[0])  # a resample without a value
    with pytest.raises(ValueError, match="magnitude"):
        iris.dimension_score(np.array([-1.0, 0.0]), "BIS-Und")
    with pytest.raises(ValueError, match="magnitude"):
        iris.dimension_score(math.nan, "BIS-Und")  # one model's magnitude must be a number
    out = iris.rfs_und_magnitude_from_norms(
        np.array([0.1 * math.sqrt(5), math.nan]), np.array([0.2 * math.sqrt(13)] * 2)
    )
    assert out[0] == pytest.approx(1 - math.sqrt(0.18)) and math.isnan(out[1])
    with pytest.raises(ValueError, match="norm_abs_sds"):
        iris.rfs_und_magnitude_from_norms(np.array([0.1]), np.array([4.0]))


def test_dimension_score_validation():
    with pytest.raises(ValueError, match="dimension"):
        iris.dimension_score(1.0, "IFS_Gen")
    with pytest.raises(ValueError, match="magnitude"):
        iris.dimension_score(-0.1, "IFS-Gen")
    with pytest.raises(ValueError, match="magnitude"):
        iris.dimension_score(math.inf, "IFS-Gen")


def test_rfs_und_magnitude_hand_computed():
    # ||JSD|| = 0.1 sqrt 5 -> JG = 0.9; ||AbsSDS|| = 0.2 sqrt 13 -> AG = 0.2; m = 1 - sqrt(0.18)
    expected = 1 - math.sqrt(0.18)
    assert iris.rfs_und_magnitude([0.1] * 5, [0.2] * 13) == pytest.approx(expected)
    assert iris.rfs_und_magnitude([0.1] * 5, [-0.2, 0.2] * 6 + [0.2]) == pytest.approx(expected)
    assert iris.rfs_und_magnitude_from_norms(0.1 * math.sqrt(5), 0.2 * math.sqrt(13)) == pytest.approx(expected)
    assert iris.rfs_und_magnitude([0.0] * 5, [0.0] * 13) == 1.0  # no drift at all: AG = 0
    # larger AbsSDS lowers the magnitude (raises the score), as the published numbers encode
    assert iris.rfs_und_magnitude([0.1] * 5, [0.3] * 13) < iris.rfs_und_magnitude([0.1] * 5, [0.2] * 13)
    with pytest.raises(ValueError, match="norm_jsd"):
        iris.rfs_und_magnitude_from_norms(-0.1, 0.2)
    with pytest.raises(ValueError, match="jsd"):
        iris.rfs_und_magnitude([], [0.2])
    with pytest.raises(ValueError, match="n_abs_sds"):
        iris.rfs_und_magnitude_from_norms(0.1, 0.2, n_abs_sds=0)


def test_mbti_examples_and_threshold_is_inclusive():
    assert iris.mbti({"IFS-Gen": 82.58, "RFS-Gen": 69.13, "BIS-Gen": 60.91}) == "UAF"
    assert iris.mbti({"IFS-Und": 60.0, "RFS-Und": 59.99, "BIS-Und": 105.22}) == "UDF"
    assert iris.mbti({"IFS-Und": 10.0, "RFS-Und": 20.0, "BIS-Und": 30.0}) == "HDR"
    assert iris.mbti({"IFS-Gen": 50.0, "RFS-Gen": 50.0, "BIS-Gen": 50.0}, threshold=40.0) == "UAF"


@pytest.mark.parametrize(
    "scores",
    [
        {"IFS-Gen": 70.0, "RFS-Und": 70.0, "BIS-Gen": 70.0},  # mixed tasks
        {"IFS-Gen": 70.0, "RFS-Gen": 70.0},  # incomplete
        {"IFS-Und": 1.0, "RFS-Und": 1.0, "BIS-Und": 1.0, "IFS-Gen": 1.0},  # extra key
        {"IFS_Gen": 70.0, "RFS_Gen": 70.0, "BIS_Gen": 70.0},  # wrong spelling
    ],
)
def test_mbti_rejects_mixed_or_incomplete(scores):
    with pytest.raises(ValueError, match="scores"):
        iris.mbti(scores)


def test_mbti_rejects_non_finite_score():
    with pytest.raises(ValueError, match="RFS-Gen"):
        iris.mbti({"IFS-Gen": 70.0, "RFS-Gen": math.nan, "BIS-Gen": 70.0})


def test_archetypes():
    assert iris.archetype_name("UAF") == "The Adaptive Idealist"
    assert iris.archetype_name("HAF") == "The Heuristic Reformer"
    assert iris.archetype_name("UDF") == "The Grounded Reformer"
    assert iris.archetype_name("HDF") == "The Teachable Student"
    codes = {a + b + c for a in "UH" for b in "AD" for c in "FR"}
    assert set(iris.ARCHETYPES) == codes
    for code, archetype in iris.ARCHETYPES.items():
        assert archetype.code == code
        # the Rigid-alliance names are not published; ours are marked as ours
        assert archetype.source == ("fairness-evals" if code.endswith("R") else "paper Table 2")
    assert len({a.name for a in iris.ARCHETYPES.values()}) == 8
    with pytest.raises(ValueError, match="code"):
        iris.archetype_name("XYZ")


# --------------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------------

count_vectors = st.integers(min_value=2, max_value=20).flatmap(
    lambda k: st.lists(st.integers(min_value=0, max_value=1000), min_size=k, max_size=k).filter(lambda v: sum(v) > 0)
)


@settings(max_examples=300, deadline=None)
@given(count_vectors)
def test_rd_range_and_formula(counts):
    p = np.asarray(counts, dtype=float) / sum(counts)
    rd = iris.representation_disparity(p)
    assert 0.0 <= rd <= 1.0
    assert rd == pytest.approx(rd_bruteforce(p), abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=2, max_value=64), st.data())
def test_rd_uniform_is_zero_point_mass_is_one(k, data):
    assert iris.representation_disparity(np.full(k, 1 / k)) == pytest.approx(0.0, abs=1e-12)
    where = data.draw(st.integers(min_value=0, max_value=k - 1))
    point = np.zeros(k)
    point[where] = 1.0
    assert iris.representation_disparity(point) == 1.0


@settings(max_examples=100, deadline=None)
@given(count_vectors, st.randoms(use_true_random=False))
def test_rd_invariant_to_cell_order(counts, rnd):
    shuffled = counts[:]
    rnd.shuffle(shuffled)
    a = iris.representation_disparity_from_counts(counts)
    b = iris.representation_disparity_from_counts(shuffled)
    assert a == pytest.approx(b, abs=1e-15)


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_rd_core_matches_scalar_per_row(seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, size=(4, 7, 6))
    core = iris.mean_representation_disparity_from_counts(counts)
    for b in range(4):
        if counts[b].sum(axis=-1).max() > 0:
            assert core[b] == pytest.approx(iris.mean_representation_disparity(counts[b]))


prob_pairs = st.integers(min_value=1, max_value=10).flatmap(
    lambda k: st.tuples(
        st.lists(st.floats(min_value=0, max_value=1e3), min_size=k, max_size=k),
        st.lists(st.floats(min_value=0, max_value=1e3), min_size=k, max_size=k),
    )
)


@settings(max_examples=300, deadline=None)
@given(prob_pairs)
# Nearly equal vectors: scipy's jensenshannon returns NaN here (the square root of a rounding-negative sum).
@example(([0.0, 0.0, 0.0, 1000.0, 0.0, 1000.0], [0.0, 0.0, 0.0, 1000.0, 0.0, 999.9999999999999]))
def test_jsd_range_and_symmetry(pair):
    p, q = pair
    jsd = iris.js_divergence(p, q)
    assert 0.0 <= jsd <= math.log(2)
    assert jsd == pytest.approx(iris.js_divergence(q, p), abs=1e-12)


records = st.lists(
    st.tuples(st.sampled_from("abc"), st.sampled_from("abcu"), st.sampled_from("WXYZ")),
    min_size=1,
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(records, st.randoms(use_true_random=False))
def test_ad_spd_invariant_to_relabelling_and_order(rows, rnd):
    true = [r[0] for r in rows]
    predicted = [r[1].replace("u", "unmappable") for r in rows]
    groups = [r[2] for r in rows]
    labels = sorted(set(groups))
    renamed = labels[:]
    rnd.shuffle(renamed)
    mapping = {old: f"g{new}" for old, new in zip(labels, renamed, strict=True)}
    relabelled = [mapping[g] for g in groups]
    ad = iris.accuracy_disparity(predicted, true, groups)
    spd = iris.statistical_parity_difference(predicted, groups)
    assert 0.0 <= ad <= 1.0 and 0.0 <= spd <= 1.0
    assert iris.accuracy_disparity(predicted, true, relabelled) == pytest.approx(ad, abs=1e-15)
    assert iris.statistical_parity_difference(predicted, relabelled) == pytest.approx(spd, abs=1e-15)
    order = list(range(len(rows)))
    rnd.shuffle(order)
    assert iris.accuracy_disparity(
        [predicted[i] for i in order], [true[i] for i in order], [groups[i] for i in order]
    ) == pytest.approx(ad, abs=1e-15)
    assert iris.statistical_parity_difference(
        [predicted[i] for i in order], [groups[i] for i in order]
    ) == pytest.approx(spd, abs=1e-15)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=5), st.integers(min_value=1, max_value=5), st.integers(0, 2**32 - 1))
def test_spd_core_invariant_to_group_and_class_permutation(n_groups, n_classes, seed):
    rng = np.random.default_rng(seed)
    tables = rng.integers(0, 6, size=(8, n_groups, n_classes))
    base = iris.statistical_parity_difference_from_counts(tables)
    perm_g = rng.permutation(n_groups)
    perm_c = rng.permutation(n_classes)
    np.testing.assert_array_equal(base, iris.statistical_parity_difference_from_counts(tables[:, perm_g][:, :, perm_c]))
    totals = tables.sum(axis=-1)
    correct = np.minimum(tables[..., 0], totals)
    np.testing.assert_array_equal(
        iris.accuracy_disparity_from_counts(correct, totals),
        iris.accuracy_disparity_from_counts(correct[:, perm_g], totals[:, perm_g]),
    )
