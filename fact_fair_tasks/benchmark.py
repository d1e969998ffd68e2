"""Fact-or-Fair as fairness-evals sees it: the one declaration the registry reads (``pyproject.toml`` registers
:data:`BENCHMARK` under ``fairness_evals.benchmarks``). Import-light: names, never imports."""

from fairness_evals.benchmarks import Benchmark

BENCHMARK = Benchmark.of_package(
    "fact_fair_tasks",
    name="fact_or_fair",
    title="Fact-or-Fair",
    task_folders={"lm-eval": ("fact_fair_tasks.llm",), "lmms-eval": ("fact_fair_tasks.t2i",)},
    headlines=tuple(f"{s}_{a}" for s in ("s_fact", "s_e", "s_kld", "s_fair") for a in ("gender", "race")),
    settings={
        "fact_or_fair_seed": 0,
        "fact_or_fair_draws": 100,
        "fact_or_fair_conventions": "corrected",
        "fact_or_fair_min_coverage": 0.5,
        "fact_or_fair_position_nulls": True,
    },
    coverage_settings=("fact_or_fair_min_coverage",),
    score_outputs={"fact_or_fair": "fact_fair_tasks.commands"},
    differences=(100.0, " pp"),
)
