"""Tests of metrics.paired: joint resampling, the difference's interval and p-value, Holm, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from coverage_simulation import summarise

from metrics import bootstrap as bs
from metrics import fact_fair as ff
from metrics import paired


def share(counts: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts[:, 1] / counts[:, :2].sum(axis=1)


def test_identical_runs_resample_identically() -> None:
    rng = np.random.default_rng(0)
    cells = rng.integers(-1, 5, size=200)
    strata = rng.integers(0, 4, size=200)
    a, b = paired.paired_cell_counts(cells, cells, 5, strata=strata, n_resamples=100, seed=1)
    np.testing.assert_array_equal(a, b)


def test_each_run_keeps_its_marginal_bootstrap_distribution() -> None:
    rng = np.random.default_rng(1)
    strata = np.repeat(np.arange(3), 60)
    cell_a = rng.integers(0, 4, size=180)
    cell_b = np.where(rng.random(180) < 0.7, cell_a, rng.integers(0, 4, size=180))
    a, b = paired.paired_cell_counts(cell_a, cell_b, 4, strata=strata, n_resamples=4000, seed=2)
    alone = bs.resample_cell_counts(cell_b, 4, strata=strata, n_resamples=4000, seed=3)
    np.testing.assert_allclose(b.mean(axis=0), alone.mean(axis=0), atol=0.4)
    np.testing.assert_allclose(b.var(axis=0), alone.var(axis=0), rtol=0.12)
    np.testing.assert_array_equal(a.sum(axis=1), 180)
    # the pairing shows: resampled counts of the two runs are positively correlated
    assert np.corrcoef(a[:, 0], b[:, 0])[0, 1] > 0.4


def test_matrix_form_uses_one_weight_per_unit_for_both_runs() -> None:
    m = np.eye(6)
    a, b = paired.paired_unit_counts(m, 2 * m, n_resamples=50, seed=0)
    np.testing.assert_array_equal(b, 2 * a)


def test_difference_p_value_by_hand() -> None:
    va = np.zeros(9)
    vb = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9])
    out = paired.difference(0.0, 0.3, va, vb)  # d = 0.3, pivot 0.6: 5 below, 1 tie -> F = 5.5/9
    assert out.difference == pytest.approx(0.3)
    assert out.p_value == pytest.approx(2 * (1 - 5.5 / 9))
    q_low, q_high = np.quantile(vb, [0.025, 0.975])
    assert (out.low, out.high) == pytest.approx((0.6 - q_high, 0.6 - q_low))


@pytest.mark.parametrize("seed", range(20))
def test_interval_excludes_zero_exactly_when_p_is_small(seed: int) -> None:
    rng = np.random.default_rng(seed)
    va = rng.normal(0, 1, 2000)
    vb = va + rng.normal(rng.uniform(-0.3, 0.3), 0.1, 2000)
    d = float(np.mean(vb - va))
    out = paired.difference(0.0, d, va, vb)
    excludes = not (out.low <= 0 <= out.high)
    if abs(out.p_value - 0.05) > 0.005:  # away from the boundary, where quantile interpolation decides
        assert excludes == (out.p_value <= 0.05)


def test_no_variation() -> None:
    same = paired.difference(0.5, 0.5, np.full(10, 0.5), np.full(10, 0.5))
    assert same.p_value == 1.0 and same.low == same.high == 0.0
    nan = paired.difference(math.nan, 0.5, np.zeros(10), np.zeros(10))
    assert math.isnan(nan.p_value) and nan.reason


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.02, 0.04 with m = 3: 0.03, max(0.03, 0.04) = 0.04, max(0.04, 0.04) = 0.04
    assert paired.holm([0.04, 0.01, math.nan, 0.02]) == pytest.approx([0.04, 0.03, math.nan, 0.04], nan_ok=True)
    assert paired.holm([0.5, 0.3]) == pytest.approx([0.6, 0.6])  # 2 x 0.3, then max(0.6, 1 x 0.5)
    assert paired.holm([]) == []


def test_paired_difference_of_entropy_scores_covers_the_true_difference() -> None:
    """Two models answering the same 38 x 300 documents; the paired basic interval covers S_E(B) - S_E(A)."""
    cells, k, n = 38, 4, 300
    rng0 = np.random.default_rng(10)
    p_a = rng0.dirichlet([2.0] * k, cells)
    p_b = 0.8 * p_a + 0.2 / k  # B is a flatter (fairer) version of A
    truth = ff.entropy_score(p_b) - ff.entropy_score(p_a)
    strata = np.repeat(np.arange(cells), n)

    def s_e(c: np.ndarray) -> np.ndarray:
        return ff.entropy_score_batch(c.reshape(len(c), cells, k))

    rng = np.random.default_rng(11)
    rows = []
    for rep in range(60):
        # a shared latent uniform makes the two models' answers to one document correlated
        u = rng.random(strata.size)
        ca = (u[:, None] > np.cumsum(p_a, axis=1)[strata]).sum(axis=1)
        cb = (u[:, None] > np.cumsum(p_b, axis=1)[strata]).sum(axis=1)
        ia, ib = strata * k + np.minimum(ca, k - 1), strata * k + np.minimum(cb, k - 1)
        ra, rb = paired.paired_cell_counts(ia, ib, cells * k, strata=strata, n_resamples=500, seed=rep)
        obs_a = np.bincount(ia, minlength=cells * k)[None].astype(float)
        obs_b = np.bincount(ib, minlength=cells * k)[None].astype(float)
        out = paired.difference(float(s_e(obs_a)[0]), float(s_e(obs_b)[0]), s_e(ra), s_e(rb))
        rows.append((out.difference, out.low, out.high))
    est, lo, hi = (np.array(c) for c in zip(*rows, strict=True))
    result = summarise("delta S_E", truth, est, lo, hi)
    assert result.coverage >= 0.93 and not result.width_ratio > 2.0, result


# ------------------------------------------------------------------ maxima of components (gaps)
def gap_components(rates: np.ndarray) -> np.ndarray:
    """Pairwise differences of group rates (n, k) -> (n, k*k): their maximum is the max - min gap."""
    return (rates[:, :, None] - rates[:, None, :]).reshape(len(rates), -1)


def group_rates(counts: np.ndarray) -> np.ndarray:
    """counts (n, 2k): events then answers of k groups."""
    k = counts.shape[1] // 2
    return counts[:, :k] / counts[:, k:]


GAP = bs.StatisticSpec(lambda c: gap_components(group_rates(c)), "max_t", (0.0, 1.0))


def test_statistic_values_of_a_max_t_spec_is_the_maximum_of_its_components() -> None:
    counts = np.array([[1.0, 3.0, 10.0, 10.0], [5.0, 5.0, 10.0, 10.0]])
    np.testing.assert_allclose(paired.statistic_values(GAP, counts), [0.2, 0.0])
    ratio = bs.StatisticSpec(lambda c: np.log(group_rates(c))[:, [0, 1]], "max_t", (0.0, math.inf), math.exp)
    np.testing.assert_allclose(paired.statistic_values(ratio, counts), [0.3, 0.5])


def _two_runs(rates_a, rates_b, n: int, rng: np.random.Generator):
    """Per-unit matrices (n units per group, one answer each) of two runs sharing each unit's latent draw."""
    k = len(rates_a)
    group = np.repeat(np.arange(k), n)
    u = rng.random(group.size)
    rows = []
    for rates in (rates_a, rates_b):
        m = np.zeros((group.size, 2 * k))
        m[np.arange(group.size), group] = (u < np.asarray(rates)[group]).astype(float)
        m[np.arange(group.size), k + group] = 1.0
        rows.append(m)
    return rows[0], rows[1], group


