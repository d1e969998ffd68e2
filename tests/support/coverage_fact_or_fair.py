"""Coverage simulations of the Fact-or-Fair LLM intervals (issue 13), through the real scoring path.

Each replicate draws a fresh set of documents the way the benchmark does and answers them with a known *answer
policy*, builds the task's records and scores them with :func:`fact_fair_tasks.scoring.compute_metrics`, exactly
what a user gets; each reported interval is then checked against the population value of its score.

**Estimand.** The population is what the benchmark samples: for a subjective task, the documents of every
(statistic, target, scenario) with four profiles (name, age, gender, race) and a background identity drawn
uniformly and independently; for the objective task, the option orders of the counterbalanced design (a fresh
document seed per replicate). A score's population value is the score of the model's answer distribution over
that population: in each (statistic, target) cell, the probability ``p_c`` that the answer counts and picks a
member of each group. S_fact is the parse-weighted share of picks of the true group, S_E the mean normalised
entropy of ``p_c``, S_KLD ``exp(-mean KL)`` with the same 1e-10 smoothing as the estimate, S_fair and the
distance from those. Here the truths are exact: the four profiles have 8^4 equally likely (gender, race)
configurations, enumerated; the objective orders are uniform at every position.

**Answer policies** (:func:`subjective_policies`, :func:`objective_policies`) act on one document at a time:
uniform, always "A" (a position policy), group-preferring (the same preference for every question),
stereotyped (the preference follows the queried statistic's groups, differently for highest and lowest),
truthful-with-noise, a strongly stereotyped one that makes some groups rare, and a mixture of always-"A" with
content; most refuse or fail to parse a share of documents, some more for some statistics.

Sizes (``coverage_table(size)``): ``"paper"`` is the released design, 100 profile draws per scenario (300
answers per subjective cell) and the 198-document objective design (3 per cell); ``"lite"`` is the lite tasks'
10 draws (30 per cell). ``bench/coverage.py`` prints these tables; ``tests/fact_or_fair/test_fact_or_fair_coverage.py``
checks a subset.

**Bias** (:func:`bias_table`): the point estimates alone (:func:`fact_fair_tasks.scoring.point_estimates`, before any
rule nulls them) of the subjective policies, each answering every document, with exactly n answers in every
(statistic, target) cell for n in :data:`BIAS_SIZES`, and of the objective policies at the objective design; the rows
at a score's declared minimum (:data:`fact_fair_tasks.statistics.SUBJECTIVE_CELLS`, ``OBJECTIVE_CELLS``) carry the
bias the declaration allows. ``bench/coverage.py --bias`` prints them.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from coverage_simulation import Bias, Coverage, measure_bias, simulate

from fact_fair_tasks import scoring
from fact_fair_tasks.documents import objective_documents
from fact_fair_tasks.items import AXES, TARGETS, class_index, classes, statistics
from fact_fair_tasks.parsing import PARSED, REFUSED, UNPARSED, Parse
from fact_fair_tasks.statistics import OBJECTIVE_CELLS, SUBJECTIVE_CELLS
from metrics import fact_fair as ff

SIZES = {"paper": 100, "lite": 10}  # subjective profile draws per scenario
REPLICATES = {"paper": 400, "lite": 300}
SCENARIOS = 3
N_STATS = 19
SCORES = scoring.SCORES
_QUIET = ("fairness_evals.fact_or_fair",)  # every replicate logs the intervals it withholds


@dataclass(frozen=True)
class Cells:
    """What a policy may read about each document: its cell and that cell's true groups (-1: no data)."""

    statistic: np.ndarray  # (n,)
    target: np.ndarray  # (n,) 0 highest, 1 lowest
    truth_gender: np.ndarray  # (n,)
    truth_race: np.ndarray  # (n,)


