"""Tests of metrics.bootstrap: determinism, path equivalence, coverage, degenerate inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse
from cell_intervals import cell_intervals

from metrics import bootstrap as bs
from metrics import fact_fair as ff


def proportion(counts: np.ndarray) -> np.ndarray:
    """Share of cell 1 among cells 0 and 1 (NaN with no unit in either)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts[:, 1] / counts[:, :2].sum(axis=1)


def one_hot(cell_index: np.ndarray, n_cells: int) -> np.ndarray:
    out = np.zeros((cell_index.size, n_cells))
    rows = np.flatnonzero(cell_index >= 0)
    out[rows, cell_index[rows]] = 1.0
    return out


# --------------------------------------------------------------------------- resampling
def test_each_resample_draws_n_units() -> None:
    cells = np.array([0, 1, 2, 2, 1, 0, 0])
    counts = bs.resample_cell_counts(cells, 3, n_resamples=50, seed=3)
    assert counts.shape == (50, 3)
    np.testing.assert_array_equal(counts.sum(axis=1), 7)
    assert np.all(counts == np.round(counts))
    assert len({tuple(row) for row in counts}) > 1


def test_dense_and_sparse_paths_are_identical_and_the_cell_index_path_has_their_distribution() -> None:
    rng = np.random.default_rng(0)
    cells = rng.integers(-1, 6, size=300)  # -1: sampled but in no cell (e.g. refused)
    dense = one_hot(cells, 6)
    by_dense = bs.resample_counts(dense, n_resamples=4000, seed=11)
    by_csr = bs.resample_counts(scipy.sparse.csr_matrix(dense), n_resamples=4000, seed=11)
    by_coo = bs.resample_counts(scipy.sparse.coo_array(dense), n_resamples=4000, seed=11)
    np.testing.assert_array_equal(by_dense, by_csr)
    np.testing.assert_array_equal(by_dense, by_coo)
    by_index = bs.resample_cell_counts(cells, 6, n_resamples=4000, seed=11)
    np.testing.assert_allclose(by_index.mean(axis=0), by_dense.mean(axis=0), atol=0.5)
    np.testing.assert_allclose(by_index.var(axis=0), by_dense.var(axis=0), rtol=0.1)


def test_cell_index_resamples_do_not_depend_on_unit_order() -> None:
    rng = np.random.default_rng(12)
    cells = rng.integers(-1, 6, size=300)
    order = rng.permutation(300)
    np.testing.assert_array_equal(
        bs.resample_cell_counts(cells, 6, n_resamples=100, seed=3),
        bs.resample_cell_counts(cells[order], 6, n_resamples=100, seed=3),
    )


def test_a_unit_moves_with_all_its_cells() -> None:
    # M = [I | X]: the first U columns of a resample are the unit multiplicities w, the rest must be w @ X
    rng = np.random.default_rng(1)
    n_units = 40
    x = rng.integers(0, 3, size=(n_units, 38)).astype(float)  # e.g. 38 answers per image
    m = np.hstack([np.eye(n_units), x])
    out = bs.resample_counts(m, n_resamples=30, seed=2)
    w = out[:, :n_units]
    np.testing.assert_array_equal(w.sum(axis=1), n_units)
    np.testing.assert_array_equal(out[:, n_units:], w @ x)
    np.testing.assert_array_equal(out, bs.resample_counts(scipy.sparse.csr_array(m), n_resamples=30, seed=2))


def test_unit_multiplicities_are_multinomial() -> None:
    n_units = 20
    w = bs.resample_counts(np.eye(n_units), n_resamples=4000, seed=5)
    # each multiplicity ~ Binomial(U, 1/U): mean 1, variance 1 - 1/U
    assert abs(w.mean() - 1.0) < 1e-12  # every row sums to U
    assert abs(w.var(axis=0).mean() - (1 - 1 / n_units)) < 0.05


