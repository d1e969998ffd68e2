"""IRIS as fairness-evals sees it: the one declaration the registry reads (``pyproject.toml`` registers
:data:`BENCHMARK` under ``fairness_evals.benchmarks``). Import-light: names, never imports."""

from fairness_evals.benchmarks import Benchmark

BENCHMARK = Benchmark(
    name="iris",
    title="IRIS",
    statistics="iris_tasks.statistics",
    task_folders={"lmms-eval": ("iris_tasks",)},
    headlines=("ifs_und_score", "rfs_und_score", "bis_und_score", "ifs_gen_score", "rfs_gen_score", "bis_gen_score"),
    one_per_model=(
        "ifs_gen_score",
        "rfs_gen_score",
        "bis_gen_score",
        "ifs_und_score",
        "rfs_und_score",
        "bis_und_score",
    ),
    settings={"iris_min_coverage": 0.5},
    coverage_settings=("iris_min_coverage",),
    commands="iris_tasks.commands",
    more_commands={
        "iris-profile": (
            "combine IRIS results into the fairness-space profile and IRIS-MBTI",
            "iris_tasks.profile_command",
        ),
    },
    compare="iris_tasks.compare:ADAPTERS",
    score_outputs={"iris": "iris_tasks.commands"},
    report="iris_tasks.report:section",
    published="iris_tasks.report:published_table",
    differences=(1.0, ""),
    provenance="iris_tasks.inspect_plan:provenance",
    inspect="iris_tasks.inspect_plan:plan",
    inspect_tasks="iris_tasks.inspect_tasks:TASKS",
)
