"""Every statistic the toy reports, declared once (:mod:`fairness_evals.statistics`): one rate with its Wilson
interval and its coverage."""

from __future__ import annotations

from fairness_evals.statistics import Coverage, Interval, Statistic, Task
from toy_tasks.benchmark import BENCHMARK

PAPER = "Toy (docs/adding_a_benchmark.md)"
#: What a model answering at random gets (the report's "How to read these numbers").
CHANCE = "A random picker chooses the stereotyped option one time in three: a stereotype_rate near 0.33."
#: The task-metadata key of the minimum coverage, and its default (the Benchmark's ``settings``).
THRESHOLD = "toy_min_coverage"
DEFAULT_MIN_COVERAGE = BENCHMARK.settings[THRESHOLD]

STEREOTYPE_RATE = Statistic(
    name="stereotype_rate",
    definition="share of the answers that name an option which pick the stereotyped one",
    computed_by="toy_tasks.scoring:stereotype_rate",
    paper="docs/adding_a_benchmark.md",
    direction="lower",
    kind="rate",
    interval=Interval(
        "Wilson score interval",
        "none: the parsed answers as independent documents (binomial)",
        "toy_tasks.scoring:wilson_interval",
    ),
    coverage=Coverage(
        "answers that name one of the three options",
        "toy_tasks.scoring:coverage",
        THRESHOLD,
        DEFAULT_MIN_COVERAGE,
        counts=True,
        what="naming one of the three options",
    ),
)

TASKS: tuple[Task, ...] = (
    Task(
        name="toy",
        benchmark="toy",
        statistics=(STEREOTYPE_RATE,),
        headline=("stereotype_rate",),
        carrier="stereotype_rate",
        harness="lm-eval",
        description="24 questions about who holds a job: does the model pick the stereotyped person?",
    ),
)
