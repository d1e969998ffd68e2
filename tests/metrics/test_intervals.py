"""Tests of metrics.intervals and the stratified, jackknife and per-statistic paths of metrics.bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats
from cell_intervals import cell_intervals

from metrics import bootstrap as bs
from metrics import intervals as iv


# --------------------------------------------------------------------------- methods by hand
def test_basic_interval_reflects_the_percentiles_by_hand() -> None:
    values = np.arange(1.0, 102.0)  # quantiles at 0.025 and 0.975: 3.5 and 98.5 (linear interpolation)
    out = iv.basic_interval(values, estimate=40.0)
    assert (out.low, out.high) == pytest.approx((2 * 40 - 98.5, 2 * 40 - 3.5))
    assert out.method == "basic" and out.reason is None


def test_basic_interval_is_clipped_to_bounds() -> None:
    out = iv.basic_interval(np.linspace(0.90, 0.98, 101), estimate=0.97, bounds=(0.0, 1.0))
    assert out.high == 1.0 and out.low == pytest.approx(2 * 0.97 - (0.90 + 0.975 * 0.08))
    # a biased plug-in (an entropy estimate below every resample's reflection) need not lie inside
    beyond = iv.basic_interval(np.linspace(0.90, 0.98, 101), estimate=0.99, bounds=(0.0, 1.0))
    assert beyond.low == beyond.high == 1.0


def test_percentile_interval_hand_computed() -> None:
    out = iv.percentile_interval(np.arange(1.0, 102.0), estimate=7.0)
    assert (out.low, out.high, out.estimate) == pytest.approx((3.5, 98.5, 7.0))


def test_bca_without_bias_or_acceleration_is_the_percentile_interval() -> None:
    values = np.concatenate([np.linspace(-1, 1, 1001)])
    a = iv.bca_interval(values, estimate=0.0, acceleration=0.0)
    p = iv.percentile_interval(values)
    assert (a.low, a.high) == pytest.approx((p.low, p.high))


def test_bca_by_hand() -> None:
    rng = np.random.default_rng(0)
    values = rng.normal(0.2, 1.0, size=4000)
    share = float(np.mean(values < 0.0))
    z0 = scipy.stats.norm.ppf(share)
    a = 0.05
    z = scipy.stats.norm.ppf([0.025, 0.975])
    levels = scipy.stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
    out = iv.bca_interval(values, estimate=0.0, acceleration=a)
    assert (out.low, out.high) == pytest.approx(tuple(np.quantile(values, levels)))


def test_each_interval_carries_the_value_it_is_centred_on() -> None:
    """Issue 33: a reflected interval can exclude its estimate (S_E 97.80 [98.53, 100.00]); each method says what it is
    centred on, always inside it: the percentile interval the median of the resamples, the basic one the median of the
    reflected resamples (2 theta - q(1/2), the bias-corrected estimate), BCa the quantile at the corrected median
    level, max-t the estimate; NaN with the interval."""
    values = np.arange(1.0, 102.0)  # median 51
    assert iv.percentile_interval(values, estimate=7.0).centre == 51.0
    basic = iv.basic_interval(values, estimate=40.0)
    assert basic.centre == 2 * 40 - 51 and basic.low <= basic.centre <= basic.high
    # every resample below the estimate: the reflected interval lies above it, centred on the corrected estimate
    biased = iv.basic_interval(np.linspace(0.30, 0.40, 101), estimate=0.45, bounds=(0.0, 1.0))
    assert biased.estimate < biased.low < biased.centre < biased.high and biased.centre == pytest.approx(
        2 * 0.45 - 0.35
    )
    assert iv.basic_interval(np.linspace(0.90, 0.98, 101), estimate=0.99, bounds=(0.0, 1.0)).centre == 1.0  # clipped
    rng = np.random.default_rng(0)
    skewed = rng.normal(0.2, 1.0, size=4000)
    z0, a = scipy.stats.norm.ppf(float(np.mean(skewed < 0.0))), 0.05
    bca = iv.bca_interval(skewed, estimate=0.0, acceleration=a)
    assert bca.centre == pytest.approx(np.quantile(skewed, scipy.stats.norm.cdf(z0 + z0 / (1 - a * z0))))
    assert bca.low < bca.centre < bca.high
    band = iv.max_t_interval([0.1, 0.3], rng.normal([0.1, 0.3], 0.05, size=(500, 2)))
    assert band.centre == band.estimate == 0.3
    assert math.isnan(iv.basic_interval([math.nan, math.nan], estimate=0.5).centre)


def test_bca_matches_scipy_for_a_skewed_mean() -> None:
    """Our BCa (count resampling + jackknife of distinct values) agrees with scipy.stats.bootstrap's BCa."""
    rng = np.random.default_rng(1)
    cells = rng.choice(4, size=300, p=[0.55, 0.25, 0.15, 0.05])  # each unit's value is its cell index
    data = cells.astype(float)

    def mean_of_counts(counts: np.ndarray) -> np.ndarray:
        return counts @ np.arange(4.0) / counts.sum(axis=1)

    spec = bs.StatisticSpec(mean_of_counts, method="bca")
    ours = cell_intervals(cells, 4, {"m": spec}, n_resamples=20000, seed=3)["m"]
    theirs = scipy.stats.bootstrap(
        (data,), np.mean, method="BCa", n_resamples=20000, random_state=np.random.default_rng(4)
    ).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=0.01)
    assert ours.high == pytest.approx(theirs.high, abs=0.01)