# A policy maps (cells, option genders (n, m), option races (n, m)) to the probability of choosing each option (n, m);
# ``failure`` maps cells to (P(refused), P(unparsed)) per document.
Choice = Callable[[Cells, np.ndarray, np.ndarray], np.ndarray]
Failure = Callable[[Cells], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Policy:
    name: str
    choice: Choice
    failure: Failure


def _none(cells: Cells) -> tuple[np.ndarray, np.ndarray]:
    zero = np.zeros(cells.statistic.size)
    return zero, zero


def _constant(refused: float, unparsed: float) -> Failure:
    def failure(cells: Cells) -> tuple[np.ndarray, np.ndarray]:
        one = np.ones(cells.statistic.size)
        return refused * one, unparsed * one

    return failure


def _sensitive(cells: Cells) -> tuple[np.ndarray, np.ndarray]:
    """More refusals on crime, poverty, HIV and homelessness questions (statistic-dependent failure)."""
    sensitive = np.isin(cells.statistic, [2, 7, 10, 13])
    return np.where(sensitive, 0.25, 0.04), np.full(cells.statistic.size, 0.03)


def _normalise(weights: np.ndarray) -> np.ndarray:
    return weights / weights.sum(axis=1, keepdims=True)


def uniform(cells: Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
    return np.full(genders.shape, 1.0 / genders.shape[1])


def always_a(cells: Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
    out = np.zeros(genders.shape)
    out[:, 0] = 1.0
    return out


def group_preferring(cells: Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
    """The same preference for every question: female x1.6; White x2, Asian x1, Hispanic x0.8, Black x0.5."""
    g = np.array([1.0, 1.6])[np.maximum(genders, 0)]
    r = np.array([1.0, 0.5, 2.0, 0.8])[np.maximum(races, 0)]
    return _normalise(np.where(genders >= 0, g, 1.0) * np.where(races >= 0, r, 1.0))


@functools.lru_cache(maxsize=1)
def _stat_preferences() -> np.ndarray:
    """(19, 2, 8) fixed, seeded per-statistic and per-target weights over the (gender, race) groups, for the
    stereotyped policies' behaviour where an axis has no ground truth."""
    return np.exp(np.random.default_rng(7).normal(0.0, 0.5, size=(N_STATS, 2, 8)))


def _stereotyped(strength_gender: float, strength_race: float) -> Choice:
    def choice(cells: Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
        g, r = np.maximum(genders, 0), np.maximum(races, 0)
        weights = _stat_preferences()[cells.statistic[:, None], cells.target[:, None], g * 4 + r]
        on_g = (genders >= 0) & (genders == cells.truth_gender[:, None])
        on_r = (races >= 0) & (races == cells.truth_race[:, None])
        return _normalise(weights * np.exp(strength_gender * on_g + strength_race * on_r))

    return choice


def truthful_noisy(cells: Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
    """With probability 0.6 the option best matching the true groups (race counts double; ties uniform),
    else any option uniformly."""
    score = 2.0 * (races == cells.truth_race[:, None]) + 1.0 * (genders == cells.truth_gender[:, None])
    best = (score == score.max(axis=1, keepdims=True)).astype(float)
    return 0.6 * _normalise(best) + 0.4 * uniform(cells, genders, races)


def _mixture(weight_a: float, content: Choice) -> Choice:
    def choice(cells: Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
        return weight_a * always_a(cells, genders, races) + (1 - weight_a) * content(cells, genders, races)

    return choice


def subjective_policies() -> list[Policy]:
    return [
        Policy("uniform", uniform, _none),
        Policy("always_A", always_a, _constant(0.02, 0.0)),
        Policy("group_preferring", group_preferring, _constant(0.05, 0.03)),
        Policy("stereotyped", _stereotyped(0.8, 1.0), _sensitive),
        Policy("truthful_noisy", truthful_noisy, _constant(0.08, 0.02)),
        Policy("strong_stereotype", _stereotyped(2.0, 2.5), _constant(0.03, 0.02)),
        Policy("half_A_stereotyped", _mixture(0.5, _stereotyped(0.8, 1.0)), _constant(0.05, 0.0)),
    ]


def objective_policies() -> list[Policy]:
    def truthful(cells: Cells, genders: np.ndarray, races: np.ndarray) -> np.ndarray:
        opts, truth = (genders, cells.truth_gender) if np.all(genders[:, 0] >= 0) else (races, cells.truth_race)
        return 0.75 * (opts == truth[:, None]) + 0.25 * uniform(cells, opts, opts)

    return [
        Policy("uniform", uniform, _none),
        Policy("always_A", always_a, _none),
        Policy("truthful_noisy", truthful, _constant(0.05, 0.0)),
        Policy("group_preferring", group_preferring, _constant(0.05, 0.05)),
        Policy("half_A_truthful", _mixture(0.5, truthful), _none),
    ]


# ----------------------------------------------------------------------------- truths
@dataclass(frozen=True)
class Truth:
    """Per axis: each cell's probability of counting and its group distribution given that it counts."""

    counted: dict[str, np.ndarray]  # axis -> (n_cells,)
    p: dict[str, np.ndarray]  # axis -> (n_cells, k)
    cell_truth: dict[str, np.ndarray]  # axis -> (n_cells,) true class, -1 none


def _cell_arrays(cells: list[tuple[int, int]]) -> Cells:
    stats = statistics()
    stat = np.array([s for s, _ in cells])
    target = np.array([t for _, t in cells])

    def truth(axis: str) -> np.ndarray:
        return np.array([_class(axis, stats[s].truth(axis, TARGETS[t])) for s, t in cells])

    return Cells(stat, target, truth("gender"), truth("race"))


def _class(axis: str, label: str | None) -> int:
    return -1 if label is None else class_index(axis, label)


@functools.lru_cache(maxsize=1)
def _configurations() -> tuple[np.ndarray, np.ndarray]:
    """All 8^4 equally likely (gender, race) configurations of four profiles: genders (4096, 4), races."""
    combos = np.array(list(itertools.product(range(8), repeat=4)))
    return combos // 4, combos % 4


def subjective_truth(policy: Policy) -> Truth:
    cells = [(s, t) for s in range(N_STATS) for t in range(2)]
    info = _cell_arrays(cells)
    genders, races = _configurations()
    n_conf = genders.shape[0]
    refused, unparsed = policy.failure(info)
    p = {"gender": np.zeros((len(cells), 2)), "race": np.zeros((len(cells), 4))}
    for c in range(len(cells)):
        one = Cells(*(np.repeat(getattr(info, f)[c], n_conf) for f in ("statistic", "target", "truth_gender",
                                                                        "truth_race")))  # fmt: skip
        probs = policy.choice(one, genders, races)
        for axis, groups in (("gender", genders), ("race", races)):
            k = len(classes(axis))
            p[axis][c] = [np.sum(probs * (groups == j)) / n_conf for j in range(k)]
    counted = 1.0 - refused - unparsed
    truth = {"gender": info.truth_gender, "race": info.truth_race}
    return Truth({a: counted for a in AXES}, p, truth)


def objective_truth(policy: Policy) -> Truth:
    """Over uniformly random option orders (the counterbalanced design's marginal at every round)."""
    stats = statistics()
    counted, p, cell_truth = {}, {}, {}
    for axis in AXES:
        k = len(classes(axis))
        cells = [(s.index, t) for s in stats if s.ground_truth[axis] is not None for t in range(2)]
        info = _cell_arrays(cells)
        orders = np.array(list(itertools.permutations(range(k))))
        rows = np.zeros((len(cells), k))
        for c in range(len(cells)):
            one = Cells(
                *(
                    np.repeat(getattr(info, f)[c], len(orders))
                    for f in ("statistic", "target", "truth_gender", "truth_race")
                )
            )
            blank = np.full(orders.shape, -1)
            genders, races = (orders, blank) if axis == "gender" else (blank, orders)
            probs = policy.choice(one, genders, races)
            rows[c] = [np.sum(probs * (orders == j)) / len(orders) for j in range(k)]
        refused, unparsed = policy.failure(info)
        counted[axis], p[axis] = 1.0 - refused - unparsed, rows
        cell_truth[axis] = info.truth_gender if axis == "gender" else info.truth_race
    return Truth(counted, p, cell_truth)


def true_scores(truth: Truth) -> dict[str, float]:
    """The population value of every score on both axes."""
    out = {}
    for axis in AXES:
        k = len(classes(axis))
        p, counted, cell_truth = truth.p[axis], truth.counted[axis], truth.cell_truth[axis]
        has = cell_truth >= 0
        s_fact = float(np.sum(counted[has] * p[has, cell_truth[has]]) / np.sum(counted[has]))
        s_e = float(ff.entropy_score_batch(p))
        mean_kl = float(np.mean(ff.kl_divergence_batch(p[0::2], p[1::2])))
        s_kld = math.exp(-mean_kl)
        out |= {
            f"s_fact_{axis}": s_fact,
            f"s_e_{axis}": s_e,
            f"s_kld_{axis}": s_kld,
            f"s_fair_{axis}": float(ff.fair_score_batch(s_e, s_kld)),
            f"distance_{axis}": ff.distance_to_bound(s_fact, s_e, k),
        }
    return out


# ----------------------------------------------------------------------------- replicates
def outcomes(
    policy: Policy, info: Cells, genders: np.ndarray, races: np.ndarray, u_status: np.ndarray, u_letter: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(status, letter) per document from its two uniform draws: failure first (refused, then unparsed), else the
    letter whose cumulative probability under the policy the letter draw passes (-1 where the answer failed)."""
    refused, unparsed = policy.failure(info)
    status = np.where(u_status < refused, 2, np.where(u_status < refused + unparsed, 1, 0))
    probs = policy.choice(info, genders, races)
    letter = (u_letter[:, None] > np.cumsum(probs, axis=1)[:, :-1]).sum(axis=1)
    return status, np.where(status == 0, letter, -1)


@dataclass(frozen=True)
class Documents:
    """One sample of a subjective task's documents, drawn as the benchmark draws them (:func:`subjective_documents`),
    with each document's cell (``info``)."""

    stat: np.ndarray
    target: np.ndarray
    scenario: np.ndarray
    genders: np.ndarray  # (n, 4) the four profiles'
    races: np.ndarray  # (n, 4)
    identity: np.ndarray  # (n, 2) the background identity's gender and race
    info: Cells

    def answered(self, policy: Policy, u_status: np.ndarray, u_letter: np.ndarray, *, kind: int = 1) -> np.ndarray:
        """The records of context ``kind`` (1: base) where ``policy`` answers from its uniform draws
        (:func:`outcomes`)."""
        status, letter = outcomes(policy, self.info, self.genders, self.races, u_status, u_letter)
        return records_from(
            kind, self.stat, self.target, self.scenario, self.genders, self.races, self.identity, status, letter
        )


def subjective_documents(rng: np.random.Generator, draws: int) -> Documents:
    """``draws`` documents per (statistic, target, scenario), each with four independent uniform profiles and a
    uniform background identity."""
    cells = [(s, t) for s in range(N_STATS) for t in range(2)]
    per_cell = SCENARIOS * draws
    stat = np.repeat([s for s, _ in cells], per_cell)
    target = np.repeat([t for _, t in cells], per_cell)
    scenario = np.tile(np.repeat(np.arange(SCENARIOS), draws), len(cells))
    n = stat.size
    genders = rng.integers(0, 2, size=(n, 4))
    races = rng.integers(0, 4, size=(n, 4))
    identity = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 4, n)])
    return Documents(stat, target, scenario, genders, races, identity, _cells_of(stat, target))


def subjective_records(rng: np.random.Generator, policy: Policy, draws: int, *, kind: int = 1) -> np.ndarray:
    """One replicate of a subjective task's records (:data:`scoring.RECORD_FIELDS`): fresh documents
    (:func:`subjective_documents`) answered by ``policy``."""
    docs = subjective_documents(rng, draws)
    n = docs.stat.size
    return docs.answered(policy, rng.random(n), rng.random(n), kind=kind)


def _cells_of(stat: np.ndarray, target: np.ndarray) -> Cells:
    table = _cell_arrays([(s, t) for s in range(N_STATS) for t in range(2)])
    index = 2 * stat + target
    return Cells(stat, target, table.truth_gender[index], table.truth_race[index])


def records_from(
    kind: int,
    stat: np.ndarray,
    target: np.ndarray,
    scenario: np.ndarray,
    genders: np.ndarray,
    races: np.ndarray,
    identity: np.ndarray,
    status: np.ndarray,
    letter: np.ndarray,
    *,
    min_coverage: float = 0.5,
) -> np.ndarray:
    """Subjective records (:data:`scoring.RECORD_FIELDS`) from arrays: the same rows
    :func:`scoring.record_for` makes of the documents (a test checks it)."""
    n = stat.size
    info = _cells_of(stat, target)
    rows = np.arange(n)
    chosen_g = np.where(letter >= 0, genders[rows, np.maximum(letter, 0)], -1)
    chosen_r = np.where(letter >= 0, races[rows, np.maximum(letter, 0)], -1)
    positive = np.array([statistics()[s].positive(TARGETS[t]) for s in range(N_STATS) for t in range(2)])
    return np.column_stack([
        np.full(n, kind), stat, target, status, chosen_g, chosen_r, info.truth_gender, info.truth_race,
        identity[:, 0], identity[:, 1], positive[2 * stat + target].astype(np.int64), scenario, letter,
        (genders * 2 ** np.arange(4)).sum(axis=1), (races * 4 ** np.arange(4)).sum(axis=1),
        np.zeros(n, dtype=np.int64), np.full(n, round(1e6 * min_coverage)),
    ]).astype(np.int64)  # fmt: skip


def objective_records(rng: np.random.Generator, policy: Policy, seed: int) -> list[list[int]]:
    """One replicate of the objective task: the documents of ``seed`` (a fresh counterbalanced design), each
    answered by the policy, through :func:`scoring.record_for`."""
    docs = objective_documents(seed)
    stat = np.array([d["statistic_index"] for d in docs])
    target = np.array([TARGETS.index(d["target"]) for d in docs])
    info = Cells(stat, target, *(np.array([_class(a, d["answer"]) if d["axis"] == a else -1 for d in docs])
                                 for a in AXES))  # fmt: skip
    gender_docs = np.array([d["axis"] == "gender" for d in docs])
    genders = np.full((len(docs), 4), -1)
    races = np.full((len(docs), 4), -1)
    for i, d in enumerate(docs):
        target_array = genders if d["axis"] == "gender" else races
        target_array[i, : len(d["options"])] = [class_index(d["axis"], o) for o in d["options"]]
    records = []
    # two-option questions: draw their letters among two options only
    status = np.zeros(len(docs), dtype=np.int64)
    letter = np.full(len(docs), -1)
    for mask, width in ((gender_docs, 2), (~gender_docs, 4)):
        sub = Cells(*(getattr(info, f)[mask] for f in ("statistic", "target", "truth_gender", "truth_race")))
        k = int(mask.sum())
        s, le = outcomes(policy, sub, genders[mask, :width], races[mask, :width], rng.random(k), rng.random(k))
        status[mask], letter[mask] = s, le
    for d, s, le in zip(docs, status, letter, strict=True):
        parse = Parse(PARSED, int(le), "sim") if s == 0 else Parse((UNPARSED, REFUSED)[s - 1], None, "sim")
        records.append(scoring.record_for(d, parse))
    return records


# ----------------------------------------------------------------------------- coverage
#: The scores whose intervals are judged, in the order of the table's rows (both axes, subjective and objective).
METRICS = tuple(f"{name}_{axis}" for axis in AXES for name in SCORES)
#: Draws replicate i's records with the simulation's generator.
Draw = Callable[[np.random.Generator, int], object]


def _coverage(kind: str, policy: Policy, truth: Truth, draw: Draw, replicates: int, seed: int) -> list[Coverage]:
    """The rows ``<kind>/<policy>/<metric>`` of one policy; ``draw(rng, i)`` makes replicate i's records."""
    return simulate(
        true_scores(truth),
        draw,
        lambda records, _: scoring.compute_metrics(records),
        METRICS,
        replicates=replicates,
        seed=seed,
        label=lambda metric: f"{kind}/{policy.name}/{metric}",
        quiet=_QUIET,
    )


def subjective_coverage(policy: Policy, draws: int, replicates: int, seed: int) -> list[Coverage]:
    """Rows of the subjective task at ``draws`` profile draws per scenario."""
    truth = subjective_truth(policy)
    return _coverage(
        "subjective", policy, truth, lambda rng, _: subjective_records(rng, policy, draws), replicates, seed
    )


def objective_coverage(policy: Policy, replicates: int, seed: int) -> list[Coverage]:
    """Rows of the objective task: a fresh counterbalanced design (its document seed) per replicate."""
    truth = objective_truth(policy)
    return _coverage(
        "objective", policy, truth, lambda rng, r: objective_records(rng, policy, 10_000 + seed + r), replicates, seed
    )


def coverage_table(size: str, replicates: int | None = None) -> list[Coverage]:
    """Every interval-bearing score of the LLM tasks under every policy at ``size`` ("paper" or "lite"):
    subjective at its draws per scenario; the objective design (its size is fixed) with the paper size."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    reps = replicates or REPLICATES[size]
    out = []
    for i, policy in enumerate(subjective_policies()):
        out += subjective_coverage(policy, SIZES[size], reps, seed=100 + i)
    if size == "paper":
        for i, policy in enumerate(objective_policies()):
            out += objective_coverage(policy, reps, seed=200 + i)
    return out


# ----------------------------------------------------------------------------- bias of the point estimates
#: Answers per (statistic, target) cell at which the subjective estimates' bias is measured (every cell holds exactly
#: this many: the policies answer every document): a --limit run's 1 and 3, the declared minimum 10, the lite design's
#: 30 and the paper's 300.
BIAS_SIZES = (1, 3, 5, 10, 15, 30, 100, 300)
BIAS_REPLICATES = 200


def documents_per_cell(rng: np.random.Generator, n: int) -> Documents:
    """``n`` documents in every (statistic, target) cell (scenarios in turn), each with four independent uniform
    profiles and a uniform background identity, as :func:`subjective_documents` draws them."""
    cells = [(s, t) for s in range(N_STATS) for t in range(2)]
    stat = np.repeat([s for s, _ in cells], n)
    target = np.repeat([t for _, t in cells], n)
    scenario = np.tile(np.arange(n) % SCENARIOS, len(cells))
    size = stat.size
    genders = rng.integers(0, 2, size=(size, 4))
    races = rng.integers(0, 4, size=(size, 4))
    identity = np.column_stack([rng.integers(0, 2, size), rng.integers(0, 4, size)])
    return Documents(stat, target, scenario, genders, races, identity, _cells_of(stat, target))


def _allowed(minima: dict, size: int | None) -> dict[str, float | None]:
    """Per metric, the bias its declared minimum allows, where ``size`` is that minimum (None: every metric)."""
    return {
        f"{name}_{axis}": minimum.bias
        for name, minimum in minima.items()
        for axis in AXES
        if size is None or minimum.answers == size
    }


def subjective_bias(policy: Policy, size: int, replicates: int, seed: int | tuple[int, ...]) -> list[Bias]:
    """The bias rows of the subjective task under ``policy`` (answering every document) with exactly ``size`` answers
    in every (statistic, target) cell; the rows at a score's declared minimum carry the bias it allows."""
    answering = Policy(policy.name, policy.choice, _none)

    def draw(rng: np.random.Generator, _: int) -> np.ndarray:
        docs = documents_per_cell(rng, size)
        return docs.answered(answering, rng.random(docs.stat.size), rng.random(docs.stat.size))

    return measure_bias(
        true_scores(subjective_truth(answering)), draw, scoring.point_estimates, METRICS,
        model=f"subjective/{policy.name}", size=size, replicates=replicates, seed=seed,
        allowed=_allowed(SUBJECTIVE_CELLS, size), quiet=_QUIET,
    )  # fmt: skip


def objective_bias(policy: Policy, replicates: int, seed: int) -> list[Bias]:
    """The bias rows of the objective task under ``policy`` (with its failures) at the objective design, 3 documents
    per cell (a fresh counterbalanced design per replicate); every row carries the bias its minimum allows."""
    return measure_bias(
        true_scores(objective_truth(policy)), lambda rng, r: objective_records(rng, policy, 20_000 + seed + r),
        scoring.point_estimates, METRICS, model=f"objective/{policy.name}", size=3, replicates=replicates, seed=seed,
        allowed=_allowed(OBJECTIVE_CELLS, None), quiet=_QUIET,
    )  # fmt: skip


def bias_table(replicates: int | None = None) -> list[Bias]:
    """The bias of every score's point estimate: the subjective policies at each size of :data:`BIAS_SIZES`, and the
    objective policies at the objective design, labelled "subjective/<policy>" and "objective/<policy>"."""
    reps = replicates or BIAS_REPLICATES
    rows: list[Bias] = []
    for i, policy in enumerate(subjective_policies()):
        for size in BIAS_SIZES:
            rows += subjective_bias(policy, size, reps, seed=(300 + i, size))
    for i, policy in enumerate(objective_policies()):
        rows += objective_bias(policy, reps, seed=400 + i)
    return rows
