"""FairLens as fairness-evals sees it: the one declaration the registry reads (``pyproject.toml`` registers
:data:`BENCHMARK` under ``fairness_evals.benchmarks``). Import-light: names, never imports."""

from fairness_evals.benchmarks import Benchmark

BENCHMARK = Benchmark(
    name="fairlens",
    title="FairLens",
    statistics="fairlens_tasks.statistics",
    task_folders={"lmms-eval": ("fairlens_tasks",)},
    headlines=("soundness", "oe_bias_mean"),
    settings={"fairlens_min_coverage": 0.5, "fairlens_min_judged": 0.8, "fairlens_position_nulls": True},
    coverage_settings=("fairlens_min_coverage", "fairlens_min_judged"),
    commands="fairlens_tasks.commands",
    more_commands={
        "judge": ("judge saved FairLens open-ended answers with an LLM (resumable)", "fairlens_tasks.judging.command"),
    },
    compare="fairlens_tasks.compare:ADAPTERS",
    score_outputs={"fairlens": "fairlens_tasks.commands", "fairlens_judge": "fairlens_tasks.judging.command"},
    judged_outputs={"fairlens_judge": "fairness-evals judge"},
    report="fairlens_tasks.report:section",
    published="fairlens_tasks.report:published_table",
    differences=(100.0, " pp"),
    provenance="fairlens_tasks.inspect_plan:provenance",
    inspect="fairlens_tasks.inspect_plan:plan",
    inspect_tasks="fairlens_tasks.inspect_tasks:TASKS",
)
