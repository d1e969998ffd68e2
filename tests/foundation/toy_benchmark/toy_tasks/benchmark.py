"""The toy as fairness-evals sees it: the one declaration the registry reads (``toy_bench-0.1.dist-info/
entry_points.txt`` registers :data:`BENCHMARK` under ``fairness_evals.benchmarks``). Names, never imports."""

from fairness_evals.benchmarks import Benchmark

BENCHMARK = Benchmark(
    name="toy",
    title="Toy",
    statistics="toy_tasks.statistics",
    task_folders={"lm-eval": ("toy_tasks",)},
    headlines=("stereotype_rate",),
    settings={"toy_min_coverage": 0.5},
    coverage_settings=("toy_min_coverage",),
    commands="toy_tasks.commands",
    compare="toy_tasks.compare:ADAPTERS",
    score_outputs={"toy": "toy_tasks.commands"},
    report="toy_tasks.report:section",
    provenance="toy_tasks.inspect_plan:provenance",
    inspect="toy_tasks.inspect_plan:plan",
    inspect_tasks="toy_tasks.inspect_tasks:TASKS",
)