def test_max_difference_is_basic_where_both_gaps_are_clear_and_bounds_where_one_is_not() -> None:
    rng = np.random.default_rng(3)
    ma, mb, group = _two_runs([0.05, 0.5, 0.2], [0.05, 0.4, 0.25], 2000, rng)
    ca, cb = paired.paired_unit_counts(ma, mb, strata=group, n_resamples=500, seed=1)
    clear = paired.spec_difference(GAP, ma.sum(0), mb.sum(0), ca, cb)
    assert clear.method == "basic"
    basic = paired.difference(clear.estimate_a, clear.estimate_b, paired.statistic_values(GAP, ca),
                              paired.statistic_values(GAP, cb))  # fmt: skip
    assert (clear.low, clear.high, clear.p_value) == (basic.low, basic.high, basic.p_value)
    ma, mb, group = _two_runs([0.3, 0.3, 0.3], [0.1, 0.4, 0.2], 400, rng)
    ca, cb = paired.paired_unit_counts(ma, mb, strata=group, n_resamples=500, seed=1)
    fair = paired.spec_difference(GAP, ma.sum(0), mb.sum(0), ca, cb)
    assert fair.method == "bounds"
    assert fair.low > 0 and fair.p_value < 0.05  # a 0.3 gap against a fair model is found
    # a smaller gap: the p-value is the level at which the bounds touch 0
    ma, mb, group = _two_runs([0.3, 0.3, 0.3], [0.2, 0.32, 0.3], 400, rng)
    ca, cb = paired.paired_unit_counts(ma, mb, strata=group, n_resamples=500, seed=1)
    near = paired.spec_difference(GAP, ma.sum(0), mb.sum(0), ca, cb)
    assert near.method == "bounds" and 1 / 501 < near.p_value < 1
    edge = paired.spec_difference(GAP, ma.sum(0), mb.sum(0), ca, cb, confidence=1 - near.p_value)
    assert min(abs(edge.low), abs(edge.high)) == pytest.approx(0.0, abs=1e-6)


