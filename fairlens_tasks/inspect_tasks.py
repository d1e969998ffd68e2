"""FairLens as Inspect tasks: ``fairlens`` and ``fairlens_<domain>`` (closed questions).

The documents are :func:`fairlens_tasks.documents.documents`' for the face corpus the ``-T`` arguments name (the same
documents lmms-eval runs, under the ids ``fairness-evals export fairlens`` gives). A sample is one user message,
the image (``ContentImage``: the corpus file, or a hub dataset's row as a PNG ``data:`` URL) before the question's
prompt (:func:`fairlens_tasks.prompts.prompt_for`), as the released scripts send it; its metadata is the document
without the corpus provenance, which the task metadata holds once. The scorer normalises the reply
(:func:`fairlens_tasks.normalise.normalise`) and puts the document's readable record
(:func:`fairlens_tasks.scoring.readable_record`) in the score's metadata; the one metric gives the records to
:func:`fairlens_tasks.scoring.compute_metrics`; the group's roll-ups are
:func:`fairlens_tasks.scoring.model_level_mean`'s (paper Table 2).

Task arguments (``-T``) mirror ``fairness-evals export/score fairlens`` and the ``FAIRLENS_*`` variables of the
lmms-eval tasks (:mod:`fairlens_tasks.settings`): ``corpus`` (required), ``sample_fraction``, ``seed``,
``image_list``, ``on_bad_input`` (``stop``/``skip``), ``hf_split``, ``hf_columns``, ``label_map`` and
``min_coverage`` (``fairlens_min_coverage``). The environment variables are not read: a run is what its task
arguments say. Greedy decoding, at most 128 new tokens, as the lmms-eval tasks.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState

from fairlens_tasks import scoring
from fairlens_tasks import statistics as table
from fairlens_tasks.corpus import load_corpus
from fairlens_tasks.documents import PROVENANCE_COLUMN_TYPES, iter_documents
from fairlens_tasks.judging.inspect_scorer import JUDGE_ARGUMENTS, check_arguments, fairlens_judge
from fairlens_tasks.normalise import normalise
from fairlens_tasks.prompts import prompt_for
from fairlens_tasks.settings import (
    DEFAULT_MIN_COVERAGE,
    DEFAULT_MIN_JUDGED,
    DEFAULT_SAMPLE_FRACTION,
    DEFAULT_SEED,
    KEYS,
    build_settings,
)
from fairlens_tasks.settings import coverage_threshold as threshold_of
from fairness_evals import statistics
from fairness_evals.inspect.headline import leaves
from fairness_evals.inspect.metric import benchmark_task

BENCHMARK = "fairlens"
VERSION = 1
GENERATION = GenerateConfig(temperature=0.0, max_tokens=128)
#: The open-ended questions: 128 new tokens and no sampling flag, as the released code and the lmms-eval tasks.
OPEN_GENERATION = GenerateConfig(max_tokens=128)
#: The corpus arguments: ``-T`` name -> the key of :func:`fairlens_tasks.settings.build_settings`.
CORPUS_ARGUMENTS = KEYS
#: How errors name the arguments.
NAMES = {name: f"-T {name}" for name in CORPUS_ARGUMENTS}
#: The corpus provenance columns of a document: in the task metadata, not in every sample's.
PROVENANCE = tuple(PROVENANCE_COLUMN_TYPES)


def image_of(doc: dict[str, Any]) -> ContentImage:
    """The document's image: its corpus file, or its hub dataset row as a PNG ``data:`` URL."""
    if not doc.get("hf_dataset"):
        return ContentImage(image=doc["image"])
    from fairlens_tasks import images

    split = doc.get("hf_split") or None
    picture = images.load_hf(doc["hf_dataset"], split, doc["hf_image_column"], int(doc["image_index"]))
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return ContentImage(image="data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii"))


def sample(doc: dict[str, Any]) -> Sample:
    """One document as an Inspect sample: the image, then the prompt, in one user message."""
    content = [image_of(doc), ContentText(text=prompt_for(doc["question_id"]))]
    metadata = {key: value for key, value in doc.items() if key not in PROVENANCE}
    return Sample(
        input=[ChatMessageUser(content=content)], target=scoring.doc_to_target(doc), id=doc["id"], metadata=metadata
    )


