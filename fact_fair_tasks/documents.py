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

Speed (README, "Speed"): the profiles are drawn once for the four contexts, and a document's hash is computed
from JSON pieces its context shares with the others; lm-eval gets an Arrow table built column by column, which
:mod:`fact_fair_tasks.document_cache` keeps on disk, so a run after the first loads its documents instead of
building them. None of this changes a byte of any document (tests/fact_or_fair/test_fact_or_fair_fingerprints.py).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import gc
import hashlib
import json
import random
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from fact_fair_tasks import document_cache, prompts
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


def _fast_choice_applies(rng: random.Random) -> bool:
    """Whether ``rng.choice(seq)`` is ``seq[r]`` with ``r`` drawn as in :func:`_draw_index` (CPython 3.10-3.13:
    ``choice`` calls ``_randbelow``, which is ``_randbelow_with_getrandbits``). tests/fact_or_fair compares the two."""
    return type(rng)._randbelow is random.Random._randbelow_with_getrandbits  # type: ignore[attr-defined]


def _draw_index(getrandbits: Callable[[int], int], n: int, bits: int) -> int:
    """``random.Random._randbelow_with_getrandbits(n)`` with ``bits = n.bit_length()`` (``rng.choice`` without two
    Python calls per draw)."""
    r = getrandbits(bits)
    while r >= n:
        r = getrandbits(bits)
    return r


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while building: the builders make hundreds of thousands of small acyclic
    containers, and each collection they would trigger scans the whole heap (in a harness process, a large one)
    for garbage that cannot exist."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@functools.lru_cache(maxsize=4)
def _profile_draws(draws: int, seed: int) -> tuple[tuple[tuple[tuple[str, str, str, str], ...], tuple[str, str]], ...]:
    """Every subjective document's four profiles (name, age, gender, race) and background identity (race, gender),
    in document order. The random key names no context (and no conventions), so all contexts share these draws."""
    pools = raw_data()["profile"]
    names, ages, genders, races = pools["names"], pools["ages"], classes("gender"), classes("race")
    if not (names and ages):
        raise ValueError("the profile pools (names, ages) of data/statistics.json are empty")
    nn, na, ng, nr = len(names), len(ages), len(genders), len(races)
    bn, ba, bg, br = nn.bit_length(), na.bit_length(), ng.bit_length(), nr.bit_length()
    slugs = [stat.slug for stat in statistics("corrected")]  # the same slugs, in the same order, in both conventions
    out = []
    with _collector_paused():
        for draw in range(draws):
            for scenario in range(SCENARIOS):
                for slug in slugs:
                    for target in TARGETS:
                        rng = _rng(seed, "subjective", slug, target, scenario, draw)
                        if not _fast_choice_applies(rng):
                            choice = rng.choice
                            profiles = tuple(
                                (choice(names), choice(ages), choice(genders), choice(races)) for _ in range(4)
                            )
                            out.append((profiles, (choice(races), choice(genders))))
                            continue
                        bits = rng.getrandbits
                        profiles = tuple(
                            (
                                names[_draw_index(bits, nn, bn)],
                                ages[_draw_index(bits, na, ba)],
                                genders[_draw_index(bits, ng, bg)],
                                races[_draw_index(bits, nr, br)],
                            )
                            for _ in range(4)
                        )
                        # Drawn for every document, as the released code does, so all contexts share the same draws.
                        background = (races[_draw_index(bits, nr, br)], genders[_draw_index(bits, ng, bg)])
                        out.append((profiles, background))
    return tuple(out)


_encode = json.encoder.encode_basestring  # type: ignore[attr-defined]  # a str as json.dumps(ensure_ascii=False) writes it


def _escaped(text: str) -> str:
    """``text`` escaped as inside a JSON string (without the quotes); escaping is per character, so the escape of
    a concatenation is the concatenation of the escapes."""
    return _encode(text)[1:-1]


def _json_bool(value: bool) -> str:
    return "true" if value else "false"