def test_bca_is_nan_with_a_reason_when_every_resample_is_on_one_side() -> None:
    out = iv.bca_interval(np.linspace(0.1, 0.5, 50), estimate=0.6, acceleration=0.0)
    assert math.isnan(out.low) and math.isnan(out.high)
    assert "one side" in (out.reason or "")


def test_no_variation_gives_the_estimate_for_every_method() -> None:
    values = np.full(100, 0.25)
    for out in (
        iv.basic_interval(values, estimate=0.25),
        iv.percentile_interval(values, estimate=0.25),
        iv.bca_interval(values, estimate=0.25, acceleration=0.0),
    ):
        assert out.low == out.high == 0.25


def test_nan_values_are_counted_and_left_out() -> None:
    out = iv.basic_interval(np.array([np.nan, 1.0, 2.0, 3.0]), estimate=2.0)
    assert out.n_nan == 1 and out.n_resamples == 4 and math.isfinite(out.low)
    every = iv.basic_interval(np.full(5, np.nan), estimate=1.0)
    assert math.isnan(every.low) and every.reason == "every resample was NaN"


# --------------------------------------------------------------------------- max_t
def test_max_t_by_hand() -> None:
    obs = np.array([0.1, 0.3])
    boot = np.array([[0.1, 0.3], [0.2, 0.3], [0.0, 0.5], [0.1, 0.1]])
    se = boot.std(axis=0)
    t = np.max(np.abs(boot - obs) / se, axis=1)
    c = np.quantile(t, 0.95)
    out = iv.max_t_interval(obs, boot)
    assert out.estimate == 0.3
    assert (out.low, out.high) == pytest.approx((max(obs - c * se), max(obs + c * se)))


def test_max_t_transform_and_bounds() -> None:
    obs = np.log([2.0, 0.5])
    boot = obs + np.random.default_rng(0).normal(0, 0.1, size=(500, 2))
    out = iv.max_t_interval(obs, boot, transform=math.exp, bounds=(1.0, math.inf))
    assert out.estimate == pytest.approx(2.0)
    assert 1.0 <= out.low < 2.0 < out.high


def _gap_components(rates: np.ndarray) -> np.ndarray:
    i, j = np.nonzero(~np.eye(rates.shape[-1], dtype=bool))
    return rates[..., i] - rates[..., j]


@pytest.mark.parametrize("p", [[0.3, 0.3, 0.3], [0.3, 0.3], [0.2, 0.3, 0.4]])
def test_max_t_covers_a_max_minus_min_gap_including_zero(p: list[float]) -> None:
    """A percentile interval of max - min never reaches a true gap of 0; max_t does, at about 95%."""
    rng = np.random.default_rng(5)
    probs = np.array(p)
    n, reps, hits, perc_hits = 300, 300, 0, 0
    for _ in range(reps):
        x = rng.binomial(n, probs) / n
        boot = rng.binomial(n, x, size=(1000, probs.size)) / n
        out = iv.max_t_interval(_gap_components(x), _gap_components(boot), bounds=(0.0, 1.0))
        hits += out.low <= probs.max() - probs.min() <= out.high
        gaps = boot.max(axis=1) - boot.min(axis=1)
        perc = iv.percentile_interval(gaps)
        perc_hits += perc.low <= probs.max() - probs.min() <= perc.high
    assert hits / reps >= 0.93
    if probs.max() == probs.min() and probs.size > 2:
        assert perc_hits / reps < 0.5  # the failure this method exists for


# --------------------------------------------------------------------------- stratified resampling
def test_stratified_cell_counts_keep_each_stratum_size() -> None:
    rng = np.random.default_rng(6)
    strata = np.repeat(np.arange(4), [10, 20, 5, 15])
    cells = rng.integers(0, 3, size=strata.size) + 3 * strata.clip(max=1)  # strata 1..3 share cells 3..5
    cells[::7] = -1  # some units in no cell
    out = bs.resample_cell_counts(cells, 6, strata=strata, n_resamples=400, seed=1)
    assert out.shape == (400, 6) and np.all(out == np.round(out))
    # stratum 0 alone owns cells 0..2: its in-cell total never exceeds its 10 units
    assert out[:, :3].sum(axis=1).max() <= 10
    assert out[:, :3].sum(axis=1).min() >= 0
    # expected counts equal observed counts (the bootstrap is unbiased for counts)
    observed = np.bincount(cells[cells >= 0], minlength=6)
    np.testing.assert_allclose(out.mean(axis=0), observed, atol=0.6)


