"""Fact-or-Fair as Inspect tasks: ``fact_or_fair`` and each of its tasks, with the lite variants.

The documents are :func:`fact_fair_tasks.documents.documents_for`'s (the same seeded documents lm-eval runs, under
the ids ``fairness-evals export fact_or_fair`` gives); a sample's input is the document's prompt
(:func:`fact_fair_tasks.prompts.prompt_of`) as one user message, its metadata the document. The scorer parses the
reply (:func:`fact_fair_tasks.scoring.parse_reply`) and puts the document's readable record
(:func:`fact_fair_tasks.scoring.readable_record`) in the score's metadata; the one metric
(:func:`fairness_evals.inspect.metric.headline`) gives the records to :func:`fact_fair_tasks.scoring.compute_metrics`.
A group is one Inspect task over its members' documents; its roll-ups are
:func:`fact_fair_tasks.scoring.group_mean`'s (paper Table 2).

Task arguments (``-T``) mirror the task metadata and ``fairness-evals export/score fact_or_fair``: ``seed``
(``fact_or_fair_seed``), ``draws`` (``fact_or_fair_draws``; 100, the lite variants 10), ``conventions``
(``fact_or_fair_conventions``) and ``min_coverage`` (``fact_or_fair_min_coverage``). Greedy decoding, at most 64
new tokens, as the lm-eval tasks. The log-likelihood ``_mc`` variants have no Inspect form: Inspect has no
log-likelihood scoring.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState

from fact_fair_tasks import prompts, scoring
from fact_fair_tasks import statistics as table
from fact_fair_tasks.documents import DEFAULT_DRAWS, DEFAULT_SEED, LITE_DRAWS, document_settings, documents_for
from fact_fair_tasks.documents import DEFAULT_MIN_COVERAGE as MIN_COVERAGE
from fact_fair_tasks.inspect_plan import fact_or_fair_kind
from fairness_evals import statistics
from fairness_evals.inspect.headline import leaves
from fairness_evals.inspect.metric import benchmark_task

BENCHMARK = "fact_or_fair"
#: The Inspect tasks' version (their sample and metric format).
VERSION = 1
#: -T argument -> task-metadata key.
ARGUMENTS = {
    "seed": "fact_or_fair_seed",
    "draws": "fact_or_fair_draws",
    "conventions": "fact_or_fair_conventions",
    "min_coverage": "fact_or_fair_min_coverage",
}
GENERATION = GenerateConfig(temperature=0.0, max_tokens=64)


def settings(seed: int, draws: int, conventions: str, min_coverage: float) -> dict[str, Any]:
    """The task-metadata settings of the ``-T`` arguments, checked as the lm-eval tasks check them (an error names
    the argument)."""
    given = {"seed": seed, "draws": draws, "conventions": conventions, "min_coverage": min_coverage}
    metadata = {ARGUMENTS[name]: value for name, value in given.items()}
    try:
        document_settings(metadata)
        scoring.scoring_settings(metadata)
    except ValueError as error:
        message = str(error)
        for argument, key in ARGUMENTS.items():
            message = message.replace(key, f"-T {argument}")
        raise ValueError(message) from None
    return metadata


def documents(task_name: str, metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """The documents of ``task_name`` (a group: its members' in member order) with these settings."""
    seed, draws = document_settings(metadata)
    return [
        doc
        for leaf in leaves(task_name)
        for doc in documents_for(fact_or_fair_kind(leaf), seed=seed, draws=draws, metadata=metadata)
    ]


def sample(doc: dict[str, Any]) -> Sample:
    """One document as an Inspect sample: the prompt, the target lm-eval shows, the document id and the document."""
    return Sample(input=prompts.prompt_of(doc), target=scoring.doc_to_target(doc), id=doc["id"], metadata=doc)


@scorer(metrics=[])
def fact_or_fair_answer(task: str) -> Any:
    """Parses the reply against the document's options; the score's value is the parse status (parsed, unparsed,
    refused), its answer the letter read, its explanation the rule, its metadata the readable record."""

    async def score(state: TaskState, target: Target) -> Score:
        doc = state.metadata
        parse = scoring.parse_reply(doc, state.output.completion)
        record = scoring.readable_record(doc, parse)
        return Score(value=parse.status, answer=record["answer"], explanation=parse.rule, metadata=record)

    return score


def build(task_name: str, seed: int, draws: int, conventions: str, min_coverage: float) -> Task:
    """The Inspect task ``task_name`` (a declared Fact-or-Fair task or group) with these settings."""
    metadata = settings(seed, draws, conventions, min_coverage)
    docs = documents(task_name, metadata)
    samples = [sample(doc) for doc in docs]
    return benchmark_task(task_name, BENCHMARK, samples, fact_or_fair_answer(task_name), metadata, GENERATION, VERSION)


# --------------------------------------------------------------------------- the tasks (`inspect eval fairness_evals/<name>`)
def define(name: str) -> Callable[..., Task]:
    """What the Inspect task ``name`` (a declared Fact-or-Fair task or group) calls, its ``-T`` arguments those of
    :func:`build` (the objective task has no ``draws``; the lite variants default to 10) and its description the
    statistics table's."""
    draws_default = LITE_DRAWS if name.endswith("_lite") else DEFAULT_DRAWS
    if name == "fact_or_fair_objective":

        def make(seed: int = DEFAULT_SEED, conventions: str = "corrected", min_coverage: float = MIN_COVERAGE) -> Task:
            return build(name, seed, DEFAULT_DRAWS, conventions, min_coverage)

    else:

        def make(
            seed: int = DEFAULT_SEED,
            draws: int = draws_default,
            conventions: str = "corrected",
            min_coverage: float = MIN_COVERAGE,
        ) -> Task:
            return build(name, seed, draws, conventions, min_coverage)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = statistics.task(name).description
    return make


#: Every Fact-or-Fair Inspect task, by name: each declared language-model task and group but the log-likelihood
#: ``_mc`` ones (what each builds; the ``@task`` functions at the end of this file call them).
TASKS: dict[str, Callable[..., Task]] = {
    declared.name: define(declared.name)
    for declared in table.TASKS
    if declared.harness == "lm-eval" and not declared.name.endswith("_mc")
}


# --------------------------------------------------------------------------- generated: do not edit
# `python -m fairness_evals.inspect.task_files` writes one literal @task per entry of TASKS, for Inspect's file scan.


@task
def fact_or_fair_objective(
    seed: int = 0,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """198 objective queries (which group has the highest/lowest X)"""
    return TASKS["fact_or_fair_objective"](**locals())


@task
def fact_or_fair_subjective_base(
    seed: int = 0,
    draws: int = 100,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """11,400 subjective queries with four random profiles, no context"""
    return TASKS["fact_or_fair_subjective_base"](**locals())


@task
def fact_or_fair_subjective_representativeness(
    seed: int = 0,
    draws: int = 100,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """the same after a statistical-prior sentence (representativeness bias)"""
    return TASKS["fact_or_fair_subjective_representativeness"](**locals())


@task
def fact_or_fair_subjective_attribution(
    seed: int = 0,
    draws: int = 100,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """the same after a news report about one person (attribution error)"""
    return TASKS["fact_or_fair_subjective_attribution"](**locals())


@task
def fact_or_fair_subjective_ingroup(
    seed: int = 0,
    draws: int = 100,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """the same after "Assume you are a <race> <gender>." (in-group/out-group bias)"""
    return TASKS["fact_or_fair_subjective_ingroup"](**locals())


@task
def fact_or_fair_subjective(
    seed: int = 0,
    draws: int = 100,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """the four subjective contexts"""
    return TASKS["fact_or_fair_subjective"](**locals())


@task
def fact_or_fair(
    seed: int = 0,
    draws: int = 100,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """objective and subjective tasks: the paper's Table 2"""
    return TASKS["fact_or_fair"](**locals())


@task
def fact_or_fair_subjective_base_lite(
    seed: int = 0,
    draws: int = 10,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """11,400 subjective queries with four random profiles, no context (lite: 10 profile draws per scenario)"""
    return TASKS["fact_or_fair_subjective_base_lite"](**locals())


@task
def fact_or_fair_subjective_representativeness_lite(
    seed: int = 0,
    draws: int = 10,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """the same after a statistical-prior sentence (representativeness bias) (lite: 10 profile draws per scenario)"""
    return TASKS["fact_or_fair_subjective_representativeness_lite"](**locals())


@task
def fact_or_fair_subjective_attribution_lite(
    seed: int = 0,
    draws: int = 10,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """the same after a news report about one person (attribution error) (lite: 10 profile draws per scenario)"""
    return TASKS["fact_or_fair_subjective_attribution_lite"](**locals())


@task
def fact_or_fair_subjective_ingroup_lite(
    seed: int = 0,
    draws: int = 10,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """the same after "Assume you are a <race> <gender>." (in-group/out-group bias) (lite: 10 profile draws per scenario)"""
    return TASKS["fact_or_fair_subjective_ingroup_lite"](**locals())


@task
def fact_or_fair_subjective_lite(
    seed: int = 0,
    draws: int = 10,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """the four subjective contexts (lite: 10 profile draws per scenario)"""
    return TASKS["fact_or_fair_subjective_lite"](**locals())


@task
def fact_or_fair_lite(
    seed: int = 0,
    draws: int = 10,
    conventions: str = "corrected",
    min_coverage: float = 0.5,
) -> Task:
    """objective and subjective tasks (lite: 10 profile draws per scenario): the paper's Table 2"""
    return TASKS["fact_or_fair_lite"](**locals())


# --------------------------------------------------------------------------- end of the generated tasks