@scorer(metrics=[])
def fairlens_answer(task: str, provenance: dict[str, Any]) -> Any:
    """Normalises the reply to one of the question's options; the score's value is the option (``""`` when none
    matched), its explanation the rule, its metadata the readable record (of the document with the corpus
    ``provenance``, which the samples' metadata leave to the task's)."""

    async def score(state: TaskState, target: Target) -> Score:
        doc = {**state.metadata, **provenance}
        answer = normalise(state.output.completion, doc.get("options") or [])
        record = scoring.readable_record(doc, answer)
        return Score(value=record["option"], answer=record["option"], explanation=answer.rule, metadata=record)

    return score


def is_open(task_name: str) -> bool:
    return task_name.startswith("fairlens_open")


def domain_of(leaf: str) -> str:
    return leaf.removeprefix("fairlens_open_").removeprefix("fairlens_")


def build(task_name: str, arguments: dict[str, Any], threshold: float, judging: dict[str, Any] | None = None) -> Task:
    """The Inspect task ``task_name`` (a declared FairLens task or group) for the corpus the ``arguments`` name:
    ``threshold`` is ``fairlens_min_coverage`` (closed questions) or ``fairlens_min_judged`` (open-ended ones, judged
    with the ``judging`` arguments: :data:`fairlens_tasks.judging.inspect_scorer.JUDGE_ARGUMENTS`)."""
    if not str(arguments.get("corpus") or "").strip():
        raise ValueError(
            f"{task_name}: no face corpus: give -T corpus=<UTKFace folder, CSV or JSON-lines manifest, or hf:NAME>"
        )
    corpus_settings = build_settings(arguments, NAMES)
    recorded = {
        **arguments,
        "corpus": corpus_settings.corpus,
        "image_list": corpus_settings.image_list,
        "sample_fraction": corpus_settings.sample_fraction,
        "seed": corpus_settings.seed,
        "on_bad_input": "skip" if corpus_settings.skip_bad_input else "stop",
    }
    key = table.JUDGED_THRESHOLD if is_open(task_name) else table.THRESHOLD
    try:
        settings = {key: threshold_of(key, threshold).value}
    except ValueError as error:
        argument = f"-T {'min_judged' if is_open(task_name) else 'min_coverage'}"
        raise ValueError(str(error).replace(key, argument)) from None
    corpus = load_corpus(corpus_settings)
    provenance = corpus.provenance()
    if is_open(task_name):
        check_arguments(judging or {})
        scorer_, questions = fairlens_judge(task_name, dict(judging or {}), provenance), "open"
        config = OPEN_GENERATION
    else:
        scorer_, questions, config = fairlens_answer(task_name, provenance), "closed", GENERATION
    docs = [doc for leaf in leaves(task_name) for doc in iter_documents(corpus, domain_of(leaf), questions, settings)]
    more = {"corpus": recorded, "provenance": provenance}
    if judging is not None:
        more["judging"] = {name: value for name, value in judging.items() if name != "judge_cache"}
    samples = [sample(doc) for doc in docs]
    return benchmark_task(task_name, BENCHMARK, samples, scorer_, settings, config, VERSION, **more)


def define(name: str) -> Callable[..., Task]:
    """What the Inspect task ``name`` (a declared FairLens task or group) calls; its description is the statistics
    table's. The open-ended ones take the judge's arguments too."""

    def corpus_arguments(values: dict[str, Any]) -> dict[str, Any]:
        return {argument: values[argument] for argument in CORPUS_ARGUMENTS}

    if not is_open(name):

        def make(
            corpus: str | None = None,
            sample_fraction: float = DEFAULT_SAMPLE_FRACTION,
            seed: int = DEFAULT_SEED,
            image_list: str | None = None,
            on_bad_input: str = "stop",
            hf_split: str | None = None,
            hf_columns: str | None = None,
            label_map: str | None = None,
            min_coverage: float = DEFAULT_MIN_COVERAGE,
        ) -> Task:
            return build(name, corpus_arguments(locals()), min_coverage)

    else:

        def make(
            corpus: str | None = None,
            sample_fraction: float = DEFAULT_SAMPLE_FRACTION,
            seed: int = DEFAULT_SEED,
            image_list: str | None = None,
            on_bad_input: str = "stop",
            hf_split: str | None = None,
            hf_columns: str | None = None,
            label_map: str | None = None,
            min_judged: float = DEFAULT_MIN_JUDGED,
            judge: str | None = JUDGE_ARGUMENTS["judge"],
            judge_temperature: float = JUDGE_ARGUMENTS["judge_temperature"],
            judge_max_tokens: int = JUDGE_ARGUMENTS["judge_max_tokens"],
            judge_attempts: int = JUDGE_ARGUMENTS["judge_attempts"],
            judge_cache: str | None = JUDGE_ARGUMENTS["judge_cache"],
        ) -> Task:
            values = locals()
            judging = {argument: values[argument] for argument in JUDGE_ARGUMENTS}
            return build(name, corpus_arguments(values), min_judged, judging)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = statistics.task(name).description
    return make


