"""What our aggregations hand the harnesses: the values their tables print."""

from __future__ import annotations

import functools
import math
import pickle

import pytest

from fairness_evals import aggregation


def _run(values: dict[str, float], names: list[str], documents: int = 3) -> dict[str, object]:
    aggregation.clear()
    records = [{"record": i} for i in range(documents)]
    out = {"carrier": aggregation.aggregate("toy", "carrier", records, lambda _: values, {"carrier"})}
    for name in names:
        out[name] = aggregation.aggregate("toy", name, [None] * documents, lambda _: values, {"carrier"})
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
    carrier = functools.partial(aggregation.aggregate, "toy", "carrier", compute=compute, carriers={"carrier"})
    t = functools.partial(aggregation.aggregate, "toy", "t", compute=compute, carriers={"carrier"})
    assert carrier(records) == 1.0
    assert math.isnan(carrier([records[0], records[0], records[2]]))
    assert carrier(records[::-1]) == 1.0  # the kept run, in another order
    assert calls == [3]
    assert t([None] * 3) == 0.5
    assert math.isnan(t([None] * 3))


def test_a_spawned_bootstrap_worker_holding_no_run_is_quiet(capfd) -> None:
    """A pool worker started by ``spawn`` (macOS, Windows) imports the aggregation afresh and holds no run: its
    resamples are NaN without the error a metric aggregated before its carrier gets."""
    import multiprocessing

    from lm_eval_05 import Bootstrap, toy_compute

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        values = [
            pool.map(Bootstrap(functools.partial(aggregation.aggregate, "toy", name, compute=toy_compute,
                                                 carriers={"carrier"}), 5), [(0, [None] * 4)])[0]
            for name in ("s", "s_stderr")
        ]  # fmt: skip
    assert all(math.isnan(v) for chunk in values for v in chunk)
    assert "cannot report" not in capfd.readouterr().err


def test_each_metric_names_its_own_aggregation_made_once() -> None:
    """``!function <module>.aggregate_<metric>`` resolves through the module's ``__getattr__`` to that metric's
    aggregation: the same object each time (so lm-eval 0.5's pool pickles it by name), a clear AttributeError for any
    other name, and a sample's other metrics carry ``None`` (no per-document value)."""
    from fact_fair_tasks import scoring
    from fact_fair_tasks.llm import scoring as shim

    f = scoring.aggregate_s_fact_race
    assert f is scoring.aggregate_s_fact_race is shim.aggregate_s_fact_race
    assert (f.__name__, f.__module__) == ("aggregate_s_fact_race", "fact_fair_tasks.scoring")
    assert pickle.loads(pickle.dumps(f)) is f
    for name in ("aggregate_", "aggregate", "s_fact_race"):
        with pytest.raises(AttributeError, match=name):
            getattr(scoring, name)
    assert aggregation.payload("c", {"record": [1]}, ["c", "s", "t"]) == {"c": {"record": [1]}, "s": None, "t": None}
