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

A document holds the fields its prompt and its scoring read, not the prompt itself: the prompt is
:func:`fact_fair_tasks.prompts.prompt_of` of the document (the harness logs it once, in its ``arguments``), and the
document's ``doc_sha`` hashes its fields and its prompt. lm-eval gets an Arrow table, which
:mod:`fact_fair_tasks.document_cache` keeps on disk (README, "Speed").
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import random
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from fact_fair_tasks import document_cache
from fact_fair_tasks.benchmark import BENCHMARK as DECLARED
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

if TYPE_CHECKING:
    import pyarrow as pa

DEFAULT_SEED = 0
DEFAULT_DRAWS = 100
LITE_DRAWS = 10
OBJECTIVE_ROUNDS = 3
SCENARIOS = 3

TASK_PREFIX = "fact_or_fair"

#: Default minimum share of parsed answers below which a score is NaN (task metadata fact_or_fair_min_coverage).
DEFAULT_MIN_COVERAGE = DECLARED.settings["fact_or_fair_min_coverage"]


def _rng(seed: int, *coordinates: object) -> random.Random:
    key = "/".join(["fact-or-fair", f"data-v{data_version()}", f"seed-{seed}", *map(str, coordinates)])
    return random.Random(key)


def _finish(doc: dict[str, Any], known: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``doc`` with its ``doc_sha``: sha256 (16 hex digits) of its fields, each ``key=value`` in key order joined by
    a unit separator, values as Python writes them (the builders fix every key order). The fields determine the
    prompt (:func:`fact_fair_tasks.prompts.prompt_of`), so with the task and data versions the hash names what the
    model was asked. ``known`` holds how Python writes some of the values, where the caller has it already (the
    profiles that the four contexts share)."""
    known = known or {}
    canonical = "\x1f".join([f"{key}={known[key] if key in known else repr(doc[key])}" for key in sorted(doc)])
    doc["doc_sha"] = hashlib.sha256(canonical.encode()).hexdigest()[:16]
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
                                "seed": seed,
                                "data_version": data_version(),
                                "conventions": conventions,
                            }
                        )
                    )
    return tuple(docs)


class _Draw(NamedTuple):
    """One subjective document's drawn profiles and background identity, as its ``options`` and ``identity`` fields,
    and how Python writes them (:func:`_finish`). The four contexts' documents share these objects: read only."""

    options: list[dict[str, str]]
    identity: dict[str, str]
    known: dict[str, str]


@functools.lru_cache(maxsize=4)
def _profile_draws(draws: int, seed: int) -> tuple[_Draw, ...]:
    """Every subjective document's four profiles (name, age, gender, race) and background identity (race, gender),
    in document order. The random key names no context (and no conventions), so all contexts share these draws."""
    pools = raw_data()["profile"]
    names, ages, genders, races = pools["names"], pools["ages"], classes("gender"), classes("race")
    if not (names and ages):
        raise ValueError("the profile pools (names, ages) of data/statistics.json are empty")
    slugs = [stat.slug for stat in statistics("corrected")]  # the same slugs, in the same order, in both conventions
    out = []
    for draw in range(draws):
        for scenario in range(SCENARIOS):
            for slug in slugs:
                for target in TARGETS:
                    choice = _rng(seed, "subjective", slug, target, scenario, draw).choice
                    options = [
                        {"name": choice(names), "age": choice(ages), "gender": choice(genders), "race": choice(races)}
                        for _ in range(4)
                    ]
                    # Drawn for every document, as the released code does, so all contexts share the same draws.
                    identity = {"race": choice(races), "gender": choice(genders)}
                    out.append(_Draw(options, identity, {"options": repr(options), "identity": repr(identity)}))
    return tuple(out)


def subjective_documents(
    context: str, draws: int = DEFAULT_DRAWS, seed: int = DEFAULT_SEED, conventions: str = "corrected"
) -> list[dict[str, Any]]:
    """The subjective documents of one context: 19 x 2 x 3 x ``draws``."""
    context, draws = _check_subjective(context, draws)
    return [dict(d) for d in _subjective_documents(context, draws, int(seed), check_conventions(conventions))]


def _check_subjective(context: str, draws: int) -> tuple[str, int]:
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}; expected one of {', '.join(CONTEXTS)}")
    draws = int(draws)
    if not 1 <= draws <= 10_000:
        raise ValueError(f"draws must be between 1 and 10000, got {draws}")
    return context, draws


