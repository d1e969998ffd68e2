"""coverage_simulation.simulate, the one replicate loop of every coverage simulation: what it reads from a scorer, how it
seeds the replicates, and the second kind of interval it judges (``estimate ± 1.96 stderr``)."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from cell_intervals import cell_intervals
from coverage_simulation import STDERR_Z, Scored, reported, simulate, summarise

from metrics import bootstrap as bs
from metrics import intervals as iv


def _normal_means(n: int, stderr_scale: float | None, *, interval: bool = True):
    """(draw, score) of the mean of ``n`` standard normal draws (truth 0): the printed interval is the exact
    normal one when ``interval``, and the reported standard error is ``stderr_scale`` times the true one (None:
    none reported)."""

    def draw(rng: np.random.Generator, _: int) -> np.ndarray:
        return rng.normal(0.0, 1.0, n)

    def score(sample: np.ndarray, _: int) -> dict[str, float]:
        mean, se = float(sample.mean()), 1.0 / math.sqrt(n)
        out = {"mean": mean, "mean_ci_low": math.nan, "mean_ci_high": math.nan}
        if interval:
            out |= {"mean_ci_low": mean - 1.96 * se, "mean_ci_high": mean + 1.96 * se}
        if stderr_scale is not None:
            out["mean_stderr"] = stderr_scale * se
        return out

    return draw, score


def test_reported_reads_a_tasks_flat_output_or_an_interval_object() -> None:
    out = {"x": 0.5, "x_ci_low": 0.4, "x_ci_high": 0.6, "y": 1.0, "y_ci_low": 0.9, "y_ci_high": 1.1, "y_stderr": 0.05}
    assert reported(out, "x") == Scored(0.5, 0.4, 0.6, None)
    assert reported(out, "y") == Scored(1.0, 0.9, 1.1, 0.05)
    interval = iv.BootstrapInterval(0.5, 0.4, 0.6, 0.95, 100, 0, 0)
    assert reported({"z": interval}, "z") == Scored(0.5, 0.4, 0.6, None)
    assert reported({"z": Scored(0.5, 0.4, 0.6, 0.1)}, "z").stderr == 0.1


def test_rows_are_the_summaries_of_every_replicate_in_the_metrics_order() -> None:
    seen: list[tuple[int, float]] = []

    def draw(rng: np.random.Generator, index: int) -> float:
        value = float(rng.random())
        seen.append((index, value))
        return value

    def score(value: float, index: int) -> dict[str, float]:
        return {
            "a": value,
            "a_ci_low": value - 0.3,
            "a_ci_high": value + 0.3,
            "b": index,
            "b_ci_low": 0,
            "b_ci_high": 1,
        }

    truths = {"a": 0.5, "b": 0.5, "not judged": 0.0}
    rows = simulate(truths, draw, score, ["b", "a"], replicates=5, seed=[3, 1], label=lambda metric: f"design/{metric}")
    # one generator seeded from ``seed`` for the whole run, replicate i told its index
    expected = np.random.default_rng([3, 1]).random(5)
    assert [i for i, _ in seen] == [0, 1, 2, 3, 4] and [v for _, v in seen] == expected.tolist()
    assert [r.name for r in rows] == ["design/b", "design/a"]
    assert rows[1] == summarise("design/a", 0.5, expected, expected - 0.3, expected + 0.3)
    assert rows[0].mean_estimate == 2.0 and rows[0].coverage == 1.0
    seen.clear()
    assert simulate(truths, draw, score, ["a"], replicates=5, seed=[3, 1])[0].mean_estimate == rows[1].mean_estimate
    assert [v for _, v in seen] == expected.tolist()  # reproducible


def test_the_stderr_interval_is_judged_where_the_scorer_reports_a_stderr() -> None:
    draw, score = _normal_means(50, 1.0)
    interval, stderr = simulate({"mean": 0.0}, draw, score, ["mean"], replicates=400, seed=0)
    assert (interval.name, stderr.name) == ("mean", "mean_stderr")
    assert (interval.kind, stderr.kind) == ("interval", "stderr")
    # the same estimates; the stderr row's interval is estimate ± 1.96 stderr (here the exact one)
    assert stderr.mean_estimate == interval.mean_estimate and stderr.coverage == interval.coverage
    assert stderr.mean_width == pytest.approx(2 * STDERR_Z / math.sqrt(50))
    assert abs(stderr.coverage - 0.95) < 3 * math.sqrt(0.95 * 0.05 / 400) and 0.85 < stderr.width_ratio < 1.15
    # a standard error a third too small covers far less than the bar; its printed interval is unaffected
    draw, score = _normal_means(50, 1 / 3)
    interval, narrow = simulate({"mean": 0.0}, draw, score, ["mean"], replicates=400, seed=0)
    assert narrow.coverage < 0.6 < 0.9 < interval.coverage and narrow.width_ratio < 0.4


def test_a_stderr_is_judged_even_where_the_interval_is_withheld() -> None:
    draw, score = _normal_means(20, 1.0, interval=False)
    interval, stderr = simulate({"mean": 0.0}, draw, score, ["mean"], replicates=40, seed=1)
    assert interval.printed == 0.0 and math.isnan(interval.coverage)
    assert stderr.printed == 1.0 and stderr.coverage > 0.8


def test_no_stderr_row_without_a_stderr_and_a_missing_one_counts_as_withheld() -> None:
    draw, score = _normal_means(20, None)
    assert [r.name for r in simulate({"mean": 0.0}, draw, score, ["mean"], replicates=10, seed=2)] == ["mean"]

    def sometimes(sample: np.ndarray, index: int) -> dict[str, float]:
        out = score(sample, index)
        if index % 4 == 1:
            out["mean_stderr"] = 1.0 / math.sqrt(20)
        elif index % 4 == 2:
            out["mean_stderr"] = math.nan  # reported, withheld
        return out

    _, stderr = simulate({"mean": 0.0}, draw, sometimes, ["mean"], replicates=8, seed=2)
    assert stderr.name == "mean_stderr" and stderr.printed == 0.25 and stderr.replicates == 8


def test_the_named_loggers_are_silenced_while_the_replicates_run() -> None:
    logger = logging.getLogger("fairness_evals.coverage_test")
    logger.setLevel(logging.INFO)
    levels = []

    def score(sample: float, _: int) -> dict[str, float]:
        levels.append(logger.getEffectiveLevel())
        return {"x": sample, "x_ci_low": 0.0, "x_ci_high": 1.0}

    simulate({"x": 0.5}, lambda rng, _: rng.random(), score, ["x"], replicates=2, seed=0, quiet=[logger.name])
    assert levels == [logging.ERROR, logging.ERROR] and logger.level == logging.INFO


def test_a_metric_without_a_truth_and_no_replicates_are_refused() -> None:
    draw, score = _normal_means(5, None)
    with pytest.raises(ValueError, match="no truth for the metric"):
        simulate({"mean": 0.0}, draw, score, ["mean", "median"], replicates=3, seed=0)
    with pytest.raises(ValueError, match="replicates must be positive"):
        simulate({"mean": 0.0}, draw, score, ["mean"], replicates=0, seed=0)


def test_the_percentile_interval_of_an_entropy_fails_and_the_basic_one_passes() -> None:
    """The bias this project fixes, reproduced: uniform answers over 4 classes, 30 per cell, 38 cells."""
    from metrics import fact_fair as ff

    k, cells, n = 4, 38, 30
    strata = np.repeat(np.arange(cells), n)

    def s_e(c: np.ndarray) -> np.ndarray:
        return ff.entropy_score_batch(c.reshape(len(c), cells, k))

    def score(cell_index: np.ndarray, index: int) -> dict[str, iv.BootstrapInterval]:
        specs = {"percentile": s_e, "basic": bs.StatisticSpec(s_e, method="basic", bounds=(0.0, 1.0))}
        return cell_intervals(cell_index, cells * k, specs, strata=strata, n_resamples=400, seed=index)

    def draw(rng: np.random.Generator, _: int) -> np.ndarray:
        return strata * k + rng.integers(0, k, size=strata.size)

    truths = {"percentile": 1.0, "basic": 1.0}
    percentile, basic = simulate(truths, draw, score, ["percentile", "basic"], replicates=60, seed=0)
    assert percentile.coverage < 0.1 and percentile.below > 0.9
    assert basic.coverage >= 0.93 and not basic.width_ratio > 2.0
