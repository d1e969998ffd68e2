"""bench/coverage.py: its verdicts, and every benchmark's design module offers the table it prints."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types
from pathlib import Path

import pytest
from coverage_simulation import summarise

BENCH = Path(__file__).resolve().parents[2] / "bench" / "coverage.py"


def _bench() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("bench_coverage", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_verdicts() -> None:
    bench = _bench()
    good = summarise("a", 0.5, [0.5, 0.4, 0.6], [0.4, 0.3, 0.5], [0.6, 0.5, 0.7])
    wide = summarise("b", 0.0, [0.1, 0.2, 0.3], [0, 0, 0], [1, 1, 1])
    missing = summarise("c", 0.5, [0.5, 0.5], [0.6, 0.6], [0.7, 0.7])
    withheld = summarise("d", 0.5, [0.5, 0.5], [float("nan")] * 2, [float("nan")] * 2)
    assert bench.verdict(good, "paper") == "ok"
    assert bench.verdict(wide, "paper") == "width > 2.0x"
    assert bench.verdict(wide, "paper", "documented") == "conservative: documented"
    assert bench.verdict(missing, "lite", "documented") == "coverage < 0.9"  # a conservative row must still cover
    assert bench.verdict(withheld, "lite") == "withheld"


def test_main_prints_tables_and_fails_below_the_bar(capsys: pytest.CaptureFixture, tmp_path: Path) -> None:
    bench = _bench()
    fake = types.ModuleType("coverage_fake_for_test")
    fake.coverage_table = lambda size: [summarise("a", 0.5, [0.5, 0.4], [0.6, 0.3], [0.7, 0.5])]
    sys.modules[fake.__name__] = fake
    try:
        bench.BENCHMARKS = {"fake": fake.__name__}
        assert bench.main(["--size", "paper", "--json", str(tmp_path / "c.json")]) == 1
    finally:
        del sys.modules[fake.__name__]
    out = capsys.readouterr().out
    assert "fake, paper size" in out and "1 statistic(s) below the bar" in out
    assert '"coverage": 0.5' in (tmp_path / "c.json").read_text()


def test_replicates_reach_the_simulators_and_must_be_positive(capsys: pytest.CaptureFixture) -> None:
    bench = _bench()
    fake = types.ModuleType("coverage_fake_replicates_for_test")
    asked = []

    def coverage_table(size: str, *, replicates: int = 400) -> list:
        asked.append(replicates)
        est = [0.4, 0.5, 0.6][:replicates]
        return [summarise("a", 0.5, est, [e - 0.1 for e in est], [e + 0.1 for e in est])]

    fake.coverage_table = coverage_table
    sys.modules[fake.__name__] = fake
    try:
        bench.BENCHMARKS = {"fake": fake.__name__}
        assert bench.main(["--size", "lite", "--replicates", "3"]) == 0
        with pytest.raises(SystemExit) as refused:
            bench.main(["--replicates", "0"])
    finally:
        del sys.modules[fake.__name__]
    assert asked == [3] and refused.value.code == 2
    out, err = capsys.readouterr()
    assert "replicates 3)" in out and "--replicates must be at least 1, got 0" in err


@pytest.mark.parametrize(
    "name",
    [
        "coverage_fact_or_fair",
        "coverage_fairlens",
        "coverage_iris",
        "coverage_generation",
        "coverage_compare",
        "coverage_compare_groups",
    ],
)
def test_every_benchmark_offers_a_coverage_table(name: str) -> None:
    assert name in _bench().BENCHMARKS.values()
    module = importlib.import_module(name)
    parameters = inspect.signature(module.coverage_table).parameters
    assert next(iter(parameters)) == "size" and "replicates" in parameters  # bench/coverage.py --replicates
    with pytest.raises(ValueError):
        module.coverage_table("huge")


def test_bias_tables_hold_each_minimum_to_the_bias_it_declares(capsys: pytest.CaptureFixture) -> None:
    """``--bias``: per statistic, the largest bias over the models at each size, and at the declared minimum the
    verdict against the declared bias (exit 1 when one is above it)."""
    from coverage_simulation import Bias

    bench = _bench()

    def row(model: str, size: int, mean: float, allowed: float | None = None) -> Bias:
        return Bias("s_e_race", model, size, 1.0, 100, 1.0, mean, 0.01, allowed)

    rows = [row("sub/a", 3, 0.55), row("sub/b", 3, 0.6), row("sub/a", 10, 0.88, 0.13), row("sub/b", 10, 0.9, 0.13)]
    text, failures = bench.render_bias("fake", rows, "answers per cell", markdown=True)
    assert failures == 0 and "| s_e_race | -0.450 | -0.120 | -0.120 (a, 10) | ±0.13 | ok |" in text
    rows[2] = row("sub/a", 10, 0.8, 0.13)  # 0.2 from the truth, declared 0.13 (Monte Carlo error 0.001)
    text, failures = bench.render_bias("fake", rows, "answers per cell", markdown=False)
    assert failures == 1 and "above the declared bias" in text
    fake = types.ModuleType("coverage_fake_bias_for_test")
    fake.coverage_table = lambda size: []
    fake.bias_table = lambda **_: rows
    sys.modules[fake.__name__] = fake
    try:
        bench.BENCHMARKS = {"fake": fake.__name__}
        assert bench.main(["--bias"]) == 1
    finally:
        del sys.modules[fake.__name__]
    assert "1 statistic(s) above their declared bias" in capsys.readouterr().out