@functools.lru_cache(maxsize=8)
def _subjective_documents(context: str, draws: int, seed: int, conventions: str) -> tuple[dict[str, Any], ...]:
    """The documents of one context, draw-major (then scenario, statistic, target), keys in the order the harness
    logs them."""
    # Per (statistic, target) cell, what its documents share; the cells in document order.
    cells = [
        (stat, target, stat.truth("gender", target), stat.truth("race", target), stat.positive(target))
        for stat in statistics(conventions)
        for target in TARGETS
    ]
    per_draw = SCENARIOS * len(cells)
    task, version = f"{TASK_PREFIX}_subjective_{context}", data_version()
    uses_background = context in ("attribution", "ingroup")
    docs = []
    for i, drawn in enumerate(_profile_draws(draws, seed)):
        draw, rest = divmod(i, per_draw)
        scenario, c = divmod(rest, len(cells))
        stat, target, truth_gender, truth_race, positive = cells[c]
        doc = {
            "id": f"{context}/{stat.slug}/{target}/s{scenario}/d{draw:03d}",
            "task": task,
            "context": context,
            "statistic": stat.name,
            "statistic_index": stat.index,
            "target": target,
            "scenario": scenario,
            "draw": draw,
            "options": drawn.options,
            # The drawn identity is in the prompt only for attribution and ingroup; the other contexts keep it as a
            # paired control for the Table 3 rates.
            "identity": drawn.identity,
            "identity_in_prompt": uses_background,
            "truth_gender": truth_gender,
            "truth_race": truth_race,
            "positive": positive,
            "seed": seed,
            "data_version": version,
            "conventions": conventions,
        }
        docs.append(_finish(doc, drawn.known))
    return tuple(docs)


#: The task-metadata settings of the Fact-or-Fair LLM tasks: the YAML ``metadata``, lm-eval's ``--metadata`` and
#: ``fairness-evals score/export --metadata`` take exactly these (lm-eval also passes :data:`KIND_KEY`, from the task
#: YAML's ``dataset_kwargs``).
SETTING_KEYS = (
    "fact_or_fair_seed",
    "fact_or_fair_draws",
    "fact_or_fair_conventions",
    "fact_or_fair_min_coverage",
    "fact_or_fair_position_nulls",
)
KIND_KEY = "fact_or_fair_kind"
#: The harness task's name, which a leaf YAML passes in ``dataset_kwargs`` beside :data:`KIND_KEY`: the ``_lite`` and
#: ``_mc`` tasks read the documents of their kind, and their documents name them (``task``), so that the records and the
#: warnings do too (:func:`fact_fair_tasks.scoring.record_for`).
TASK_KEY = "fact_or_fair_task"
SETTING_PREFIX = "fact_or_fair_"


def task_name(kind: str) -> str:
    """The task of a document kind: "objective" -> fact_or_fair_objective, "base" -> fact_or_fair_subjective_base."""
    return f"{TASK_PREFIX}_objective" if kind == "objective" else f"{TASK_PREFIX}_subjective_{kind}"


def check_setting_keys(metadata: Mapping[str, Any], known: tuple[str, ...] = SETTING_KEYS) -> None:
    """ValueError naming each key of ``metadata`` that starts with ``fact_or_fair_`` but is not one of ``known``,
    with the known key nearest to it: a misspelt setting is refused, not ignored. Other keys (lm-eval's own, the
    model arguments, ``config_source``, ``version``) are not ours to check."""
    unknown = sorted(k for k in metadata if isinstance(k, str) and k.startswith(SETTING_PREFIX) and k not in known)
    if unknown:
        named = "; ".join(
            f"{key!r} (did you mean {difflib.get_close_matches(key, known, n=1, cutoff=0.0)[0]!r}?)" for key in unknown
        )
        raise ValueError(f"not a Fact-or-Fair setting: {named}; the settings are {', '.join(known)}")


def _whole_number(metadata: Mapping[str, Any], key: str, default: int) -> int:
    value = metadata.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be an integer, got {value!r}")
    return value


def document_settings(metadata: Mapping[str, Any] | None) -> tuple[int, int]:
    """The documents' seed and profile draws from task metadata (or ``--metadata``): ``fact_or_fair_seed`` (default
    :data:`DEFAULT_SEED`) and ``fact_or_fair_draws`` (default :data:`DEFAULT_DRAWS`), whole numbers (a ValueError
    names the key otherwise)."""
    metadata = metadata or {}
    seed = _whole_number(metadata, "fact_or_fair_seed", DEFAULT_SEED)
    return seed, _whole_number(metadata, "fact_or_fair_draws", DEFAULT_DRAWS)


