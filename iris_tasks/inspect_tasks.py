"""IRIS understanding as Inspect tasks: ``iris_ifs_und``, ``iris_rfs_und``, ``iris_bis_und`` and the group ``iris_und``.

The documents are :func:`iris_tasks.documents.build`'s for the corpora the ``-T`` arguments name (the same documents
lmms-eval runs); a sample is one user message, the image (the document's image cropped to its box, or the probe's
blank image, as a PNG ``data:`` URL: :func:`iris_tasks.scoring.doc_to_visual`) before the document's prompt; its
metadata is the document. The scorer reads the reply as the lmms-eval tasks do (the occupation mapper, a rating or
a yes/no: :func:`iris_tasks.scoring.process_results`) and puts the readable record in the score's metadata, with
the document's ``task``; the one metric gives the records to the task module's ``compute_metrics``
(:mod:`iris_tasks.ifs_und`, ``rfs_und``, ``bis_und``). The group reports no roll-up of its own (the statistics
table's rule: the three dimension scores have different scales), only its members' headline metrics;
``fairness-evals iris-profile`` makes the profile.

Task arguments (``-T``) are the ``IRIS_*`` settings of the lmms-eval tasks (:mod:`iris_tasks.settings`) by their
setting names: ``corpus``, ``image_root``, ``steer_corpus``, ``sample_fraction``, ``max_per_cell``, ``seed``,
``on_bad_input``, ``hf_split``, ``hf_columns``, ``steer_hf_split``, ``steer_hf_columns``, ``label_map``,
``probe_rounds``, ``probe_bracket``, ``threshold`` (the mapper's) and ``min_coverage``. The embedder is
``IRIS_EMBEDDER``'s (the MiniLM of the ``iris`` extra by default). Greedy decoding, at most 128 new tokens.

IRIS generation has no Inspect form: its tasks generate images (``--model`` is an image generator behind
lmms-eval's generation backends, or images made elsewhere), and Inspect's models answer in text.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import Score, Target, scorer
from inspect_ai.solver import TaskState

from fairness_evals import statistics
from fairness_evals.inspect.headline import leaves
from fairness_evals.inspect.metric import benchmark_task
from fairness_evals.inspect.plans import plan
from iris_tasks import scoring
from iris_tasks import statistics as table
from iris_tasks.documents import build as build_documents
from iris_tasks.settings import DEFAULTS, ENV, build_settings

BENCHMARK = "iris"
VERSION = 1
GENERATION = GenerateConfig(temperature=0.0, max_tokens=128)
#: The ``-T`` arguments: the keys of :func:`iris_tasks.settings.build_settings`.
ARGUMENTS = tuple(ENV)
NAMES = {name: f"-T {name}" for name in ARGUMENTS}
#: What each corpus argument names (iris_tasks/README.md, "Corpora").
MANIFESTS = {
    "corpus": "a FACET annotations.csv (with -T image_root), a CSV or JSON-lines manifest, or hf:NAME",
    "steer_corpus": "a CSV or JSON-lines manifest of counterfactual sets (with pair_id), or hf:NAME",
}


def image_of(doc: dict[str, Any]) -> ContentImage:
    """The document's image (cropped to its box; the probe's blank image) as a PNG ``data:`` URL."""
    (picture,) = scoring.doc_to_visual(doc)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return ContentImage(image="data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii"))


def sample(doc: dict[str, Any], in_group: bool = False) -> Sample:
    """One document as an Inspect sample: the image, then the prompt, in one user message. In the group its id is
    ``<task>/<document id>``: ``iris_rfs_und`` asks the ``iris_ifs_und`` question of the same images under the same
    ids (the log reader gives back the document's own id)."""
    content = [image_of(doc), ContentText(text=scoring.doc_to_text(doc))]
    target = scoring.doc_to_target(doc)
    identity = f"{doc['task']}/{doc['id']}" if in_group else doc["id"]
    return Sample(input=[ChatMessageUser(content=content)], target=target, id=identity, metadata=doc)


@scorer(metrics=[])
def iris_answer(task: str) -> Any:
    """Reads the reply as the lmms-eval task does; the score's value is what it was read as (``""`` for nothing),
    its explanation the rule, its metadata the readable record with the document's task."""
    chosen = plan(task)

    async def score(state: TaskState, target: Target) -> Score:
        doc, reply = state.metadata, state.output.completion
        item = await anyio.to_thread.run_sync(chosen.item_of, doc, reply, None)  # the mapper embeds: off the loop
        return Score(value=item["answer"], answer=item["answer"], explanation=item["rule"], metadata=item)

    return score


def build(task_name: str, arguments: dict[str, Any]) -> Task:
    """The Inspect task ``task_name`` (a declared IRIS understanding task or the group) for these settings."""
    needed = {"iris_ifs_und": "corpus", "iris_bis_und": "steer_corpus"}
    for leaf in leaves(task_name):
        if leaf in needed and not str(arguments.get(needed[leaf]) or "").strip():
            raise ValueError(f"{leaf}: no image corpus: give -T {needed[leaf]}=<{MANIFESTS[needed[leaf]]}>")
    settings = build_settings(arguments, NAMES)
    docs = [doc for leaf in leaves(task_name) for doc in build_documents(leaf, settings)]
    recorded = {name: value for name, value in arguments.items() if value is not None}
    samples = [sample(doc, statistics.task(task_name).group) for doc in docs]
    thresholds = {"iris_min_coverage": settings.min_coverage}
    return benchmark_task(
        task_name, BENCHMARK, samples, iris_answer(task_name), thresholds, GENERATION, VERSION, corpus=recorded
    )


def define(name: str) -> Callable[..., Task]:
    """What the Inspect task ``name`` calls; its description is the statistics table's."""

    def make(
        corpus: str | None = None,
        image_root: str | None = None,
        steer_corpus: str | None = None,
        sample_fraction: float = DEFAULTS["sample_fraction"],
        max_per_cell: int | None = None,
        seed: int = DEFAULTS["seed"],
        on_bad_input: str = "stop",
        hf_split: str | None = None,
        hf_columns: str | None = None,
        steer_hf_split: str | None = None,
        steer_hf_columns: str | None = None,
        label_map: str | None = None,
        probe_rounds: int = DEFAULTS["probe_rounds"],
        probe_bracket: int = DEFAULTS["probe_bracket"],
        threshold: float = DEFAULTS["threshold"],
        min_coverage: float = DEFAULTS["min_coverage"],
    ) -> Task:
        values = locals()
        return build(name, {argument: values[argument] for argument in ARGUMENTS})

    make.__name__ = make.__qualname__ = name
    make.__doc__ = statistics.task(name).description
    return make


#: The IRIS understanding Inspect tasks, by name: the three tasks and the group (not the generation ones); the ``@task``
#: functions at the end of this file call them.
TASKS: dict[str, Callable[..., Task]] = {
    declared.name: define(declared.name) for declared in (*table.UNDERSTANDING_TASKS, table.UNDERSTANDING_GROUP)
}


# --------------------------------------------------------------------------- generated: do not edit
# `python -m fairness_evals.inspect.task_files` writes one literal @task per entry of TASKS, for Inspect's file scan.


@task
def iris_ifs_und(
    corpus: str | None = None,
    image_root: str | None = None,
    steer_corpus: str | None = None,
    sample_fraction: float = 1.0,
    max_per_cell: int | None = None,
    seed: int = 0,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    steer_hf_split: str | None = None,
    steer_hf_columns: str | None = None,
    label_map: str | None = None,
    probe_rounds: int = 5,
    probe_bracket: int = 4,
    threshold: float = 0.6,
    min_coverage: float = 0.5,
) -> Task:
    """the occupation of every corpus image, mapped to the 52 classes: AD and SPD over 7 group definitions -> IFS-Und score"""
    return TASKS["iris_ifs_und"](**locals())


@task
def iris_rfs_und(
    corpus: str | None = None,
    image_root: str | None = None,
    steer_corpus: str | None = None,
    sample_fraction: float = 1.0,
    max_per_cell: int | None = None,
    seed: int = 0,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    steer_hf_split: str | None = None,
    steer_hf_columns: str | None = None,
    label_map: str | None = None,
    probe_rounds: int = 5,
    probe_bracket: int = 4,
    threshold: float = 0.6,
    min_coverage: float = 0.5,
) -> Task:
    """the static knowledge probe (JSD from the U.S. and E.U. tables) and, with a corpus, the stereotype drift scores -> RFS-Und score"""
    return TASKS["iris_rfs_und"](**locals())


@task
def iris_bis_und(
    corpus: str | None = None,
    image_root: str | None = None,
    steer_corpus: str | None = None,
    sample_fraction: float = 1.0,
    max_per_cell: int | None = None,
    seed: int = 0,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    steer_hf_split: str | None = None,
    steer_hf_columns: str | None = None,
    label_map: str | None = None,
    probe_rounds: int = 5,
    probe_bracket: int = 4,
    threshold: float = 0.6,
    min_coverage: float = 0.5,
) -> Task:
    """six ratings and six yes/no questions per image of the counterfactual sets: AC_diff and DHR per intersection level -> BIS-Und score"""
    return TASKS["iris_bis_und"](**locals())


@task
def iris_und(
    corpus: str | None = None,
    image_root: str | None = None,
    steer_corpus: str | None = None,
    sample_fraction: float = 1.0,
    max_per_cell: int | None = None,
    seed: int = 0,
    on_bad_input: str = "stop",
    hf_split: str | None = None,
    hf_columns: str | None = None,
    steer_hf_split: str | None = None,
    steer_hf_columns: str | None = None,
    label_map: str | None = None,
    probe_rounds: int = 5,
    probe_bracket: int = 4,
    threshold: float = 0.6,
    min_coverage: float = 0.5,
) -> Task:
    """IRIS understanding sector: the three tasks (profile: fairness-evals iris-profile)"""
    return TASKS["iris_und"](**locals())


# --------------------------------------------------------------------------- end of the generated tasks