#: The FairLens Inspect tasks, by name: the closed and the open-ended domain tasks and their groups (what each builds;
#: the ``@task`` functions at the end of this file call them).
TASKS: dict[str, Callable[..., Task]] = {declared.name: define(declared.name) for declared in table.TASKS}


# --------------------------------------------------------------------------- generated: do not edit
# `python -m fairness_evals.inspect.task_files` writes one literal @task per entry of TASKS, for Inspect's file scan.


@task
def fairlens_hiring(
    corpus: str | None = None,
    sample_fraction: float = 0.1,
    seed: int = 0,
    image_list: str | None = None,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    label_map: str | None = None,
    min_coverage: float = 0.5,
) -> Task:
    """the 21 closed hiring questions, asked of every image of the corpus"""
    return TASKS["fairlens_hiring"](**locals())


@task
def fairlens_legal(
    corpus: str | None = None,
    sample_fraction: float = 0.1,
    seed: int = 0,
    image_list: str | None = None,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    label_map: str | None = None,
    min_coverage: float = 0.5,
) -> Task:
    """the 9 closed legal questions, asked of every image of the corpus"""
    return TASKS["fairlens_legal"](**locals())


@task
def fairlens_healthcare(
    corpus: str | None = None,
    sample_fraction: float = 0.1,
    seed: int = 0,
    image_list: str | None = None,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    label_map: str | None = None,
    min_coverage: float = 0.5,
) -> Task:
    """the 8 closed healthcare questions, asked of every image of the corpus"""
    return TASKS["fairlens_healthcare"](**locals())


@task
def fairlens(
    corpus: str | None = None,
    sample_fraction: float = 0.1,
    seed: int = 0,
    image_list: str | None = None,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    label_map: str | None = None,
    min_coverage: float = 0.5,
) -> Task:
    """the three closed domains: the paper's Table 2"""
    return TASKS["fairlens"](**locals())


@task
def fairlens_open_hiring(
    corpus: str | None = None,
    sample_fraction: float = 0.1,
    seed: int = 0,
    image_list: str | None = None,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    label_map: str | None = None,
    min_judged: float = 0.8,
    judge: str | None = None,
    judge_temperature: float = 0.0,
    judge_max_tokens: int = 1024,
    judge_attempts: int = 3,
    judge_cache: str | None = None,
) -> Task:
    """the 9 open hiring questions, asked of every image; answers judged for bias"""
    return TASKS["fairlens_open_hiring"](**locals())


@task
def fairlens_open_legal(
    corpus: str | None = None,
    sample_fraction: float = 0.1,
    seed: int = 0,
    image_list: str | None = None,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    label_map: str | None = None,
    min_judged: float = 0.8,
    judge: str | None = None,
    judge_temperature: float = 0.0,
    judge_max_tokens: int = 1024,
    judge_attempts: int = 3,
    judge_cache: str | None = None,
) -> Task:
    """the 12 open legal questions, asked of every image; answers judged for bias"""
    return TASKS["fairlens_open_legal"](**locals())


@task
def fairlens_open_healthcare(
    corpus: str | None = None,
    sample_fraction: float = 0.1,
    seed: int = 0,
    image_list: str | None = None,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    label_map: str | None = None,
    min_judged: float = 0.8,
    judge: str | None = None,
    judge_temperature: float = 0.0,
    judge_max_tokens: int = 1024,
    judge_attempts: int = 3,
    judge_cache: str | None = None,
) -> Task:
    """the 10 open healthcare questions, asked of every image; answers judged for bias"""
    return TASKS["fairlens_open_healthcare"](**locals())


@task
def fairlens_open(
    corpus: str | None = None,
    sample_fraction: float = 0.1,
    seed: int = 0,
    image_list: str | None = None,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    label_map: str | None = None,
    min_judged: float = 0.8,
    judge: str | None = None,
    judge_temperature: float = 0.0,
    judge_max_tokens: int = 1024,
    judge_attempts: int = 3,
    judge_cache: str | None = None,
) -> Task:
    """the three open-ended domains"""
    return TASKS["fairlens_open"](**locals())


# --------------------------------------------------------------------------- end of the generated tasks
