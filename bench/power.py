"""Power of ``fairness-evals compare``: the smallest difference a full run detects 80% of the time, paired vs unpaired.

Two models answer the same documents (Fact-or-Fair) or images (FairLens) of a full-size design; model B is model A
with its bias scaled by a factor, so the true difference of a metric is known exactly (the population values of
``tests/support/coverage_fact_or_fair.py`` and ``coverage_fairlens.py``). How the two models answer one unit is
correlated (B reuses A's random draw with probability ``--shared``, as two checkpoints of one model would). Each
replicate draws a fresh sample, has both models answer it and tests the difference of one metric at ``--alpha``
(no multiple-comparison adjustment: the power of one pre-chosen metric) with ``compare``'s own code, once paired
(``compare``'s default: the same units resampled jointly) and once unpaired (``compare --unpaired``: each run
resampled on its own, what comparing two runs' separate intervals amounts to). The power is the share of
replicates that find the difference; the smallest detectable difference is interpolated where the power crosses
80%.

    .venv/bin/python bench/power.py                    # both benchmarks, 40 replicates per point (several minutes)
    .venv/bin/python bench/power.py --benchmark fairlens --replicates 100

Metrics: S_fair (gender and race) of the subjective base task at the released size (300 answers per cell), where
model A is ``coverage_fact_or_fair``'s stereotyped policy; the FairLens gender parity gap and the mean parity gap
over attributes of the healthcare domain at the paper's 10% sample (1,505 images), model A biased by gender
and race (``coverage_compare``'s biased policy).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path

# This folder holds a metrics.py that would shadow the `metrics` package; use the repository root instead.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import coverage_compare as cc  # noqa: E402
import coverage_fact_or_fair as cff  # noqa: E402
import numpy as np  # noqa: E402
from coverage_fairlens import _closed_truth, design  # noqa: E402

from fact_fair_tasks.compare import FactOrFair  # noqa: E402
from fairlens_tasks.compare import FairLens  # noqa: E402
from fairness_evals.compare import engine  # noqa: E402

SCALES = (1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.35, 0.2)  # model B's bias as a share of model A's


def _fact_or_fair_points(shared: float) -> list[tuple[float, cc.FactOrFairPair]]:
    base = cff.Policy("A", cff._stereotyped(0.8, 1.0), cff._sensitive)
    points = []
    for s in SCALES:
        other = cff.Policy(f"B{s}", cff._stereotyped(0.8 * s, 1.0 * s), cff._sensitive)
        points.append((s, cc.FactOrFairPair(f"x{s}", base, other, shared)))
    return points


def _fairlens_points(shared: float) -> list[tuple[float, cc.FairLensPair]]:
    base = cc._BIASED
    points = []
    for s in SCALES:
        other = replace(base, name=f"B{s}", gender=(0.0, 0.25 * s), race=tuple(s * r for r in base.race))
        points.append((s, cc.FairLensPair(f"x{s}", base, other, shared)))
    return points


def _power(benchmark: str, metrics: tuple[str, ...], replicates: int, alpha: float, shared: float, resamples: int,
           seed: int) -> dict[str, list[tuple[float, float, float]]]:  # fmt: skip
    """Per metric: (true difference, paired power, unpaired power) at every point of :data:`SCALES`."""
    out: dict[str, list[tuple[float, float, float]]] = {m: [] for m in metrics}
    rng = np.random.default_rng(seed)
    if benchmark == "fact_or_fair":
        points, adapter, task = _fact_or_fair_points(shared), FactOrFair(), "fact_or_fair_subjective_base"
    else:
        points, adapter, task = _fairlens_points(shared), FairLens(), "fairlens_healthcare"
    for _, pair in points:
        if benchmark == "fact_or_fair":
            truth_a, truth_b = (cff.true_scores(cff.subjective_truth(p)) for p in (pair.a, pair.b))
        else:
            sizes = design("paper")
            truth_a, truth_b = (_closed_truth(p, sizes) for p in (pair.a, pair.b))
        found = {m: [0, 0] for m in metrics}
        for rep in range(replicates):
            if benchmark == "fact_or_fair":
                rec_a, rec_b = cc.paired_fact_or_fair_records(pair, cc.FACT_OR_FAIR_DRAWS["paper"], rng)
            else:
                rec_a, rec_b = cc.paired_fairlens_records(pair, design("paper"), rng)
            problem_a, problem_b = adapter.problem(task, rec_a), adapter.problem(task, rec_b)
            for column, paired in enumerate((True, False)):
                settings = engine.Options(alpha, resamples, rep, not paired)
                for name, d in engine.differences(problem_a, problem_b, metrics, settings, task=task).items():
                    found[name][column] += d.p_value <= alpha
        for name in metrics:
            paired_power, unpaired_power = (found[name][i] / replicates for i in (0, 1))
            out[name].append((truth_b[name] - truth_a[name], paired_power, unpaired_power))
    return out


def _smallest(points: list[tuple[float, float]], target: float = 0.8) -> float:
    """The smallest |difference| at which the power reaches ``target``, interpolated linearly in |difference|
    between the grid's points (NaN when no point reaches it)."""
    ordered = sorted((abs(d), p) for d, p in points)
    for i, (d1, p1) in enumerate(ordered):
        if p1 < target:
            continue
        if i == 0:
            return d1
        d0, p0 = ordered[i - 1]
        return d0 + (target - p0) * (d1 - d0) / (p1 - p0)
    return float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", choices=["fact_or_fair", "fairlens", "both"], default="both")
    parser.add_argument("--replicates", type=int, default=40)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--shared", type=float, default=0.8, help="how often model B reuses A's draw (correlation)")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    plans = {
        "fact_or_fair": ("s_fair_gender", "s_fair_race"),
        "fairlens": ("parity_gap_gender", "parity_gap"),
    }
    chosen = list(plans) if args.benchmark == "both" else [args.benchmark]
    print(f"power at alpha {args.alpha} over {args.replicates} replicates per point; B reuses A's draw with "
          f"probability {args.shared}; {args.resamples} resamples")  # fmt: skip
    for benchmark in chosen:
        start = time.perf_counter()
        result = _power(benchmark, plans[benchmark], args.replicates, args.alpha, args.shared, args.resamples,
                        args.seed)  # fmt: skip
        print(f"\n{benchmark} ({time.perf_counter() - start:.0f} s)")
        for name, rows in result.items():
            print(f"  {name}: true difference (x100), power paired, power unpaired")
            for d, p, u in sorted(rows, key=lambda r: abs(r[0])):
                print(f"    {100 * d:+8.3f}   {p:5.2f}   {u:5.2f}")
            paired = _smallest([(d, p) for d, p, _ in rows])
            unpaired = _smallest([(d, u) for d, _, u in rows])
            ratio = unpaired / paired if paired > 0 else float("nan")
            print(f"  {name}: smallest difference detected 80% of the time (x100): paired {100 * paired:.3f}, "
                  f"unpaired {100 * unpaired:.3f} (unpaired / paired {ratio:.2f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