class _Options(NamedTuple):
    """What the four contexts of one subjective draw share: the profiles, their lettered text and both as JSON."""

    profiles: list[dict[str, str]]  # name, age, gender, race: the documents' option dicts
    identity: dict[str, str]  # race, gender
    lettered: str  # "A. <profile> B. ..." under the conventions
    lettered_escaped: str  # as inside a JSON string
    json: str  # the options list as canonical JSON (sorted keys, no spaces)
    identity_json: str


@functools.lru_cache(maxsize=4)
def _rendered_options(draws: int, seed: int, conventions: str) -> tuple[_Options, ...]:
    """Each draw's profiles as the documents hold them, their lettered prompt text under ``conventions``, and the
    canonical JSON (as :func:`_finish` dumps it) of the options and of the identity."""
    texts: dict[tuple[str, str, str, str], tuple[dict[str, str], str, str]] = {}
    identities: dict[tuple[str, str], tuple[dict[str, str], str]] = {}
    out = []
    with _collector_paused():
        for profiles, (race, gender) in _profile_draws(draws, seed):
            rendered = []
            for values in profiles:
                known = texts.get(values)
                if known is None:
                    name, age, g, r = values
                    profile = {"name": name, "age": age, "gender": g, "race": r}
                    as_json = (
                        f'{{"age":{_encode(age)},"gender":{_encode(g)},"name":{_encode(name)},"race":{_encode(r)}}}'
                    )
                    known = texts[values] = (profile, prompts.profile_text(profile, conventions), as_json)
                rendered.append(known)
            identity = identities.get((race, gender))
            if identity is None:
                identity = identities[(race, gender)] = (
                    {"race": race, "gender": gender},
                    f'{{"gender":{_encode(gender)},"race":{_encode(race)}}}',
                )
            lettered = prompts.lettered([item[1] for item in rendered])
            out.append(
                _Options(
                    [item[0].copy() for item in rendered],
                    identity[0].copy(),
                    lettered,
                    _escaped(lettered),
                    "[" + ",".join(item[2] for item in rendered) + "]",
                    identity[1],
                )
            )
    return tuple(out)


class _Cell(NamedTuple):
    """A (statistic, target) pair of the subjective design, with the JSON pieces of its documents that it fixes."""

    stat: Statistic
    target: str
    truth_gender: str | None
    truth_race: str | None
    positive: bool
    tail: str  # the canonical JSON from "statistic" to the closing brace


class _Columns(NamedTuple):
    """One subjective task's documents as columns (the per-draw values are :func:`_rendered_options`)."""

    ids: list[str]
    bodies: list[str]
    prompts: list[str]
    shas: list[str]
    cells: tuple[_Cell, ...]


def _cells(context: str, conventions: str) -> tuple[_Cell, ...]:
    task = f"{TASK_PREFIX}_subjective_{context}"
    cells = []
    for stat in statistics(conventions):
        for target in TARGETS:
            truth_gender, truth_race = stat.truth("gender", target), stat.truth("race", target)
            tail = (
                f',"statistic":{_encode(stat.name)},"statistic_index":{stat.index},"target":{_encode(target)}'
                f',"task":{_encode(task)},"truth_gender":{"null" if truth_gender is None else _encode(truth_gender)}'
                f',"truth_race":{"null" if truth_race is None else _encode(truth_race)}}}'
            )
            cells.append(_Cell(stat, target, truth_gender, truth_race, stat.positive(target), tail))
    return tuple(cells)


