"""What our aggregations hand the harnesses: the values their tables print."""

from __future__ import annotations

import math

from fairness_evals import aggregation


def _run(values: dict[str, float], names: list[str], documents: int = 3) -> dict[str, object]:
    aggregation.clear()
    out = {"carrier": aggregation.aggregate("toy", [{"record": i} for i in range(documents)], lambda _: values,
                                            "carrier")}  # fmt: skip
    for name in names:
        out[name] = aggregation.aggregate("toy", [name] * documents, lambda _: values, "carrier")
    return out


def test_a_null_standard_error_is_written_as_the_harnesses_write_theirs() -> None:
    """lm-eval and lmms-eval write "N/A" for a standard error they do not have; a null one of ours is written the
    same way, so the ± column has one spelling (a NaN printed as "nan", and as "NaN" in group rows)."""
    values = {"carrier": 0.0, "s": math.nan, "s_stderr": math.nan, "t": 0.5, "t_stderr": 0.05, "u_stderr": None}
    out = _run(values, ["s", "s_stderr", "t", "t_stderr", "u_stderr"])
    assert out["s_stderr"] == out["u_stderr"] == aggregation.NO_STDERR == "N/A"
    assert math.isnan(out["s"])  # a null score stays a number: NaN
    assert (out["t"], out["t_stderr"]) == (0.5, 0.05)


def test_resamples_of_a_run_are_nan_and_leave_it() -> None:
    """lm-eval 0.5 also aggregates bootstrap resamples of the items: a list that repeats a record, or a metric the run
    has reported already, is a resample: NaN at once, the kept run untouched and not recomputed."""
    calls = []
    records = [{"record": i} for i in range(3)]

    def compute(items: list) -> dict:
        calls.append(len(items))
        return {"carrier": float(len(calls)), "t": 0.5}

    aggregation.clear()
    assert aggregation.aggregate("toy", records, compute, "carrier") == 1.0
    assert math.isnan(aggregation.aggregate("toy", [records[0], records[0], records[2]], compute, "carrier"))
    assert aggregation.aggregate("toy", records[::-1], compute, "carrier") == 1.0  # the kept run, in another order
    assert calls == [3]
    assert aggregation.aggregate("toy", ["t"] * 3, compute, "carrier") == 0.5
    assert math.isnan(aggregation.aggregate("toy", ["t"] * 3, compute, "carrier"))


def test_a_spawned_bootstrap_worker_holding_no_run_is_quiet(capfd) -> None:
    """A pool worker started by ``spawn`` (macOS, Windows) imports the aggregation afresh and holds no run: its
    resamples are NaN without the error a metric aggregated before its carrier gets."""
    import functools
    import multiprocessing

    from lm_eval_05 import Bootstrap, toy_compute

    f = functools.partial(aggregation.aggregate, "toy", compute=toy_compute, carrier="carrier")
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        values = pool.map(Bootstrap(f, 5), [(0, ["s"] * 4), (1, ["s_stderr"] * 4)])
    assert all(math.isnan(v) for chunk in values for v in chunk)
    assert "cannot report" not in capfd.readouterr().err
