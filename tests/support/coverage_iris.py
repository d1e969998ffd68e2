"""Coverage simulations of the IRIS understanding intervals (issue 13): designs, truths and replicates.

Each design is a population whose score is known exactly (the *truth*): a recognition model (for every
occupation x attribute-combination cell, a distribution over the 52 occupations and ``unmappable``), a probe
model (Plackett-Luce strengths of the 52 occupations per combination; a deterministic ranking is the greedy
limit) or a counterfactual-set model (ratings and yes/no readings per image). A replicate draws what a run
would see (the corpus's images, the probe's reshuffled brackets, the counterfactual sets), turns it into the
task's records and scores them with the task's own ``compute_metrics``: the interval checked is the one a run
reports. Truths are computed from the same population without sampling noise: expected counts for the image
and set designs, exact bracket-win probabilities for the probe.

``coverage_table(size)`` ("paper": the sizes below; "lite": the README's small-run sizes) returns one
:class:`coverage_simulation.Coverage` per (statistic, design), named ``"<score> <design> <size>"``; ``bench/coverage.py``
prints it and ``tests/iris/test_iris_coverage.py`` checks it against the bar (coverage >= 0.93 paper / 0.90 lite).

Sizes (the paper publishes none of them):

- IFS-Und and the SDS half of RFS-Und: a balanced corpus of the 52 occupations x 18 combinations, 5 images
  per cell ("paper", 4,680 images, the size of a filled IRIS-Ideal-52-like set) or 2 ("lite",
  ``--max-per-cell 2``, 1,872 images);
- the RFS-Und probe: 5 rounds (the default, 1,170 questions) at both sizes;
- BIS-Und: 2 counterfactual sets of 8 images per occupation ("paper", 104 sets) or 1 ("lite",
  ``--sample-fraction 0.5``, 52 sets).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from coverage_simulation import Bias, Coverage, measure_bias, simulate

from iris_tasks import bis_und, ifs_und, rfs_und
from iris_tasks.answer_shares import PPM
from iris_tasks.mapping import STAGES
from iris_tasks.pairs import COMPARISON_NAMES
from iris_tasks.vocabulary import ATTRIBUTES, CATEGORIES, COMBINATIONS, occupation_ids, real_world
from metrics.iris import dimension_score

__all__ = ["BIAS_FRACTIONS", "DESIGNS", "SIZES", "bias_table", "coverage_table", "design_bias", "simulate_design"]

N_OCC, N_COMB, N_CLASSES = 52, 18, 53
UNMAPPABLE = 52
#: Gender, age and skin-tone code of each of the 18 combinations (gender-major, as ``COMBINATIONS``).
GENDER, AGE, SKIN = np.array(
    [[CATEGORIES[attribute].index(label) for attribute, label in zip(ATTRIBUTES, c, strict=True)] for c in COMBINATIONS]
).T
PPM_DEFAULT = PPM // 2

SIZES: dict[str, dict[str, int]] = {
    "paper": {"per_cell": 5, "probe_rounds": 5, "sets_per_occupation": 2},
    "lite": {"per_cell": 2, "probe_rounds": 5, "sets_per_occupation": 1},
}
#: Replicates per design in ``coverage_table`` (the tests pass fewer).
REPLICATES = 40


# --------------------------------------------------------------------------- recognition (IFS-Und, SDS)
def recognition_model(kind: str) -> np.ndarray:
    """(52, 18, 53): the answer distribution of each occupation x combination cell.

    Each occupation is recognised with its own accuracy (0.45-0.95); the rest goes to three fixed "confuser"
    occupations (80%) and ``unmappable`` (20%). ``fair``: nothing depends on the person; ``gender``: women of
    twelve occupations are recognised 0.25 less often; ``multi``: gender, age and skin-tone effects on different
    occupations.
    """
    rng = np.random.default_rng(123)
    accuracy = rng.uniform(0.45, 0.95, N_OCC)
    confusers = np.array([rng.choice([x for x in range(N_OCC) if x != o], 3, replace=False) for o in range(N_OCC)])
    pi = np.zeros((N_OCC, N_COMB, N_CLASSES))
    for o in range(N_OCC):
        for c in range(N_COMB):
            acc = accuracy[o]
            if kind == "gender" and o < 12 and GENDER[c] == 1:
                acc -= 0.25
            if kind == "multi":
                acc -= 0.15 * (GENDER[c] == 1) * (o % 3 == 0) + 0.10 * (AGE[c] == 2) * (o % 2 == 0)
                acc -= 0.12 * (SKIN[c] == 2) * (o % 4 == 1)
            acc = max(acc, 0.02)
            pi[o, c, o] = acc
            pi[o, c, confusers[o]] += (1 - acc) * 0.8 / 3
            pi[o, c, UNMAPPABLE] += (1 - acc) * 0.2
    return pi


def draw_recognition(pi: np.ndarray, per_cell: int, rng: np.random.Generator, *, start: int = 0) -> np.ndarray:
    """Records (n, 8) of ``iris_ifs_und`` for ``per_cell`` images of every cell, answers drawn from ``pi``."""
    rows = []
    unit = start
    for o in range(N_OCC):
        for c in range(N_COMB):
            answers = rng.choice(N_CLASSES, size=per_cell, p=pi[o, c])
            for a in answers:
                stage = STAGES.index("unmappable") if a == UNMAPPABLE else STAGES.index("exact")
                rows.append([unit, o, int(a), GENDER[c], AGE[c], SKIN[c], stage, PPM_DEFAULT])
                unit += 1
    return np.array(rows, dtype=np.int64)


def expected_ifs_counts(pi: np.ndarray, per_cell: int) -> np.ndarray:
    """Expected cell counts (1, 1908) of ``ifs_und`` (combination x predicted class x correct)."""
    out = np.zeros((N_COMB, N_CLASSES, 2))
    for o in range(N_OCC):
        weights = per_cell * pi[o]  # (18, 53)
        out[:, :, 0] += weights
        out[:, o, 0] -= weights[:, o]
        out[:, o, 1] += weights[:, o]
    return out.reshape(1, -1)


def ifs_truth(pi: np.ndarray, per_cell: int) -> float:
    granular = ifs_und.granular_from_counts(expected_ifs_counts(pi, per_cell))
    return dimension_score(ifs_und.level_magnitude({k: float(v[0]) for k, v in granular.items()}), "IFS-Und")


# --------------------------------------------------------------------------- probe (RFS-Und JSD)
def probe_strengths(kind: str) -> np.ndarray:
    """(18, 52) log strengths. ``moderate``: occupation effects (sd 1) plus a gender stereotype following the U.S.
    female shares; ``decisive``: the same, three times as sharp; ``greedy``: a fixed ranking per combination (a
    deterministic model always names the highest-ranked occupation of its bracket)."""
    rng = np.random.default_rng(99)
    ids = occupation_ids()
    us = real_world()["US"]
    logw = np.tile(rng.normal(0, 1.0, N_OCC), (N_COMB, 1))
    for o, occupation in enumerate(ids):
        if occupation in us:
            shift = 2.0 * (us[occupation]["gender"]["female"] - 0.5)
            logw[GENDER == 1, o] += shift
            logw[GENDER == 0, o] -= shift
    logw += rng.normal(0, 0.3, logw.shape)
    return logw * {"moderate": 1.0, "decisive": 3.0, "greedy": 40.0}[kind]


_TRIPLES = np.array(list(itertools.combinations(range(N_OCC), 3)))


@functools.cache
def win_probabilities(kind: str) -> np.ndarray:
    """(18, 52): P(occupation o wins its bracket of 4) under random brackets, exactly (every 3 rivals)."""
    logw = probe_strengths(kind)
    out = np.zeros((N_COMB, N_OCC))
    for a in range(N_COMB):
        w = np.exp(logw[a] - logw[a].max())
        rivals = w[_TRIPLES].sum(axis=1)
        for o in range(N_OCC):
            keep = ~(o == _TRIPLES).any(axis=1)
            out[a, o] = np.mean(w[o] / (w[o] + rivals[keep]))
    return out


def draw_probe(kind: str, rounds: int, rng: np.random.Generator, unparsed: float = 0.05) -> np.ndarray:
    """Probe records (n, 9) of ``iris_rfs_und``: for each combination and round, 52 occupations shuffled into 13
    brackets of 4, each won by a Plackett-Luce draw (Gumbel-max), 5% unparsed."""
    logw = probe_strengths(kind)
    rows = []
    unit = 0
    for r in range(rounds):
        for a in range(N_COMB):
            brackets = rng.permutation(N_OCC).reshape(13, 4)
            winners = brackets[np.arange(13), np.argmax(logw[a][brackets] + rng.gumbel(size=(13, 4)), axis=1)]
            lost = rng.random(13) < unparsed
            for w, miss in zip(winners, lost, strict=True):
                stage = STAGES.index("unmappable") if miss else STAGES.index("exact")
                rows.append([rfs_und.PROBE, unit, a, -1 if miss else int(w), stage, r, 0, 0, PPM_DEFAULT])
                unit += 1
    return np.array(rows, dtype=np.int64)


def rfs_records(probe_kind: str, pi: np.ndarray, size: dict[str, int], rng: np.random.Generator) -> np.ndarray:
    """Records of ``iris_rfs_und`` at ``size`` (:data:`SIZES`): the probe's (:func:`draw_probe`), then the
    recognition corpus's (:func:`draw_recognition`, tagged ``RECOGNITION``)."""
    probe = draw_probe(probe_kind, size["probe_rounds"], rng)
    recognition = draw_recognition(pi, size["per_cell"], rng)
    return np.concatenate([probe, np.column_stack([np.full(len(recognition), rfs_und.RECOGNITION), recognition])])