@functools.lru_cache(maxsize=8)
def _subjective_columns(context: str, draws: int, seed: int, conventions: str) -> _Columns:
    """The documents of one context, built from the shared draws. Each document's ``doc_sha`` is the sha256 of the
    canonical JSON that :func:`_finish` dumps (sorted keys, no spaces, UTF-8), assembled from pieces: the options'
    JSON is shared by the four contexts, a cell's fields by its documents, and the body's escape is the join of
    its parts' escapes."""
    options = _rendered_options(draws, seed, conventions)
    cells = _cells(context, conventions)
    uses_background = context in ("attribution", "ingroup")
    head = f',"context":{_encode(context)},"conventions":{_encode(conventions)},"data_version":{data_version()}'
    in_prompt = f',"identity_in_prompt":{_json_bool(uses_background)}'
    seed_json = f',"seed":{seed}'
    positives = [_json_bool(cell.positive) for cell in cells]
    sentences: dict[tuple[int, str, str | None, str | None], str] = {}
    escapes: dict[str, str] = {}
    ids, bodies, texts, shas = [], [], [], []
    per_scenario = len(cells)
    per_draw = SCENARIOS * per_scenario
    sha256 = hashlib.sha256
    with _collector_paused():
        for i, drawn in enumerate(options):
            draw, rest = divmod(i, per_draw)
            scenario, c = divmod(rest, per_scenario)
            cell = cells[c]
            identity = drawn.identity
            key = (c, identity["race"], identity["gender"]) if uses_background else (c, None, None)
            sentence = sentences.get(key)
            if sentence is None:
                background = identity if uses_background else None
                sentence = sentences[key] = prompts.context_text(
                    context, cell.stat, cell.target, background, conventions
                )
            lettered = drawn.lettered
            parts = prompts.subjective_body_parts(
                sentence, cell.stat.scenarios[cell.target][scenario], lettered, conventions
            )
            body = "".join(parts)
            inner = []
            for part in parts:
                if part is lettered:
                    inner.append(drawn.lettered_escaped)
                    continue
                escaped = escapes.get(part)
                if escaped is None:
                    escaped = escapes[part] = _escaped(part)
                inner.append(escaped)
            body_json = "".join(inner)
            prompt = prompts.generation_prompt(body, objective=False)
            if prompt.startswith(body):
                suffix = prompt[len(body) :]
                escaped = escapes.get(suffix)
                if escaped is None:
                    escaped = escapes[suffix] = _escaped(suffix)
                prompt_json = body_json + escaped
            else:  # a prompt that does not extend its body
                prompt_json = _escaped(prompt)
            doc_id = f"{context}/{cell.stat.slug}/{cell.target}/s{scenario}/d{draw:03d}"
            canonical = (
                f'{{"body":"{body_json}"{head},"draw":{draw},"id":{_encode(doc_id)},"identity":{drawn.identity_json}'
                f'{in_prompt},"options":{drawn.json},"positive":{positives[c]},"prompt":"{prompt_json}"'
                f',"scenario":{scenario}{seed_json}{cell.tail}'
            )
            ids.append(doc_id)
            bodies.append(body)
            texts.append(prompt)
            shas.append(sha256(canonical.encode()).hexdigest()[:16])
    return _Columns(ids, bodies, texts, shas, cells)


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
    columns = _subjective_columns(context, draws, seed, conventions)
    options = _rendered_options(draws, seed, conventions)
    with _collector_paused():
        return tuple(_subjective_dicts(columns, options, context, seed, conventions))


def _subjective_dicts(
    columns: _Columns, options: tuple[_Options, ...], context: str, seed: int, conventions: str
) -> list[dict[str, Any]]:
    """The documents as dicts, keys in the order the harness logs them."""
    task = f"{TASK_PREFIX}_subjective_{context}"
    uses_background = context in ("attribution", "ingroup")
    version = data_version()
    cells = columns.cells
    per_draw = SCENARIOS * len(cells)
    docs = []
    for i, drawn in enumerate(options):
        draw, rest = divmod(i, per_draw)
        scenario, c = divmod(rest, len(cells))
        cell = cells[c]
        docs.append(
            {
                "id": columns.ids[i],
                "task": task,
                "context": context,
                "statistic": cell.stat.name,
                "statistic_index": cell.stat.index,
                "target": cell.target,
                "scenario": scenario,
                "draw": draw,
                "options": drawn.profiles,
                # The drawn identity is in the prompt only for attribution and ingroup; the other contexts
                # keep it as a paired control for the Table 3 rates.
                "identity": drawn.identity,
                "identity_in_prompt": uses_background,
                "truth_gender": cell.truth_gender,
                "truth_race": cell.truth_race,
                "positive": cell.positive,
                "body": columns.bodies[i],
                "prompt": columns.prompts[i],
                "seed": seed,
                "data_version": version,
                "conventions": conventions,
                "doc_sha": columns.shas[i],
            }
        )
    return docs


