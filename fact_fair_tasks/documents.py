"""Seeded, deterministic Fact-or-Fair documents.

Objective: every statistic x available axis (15 gender, 18 race) x {highest, lowest} x 3 option orders
= 198 documents. Subjective, per context: 19 statistics x {highest, lowest} x 3 scenarios x ``draws``
profile draws (100 by default, as released: 11,400 documents per context).

Objective option orders are counterbalanced (task version 2; the release shuffles each round independently,
so a cell's three rounds could share one order): in every (statistic, axis, target) cell the three rounds put
each option at three different positions (race: three rows of a Latin rectangle; gender: both orders, one of
them twice), and over an axis the true answer sits at every letter equally often (gender 45 A / 45 B, race 27
at each of A-D), so a model that answers by letter position gains nothing. Under the released conventions
(``fact_or_fair_conventions: released``) each round is shuffled independently, as released.

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
from collections.abc import Mapping
from typing import Any

from fact_fair_tasks import prompts
from fact_fair_tasks.items import (
    AXES,
    CONTEXTS,
    TARGETS,
    Statistic,
    check_conventions,
    classes,
    data_version,
    raw_data,
    statistics,
)

DEFAULT_SEED = 0
DEFAULT_DRAWS = 100
LITE_DRAWS = 10
OBJECTIVE_ROUNDS = 3
SCENARIOS = 3

TASK_PREFIX = "fact_or_fair"

#: Default minimum share of parsed answers below which a score is NaN (task metadata fact_or_fair_min_coverage).
DEFAULT_MIN_COVERAGE = 0.5


def _rng(seed: int, *coordinates: object) -> random.Random:
    key = "/".join(["fact-or-fair", f"data-v{data_version()}", f"seed-{seed}", *map(str, coordinates)])
    return random.Random(key)


def _finish(doc: dict[str, Any]) -> dict[str, Any]:
    canonical = json.dumps(doc, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    doc["doc_sha"] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]
    return doc


def objective_documents(seed: int = DEFAULT_SEED, conventions: str = "corrected") -> list[dict[str, Any]]:
    """The 198 objective documents (15 gender + 18 race statistics x 2 targets x 3 option orders)."""
    return [dict(d) for d in _objective_documents(int(seed), check_conventions(conventions))]


def _balanced_positions(seed: int, axis: str, cells: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """Each cell's designated position, every position equally often over the axis (as far as the count allows):
    gender, where the truth sits in two of the three rounds; race, where it never sits."""
    k = len(classes(axis))
    plan = [i % k for i in range(len(cells))]
    _rng(seed, "objective", "plan", axis).shuffle(plan)
    return dict(zip(cells, plan, strict=True))


def _counterbalanced_orders(seed: int, stat: Statistic, axis: str, target: str, designated: int) -> list[list[str]]:
    """Three option orders for one cell in which every option takes three different positions (module docstring)."""
    rng = _rng(seed, "objective", stat.slug, axis, target)
    truth = stat.truth(axis, target)
    others = [c for c in classes(axis) if c != truth]
    k = len(others) + 1
    if k == 2:  # both orders, the truth at the designated position in two rounds
        positions = [designated, designated, 1 - designated]
        rng.shuffle(positions)
        return [[truth, others[0]] if p == 0 else [others[0], truth] for p in positions]
    truth_positions = [p for p in range(k) if p != designated]
    rng.shuffle(truth_positions)
    while True:  # a Latin rectangle: rejection sampling, a few tries on average
        orders = []
        for p in truth_positions:
            rest = others[:]
            rng.shuffle(rest)
            orders.append([*rest[:p], truth, *rest[p:]])
        if all(len({order[i] for order in orders}) == len(orders) for i in range(k)):
            return orders


def _released_order(seed: int, stat: Statistic, axis: str, target: str, round_: int) -> list[str]:
    """An independent shuffle per round, as released (and as task version 1 drew it)."""
    options = list(classes(axis))
    _rng(seed, "objective", stat.slug, axis, target, round_).shuffle(options)
    return options


@functools.lru_cache(maxsize=4)
def _objective_documents(seed: int, conventions: str) -> tuple[dict[str, Any], ...]:
    stats = statistics(conventions)
    orders: dict[tuple[str, str, str], list[list[str]]] = {}
    if conventions == "corrected":
        for axis in AXES:
            cells = [(s.slug, t) for s in stats if s.ground_truth[axis] is not None for t in TARGETS]
            plan = _balanced_positions(seed, axis, cells)
            for stat in stats:
                for target in TARGETS if stat.ground_truth[axis] is not None else ():
                    designated = plan[(stat.slug, target)]
                    orders[(stat.slug, axis, target)] = _counterbalanced_orders(seed, stat, axis, target, designated)
    docs = []
    for round_ in range(OBJECTIVE_ROUNDS):
        for stat in stats:
            for axis in AXES:
                if stat.ground_truth[axis] is None:
                    continue
                for target in TARGETS:
                    if conventions == "corrected":
                        options = list(orders[(stat.slug, axis, target)][round_])
                    else:
                        options = _released_order(seed, stat, axis, target, round_)
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
                                "conventions": conventions,
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


def subjective_documents(
    context: str, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED, conventions: str = "corrected"
) -> list[dict[str, Any]]:
    """The subjective documents of one context: 19 x 2 x 3 x ``draws``."""
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}; expected one of {', '.join(CONTEXTS)}")
    draws = int(draws)
    if not 1 <= draws <= 10_000:
        raise ValueError(f"draws must be between 1 and 10000, got {draws}")
    return [dict(d) for d in _subjective_documents(context, draws, int(seed), check_conventions(conventions))]


@functools.lru_cache(maxsize=8)
def _subjective_documents(context: str, draws: int, seed: int, conventions: str) -> tuple[dict[str, Any], ...]:
    docs = []
    stats = statistics(conventions)
    for draw in range(draws):
        for scenario in range(SCENARIOS):
            for stat in stats:
                for target in TARGETS:
                    docs.append(_subjective_document(stat, context, target, scenario, draw, seed, conventions))
    return tuple(docs)


def _subjective_document(
    stat: Statistic, context: str, target: str, scenario: int, draw: int, seed: int, conventions: str
) -> dict[str, Any]:
    rng = _rng(seed, "subjective", stat.slug, target, scenario, draw)
    profiles = _draw_profiles(rng)
    # Drawn for every document, as the released code does, so that all contexts share the same draws.
    background = {"race": rng.choice(classes("race")), "gender": rng.choice(classes("gender"))}
    uses_background = context in ("attribution", "ingroup")
    sentence = prompts.context_text(context, stat, target, background if uses_background else None, conventions)
    body = prompts.subjective_body(sentence, stat.scenarios[target][scenario], profiles, conventions)
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
            "conventions": conventions,
        }
    )


def scoring_settings(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The scoring settings a document carries, from task metadata (or ``--metadata``): ``conventions``
    (``fact_or_fair_conventions``, default "corrected") and ``min_coverage`` (``fact_or_fair_min_coverage``, a
    share of answers in [0, 1], default :data:`DEFAULT_MIN_COVERAGE`). Other keys are ignored."""
    metadata = metadata or {}
    conventions = check_conventions(metadata.get("fact_or_fair_conventions", "corrected"))
    raw = metadata.get("fact_or_fair_min_coverage", DEFAULT_MIN_COVERAGE)
    try:
        min_coverage = float(raw)
    except (TypeError, ValueError):
        min_coverage = float("nan")
    if not 0.0 <= min_coverage <= 1.0:  # NaN fails too
        raise ValueError(f"fact_or_fair_min_coverage must be a number in [0, 1] (a share of answers), got {raw!r}")
    return {"conventions": conventions, "min_coverage": min_coverage}


