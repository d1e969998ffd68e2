"""FairLens as fairness-evals sees it: the one declaration the registry reads (``pyproject.toml`` registers
:data:`BENCHMARK` under ``fairness_evals.benchmarks``). Import-light: names, never imports."""

from fairness_evals.benchmarks import Benchmark

BENCHMARK = Benchmark.of_package(
    "fairlens_tasks",
    name="fairlens",
    title="FairLens",
    task_folders={"lmms-eval": ("fairlens_tasks",)},
    headlines=("soundness", "oe_bias_mean"),
    settings={"fairlens_min_coverage": 0.5, "fairlens_min_judged": 0.8, "fairlens_position_nulls": True},
    coverage_settings=("fairlens_min_coverage", "fairlens_min_judged"),
    more_commands={
        "judge": ("judge saved FairLens open-ended answers with an LLM (resumable)", "fairlens_tasks.judging.command"),
    },
    score_outputs={"fairlens": "fairlens_tasks.commands", "fairlens_judge": "fairlens_tasks.judging.command"},
    judged_outputs={"fairlens_judge": "fairness-evals judge"},
    differences=(100.0, " pp"),
)