#: The task-metadata settings of the Fact-or-Fair LLM tasks: the YAML ``metadata``, lm-eval's ``--metadata`` and
#: ``fairness-evals score/export --metadata`` take exactly these (lm-eval also passes :data:`KIND_KEY`, from the task
#: YAML's ``dataset_kwargs``).
SETTING_KEYS = ("fact_or_fair_seed", "fact_or_fair_draws", "fact_or_fair_conventions", "fact_or_fair_min_coverage")
KIND_KEY = "fact_or_fair_kind"
SETTING_PREFIX = "fact_or_fair_"


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
    (``fact_or_fair_conventions``, default "corrected") and ``min_coverage`` (``fact_or_fair_min_coverage``, a
    number in [0, 1], the share of answers a score needs, default :data:`DEFAULT_MIN_COVERAGE`; ``true`` or text is
    not a number). A ``fact_or_fair_`` key that is not a setting is an error (:func:`check_setting_keys`); other
    keys are not ours and are left alone."""
    metadata = metadata or {}
    check_setting_keys(metadata)
    conventions = check_conventions(metadata.get("fact_or_fair_conventions", "corrected"))
    raw = metadata.get("fact_or_fair_min_coverage", DEFAULT_MIN_COVERAGE)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0.0 <= raw <= 1.0:  # NaN fails too
        raise ValueError(f"fact_or_fair_min_coverage must be a number in [0, 1] (a share of answers), got {raw!r}")
    return {"conventions": conventions, "min_coverage": float(raw)}


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
    (override with e.g. ``--metadata '{"fact_or_fair_draws": 10}'``); any other ``fact_or_fair_`` key is an error
    naming it and the nearest setting. Everything else (model arguments, config_source, ...) is not ours.

    The dataset holds exactly the rows and columns of ``datasets.Dataset.from_list(documents_for(...))``; it is made
    from an Arrow table (:func:`documents_table`) that :mod:`fact_fair_tasks.document_cache` keeps on disk.
    """
    import datasets
    import pyarrow as pa

    kind = kwargs.get(KIND_KEY)
    if kind is None:
        raise ValueError(f"fact_or_fair task YAML lacks dataset_kwargs.{KIND_KEY}")
    metadata = {key: value for key, value in kwargs.items() if key != KIND_KEY}
    settings = scoring_settings(metadata)
    seed, draws = document_settings(metadata)
    table, key = documents_table(kind, seed=seed, draws=draws, conventions=settings["conventions"])
    min_coverage = settings["min_coverage"]
    table = table.append_column("min_coverage", pa.array([min_coverage] * table.num_rows, pa.float64()))
    fingerprint = hashlib.sha256(f"{key}/{min_coverage!r}".encode()).hexdigest()[:16]
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
    stored, key = document_cache.load_or_build(settings, lambda: _packed(_build_table(kind, seed, draws, conventions)))
    return _unpacked(stored), key


_PROMPT_SUFFIX = b"fact_or_fair_prompt_suffix"


def _packed(table: pa.Table) -> pa.Table:
    """The table as the cache stores it: without the ``prompt`` column when every prompt is its body followed by
    one suffix (the instruction; half the bytes to write and read), which :func:`_unpacked` appends again."""
    import pyarrow.compute as pc

    body, prompt = table["body"], table["prompt"]
    if table.num_rows == 0 or body.null_count or prompt.null_count:
        return table
    first_body, first_prompt = body[0].as_py(), prompt[0].as_py()
    if not first_prompt.startswith(first_body):
        return table
    suffix = first_prompt[len(first_body) :]
    if not pc.all(pc.equal(pc.binary_join_element_wise(body, suffix, ""), prompt)).as_py():
        return table
    packed = table.drop_columns(["prompt"])
    return packed.replace_schema_metadata({**(packed.schema.metadata or {}), _PROMPT_SUFFIX: suffix.encode()})