def documents_for(
    kind: str,
    *,
    seed: int = DEFAULT_SEED,
    draws: int = DEFAULT_DRAWS,
    metadata: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """``kind`` is "objective" or a context name; ``metadata`` holds the scoring settings
    (:func:`scoring_settings`: ``fact_or_fair_conventions``, ``fact_or_fair_min_coverage``), which every
    document carries to its record. The threshold is not part of a document's hash."""
    settings = scoring_settings(metadata)
    conventions = settings["conventions"]
    if kind == "objective":
        docs = objective_documents(seed, conventions)
    else:
        docs = subjective_documents(kind, draws=draws, seed=seed, conventions=conventions)
    for doc in docs:
        doc["min_coverage"] = settings["min_coverage"]
    return docs


def load_dataset(**kwargs: Any) -> dict[str, Any]:
    """lm-eval ``custom_dataset``: called with the task metadata, the model arguments and dataset_kwargs.

    Reads ``fact_or_fair_kind`` (dataset_kwargs: "objective" or a context), and the task metadata
    ``fact_or_fair_seed`` / ``fact_or_fair_draws`` / ``fact_or_fair_conventions`` / ``fact_or_fair_min_coverage``
    (override with e.g. ``--metadata '{"fact_or_fair_draws": 10}'``). Everything else (model arguments,
    config_source, ...) is ignored.
    """
    import datasets

    kind = kwargs.get("fact_or_fair_kind")
    if kind is None:
        raise ValueError("fact_or_fair task YAML lacks dataset_kwargs.fact_or_fair_kind")
    docs = documents_for(
        kind,
        seed=int(kwargs.get("fact_or_fair_seed", DEFAULT_SEED)),
        draws=int(kwargs.get("fact_or_fair_draws", DEFAULT_DRAWS)),
        metadata=kwargs,
    )
    return {"test": datasets.Dataset.from_list(docs)}
