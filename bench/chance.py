"""What a model that answers at random gets: the chance levels the benchmark READMEs quote ("How to read your numbers").

Each row is the mean over seeded simulated runs of a model that picks uniformly among each question's options (or,
for IRIS-IFS-Und, among the 52 occupations and ``unmappable``), whatever the prompt or image, scored by the task's own
``compute_metrics`` on the designs of ``tests/support/coverage_<benchmark>.py``:

- Fact-or-Fair: the objective design (3 answers per (statistic, target) cell) and the subjective ``_lite`` (30 per
  cell) and full (300 per cell) designs;
- FairLens closed tasks: the paper's design (``--sample-fraction 0.1`` of a UTKFace-sized corpus) and the quick one
  (0.02), per domain;
- IRIS ``iris_ifs_und``: the population score (exact) and the estimates at 5 and 2 images per cell.

    .venv/bin/python bench/chance.py              # every table (a few minutes on two cores)
    .venv/bin/python bench/chance.py fact_or_fair --runs 3
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

# This folder holds a metrics.py that would shadow the `metrics` package; use the repository root instead.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import numpy as np  # noqa: E402


def _means(rows: list[dict[str, float]], keys: list[str]) -> str:
    return "  ".join(f"{key} {float(np.nanmean([row[key] for row in rows])):.3f}" for key in keys)


def fact_or_fair(runs: int) -> None:
    import coverage_fact_or_fair as c

    from fact_fair_tasks import scoring

    uniform = next(p for p in c.subjective_policies() if p.name == "uniform")
    objective_uniform = next(p for p in c.objective_policies() if p.name == "uniform")
    axes = ("gender", "race")
    rng = np.random.default_rng(1)
    rows = [scoring.compute_metrics(c.objective_records(rng, objective_uniform, seed), task="chance")
            for seed in range(runs)]  # fmt: skip
    print("fact_or_fair objective:", _means(rows, [f"{s}_{a}" for s in ("s_fact", "s_e", "distance") for a in axes]))
    for label, draws in (("_lite", 10), ("full", 100)):
        rows = [scoring.compute_metrics(c.subjective_records(rng, uniform, draws), task="chance") for _ in range(runs)]
        print(f"fact_or_fair subjective {label}:", _means(rows, [f"{s}_{a}" for s in ("s_e", "s_kld", "s_fair")
                                                                  for a in axes]))  # fmt: skip


def fairlens(runs: int) -> None:
    import coverage_fairlens as c

    from fairlens_tasks import scoring
    from fairlens_tasks.questions import domain_questions

    keys = ["soundness", "association_rate", "parity_gap", "association_gap"]
    for size in ("paper", "lite"):
        sizes = c.design(size)
        for domain in ("hiring", "legal", "healthcare"):
            options = np.array([len(q.options) for q in domain_questions(domain)])
            rng = np.random.default_rng(0)
            rows = []
            for _ in range(runs):
                codes = c._stratum_columns(sizes)
                chosen = (rng.random((len(codes), len(options))) * options).astype(np.int64)
                records = c.records_from_options(domain, codes, chosen)
                rows.append(scoring.compute_metrics(records, task=f"fairlens_{domain}", min_coverage=0.0))
            print(f"fairlens {size} {domain}:", _means(rows, keys))


def iris(runs: int) -> None:
    import coverage_iris as c

    from iris_tasks import ifs_und

    pi = np.full((c.N_OCC, c.N_COMB, c.N_CLASSES), 1 / c.N_CLASSES)
    print(f"iris_ifs_und population: ifs_und_score {c.ifs_truth(pi, 5):.1f}")
    rng = np.random.default_rng(0)
    for per_cell in (5, 2):
        scores = [ifs_und.compute_metrics(c.draw_recognition(pi, per_cell, rng))["ifs_und_score"] for _ in range(runs)]
        print(f"iris_ifs_und {per_cell} images per cell: ifs_und_score {np.mean(scores):.1f}")


BENCHMARKS = {"fact_or_fair": (fact_or_fair, 10), "fairlens": (fairlens, 20), "iris": (iris, 5)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="*", choices=[[], *BENCHMARKS], default=[])
    parser.add_argument("--runs", type=int, help="simulated runs per row (default: 10, 20 and 5)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # every run warns of the intervals it withholds
    for name in args.benchmarks or BENCHMARKS:
        function, runs = BENCHMARKS[name]
        function(args.runs or runs)


if __name__ == "__main__":
    main()