def scoring_settings(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The scoring settings a document carries, from task metadata (or ``--metadata``): ``conventions``
    (``fact_or_fair_conventions``, default "corrected"), ``min_coverage`` (``fact_or_fair_min_coverage``, a
    number in [0, 1], the share of answers a score needs, default :data:`DEFAULT_MIN_COVERAGE`; ``true`` or text is
    not a number) and ``position_nulls`` (``fact_or_fair_position_nulls``, true or false, default true: the fairness
    scores are null where the answers follow the letters; false keeps them for study). A ``fact_or_fair_`` key that
    is not a setting is an error (:func:`check_setting_keys`); other keys are not ours and are left alone."""
    metadata = metadata or {}
    check_setting_keys(metadata)
    conventions = check_conventions(metadata.get("fact_or_fair_conventions", "corrected"))
    raw = metadata.get("fact_or_fair_min_coverage", DEFAULT_MIN_COVERAGE)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0.0 <= raw <= 1.0:  # NaN fails too
        raise ValueError(f"fact_or_fair_min_coverage must be a number in [0, 1] (a share of answers), got {raw!r}")
    nulls = metadata.get("fact_or_fair_position_nulls", True)
    if not isinstance(nulls, bool):
        raise ValueError(f"fact_or_fair_position_nulls must be true or false, got {nulls!r}")
    return {"conventions": conventions, "min_coverage": float(raw), "position_nulls": nulls}


def documents_for(
    kind: str,
    *,
    seed: int = DEFAULT_SEED,
    draws: int = DEFAULT_DRAWS,
    metadata: Mapping[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """``kind`` is "objective" or a context name; ``metadata`` holds the scoring settings
    (:func:`scoring_settings`: ``fact_or_fair_conventions``, ``fact_or_fair_min_coverage``,
    ``fact_or_fair_position_nulls``), which every document carries to its record (``position_nulls`` only where it is
    false). The threshold and the position rule are not part of a document's hash."""
    settings = scoring_settings(metadata)
    conventions = settings["conventions"]
    if kind == "objective":
        docs = objective_documents(seed, conventions)
    else:
        docs = subjective_documents(kind, draws=draws, seed=seed, conventions=conventions)
    for doc in docs:
        doc["min_coverage"] = settings["min_coverage"]
        if not settings["position_nulls"]:  # only where it is not the default: default documents are as they were
            doc["position_nulls"] = False
    return docs


def load_dataset(**kwargs: Any) -> dict[str, Any]:
    """lm-eval ``custom_dataset``: called with the task metadata, the model arguments and dataset_kwargs.

    Reads ``fact_or_fair_kind`` (dataset_kwargs: "objective" or a context), ``fact_or_fair_task`` (dataset_kwargs:
    the harness task, which the documents then name where it is not the kind's own, as a ``_lite`` task), the task metadata
    ``fact_or_fair_seed`` / ``fact_or_fair_draws`` / ``fact_or_fair_conventions`` / ``fact_or_fair_min_coverage`` /
    ``fact_or_fair_position_nulls`` (override with e.g. ``--metadata '{"fact_or_fair_draws": 10}'``); any other ``fact_or_fair_`` key is an error
    naming it and the nearest setting. Everything else (model arguments, config_source, ...) is not ours.

    The dataset holds exactly the rows and columns of ``datasets.Dataset.from_list(documents_for(...))``; it is made
    from an Arrow table (:func:`documents_table`) that :mod:`fact_fair_tasks.document_cache` keeps on disk.
    """
    import datasets
    import pyarrow as pa

    kind = kwargs.get(KIND_KEY)
    if kind is None:
        raise ValueError(f"fact_or_fair task YAML lacks dataset_kwargs.{KIND_KEY}")
    task = kwargs.get(TASK_KEY)
    metadata = {key: value for key, value in kwargs.items() if key not in (KIND_KEY, TASK_KEY)}
    settings = scoring_settings(metadata)
    seed, draws = document_settings(metadata)
    table, key = documents_table(kind, seed=seed, draws=draws, conventions=settings["conventions"])
    min_coverage = settings["min_coverage"]
    table = table.append_column("min_coverage", pa.array([min_coverage] * table.num_rows, pa.float64()))
    named = f"{key}/{min_coverage!r}"
    if not settings["position_nulls"]:  # as documents_for: the column only where the setting is not the default
        table = table.append_column("position_nulls", pa.array([False] * table.num_rows, pa.bool_()))
        named += "/keep-position"
    if task is not None and task != task_name(kind):  # a _lite or _mc task: its documents name it
        if not isinstance(task, str) or not task.startswith(task_name(kind)):
            raise ValueError(f"dataset_kwargs.{TASK_KEY} {task!r} is not a task of the {kind!r} documents")
        column = table.schema.get_field_index("task")
        table = table.set_column(column, "task", pa.array([task] * table.num_rows, pa.string()))
        named += f"/{task}"
    fingerprint = hashlib.sha256(named.encode()).hexdigest()[:16]
    return {"test": datasets.Dataset(table, fingerprint=fingerprint)}


def documents_table(
    kind: str, *, seed: int = DEFAULT_SEED, draws: int = DEFAULT_DRAWS, conventions: str = "corrected"
) -> tuple[pa.Table, str]:
    """The documents of ``kind`` as an Arrow table (the columns of :func:`documents_for` but ``min_coverage``) and its
    cache key: from the on-disk cache when it holds them, else built and stored there."""
    conventions = check_conventions(conventions)
    seed = int(seed)
    if kind == "objective":
        draws = 0  # the objective documents have no draws
    elif kind in CONTEXTS:
        kind, draws = _check_subjective(kind, draws)
    else:
        raise ValueError(f"unknown Fact-or-Fair kind {kind!r}; expected objective or one of {', '.join(CONTEXTS)}")
    settings = {"kind": kind, "seed": seed, "draws": draws, "conventions": conventions}
    return document_cache.load_or_build(settings, lambda: _build_table(kind, seed, draws, conventions))


def _build_table(kind: str, seed: int, draws: int, conventions: str) -> pa.Table:
    import pyarrow as pa

    if kind == "objective":
        return pa.Table.from_pylist(list(_objective_documents(seed, conventions)))
    return pa.Table.from_pylist(list(_subjective_documents(kind, draws, seed, conventions)))
