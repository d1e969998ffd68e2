"""Tests of metrics.paired: joint resampling, the difference's interval and p-value, Holm, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics import bootstrap as bs
from metrics import fact_fair as ff
from metrics import paired
from metrics.coverage import summarise


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
    assert result.meets(0.93), result