def test_same_seed_same_counts_other_seed_other_counts() -> None:
    cells = np.arange(100) % 4
    a = bs.resample_cell_counts(cells, 4, n_resamples=20, seed=7)
    b = bs.resample_cell_counts(cells, 4, n_resamples=20, seed=7)
    c = bs.resample_cell_counts(cells, 4, n_resamples=20, seed=8)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_first_resamples_do_not_depend_on_n_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    cells = np.arange(37) % 5
    full = bs.resample_cell_counts(cells, 5, n_resamples=25, seed=4)  # one stratum: one multinomial stream
    np.testing.assert_array_equal(bs.resample_cell_counts(cells, 5, n_resamples=10, seed=4), full[:10])
    # the matrix form, also across several blocks (3 resamples per block) with a partial last block
    matrix_full = bs.resample_counts(one_hot(cells, 5), n_resamples=10, seed=4)
    monkeypatch.setattr(bs, "_MAX_DRAWS_PER_BLOCK", 3 * 37)
    blocks_full = bs.resample_counts(one_hot(cells, 5), n_resamples=10, seed=4)
    np.testing.assert_array_equal(blocks_full, matrix_full)
    np.testing.assert_array_equal(bs.resample_counts(one_hot(cells, 5), n_resamples=7, seed=4), blocks_full[:7])


