"""Seeded, deterministic Fact-or-Fair documents.

Objective: every statistic x available axis (15 gender, 18 race) x {highest, lowest} x 3 option orders
= 198 documents. Subjective, per context: 19 statistics x {highest, lowest} x 3 scenarios x ``draws``
profile draws (100 by default, as released: 11,400 documents per context).

Documents are ordered so that any prefix (``--limit N``) spreads over statistics and pairs each
highest query with its lowest one: the objective set is round-major, the subjective set draw-major.

Every random choice comes from ``random.Random(<key>)`` with a key naming the seed, the data version and
the document's coordinates, so a document does not depend on which others are built: the 10-draw "lite"
set is exactly the first 10 draws of the full set, and two builds with the same seed are byte-identical.
The four contexts share their profile draws and background identities (a paired design: each context
changes only the context sentence), which makes the context effects directly comparable.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from typing import Any

from fact_fair_tasks import prompts
from fact_fair_tasks.items import AXES, CONTEXTS, TARGETS, Statistic, classes, data_version, raw_data, statistics

DEFAULT_SEED = 0
DEFAULT_DRAWS = 100
LITE_DRAWS = 10
OBJECTIVE_ROUNDS = 3
SCENARIOS = 3

TASK_PREFIX = "fact_or_fair"


def _rng(seed: int, *coordinates: object) -> random.Random:
    key = "/".join(["fact-or-fair", f"data-v{data_version()}", f"seed-{seed}", *map(str, coordinates)])
    return random.Random(key)


def _finish(doc: dict[str, Any]) -> dict[str, Any]:
    canonical = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    doc["doc_sha"] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    return doc


def objective_documents(seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """The 198 objective documents (15 gender + 18 race statistics x 2 targets x 3 option orders)."""
    return [dict(d) for d in _objective_documents(int(seed))]


@functools.lru_cache(maxsize=4)
def _objective_documents(seed: int) -> tuple[dict[str, Any], ...]:
    docs = []
    for round_ in range(OBJECTIVE_ROUNDS):
        for stat in statistics():
            for axis in AXES:
                if stat.ground_truth[axis] is None:
                    continue
                for target in TARGETS:
                    options = list(classes(axis))
                    _rng(seed, "objective", stat.slug, axis, target, round_).shuffle(options)
                    answer = stat.truth(axis, target)
                    body = prompts.objective_body(stat, target, options)
                    docs.append(
                        _finish(
                            {
                                "id": f"objective/{stat.slug}/{axis}/{target}/{round_}",
                                "task": f"{TASK_PREFIX}_objective",
                                "statistic": stat.name,
                                "statistic_index": stat.index,
                                "axis": axis,
                                "target": target,
                                "round": round_,
                                "options": options,
                                "answer": answer,
                                "answer_index": options.index(answer),
                                "body": body,
                                "prompt": prompts.generation_prompt(body, objective=True),
                                "seed": seed,
                                "data_version": data_version(),
                            }
                        )
                    )
    return tuple(docs)


def _draw_profiles(rng: random.Random) -> list[dict[str, str]]:
    pools = raw_data()["profile"]
    return [
        {
            "name": rng.choice(pools["names"]),
            "age": rng.choice(pools["ages"]),
            "gender": rng.choice(classes("gender")),
            "race": rng.choice(classes("race")),
        }
        for _ in range(4)
    ]


def subjective_documents(context: str, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """The subjective documents of one context: 19 x 2 x 3 x ``draws``."""
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}; expected one of {', '.join(CONTEXTS)}")
    draws = int(draws)
    if not 1 <= draws <= 10_000:
        raise ValueError(f"draws must be between 1 and 10000, got {draws}")
    return [dict(d) for d in _subjective_documents(context, draws, int(seed))]


@functools.lru_cache(maxsize=8)
def _subjective_documents(context: str, draws: int, seed: int) -> tuple[dict[str, Any], ...]:
    docs = []
    for draw in range(draws):
        for scenario in range(SCENARIOS):
            for stat in statistics():
                for target in TARGETS:
                    docs.append(_subjective_document(stat, context, target, scenario, draw, seed))
    return tuple(docs)


def _subjective_document(
    stat: Statistic, context: str, target: str, scenario: int, draw: int, seed: int
) -> dict[str, Any]:
    rng = _rng(seed, "subjective", stat.slug, target, scenario, draw)
    profiles = _draw_profiles(rng)
    # Drawn for every document, as the released code does, so that all contexts share the same draws.
    background = {"race": rng.choice(classes("race")), "gender": rng.choice(classes("gender"))}
    uses_background = context in ("attribution", "ingroup")
    sentence = prompts.context_text(context, stat, target, background if uses_background else None)
    body = prompts.subjective_body(sentence, stat.scenarios[target][scenario], profiles)
    return _finish(
        {
            "id": f"{context}/{stat.slug}/{target}/s{scenario}/d{draw:03d}",
            "task": f"{TASK_PREFIX}_subjective_{context}",
            "context": context,
            "statistic": stat.name,
            "statistic_index": stat.index,
            "target": target,
            "scenario": scenario,
            "draw": draw,
            "options": profiles,
            # The drawn identity is in the prompt only for attribution and ingroup; the other contexts
            # keep it as a paired control for the Table 3 rates.
            "identity": background,
            "identity_in_prompt": uses_background,
            "truth_gender": stat.truth("gender", target),
            "truth_race": stat.truth("race", target),
            "positive": stat.positive(target),
            "body": body,
            "prompt": prompts.generation_prompt(body, objective=False),
            "seed": seed,
            "data_version": data_version(),
        }
    )


def documents_for(kind: str, *, seed: int = DEFAULT_SEED, draws: int = DEFAULT_DRAWS) -> list[dict[str, Any]]:
    """``kind`` is "objective" or a context name."""
    if kind == "objective":
        return objective_documents(seed)
    return subjective_documents(kind, draws=draws, seed=seed)


def load_dataset(**kwargs: Any) -> dict[str, Any]:
    """lm-eval ``custom_dataset``: called with the task metadata, the model arguments and dataset_kwargs.

    Reads ``fact_or_fair_kind`` (dataset_kwargs: "objective" or a context), and ``fact_or_fair_seed`` /
    ``fact_or_fair_draws`` (task metadata; override with ``--metadata '{"fact_or_fair_draws": 10}'``).
    Everything else (model arguments, config_source, ...) is ignored.
    """
    import datasets

    kind = kwargs.get("fact_or_fair_kind")
    if kind is None:
        raise ValueError("fact_or_fair task YAML lacks dataset_kwargs.fact_or_fair_kind")
    docs = documents_for(
        kind,
        seed=int(kwargs.get("fact_or_fair_seed", DEFAULT_SEED)),
        draws=int(kwargs.get("fact_or_fair_draws", DEFAULT_DRAWS)),
    )
    return {"test": datasets.Dataset.from_list(docs)}