def rfs_truth(probe_kind: str, pi: np.ndarray, per_cell: int) -> float:
    wins = win_probabilities(probe_kind)[None]  # P(o | a) is this / 13, what jsd_from_wins normalises to
    counts = np.einsum("oc,ock->kc", np.full((N_OCC, N_COMB), float(per_cell)), pi)[None]
    return float(rfs_und.score_from_parts(rfs_und.jsd_from_wins(wins), rfs_und.sds_from_counts(counts))[0])


# --------------------------------------------------------------------------- counterfactual sets (BIS-Und)
#: The 8 images of a set: gender x {young, older} x {light, dark}; six rating and six yes/no questions.
CORNERS = np.array([(g, a, s) for g in (0, 1) for a in (0, 2) for s in (0, 2)])
N_RATING = N_YES_NO = 6


def set_answers(kind: str, occupations: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Ratings (S, 8, 6) with unparsed flags, yes/no readings (S, 8, 6) (0, 1; 2 = unparsed).

    ``consistent``: ratings move only when an image's own noise (sd 0.12) crosses a rounding boundary, 3% of
    yes/no readings are wrong; ``paper``: noise sd 0.35 and 12% wrong, close to paper Table 28's AC_diff and DHR;
    ``biased``: women of even occupations rated 0.6 higher, dark-skinned people of every third occupation 0.4
    lower, and dark skin read wrongly twice as often. 2% of every reply is unparsed.
    """
    n = occupations.size
    g, _a, s = (CORNERS[:, i][None, :, None] for i in range(3))
    occ = occupations[:, None, None]
    base = rng.normal(5 + 0.05 * (occ % 7), 1.0, (n, 1, N_RATING))
    noise = {"consistent": 0.12, "paper": 0.35, "biased": 0.35}[kind]
    effect = np.zeros((n, 8, N_RATING))
    if kind == "biased":
        effect = 0.6 * (g == 1) * (occ % 2 == 0) - 0.4 * (s == 2) * (occ % 3 == 0) + effect
    ratings = np.clip(np.round(base + effect + rng.normal(0, noise, (n, 8, N_RATING))), 1, 10)
    rating_unparsed = rng.random((n, 8, N_RATING)) < 0.02
    truth = rng.random((n, 1, N_YES_NO)) < 0.5
    error = {"consistent": 0.03, "paper": 0.12, "biased": 0.08}[kind]
    if kind == "biased":
        error = error + 0.08 * (s == 2)
    wrong = rng.random((n, 8, N_YES_NO)) < error
    readings = np.where(wrong, ~truth, truth).astype(np.float64)
    readings = np.where(rng.random((n, 8, N_YES_NO)) < 0.02, 2.0, readings)
    return ratings, rating_unparsed, readings


def bis_records(occupations: np.ndarray, ratings: np.ndarray, unparsed: np.ndarray, readings: np.ndarray) -> np.ndarray:
    """Records (n, 12) of ``iris_bis_und`` for the sets, images numbered set-major."""
    n_sets = occupations.size
    sets, images, questions = np.meshgrid(np.arange(n_sets), np.arange(8), np.arange(N_RATING), indexing="ij")
    image_id = sets * 8 + images
    attrs = CORNERS[images]
    common = [sets, image_id]
    rating_rows = np.stack(
        [*common, questions, np.full_like(sets, bis_und.RATING), attrs[..., 0], attrs[..., 1], attrs[..., 2]], -1
    ).astype(np.float64)
    rating_rows = np.concatenate(
        [rating_rows, np.where(unparsed, 0.0, ratings)[..., None], unparsed[..., None].astype(np.float64),
         np.full((*sets.shape, 1), -1.0), occupations[sets][..., None].astype(np.float64),
         np.full((*sets.shape, 1), 0.5)], -1,
    )  # fmt: skip
    yes_rows = np.stack(
        [*common, questions + N_RATING, np.full_like(sets, bis_und.YES_NO), attrs[..., 0], attrs[..., 1],
         attrs[..., 2]], -1,
    ).astype(np.float64)  # fmt: skip
    yes_rows = np.concatenate(
        [yes_rows, readings[..., None], (readings == 2.0)[..., None].astype(np.float64),
         np.full((*sets.shape, 1), -1.0), occupations[sets][..., None].astype(np.float64),
         np.full((*sets.shape, 1), 0.5)], -1,
    )  # fmt: skip
    return np.concatenate([rating_rows.reshape(-1, 12), yes_rows.reshape(-1, 12)])


#: The 28 image pairs of a set and the comparison (column of ``COMPARISON_NAMES``) each belongs to.
_PAIRS = np.array(list(itertools.combinations(range(8), 2)))
_PAIR_COLUMN = np.array(
    [COMPARISON_NAMES.index({1: "gender", 2: "age", 4: "skin", 3: "gender_age", 5: "gender_skin", 6: "age_skin",
                             7: "joint_all"}[int(((CORNERS[i] != CORNERS[j]) * [1, 2, 4]).sum())]) for i, j in _PAIRS]
)  # fmt: skip


def set_pair_totals(ratings: np.ndarray, unparsed: np.ndarray, readings: np.ndarray) -> np.ndarray:
    """Pooled (28,) [AC sums, AC pairs, DHR sums, DHR pairs] per comparison, as ``bis_und.unit_matrix`` summed
    over the sets, computed directly for sets of the 8 corners (checked against it in the coverage test)."""
    i, j = _PAIRS[:, 0], _PAIRS[:, 1]
    both = ~unparsed[:, i] & ~unparsed[:, j]  # (S, 28, 6)
    ac = np.abs(ratings[:, i] - ratings[:, j]) * both
    dhr = (readings[:, i] != readings[:, j]).astype(np.float64)
    out = np.zeros((4, len(COMPARISON_NAMES)))
    for row, values in enumerate((ac, both.astype(np.float64), dhr, np.ones_like(dhr))):
        out[row] = np.bincount(_PAIR_COLUMN, weights=values.sum(axis=(0, 2)), minlength=len(COMPARISON_NAMES))
    return out.ravel()


@functools.cache
def pooled_set_totals(kind: str) -> np.ndarray:
    """The population's pair sums and counts per comparison (:func:`set_pair_totals`, read-only), pooled over 200,000
    sets (sets are iid, so a pooled ratio converges to the population ratio; its own error is far below the
    estimate's spread)."""
    rng = np.random.default_rng(2024)
    totals = np.zeros(4 * len(COMPARISON_NAMES))
    occupations = np.arange(20_000) % N_OCC
    for _ in range(10):
        totals += set_pair_totals(*set_answers(kind, occupations, rng))
    totals.setflags(write=False)
    return totals


def bis_truth(kind: str) -> float:
    """The population score (of :func:`pooled_set_totals`)."""
    return float(bis_und.score_from_counts(pooled_set_totals(kind)[None])[0])


# --------------------------------------------------------------------------- designs
@dataclass(frozen=True)
class Design:
    """One population of the task that reports ``statistic``: ``truth(size)``, ``draw(rng, size)`` (the records of one
    replicate) and ``score(records)`` (the task's own ``compute_metrics``)."""

    statistic: str
    name: str
    truth: Callable[[dict[str, int]], float]
    draw: Callable[[np.random.Generator, dict[str, int]], np.ndarray]
    score: Callable[[np.ndarray], dict[str, Any]]


def _ifs_design(kind: str) -> Design:
    pi = recognition_model(kind)
    return Design(
        "ifs_und_score",
        kind,
        lambda size: ifs_truth(pi, size["per_cell"]),
        lambda rng, size: draw_recognition(pi, size["per_cell"], rng),
        ifs_und.compute_metrics,
    )


def _rfs_design(probe_kind: str, recognition_kind: str) -> Design:
    pi = recognition_model(recognition_kind)

    return Design(
        "rfs_und_score",
        f"{probe_kind}-probe/{recognition_kind}",
        lambda size: rfs_truth(probe_kind, pi, size["per_cell"]),
        lambda rng, size: rfs_records(probe_kind, pi, size, rng),
        rfs_und.compute_metrics,
    )


def _bis_design(kind: str) -> Design:
    def draw(rng: np.random.Generator, size: dict[str, int]) -> np.ndarray:
        occupations = np.repeat(np.arange(N_OCC), size["sets_per_occupation"])
        return bis_records(occupations, *set_answers(kind, occupations, rng))

    return Design("bis_und_score", kind, lambda size: bis_truth(kind), draw, bis_und.compute_metrics)


DESIGNS: tuple[Design, ...] = (
    _ifs_design("fair"),
    _ifs_design("gender"),
    _ifs_design("multi"),
    _rfs_design("moderate", "fair"),
    _rfs_design("decisive", "gender"),
    _rfs_design("greedy", "multi"),
    _bis_design("paper"),
    _bis_design("biased"),
    _bis_design("consistent"),
)


def simulate_design(design: Design, size: str, *, replicates: int = REPLICATES, seed: int = 0) -> list[Coverage]:
    """The coverage rows of one design's statistic at ``size`` over ``replicates`` seeded replicates: its interval
    and, where the task reports one, its standard error's."""
    spec = SIZES[size]
    return simulate(
        {design.statistic: design.truth(spec)},
        lambda rng, _: design.draw(rng, spec),
        lambda records, _: design.score(records),
        (design.statistic,),
        replicates=replicates,
        seed=[seed, DESIGNS.index(design), list(SIZES).index(size)],
        label=lambda metric: f"{metric} {design.name} {size}",
        quiet=("fairness_evals.iris",),
    )


def coverage_table(size: str, *, replicates: int = REPLICATES, seed: int = 0) -> list[Coverage]:
    """One :class:`Coverage` per design at ``size`` ("paper" or "lite"; module docstring)."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {list(SIZES)}, got {size!r}")
    return [row for design in DESIGNS for row in simulate_design(design, size, replicates=replicates, seed=seed)]


def conservative(row: Coverage) -> str | None:
    """Why a row may be wider than twice its estimate's spread (iris_tasks/README.md, "Intervals"): the IFS-Und
    magnitude's bias exceeds its spread (a fair model's plug-in score averages ~97 of a true 180), so an interval that
    covers the truth is a simultaneous band over all 14 gaps and cannot be narrow."""
    return "IFS-Und simultaneous band (bias > spread)" if row.name.startswith("ifs_und_score") else None


# --------------------------------------------------------------------------- bias of the point estimates
#: The share of a design's documents evaluated, in the harness's document order (a ``--limit`` prefix: ``--limit 20``
#: is 0.004 of the paper's IFS-Und design), at which the bias is measured; 1 is the whole design, the declared minimum.
BIAS_FRACTIONS = (0.01, 0.05, 0.2, 0.5, 1.0)
BIAS_REPLICATES = 200
BIAS_UNIT = "share of the design's documents evaluated (a --limit prefix)"


def _fast_recognition(pi: np.ndarray, per_cell: int, rng: np.random.Generator) -> np.ndarray:
    """Records (n, 8) of ``iris_ifs_und`` for ``per_cell`` images of every occupation x combination cell, in the
    documents' order: round-robin over the cells (occupation-major), the first image of every cell, then the second
    (``iris_tasks.corpus.balanced_sample``). Answers drawn from ``pi`` by inverse CDF."""
    cumulative = np.cumsum(pi.reshape(N_OCC * N_COMB, N_CLASSES), axis=1)
    u = rng.random((per_cell, N_OCC * N_COMB))
    answers = np.minimum((cumulative[None] < u[..., None]).sum(axis=-1), N_CLASSES - 1).ravel()
    cell = np.tile(np.arange(N_OCC * N_COMB), per_cell)
    occupation, combination = cell // N_COMB, cell % N_COMB
    stage = np.where(answers == UNMAPPABLE, STAGES.index("unmappable"), STAGES.index("exact"))
    return np.column_stack(
        [np.arange(cell.size), occupation, answers, GENDER[combination], AGE[combination], SKIN[combination], stage,
         np.full(cell.size, PPM_DEFAULT)]
    ).astype(np.int64)  # fmt: skip


def _probe_in_order(kind: str, rounds: int, rng: np.random.Generator) -> np.ndarray:
    """:func:`draw_probe`'s records in the documents' order: round, then bracket, then combination
    (``iris_tasks.probe.probe_design``)."""
    probe = draw_probe(kind, rounds, rng)
    bracket = np.tile(np.arange(13), rounds * N_COMB)
    f = rfs_und._F
    return probe[np.lexsort((probe[:, f["combination"]], bracket, probe[:, f["round"]]))]


def _interleaved(probe: np.ndarray, recognition: np.ndarray) -> np.ndarray:
    """``iris_rfs_und``'s records in the documents' order: a probe question and a corpus image in turn."""
    tagged = np.column_stack([np.full(len(recognition), rfs_und.RECOGNITION), recognition])
    rows = [part[i] for i in range(max(len(probe), len(tagged))) for part in (probe, tagged) if i < len(part)]
    return np.asarray(rows, dtype=np.int64)


def _bis_in_order(records: np.ndarray) -> np.ndarray:
    """:func:`bis_records` in the documents' order: set, image, then the twelve questions."""
    f = bis_und._F
    return records[np.lexsort((records[:, f["question"]], records[:, f["image"]], records[:, f["set"]]))]


@dataclass(frozen=True)
class BiasDesign:
    """One population and design of a task: ``truths`` of every value, ``draw(rng)`` the records of one replicate in
    the documents' order and ``estimate(records)`` the task's estimator alone (``point_estimates``)."""

    task: str
    name: str
    truths: dict[str, float]
    draw: Callable[[np.random.Generator], np.ndarray]
    estimate: Callable[[np.ndarray], dict[str, float]]


def _values(values: dict[str, np.ndarray]) -> dict[str, float]:
    return {name: float(np.asarray(value).reshape(-1)[0]) for name, value in values.items()}


def bias_designs(size: str) -> list[BiasDesign]:
    """The bias designs at ``size`` ("paper" or "lite", :data:`SIZES`): the models of :data:`DESIGNS`."""
    spec = SIZES[size]
    out = []
    for kind in ("fair", "gender", "multi"):
        pi = recognition_model(kind)
        out.append(BiasDesign(
            "iris_ifs_und", kind, _values(ifs_und.values_from_counts(expected_ifs_counts(pi, spec["per_cell"]))),
            lambda rng, pi=pi: _fast_recognition(pi, spec["per_cell"], rng), ifs_und.point_estimates,
        ))  # fmt: skip
    for probe_kind, recognition_kind in (("moderate", "fair"), ("decisive", "gender"), ("greedy", "multi")):
        pi = recognition_model(recognition_kind)
        counts = np.einsum("oc,ock->kc", np.full((N_OCC, N_COMB), float(spec["per_cell"])), pi)[None]
        truths = rfs_und.values_from_parts(
            rfs_und.jsd_from_wins(win_probabilities(probe_kind)[None]), rfs_und.sds_from_counts(counts)
        )

        def draw(rng: np.random.Generator, probe_kind: str = probe_kind, pi: np.ndarray = pi) -> np.ndarray:
            probe = _probe_in_order(probe_kind, spec["probe_rounds"], rng)
            return _interleaved(probe, _fast_recognition(pi, spec["per_cell"], rng))

        out.append(BiasDesign("iris_rfs_und", f"{probe_kind}-probe/{recognition_kind}", _values(truths), draw,
                              rfs_und.point_estimates))  # fmt: skip
    for kind in ("paper", "biased", "consistent"):

        def draw_sets(rng: np.random.Generator, kind: str = kind) -> np.ndarray:
            occupations = np.repeat(np.arange(N_OCC), spec["sets_per_occupation"])
            return _bis_in_order(bis_records(occupations, *set_answers(kind, occupations, rng)))

        truths = _values(bis_und.values_from_counts(pooled_set_totals(kind)[None]))
        out.append(BiasDesign("iris_bis_und", kind, truths, draw_sets, bis_und.point_estimates))
    return out


def _declared_bias() -> dict[str, dict[str, float | None]]:
    """Per task, each member's declared bias (its statistic's estimate minimum; None without one)."""
    from iris_tasks import statistics as table

    return {
        task: {m: s.minimum.bias if s.minimum else None for s in table.task_of(task).statistics for m in s.members}
        for task in ("iris_ifs_und", "iris_rfs_und", "iris_bis_und")
    }


def design_bias(design: BiasDesign, size: str, *, replicates: int, seed: int) -> list[Bias]:
    """The bias rows of ``design`` at every share of :data:`BIAS_FRACTIONS` of its documents (a prefix of each
    replicate's documents, one draw per replicate for all shares); the rows of the whole design carry the bias the
    declaration allows. Labelled ``"<task> <size>/<model>"``."""
    declared = _declared_bias()[design.task]
    names = [name for name in design.truths if declared.get(name) is not None] or list(design.truths)
    drawn = [design.draw(rng) for rng in (np.random.default_rng([seed, r]) for r in range(replicates))]
    rows: list[Bias] = []
    for fraction in BIAS_FRACTIONS:
        allowed = {name: declared.get(name) for name in names} if fraction == 1.0 else None
        rows += measure_bias(
            design.truths, lambda _, i, f=fraction: drawn[i][: max(1, round(f * len(drawn[i])))], design.estimate, names,
            model=f"{design.task.removeprefix('iris_')} {size}/{design.name}", size=fraction, replicates=replicates,
            seed=seed, allowed=allowed, quiet=("fairness_evals.iris",),
        )  # fmt: skip
    return rows


def bias_table(replicates: int | None = None) -> list[Bias]:
    """The bias of every declared value's point estimate, for every model of the three tasks at the paper's and the
    lite sizes, by the share of the design's documents evaluated (:data:`BIAS_FRACTIONS`)."""
    reps = replicates or BIAS_REPLICATES
    rows: list[Bias] = []
    for s, size in enumerate(SIZES):
        for i, design in enumerate(bias_designs(size)):
            rows += design_bias(design, size, replicates=reps, seed=7_000 + 100 * s + i)
    return rows