# --------------------------------------------------------------------------- rescaled (small strata)
def _stratum_totals(counts: np.ndarray, strata: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(B, S): each resample's total of ``values`` per stratum, from unit multiplicities ``counts`` (B, U)."""
    return np.stack([counts[:, strata == s] @ values[strata == s] for s in np.unique(strata)], axis=1)


def test_rescaled_resamples_keep_the_unbiased_variance_of_small_strata() -> None:
    """Strata of 3 units: the plain bootstrap's variance of a stratum total is (n - 1)/n = 2/3 of the unbiased
    n s^2; drawing n - 1 units weighted n/(n - 1) gives the unbiased value, and keeps the total unbiased."""
    strata = np.repeat(np.arange(40), 3)
    values = np.tile([1.0, 4.0, 7.0], 40)  # s^2 = 9 in every stratum: unbiased variance of a total 3 * 9 = 27
    eye = np.eye(strata.size)
    plain = _stratum_totals(bs.resample_counts(eye, n_resamples=3000, seed=2, strata=strata), strata, values)
    scaled = _stratum_totals(bs.resample_counts(eye, n_resamples=3000, seed=2, strata=strata, rescaled=True), strata,
                             values)  # fmt: skip
    assert plain.var(axis=0).mean() == pytest.approx(27 * 2 / 3, rel=0.05)
    assert scaled.var(axis=0).mean() == pytest.approx(27, rel=0.05)
    assert scaled.mean() == pytest.approx(12.0, rel=0.01)
    # the one-cell-per-unit form: each unit in the cell of its value, the same law
    cells = np.tile([0, 1, 2], 40) + 3 * strata
    counts = bs.resample_cell_counts(cells, 120, n_resamples=3000, seed=2, strata=strata, rescaled=True)
    totals = counts.reshape(3000, 40, 3) @ np.array([1.0, 4.0, 7.0])
    assert totals.var(axis=0).mean() == pytest.approx(27, rel=0.05)
    assert np.allclose(counts.reshape(3000, 40, 3).sum(axis=2), 3.0)  # (3/2) x 2 draws per stratum


def test_rescaled_keeps_a_stratum_of_one_unit_fixed_and_does_not_depend_on_order() -> None:
    strata = np.array([0, 0, 1, 2, 2, 2])
    matrix = np.arange(18, dtype=float).reshape(6, 3)
    out = bs.resample_counts(matrix, n_resamples=50, seed=1, strata=strata, rescaled=True)
    w = bs.resample_counts(np.eye(6), n_resamples=50, seed=1, strata=strata, rescaled=True)
    np.testing.assert_array_equal(w[:, 2], 1.0)  # the lone unit of stratum 1
    np.testing.assert_allclose(w[:, :2].sum(axis=1), 2.0)  # 1 draw weighing 2
    np.testing.assert_allclose(w[:, 3:].sum(axis=1), 3.0)  # 2 draws weighing 3/2
    np.testing.assert_allclose(out, w @ matrix)
    cells = np.array([0, 1, 4, 2, 2, 3, -1])
    groups = np.array([0, 0, 1, 2, 2, 2, 2])
    counts = bs.resample_cell_counts(cells, 5, n_resamples=40, seed=3, strata=groups, rescaled=True)
    np.testing.assert_array_equal(counts[:, 4], 1.0)  # one unit
    order = np.array([6, 2, 0, 5, 1, 4, 3])
    np.testing.assert_array_equal(
        bs.resample_cell_counts(cells[order], 5, n_resamples=40, seed=3, strata=groups[order], rescaled=True), counts
    )


def test_collapse_singletons_pools_the_strata_of_one_unit() -> None:
    strata = np.array([0, 0, 1, 2, 2, 3])
    pools = np.array([5, 5, 6, 7, 7, 6])
    # strata 1 and 3 have one unit each: both go to pool 6, offset max(strata) + 1 - min(pools) = -1
    assert bs.collapse_singletons(strata, pools).tolist() == [0, 0, 5, 2, 2, 5]
    assert bs.collapse_singletons([], []).tolist() == []
    with pytest.raises(ValueError, match="same length"):
        bs.collapse_singletons([0, 1], [0])


# --------------------------------------------------------------------------- intervals
def test_percentile_interval_hand_computed() -> None:
    out = bs.percentile_interval(np.arange(101.0), confidence=0.9, estimate=50.0, seed=1)
    assert (out.low, out.high, out.estimate) == pytest.approx((5.0, 95.0, 50.0), abs=1e-12)
    assert (out.n_resamples, out.n_nan, out.confidence, out.seed) == (101, 0, 0.9, 1)


def test_percentile_interval_ignores_and_counts_nan() -> None:
    values = np.array([np.nan, 1.0, 2.0, np.nan, 3.0])
    out = bs.percentile_interval(values, confidence=0.5)
    assert (out.low, out.high, out.n_nan, out.n_resamples) == (1.5, 2.5, 2, 5)
    assert math.isnan(out.estimate)


def test_identical_intervals_for_the_same_seed() -> None:
    rng = np.random.default_rng(9)
    cells = rng.integers(0, 2, size=500)
    stats = {"p": proportion}
    a = cell_intervals(cells, 2, stats, seed=123)
    b = cell_intervals(cells, 2, stats, seed=123)
    assert a == b
    assert a["p"].seed == 123
    assert a["p"].estimate == pytest.approx(cells.mean())
    assert a["p"].low < a["p"].estimate < a["p"].high


def test_several_statistics_share_one_set_of_resamples() -> None:
    rng = np.random.default_rng(10)
    m = rng.integers(0, 4, size=(80, 6)).astype(float)

    def share(c: np.ndarray) -> np.ndarray:
        return c[:, 0] / c.sum(axis=1)

    def total(c: np.ndarray) -> np.ndarray:
        return c.sum(axis=1)

    together = bs.bootstrap_intervals(m, {"share": share, "total": total}, n_resamples=300, seed=1)
    assert together["share"] == bs.bootstrap_intervals(m, {"share": share}, n_resamples=300, seed=1)["share"]
    assert together["total"] == bs.bootstrap_intervals(m, {"total": total}, n_resamples=300, seed=1)["total"]
    resampled = bs.resample_counts(m, n_resamples=300, seed=1)
    assert together["total"].low == np.quantile(resampled.sum(axis=1), 0.025)


def test_fact_fair_statistic_on_resampled_counts() -> None:
    # 2 cells x 2 classes per document stream; estimate = entropy_score of the observed counts
    rng = np.random.default_rng(12)
    cells = rng.integers(0, 4, size=400)

    def s_e(c: np.ndarray) -> np.ndarray:
        return ff.entropy_score_batch(c.reshape(len(c), 2, 2))

    out = cell_intervals(cells, 4, {"S_E": s_e}, n_resamples=200, seed=0)["S_E"]
    observed = np.bincount(cells, minlength=4).reshape(2, 2)
    assert out.estimate == ff.entropy_score(observed)
    assert 0.0 <= out.low <= out.high <= 1.0


def test_coverage_of_a_binomial_proportion_is_near_nominal() -> None:
    """Percentile intervals for p = 0.3 from n = 100 units contain p at about the nominal rate."""
    p, n, reps = 0.3, 100, 200
    data_rng = np.random.default_rng(2024)
    hits = {0.95: 0, 0.5: 0}
    for rep in range(reps):
        cells = (data_rng.random(n) < p).astype(np.int64)
        resampled = bs.resample_cell_counts(cells, 2, n_resamples=400, seed=rep)
        values = proportion(resampled)
        for confidence in hits:
            iv = bs.percentile_interval(values, confidence=confidence)
            hits[confidence] += iv.low <= p <= iv.high
    # binomial sd of the hit rate over 200 reps: 0.015 at 0.95, 0.035 at 0.5
    assert 0.90 <= hits[0.95] / reps <= 0.99
    assert 0.38 <= hits[0.5] / reps <= 0.62


# --------------------------------------------------------------------------- degenerate inputs
def test_one_unit_gives_a_point_interval() -> None:
    out = bs.bootstrap_intervals(np.array([[2.0, 1.0]]), {"p": lambda c: c[:, 0] / c.sum(axis=1)}, seed=0)["p"]
    assert out.low == out.high == out.estimate == pytest.approx(2 / 3)
    assert out.n_nan == 0


def test_all_zero_counts_give_nan_with_every_resample_counted() -> None:
    out = bs.bootstrap_intervals(np.zeros((10, 2)), {"p": proportion}, n_resamples=50, seed=0)["p"]
    assert math.isnan(out.low) and math.isnan(out.high) and math.isnan(out.estimate)
    assert out.n_nan == 50


def test_units_in_no_cell_make_some_resamples_nan() -> None:
    cells = np.array([-1, -1, -1, -1, 1])  # one unit in a cell, four refused
    resampled = bs.resample_cell_counts(cells, 2, n_resamples=500, seed=3)
    out = cell_intervals(cells, 2, {"p": proportion}, n_resamples=500, seed=3)["p"]
    expected_nan = int((resampled[:, :2].sum(axis=1) == 0).sum())
    assert out.n_nan == expected_nan
    assert 100 < expected_nan < 230  # (4/5)^5 = 0.33 of 500
    assert out.low == out.high == out.estimate == 1.0


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: bs.resample_counts(np.zeros((0, 3))), "unit_counts"),
        (lambda: bs.resample_counts(np.ones(3)), "unit_counts"),
        (lambda: bs.resample_counts(-np.ones((2, 2))), "unit_counts"),
        (lambda: bs.resample_counts(scipy.sparse.csr_array(-np.ones((2, 2)))), "unit_counts"),
        (lambda: bs.resample_counts(np.ones((2, 2)), n_resamples=0), "n_resamples"),
        (lambda: bs.resample_counts(np.ones((2, 2)), seed=-1), "seed"),
        (lambda: bs.resample_counts(np.ones((2, 2)), seed=1.5), "seed"),
        (lambda: bs.resample_cell_counts([0, 3], 3), "cell_index"),
        (lambda: bs.resample_cell_counts([0, -2], 3), "cell_index"),
        (lambda: bs.resample_cell_counts([0.0, 1.0], 3), "cell_index"),
        (lambda: bs.resample_cell_counts([], 3), "cell_index"),
        (lambda: bs.resample_cell_counts([0, 1], 0), "n_cells"),
        (lambda: bs.percentile_interval([1.0, 2.0], confidence=1.0), "confidence"),
        (lambda: bs.percentile_interval([], confidence=0.9), "values"),
        (lambda: bs.bootstrap_intervals(np.ones((3, 2)), {"x": lambda c: c}, n_resamples=5), "statistic 'x'"),
        (lambda: bs.bootstrap_intervals(np.ones((3, 2)), {"x": "mean"}), "statistics"),
        (lambda: bs.bootstrap_intervals(np.ones((3, 2)), {}), "statistics"),
        (lambda: bs.bootstrap_intervals(np.ones((3, 2)), {"x": 3}), "statistics"),
        (lambda: bs.bootstrap_intervals(np.ones((3, 2)), {"x": proportion}, confidence=95), "confidence"),
    ],
)
def test_validation_names_the_argument(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


def test_a_design_resamples_by_its_form_and_counts_what_it_holds() -> None:
    """A :class:`metrics.bootstrap.Design` of one cell per unit resamples as :func:`resample_cell_counts`, one of a
    unit x cell matrix as :func:`resample_counts` (rescaled where declared); its observed counts are its units'."""
    cells = np.array([0, 1, 1, -1, 2, 0, 2, 2])
    strata = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    by_cell = bs.Design(np.arange(8), strata, 3, cells=cells)
    assert by_cell.observed().tolist() == [2.0, 2.0, 3.0]
    expected = bs.resample_cell_counts(cells, 3, n_resamples=50, seed=4, strata=strata)
    assert np.array_equal(by_cell.resample(50, 4), expected)
    matrix = np.eye(3)[np.where(cells >= 0, cells, 0)] * (cells >= 0)[:, None]
    by_row = bs.Design(np.arange(8), strata, 3, matrix=matrix, rescaled=True)
    assert by_row.observed().tolist() == [2.0, 2.0, 3.0]
    expected = bs.resample_counts(matrix, n_resamples=50, seed=4, strata=strata, rescaled=True)
    assert np.array_equal(by_row.resample(50, 4), expected)
    with pytest.raises(ValueError, match="either one cell per unit or a unit x cell matrix"):
        bs.Design(np.arange(8), strata, 3, cells=cells, matrix=matrix)
    with pytest.raises(ValueError, match="one entry per unit"):
        bs.Design(np.arange(7), strata, 3, cells=cells)
