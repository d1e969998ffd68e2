"""IRIS as fairness-evals sees it: the one declaration the registry reads (``pyproject.toml`` registers
:data:`BENCHMARK` under ``fairness_evals.benchmarks``). Import-light: names, never imports."""

from fairness_evals.benchmarks import Benchmark

#: The six dimension scores: the headlines, and what a model's runs may report once each.
SCORES = ("ifs_und_score", "rfs_und_score", "bis_und_score", "ifs_gen_score", "rfs_gen_score", "bis_gen_score")

BENCHMARK = Benchmark.of_package(
    "iris_tasks",
    name="iris",
    title="IRIS",
    task_folders={"lmms-eval": ("iris_tasks",)},
    headlines=SCORES,
    one_per_model=SCORES,
    settings={"iris_min_coverage": 0.5},
    coverage_settings=("iris_min_coverage",),
    more_commands={
        "iris-profile": (
            "combine IRIS results into the fairness-space profile and IRIS-MBTI",
            "iris_tasks.profile_command",
        ),
    },
    score_outputs={"iris": "iris_tasks.commands"},
    differences=(1.0, ""),
)