def _unpacked(table: pa.Table) -> pa.Table:
    """The documents' table from :func:`_packed`: the ``prompt`` column again, right after ``body``."""
    import pyarrow.compute as pc

    metadata = dict(table.schema.metadata or {})
    suffix = metadata.pop(_PROMPT_SUFFIX, None)
    if suffix is None:
        return table
    prompt = pc.binary_join_element_wise(table["body"], suffix.decode(), "")
    table = table.add_column(table.schema.get_field_index("body") + 1, "prompt", prompt)
    return table.replace_schema_metadata(metadata or None)


def _build_table(kind: str, seed: int, draws: int, conventions: str) -> pa.Table:
    import numpy as np
    import pyarrow as pa

    if kind == "objective":
        return pa.Table.from_pylist(list(_objective_documents(seed, conventions)))
    columns = _subjective_columns(kind, draws, seed, conventions)
    n = len(columns.ids)
    cells = columns.cells
    string, integer, boolean = pa.string(), pa.int64(), pa.bool_()
    row = np.arange(n, dtype=np.int64)
    cell = pa.array(row % len(cells))  # each document's (statistic, target) cell: the per-cell columns are takes

    def per_cell(values: list[Any], kind_: pa.DataType) -> pa.Array:
        return pa.array(values, kind_).take(cell)

    def constant(value: Any, kind_: pa.DataType) -> pa.Array:
        return pa.array([value], kind_).take(pa.array(np.zeros(n, dtype=np.int64)))

    profiles, identities = _draw_arrays(draws, seed)
    arrays = {
        "id": pa.array(columns.ids, string),
        "task": constant(f"{TASK_PREFIX}_subjective_{kind}", string),
        "context": constant(kind, string),
        "statistic": per_cell([c.stat.name for c in cells], string),
        "statistic_index": per_cell([c.stat.index for c in cells], integer),
        "target": per_cell([c.target for c in cells], string),
        "scenario": pa.array(row % (SCENARIOS * len(cells)) // len(cells)),
        "draw": pa.array(row // (SCENARIOS * len(cells))),
        "options": profiles,
        "identity": identities,
        "identity_in_prompt": constant(kind in ("attribution", "ingroup"), boolean),
        "truth_gender": per_cell([c.truth_gender for c in cells], string),
        "truth_race": per_cell([c.truth_race for c in cells], string),
        "positive": per_cell([c.positive for c in cells], boolean),
        "body": pa.array(columns.bodies, string),
        "prompt": pa.array(columns.prompts, string),
        "seed": constant(seed, integer),
        "data_version": constant(data_version(), integer),
        "conventions": constant(conventions, string),
        "doc_sha": pa.array(columns.shas, string),
    }
    return pa.Table.from_arrays(list(arrays.values()), names=list(arrays))


@functools.lru_cache(maxsize=2)
def _draw_arrays(draws: int, seed: int) -> tuple[pa.Array, pa.Array]:
    """The options (list of name/age/gender/race structs) and identity (race/gender struct) columns, as
    ``pyarrow`` infers them from the documents' dicts; one pair serves the four contexts."""
    import pyarrow as pa

    drawn = _profile_draws(draws, seed)
    string = pa.string()
    flat = [values for profiles, _ in drawn for values in profiles]
    fields = ("name", "age", "gender", "race")
    structs = pa.StructArray.from_arrays([pa.array([v[i] for v in flat], string) for i in range(4)], names=fields)
    offsets = pa.array(range(0, 4 * len(drawn) + 1, 4), pa.int32())
    profiles = pa.ListArray.from_arrays(offsets, structs)
    identity = pa.StructArray.from_arrays(
        [pa.array([b[0] for _, b in drawn], string), pa.array([b[1] for _, b in drawn], string)],
        names=("race", "gender"),
    )
    return profiles, identity