def test_stratified_cell_counts_do_not_depend_on_unit_order() -> None:
    rng = np.random.default_rng(7)
    strata = rng.integers(0, 5, size=200)
    cells = rng.integers(-1, 8, size=200)
    order = rng.permutation(200)
    a = bs.resample_cell_counts(cells, 8, strata=strata, n_resamples=50, seed=2)
    b = bs.resample_cell_counts(cells[order], 8, strata=strata[order], n_resamples=50, seed=2)
    np.testing.assert_array_equal(a, b)


def test_stratified_matrix_weights_stay_in_their_stratum() -> None:
    strata = np.array([0, 0, 0, 1, 1, 2])
    w = bs.resample_counts(np.eye(6), strata=strata, n_resamples=300, seed=3)
    np.testing.assert_array_equal(w[:, :3].sum(axis=1), 3)
    np.testing.assert_array_equal(w[:, 3:5].sum(axis=1), 2)
    np.testing.assert_array_equal(w[:, 5], 1)


def test_stratified_matrix_and_cell_forms_have_the_same_distribution() -> None:
    rng = np.random.default_rng(8)
    strata = np.repeat(np.arange(3), 40)
    cells = rng.integers(0, 4, size=120)
    onehot = np.eye(4)[cells]
    a = bs.resample_cell_counts(cells, 4, strata=strata, n_resamples=4000, seed=4)
    b = bs.resample_counts(onehot, strata=strata, n_resamples=4000, seed=5)
    np.testing.assert_allclose(a.mean(axis=0), b.mean(axis=0), atol=0.3)
    np.testing.assert_allclose(a.var(axis=0), b.var(axis=0), rtol=0.12)


def test_strata_validation_names_the_argument() -> None:
    with pytest.raises(ValueError, match="strata"):
        bs.resample_cell_counts([0, 1], 2, strata=[0])
    with pytest.raises(ValueError, match="strata"):
        bs.resample_counts(np.eye(2), strata=[0.5, 1.0])


# --------------------------------------------------------------------------- specs
def test_specs_choose_the_method_per_statistic() -> None:
    rng = np.random.default_rng(9)
    cells = rng.integers(0, 2, size=200)
    share = lambda c: c[:, 1] / c.sum(axis=1)  # noqa: E731
    out = cell_intervals(
        cells, 2,
        {
            "p": share,
            "b": bs.StatisticSpec(share, method="basic", bounds=(0.0, 1.0)),
            "a": bs.StatisticSpec(share, method="bca"),
            "g": bs.StatisticSpec(lambda c: np.stack([c[:, 1] - c[:, 0], c[:, 0] - c[:, 1]], axis=1) / 200,
                                  method="max_t", bounds=(0.0, 1.0)),
        },
        n_resamples=500, seed=0,
    )  # fmt: skip
    assert [out[k].method for k in "pbag"] == ["percentile", "basic", "bca", "max_t"]
    assert out["g"].estimate == pytest.approx(abs(np.mean(cells == 1) - np.mean(cells == 0)))
    for k in "pba":
        assert out[k].low <= out[k].estimate <= out[k].high


def test_bca_spec_without_jackknife_is_refused() -> None:
    spec = bs.StatisticSpec(lambda c: c[:, 0], method="bca")
    with pytest.raises(ValueError, match="jackknife"):
        bs.intervals_from_counts(np.ones(2), np.ones((5, 2)), {"x": spec})


def test_max_t_spec_must_return_components() -> None:
    spec = bs.StatisticSpec(lambda c: c[:, 0], method="max_t")
    with pytest.raises(ValueError, match="components"):
        bs.intervals_from_counts(np.ones(2), np.ones((5, 2)), {"x": spec})


# --------------------------------------------------------------------------- coverage summaries
def test_coverage_summary_by_hand() -> None:
    from coverage_simulation import summarise

    est = np.array([0.4, 0.5, 0.6, 0.5])
    lo = np.array([0.3, 0.45, 0.55, np.nan])
    hi = np.array([0.45, 0.49, 0.7, np.nan])
    out = summarise("x", 0.5, est, lo, hi)
    assert out.printed == 0.75
    assert out.coverage == 0.0  # [0.3, 0.45] and [0.45, 0.49] lie below 0.5, [0.55, 0.7] above
    assert out.below == pytest.approx(2 / 3) and out.above == pytest.approx(1 / 3)