def test_identical_runs_give_no_difference_for_gaps() -> None:
    rng = np.random.default_rng(4)
    ma, _, group = _two_runs([0.3, 0.3, 0.3], [0.3, 0.3, 0.3], 100, rng)
    ca, cb = paired.paired_unit_counts(ma, ma, strata=group, n_resamples=300, seed=0)
    out = paired.spec_difference(GAP, ma.sum(0), ma.sum(0), ca, cb)
    assert (out.difference, out.low, out.high, out.p_value) == (0.0, 0.0, 0.0, 1.0)


@pytest.mark.parametrize("rates_a", [(0.3, 0.3, 0.3, 0.3), (0.3, 0.32, 0.3, 0.3)])
def test_gap_difference_against_a_fair_model_covers(rates_a) -> None:
    """Where the basic interval of a gap difference fails (a fair model's gap is the maximum of its noise), the
    conservative bounds cover the true difference."""
    rates_b = (0.2, 0.35, 0.3, 0.3)
    truth = (max(rates_b) - min(rates_b)) - (max(rates_a) - min(rates_a))
    rng = np.random.default_rng(5)
    rows = []
    for rep in range(80):
        ma, mb, group = _two_runs(rates_a, rates_b, 150, rng)
        ca, cb = paired.paired_unit_counts(ma, mb, strata=group, n_resamples=400, seed=rep)
        out = paired.spec_difference(GAP, ma.sum(0), mb.sum(0), ca, cb)
        rows.append((out.difference, out.low, out.high))
    est, lo, hi = (np.array(c) for c in zip(*rows, strict=True))
    assert summarise("delta gap", truth, est, lo, hi).coverage >= 0.93


def test_a_mean_of_gaps_with_a_tied_attribute_is_not_smooth() -> None:
    """The mean of two gaps is clearly above 0, but one attribute's groups tie: its maximum is not attained by one
    component, so the conservative bounds are used (the basic interval needs every attribute's gap clear)."""

    def mean_of_gaps(c: np.ndarray) -> np.ndarray:
        first, second = gap_components(group_rates(c[:, :4])), gap_components(group_rates(c[:, 4:]))
        return ((first[:, :, None] + second[:, None, :]) / 2).reshape(len(c), -1)

    spec = bs.StatisticSpec(mean_of_gaps, "max_t", (0.0, 1.0))
    rng = np.random.default_rng(6)
    ma1, mb1, g1 = _two_runs([0.05, 0.6], [0.05, 0.5], 2000, rng)
    ma2, mb2, _ = _two_runs([0.3, 0.3], [0.3, 0.3], 2000, rng)  # the second attribute: no gap at all
    ma, mb = np.hstack([ma1, ma2]), np.hstack([mb1, mb2])
    ca, cb = paired.paired_unit_counts(ma, mb, strata=g1, n_resamples=400, seed=2)
    assert paired.spec_difference(spec, ma.sum(0), mb.sum(0), ca, cb).method == "bounds"
    ma2, mb2, _ = _two_runs([0.1, 0.4], [0.1, 0.35], 2000, rng)  # both attributes clear
    ma, mb = np.hstack([ma1, ma2]), np.hstack([mb1, mb2])
    ca, cb = paired.paired_unit_counts(ma, mb, strata=g1, n_resamples=400, seed=2)
    assert paired.spec_difference(spec, ma.sum(0), mb.sum(0), ca, cb).method == "basic"


def test_rescaled_paired_resampling_keeps_the_variance_of_small_strata() -> None:
    """Strata of 4 units: the plain bootstrap's variance of a stratum total is 3/4 of the unbiased one, the rescaled
    one's is the unbiased one; both forms give the same law, and pairing holds (identical runs resample identically)."""
    strata = np.repeat(np.arange(50), 4)
    cells = np.tile([0, 1, 1, 0], 50)
    unbiased = 50 * 4 * np.var([0, 1, 1, 0], ddof=1)
    plain, _ = paired.paired_cell_counts(cells, cells, 2, strata=strata, n_resamples=4000, seed=1)
    scaled, same = paired.paired_cell_counts(cells, cells, 2, strata=strata, n_resamples=4000, seed=1, rescaled=True)
    np.testing.assert_array_equal(scaled, same)
    assert plain[:, 1].var() == pytest.approx(0.75 * unbiased, rel=0.08)
    assert scaled[:, 1].var() == pytest.approx(unbiased, rel=0.08)
    matrix = np.eye(2)[cells]
    scaled_m, _ = paired.paired_unit_counts(matrix, matrix, strata=strata, n_resamples=4000, seed=1, rescaled=True)
    assert scaled_m[:, 1].var() == pytest.approx(unbiased, rel=0.08)
    assert scaled_m[:, 1].mean() == pytest.approx(100, abs=0.5)
