"""Seeded coverage simulations of ``compare``'s paired intervals (issue 17, to issue 13's bar): do the intervals of
a difference between two runs cover the true difference?

**Estimand.** Two models answer the *same* sampled units (images, documents); the difference of a metric is
``metric(B) - metric(A)`` at the population values of each model's answers (each benchmark's estimand:
``tests/support/coverage_fairlens.py``, ``coverage_fact_or_fair.py``). A replicate draws a fresh sample of the
design, has both models answer it, and computes the difference with ``compare``'s own code path (the benchmark
adapter's :class:`~fairness_evals.compare.problem.Problem` and :func:`fairness_evals.compare.engine.differences`:
2,000 joint resamples within the design strata). A difference is *printed* only where both runs print their own
interval (``compare`` reports the others as not comparable), as the benchmarks decide it.

**Pairs of models.** How two models answer the same unit is correlated. FairLens (:data:`FAIRLENS_PAIRS`, the
healthcare domain at the paper's 10% sample and the README's 2%): each draw of model B reuses model A's uniform
random number with probability ``shared``; the pairs are a fair model against a gender- and race-biased one (the
difference a debiasing should show, and the case where a plain basic interval of a gap difference covers only
0.84-0.88), a biased model against a less biased version of itself, two fair models with different base rates (every
gap difference 0), and one model run twice with independent sampling (every difference 0). Fact-or-Fair
(:data:`FACT_OR_FAIR_PAIRS`, the subjective base task at 300 and 30 answers per cell): the same, with the answer
policies of ``coverage_fact_or_fair``. IRIS BIS-Und (:data:`IRIS_PAIRS`, 2 and 1 counterfactual sets per occupation):
``coverage_iris``'s biased and paper-like set models on the same sets with the same draws, and the biased one run
twice. Generation (:data:`GENERATION_PAIRS`, 20 and 5 images per prompt): two of ``coverage_generation``'s simulated
generators on the same prompts (their images are independent draws).

:func:`coverage_table` returns one ``coverage_simulation.Coverage`` per pair and metric, named
``<size>/<pair>/<task>/<metric>``; ``bench/coverage.py`` can print it and ``tests/compare/test_compare_coverage.py``
holds a subset to the bar: coverage >= 0.93 at the paper's size, >= 0.90 at lite. Widths: the basic interval of a
smooth difference is within 2x the spread of the estimate; the conservative bounds used for differences of maxima
next to tied components (``metrics.paired.maxima_difference``) are wider by design (their measured width ratio is
in the table and in docs/compare.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import coverage_fact_or_fair as cff
import coverage_generation as cg
import coverage_iris as ci
import numpy as np
from coverage_fairlens import (
    ClosedPolicy,
    OpenPolicy,
    _closed_truth,
    _open_truth,
    _stratum_columns,
    closed_options,
    closed_shapes,
    design,
    open_answers,
    open_units,
    records_from_options,
)
from coverage_simulation import Coverage, Scored, simulate

from fact_fair_tasks import scoring as fact_or_fair_scoring
from fact_fair_tasks.compare import FactOrFair
from fairlens_tasks import scoring as fairlens_scoring
from fairlens_tasks.compare import FairLens
from fairlens_tasks.compare_open import problem_from_arrays
from fairness_evals.compare import engine
from fairness_evals.compare.comparison import adapter_of
from fairness_evals.compare.problem import Problem
from iris_tasks import bis_und
from iris_tasks.compare import Iris

__all__ = [
    "FACT_OR_FAIR_METRICS",
    "FACT_OR_FAIR_PAIRS",
    "FAIRLENS_METRICS",
    "FAIRLENS_PAIRS",
    "GENERATION_PAIRS",
    "IRIS_METRICS",
    "IRIS_PAIRS",
    "OPEN_METRICS",
    "OPEN_PAIRS",
    "RFS_PAIRS",
    "SIZES",
    "TARGETS",
    "FactOrFairPair",
    "FairLensPair",
    "GenerationPair",
    "IrisPair",
    "OpenPair",
    "RfsPair",
    "conservative",
    "coverage_table",
    "paired_bis_und_records",
    "paired_fact_or_fair_records",
    "paired_fairlens_records",
    "paired_open_arrays",
    "simulate_bis_und",
    "simulate_fact_or_fair",
    "simulate_fairlens",
    "simulate_generation",
    "simulate_open",
    "simulate_rfs_und",
]

SIZES = ("paper", "lite")
TARGETS = {"paper": 0.93, "lite": 0.90}
DEFAULT_REPLICATES = 200
N_RESAMPLES = 2000
FAIRLENS_METRICS = (
    "soundness", "parity_gap", "association_rate", "association_gap", "parity_gap_gender", "parity_gap_race",
    "parity_gap_age",
)  # fmt: skip


@dataclass(frozen=True)
class FairLensPair:
    """Two closed-answer policies (``coverage_fairlens.ClosedPolicy``) answering the same images."""

    name: str
    a: ClosedPolicy
    b: ClosedPolicy
    shared: float


_BIASED = ClosedPolicy("biased", "healthcare", base=0.2, gender=(0.0, 0.25), race=(0.0, 0.2, -0.1, 0.1, 0.3))
FAIRLENS_PAIRS = (
    FairLensPair("fair_vs_biased", ClosedPolicy("fair", "healthcare", base=0.3), _BIASED, shared=0.7),
    FairLensPair(
        "debiased", _BIASED,
        ClosedPolicy("less", "healthcare", base=0.2, gender=(0.0, 0.15), race=(0.0, 0.1, -0.05, 0.05, 0.2)),
        shared=0.8,
    ),
    FairLensPair("fair_vs_fair", ClosedPolicy("fair", "healthcare", base=0.3),
                 ClosedPolicy("fair2", "healthcare", base=0.25), shared=0.8),
    FairLensPair("same_model_sampled", _BIASED, _BIASED, shared=0.0),
)  # fmt: skip


def _shared(rng: np.random.Generator, shapes: tuple[tuple[int, ...], ...], shared: float) -> tuple[tuple, tuple]:
    """(model A's uniform draws of ``shapes``, model B's): each of B's reuses A's with probability ``shared``."""
    mine = tuple(rng.random(s) for s in shapes)
    own = tuple(rng.random(s) for s in shapes)
    theirs = tuple(np.where(rng.random(s) < shared, u, v) for s, u, v in zip(shapes, mine, own, strict=True))
    return mine, theirs


def paired_fairlens_records(
    pair: FairLensPair, sizes: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Both models' records on one sample of the design ``sizes`` (images 0..n-1 in both)."""
    codes = _stratum_columns(sizes)
    mine, theirs = _shared(rng, closed_shapes(pair.a.domain, len(codes)), pair.shared)
    return (
        records_from_options(pair.a.domain, codes, closed_options(pair.a, codes, mine)),
        records_from_options(pair.b.domain, codes, closed_options(pair.b, codes, theirs)),
    )


def simulate_fairlens(
    pair: FairLensPair, size: str, *, replicates: int, seed: int, n_resamples: int = N_RESAMPLES
) -> list[Coverage]:
    """Coverage of the paired difference of every metric of :data:`FAIRLENS_METRICS` under ``pair``."""
    sizes, adapter, task = design(size), FairLens(), f"fairlens_{pair.a.domain}"
    return paired_coverage(
        f"{size}/{pair.name}/{task}",
        (_closed_truth(pair.a, sizes), _closed_truth(pair.b, sizes)),
        FAIRLENS_METRICS,
        lambda rng: paired_fairlens_records(pair, sizes, rng),
        lambda records, _: [fairlens_scoring.compute_metrics(records, task=task, min_coverage=0.0)],
        lambda records: adapter.problem(task, records),
        task=task,
        replicates=replicates,
        seed=seed,
        n_resamples=n_resamples,
        quiet=("fairness_evals.fairlens",),
    )


# ------------------------------------------------------------------------------------------------ FairLens open-ended
OPEN_METRICS = (
    "oe_bias_mean", "oe_flag_rate", "oe_bias_mean_gender_female", "oe_bias_mean_race_black", "oe_bias_gap_gender",
    "oe_bias_gap_race", "oe_bias_gap_age",
)  # fmt: skip


@dataclass(frozen=True)
class OpenPair:
    """Two judged open-answer policies (``coverage_fairlens.OpenPolicy``) answering the same images' open items. An
    answer's judgement is a function of its text, so where model B gives model A's answer (it reuses A's uniform draw,
    with probability ``shared`` per draw) it gets A's judgement: score, and whether the judge failed on it or it was
    blank."""

    name: str
    a: OpenPolicy
    b: OpenPolicy
    shared: float


_OPEN_BIASED = OpenPolicy("biased", "hiring", base=0.2, gender=(0.0, 0.25), race=(0.0, 0.2, -0.1, 0.1, 0.3))
OPEN_PAIRS = (
    OpenPair("fair_vs_biased", OpenPolicy("fair", "hiring"), _OPEN_BIASED, shared=0.7),
    OpenPair(
        "debiased", _OPEN_BIASED,
        OpenPolicy("less", "hiring", base=0.2, gender=(0.0, 0.12), race=(0.0, 0.1, -0.05, 0.05, 0.15)), shared=0.8,
    ),
    OpenPair(
        "unjudged_vs_biased",
        OpenPolicy("unjudged", "hiring", base=0.3, gender=(0.1, 0.0), unjudged=0.1, blank=0.03), _OPEN_BIASED, 0.5,
    ),
    OpenPair("same_model_sampled", _OPEN_BIASED, _OPEN_BIASED, shared=0.0),
)  # fmt: skip


def paired_open_arrays(
    pair: OpenPair, sizes: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """(answers' first five record fields, A's (judged, score, empty), B's) on one sample of the design ``sizes``."""
    codes = _stratum_columns(sizes)
    ints, shapes = open_units(pair.a.domain, codes)
    mine, theirs = _shared(rng, shapes, pair.shared)
    return ints, open_answers(pair.a, codes, mine), open_answers(pair.b, codes, theirs)


def simulate_open(
    pair: OpenPair, size: str, *, replicates: int, seed: int, n_resamples: int = N_RESAMPLES
) -> list[Coverage]:
    """Coverage of the paired difference of every metric of :data:`OPEN_METRICS` under ``pair`` (a difference is
    printed where both runs print their own interval)."""
    from fairlens_tasks import open_scoring

    sizes, task = design(size), f"fairlens_open_{pair.a.domain}"

    def draw(rng: np.random.Generator) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        ints, answers_a, answers_b = paired_open_arrays(pair, sizes, rng)
        return (ints, *answers_a), (ints, *answers_b)

    def own(run: tuple[np.ndarray, ...], _: int) -> list[dict[str, float]]:
        ints, judged, score, empty = run
        opinions = np.where(judged & ~empty, 3, 0)
        return [open_scoring.open_metrics_from_arrays(ints, judged, score, empty, opinions, task=task, min_judged=0.0)]

    return paired_coverage(
        f"{size}/{pair.name}/{task}",
        (_open_truth(pair.a, sizes), _open_truth(pair.b, sizes)),
        OPEN_METRICS,
        draw,
        own,
        lambda run: problem_from_arrays(*run[:3]),
        task=task,
        replicates=replicates,
        seed=seed,
        n_resamples=n_resamples,
        quiet=("fairness_evals.fairlens",),
    )


# ------------------------------------------------------------------------------------------------ Fact-or-Fair
FACT_OR_FAIR_METRICS = tuple(
    f"{name}_{axis}"
    for axis in ("gender", "race")
    for name in (*fact_or_fair_scoring.SCORES, *fact_or_fair_scoring.RATES)
)
#: Subjective profile draws per scenario: the released design (300 answers per cell) and the lite tasks' (30).
FACT_OR_FAIR_DRAWS = {"paper": 100, "lite": 10}


@dataclass(frozen=True)
class FactOrFairPair:
    """Two subjective answer policies (``coverage_fact_or_fair.Policy``) answering the same documents."""

    name: str
    a: cff.Policy
    b: cff.Policy
    shared: float


def _policies() -> dict[str, cff.Policy]:
    return {p.name: p for p in cff.subjective_policies()}


FACT_OR_FAIR_PAIRS = (
    FactOrFairPair("debiased", _policies()["strong_stereotype"], _policies()["stereotyped"], shared=0.8),
    FactOrFairPair("stereotyped_vs_uniform", _policies()["stereotyped"], _policies()["uniform"], shared=0.5),
    FactOrFairPair("truthful_vs_preferring", _policies()["truthful_noisy"], _policies()["group_preferring"], 0.6),
    FactOrFairPair("same_model_sampled", _policies()["stereotyped"], _policies()["stereotyped"], shared=0.0),
)


def _true_values(policy: cff.Policy) -> dict[str, float]:
    """Population values of the scores (``coverage_fact_or_fair.true_scores``) and of the Table 3 rates: the
    policies never read the background identity, which is uniform and independent of the options, so an answer's
    group equals it with probability 1/k; representativeness is the share of counted answers naming the true group
    in the S_fact cells of each target."""
    truth = cff.subjective_truth(policy)
    out = cff.true_scores(truth)
    for axis in ("gender", "race"):
        k = truth.p[axis].shape[1]
        counted, p, cell_truth = truth.counted[axis], truth.p[axis], truth.cell_truth[axis]
        cells = np.arange(cell_truth.size)
        for name, target in (("representativeness_high", 0), ("representativeness_low", 1)):
            mine = (cell_truth >= 0) & (cells % 2 == target)
            hit = p[cells[mine], cell_truth[mine]]
            out[f"{name}_{axis}"] = float(np.sum(counted[mine] * hit) / np.sum(counted[mine]))
        out[f"attribution_rate_{axis}"] = out[f"ingroup_rate_{axis}"] = 1.0 / k
        out[f"outgroup_rate_{axis}"] = 1.0 - 1.0 / k
    return out


def paired_fact_or_fair_records(
    pair: FactOrFairPair, draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Both policies' records of one subjective base task on the same documents (drawn as the benchmark draws
    them: ``coverage_fact_or_fair.subjective_documents``)."""
    docs = cff.subjective_documents(rng, draws)
    n = docs.stat.size
    mine = (rng.random(n), rng.random(n))
    theirs = tuple(np.where(rng.random(n) < pair.shared, u, rng.random(n)) for u in mine)
    return docs.answered(pair.a, *mine), docs.answered(pair.b, *theirs)


def simulate_fact_or_fair(
    pair: FactOrFairPair, size: str, *, replicates: int, seed: int, n_resamples: int = N_RESAMPLES
) -> list[Coverage]:
    """Coverage of the paired difference of every score of :data:`FACT_OR_FAIR_METRICS` under ``pair`` in the
    subjective base task."""
    adapter, task = FactOrFair(), "fact_or_fair_subjective_base"
    return paired_coverage(
        f"{size}/{pair.name}/{task}",
        (_true_values(pair.a), _true_values(pair.b)),
        FACT_OR_FAIR_METRICS,
        lambda rng: paired_fact_or_fair_records(pair, FACT_OR_FAIR_DRAWS[size], rng),
        lambda records, _: [fact_or_fair_scoring.compute_metrics(records, task=task)],
        lambda records: adapter.problem(task, records),
        task=task,
        replicates=replicates,
        seed=seed,
        n_resamples=n_resamples,
        quiet=("fairness_evals.fact_or_fair",),
        own_interval_optional=True,  # the Table 3 rates have no interval of their own
    )


# ------------------------------------------------------------------------------------------------ IRIS BIS-Und
IRIS_METRICS = ("bis_und_score", *bis_und.AC_LEVEL, *bis_und.DHR_LEVEL)
#: Counterfactual sets per occupation (``coverage_iris.SIZES``: 2 at the "paper" size, 1 at lite).
IRIS_SETS = {"paper": 2, "lite": 1}


@dataclass(frozen=True)
class IrisPair:
    """Two ``coverage_iris.set_answers`` kinds answering the same counterfactual sets; ``shared``: both draw from the
    same random numbers (1: the same images, scenes and noise) or from independent ones (0)."""

    name: str
    a: str
    b: str
    shared: bool


IRIS_PAIRS = (
    IrisPair("debiased", "biased", "paper", shared=True),
    IrisPair("same_model_sampled", "biased", "biased", shared=False),
)


@functools.cache
def _bis_truths(kind: str) -> dict[str, float]:
    """The population score and level values (of ``coverage_iris.pooled_set_totals``)."""
    totals = ci.pooled_set_totals(kind)[None]
    levels = bis_und.levels_from_counts(totals)
    return {"bis_und_score": float(bis_und.score_from_counts(totals)[0])} | {
        name: float(levels[name][0]) for name in (*bis_und.AC_LEVEL, *bis_und.DHR_LEVEL)
    }


def paired_bis_und_records(pair: IrisPair, sets: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Both kinds' ``iris_bis_und`` records on the same sets (``sets`` per occupation)."""
    occupations = np.repeat(np.arange(ci.N_OCC), sets)
    seed = int(rng.integers(2**32))
    answers_a = ci.set_answers(pair.a, occupations, np.random.default_rng(seed))
    answers_b = ci.set_answers(pair.b, occupations, np.random.default_rng(seed if pair.shared else seed + 1))
    return ci.bis_records(occupations, *answers_a), ci.bis_records(occupations, *answers_b)


def simulate_bis_und(
    pair: IrisPair, size: str, *, replicates: int, seed: int, n_resamples: int = N_RESAMPLES
) -> list[Coverage]:
    """Coverage of the paired difference of the BIS-Und score and level values under ``pair``."""
    adapter, task = Iris(), "iris_bis_und"
    return paired_coverage(
        f"{size}/{pair.name}/{task}",
        (_bis_truths(pair.a), _bis_truths(pair.b)),
        IRIS_METRICS,
        lambda rng: paired_bis_und_records(pair, IRIS_SETS[size], rng),
        lambda records, _: [bis_und.compute_metrics(records)],
        lambda records: adapter.problem(task, records),
        task=task,
        replicates=replicates,
        seed=seed,
        n_resamples=n_resamples,
        quiet=("fairness_evals.iris",),
        own_interval_optional=True,  # the levels have no interval of their own
    )


# ------------------------------------------------------------------------------------------------ IRIS RFS-Und
RFS_METRIC = "rfs_und_score"


@dataclass(frozen=True)
class RfsPair:
    """Two ``coverage_iris`` RFS-Und models (a probe kind and a recognition kind each) on the same probe and corpus
    design. Their draws are independent: the difference (:func:`metrics.paired.union_difference` of the runs' own
    intervals) does not use the pairing."""

    name: str
    a: tuple[str, str]
    b: tuple[str, str]


RFS_PAIRS = (
    RfsPair("decisive_vs_moderate", ("moderate", "fair"), ("decisive", "gender")),
    RfsPair("greedy_vs_moderate", ("moderate", "fair"), ("greedy", "multi")),
    RfsPair("same_model_sampled", ("decisive", "gender"), ("decisive", "gender")),
)


def simulate_rfs_und(pair: RfsPair, size: str, *, replicates: int, seed: int) -> list[Coverage]:
    """Coverage of the RFS-Und score difference under ``pair`` (printed where both runs print their interval)."""
    from iris_tasks import rfs_und

    per_cell = ci.SIZES[size]["per_cell"]
    truths = tuple({RFS_METRIC: ci.rfs_truth(m[0], ci.recognition_model(m[1]), per_cell)} for m in (pair.a, pair.b))
    adapter, task = Iris(), "iris_rfs_und"
    return paired_coverage(
        f"{size}/{pair.name}/{task}",
        truths,
        (RFS_METRIC,),
        lambda rng: tuple(
            ci.rfs_records(m[0], ci.recognition_model(m[1]), ci.SIZES[size], rng) for m in (pair.a, pair.b)
        ),
        lambda records, _: [rfs_und.compute_metrics(records)],
        lambda records: adapter.problem(task, records),
        task=task,
        replicates=replicates,
        seed=seed,
        quiet=("fairness_evals.iris",),
    )


# ------------------------------------------------------------------------------------------------ generation
@dataclass(frozen=True)
class GenerationPair:
    """Two simulated generators (``coverage_generation``'s populations) on the same prompts; their images are
    independent draws, so each run is resampled on its own."""

    name: str
    task: str  # "fact_or_fair_t2i_objective", "iris_gen_neutral" or "iris_gen_steer"
    a: str
    b: str


GENERATION_PAIRS = (
    GenerationPair("t2i_stereotyped_vs_mixed", "fact_or_fair_t2i_objective", "stereotyped", "mixed"),
    GenerationPair("t2i_run_twice", "fact_or_fair_t2i_objective", "stereotyped", "stereotyped"),
    GenerationPair("neutral_stereotyped_vs_mixed", "iris_gen_neutral", "stereotyped", "mixed"),
    GenerationPair("steer_gap_vs_no_gap", "iris_gen_steer", "gap", "no_gap"),
)
#: Images per prompt (``coverage_generation.SIZES``).
GENERATION_IMAGES = cg.SIZES


def _generation_world(task: str, kind: str) -> tuple[dict[str, float], tuple[str, ...], Any, Any]:
    """(truths, metrics, draw(rng, n_images) -> records, compute_metrics) of one simulated generator; the metrics are
    ``coverage_generation``'s for the task (every one has a paired form)."""
    if task.startswith("fact_or_fair_t2i"):
        from fact_fair_tasks import t2i_scoring

        gender, race = cg.t2i_population(kind)
        return (
            cg.t2i_truths(gender, race),
            cg.t2i_metrics(),
            lambda rng, n: cg.t2i_records(rng, gender, race, n),
            t2i_scoring.compute_metrics,
        )
    if task == "iris_gen_neutral":
        from iris_tasks import neutral_gen

        cells = cg.neutral_population(kind)
        return (
            cg.neutral_truths(cells),
            cg.neutral_metrics(),
            lambda rng, n: cg.neutral_records(rng, cells, n),
            neutral_gen.compute_metrics,
        )
    from iris_tasks import bis_gen

    shapes, success = cg.steer_population(kind)
    return (
        cg.steer_truths(shapes, success),
        cg.STEER_METRICS,
        lambda rng, n: cg.steer_records(rng, shapes, success, n),
        bis_gen.compute_metrics,
    )


def simulate_generation(
    pair: GenerationPair, size: str, *, replicates: int, seed: int, n_resamples: int = N_RESAMPLES
) -> list[Coverage]:
    """Coverage of the difference of every score with a population value under ``pair`` (a difference is printed
    where both runs print their own interval)."""
    truth_a, metrics, draw_a, compute = _generation_world(pair.task, pair.a)
    truth_b, _, draw_b, _ = _generation_world(pair.task, pair.b)
    adapter, n_images = adapter_of(pair.task), GENERATION_IMAGES[size]
    return paired_coverage(
        f"{size}/{pair.name}/{pair.task}",
        (truth_a, truth_b),
        metrics,
        lambda rng: (draw_a(rng, n_images), draw_b(rng, n_images)),
        lambda records, rep: [compute(records, n_resamples=400, seed=rep)],
        lambda records: adapter.problem(pair.task, records),
        task=pair.task,
        replicates=replicates,
        seed=seed,
        n_resamples=n_resamples,
        quiet=cg.QUIET,
        own_interval_optional=True,
    )


def coverage_table(size: str, *, replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> list[Coverage]:
    """Coverage of every paired difference under every pair of models at the design ``size`` ("paper" or "lite");
    each pair has its own seed derived from ``seed``."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    table: list[Coverage] = []
    for i, pair in enumerate(FAIRLENS_PAIRS):
        table.extend(simulate_fairlens(pair, size, replicates=replicates, seed=seed * 1000 + i))
    for i, pair in enumerate(OPEN_PAIRS):
        table.extend(simulate_open(pair, size, replicates=replicates, seed=seed * 1000 + 50 + i))
    for i, pair in enumerate(FACT_OR_FAIR_PAIRS):
        table.extend(simulate_fact_or_fair(pair, size, replicates=replicates, seed=seed * 1000 + 100 + i))
    for i, pair in enumerate(IRIS_PAIRS):
        table.extend(simulate_bis_und(pair, size, replicates=replicates, seed=seed * 1000 + 200 + i))
    for i, pair in enumerate(RFS_PAIRS):  # each replicate scores two runs with 1,000 resamples each: fewer replicates
        table.extend(simulate_rfs_und(pair, size, replicates=max(1, replicates // 5), seed=seed * 1000 + 250 + i))
    for i, pair in enumerate(GENERATION_PAIRS):
        table.extend(simulate_generation(pair, size, replicates=replicates, seed=seed * 1000 + 300 + i))
    return table


#: Metrics whose difference is a difference of maxima (conservative bounds next to tied components).
MAXIMA = ("parity_gap", "association_gap", "oe_bias_gap", "distance")


def conservative(row: Coverage) -> str | None:
    """Why a row's interval may be wider than the bar's 2x by design (``bench/coverage.py`` prints it), or None."""
    task, metric = row.name.split("/")[-2:]
    if task == "iris_rfs_und":
        return (
            "the Bonferroni combination of the two runs' own intervals (each conservative for the JSD half's bias), "
            "blind to the pairing"
        )
    if metric.startswith(MAXIMA):
        return "a difference of maxima: conservative bounds next to tied components (metrics.paired.maxima_difference)"
    return None


def paired_coverage(
    label: str,
    truths: tuple[Mapping[str, float], Mapping[str, float]],
    metrics: Sequence[str],
    draw: Callable[[np.random.Generator], tuple[Any, Any]],
    own: Callable[[Any, int], Sequence[Mapping[str, float]]],
    problem: Callable[[Any], Problem],
    *,
    task: str,
    replicates: int,
    seed: int,
    n_resamples: int = N_RESAMPLES,
    quiet: Sequence[str] = (),
    own_interval_optional: bool = False,
) -> list[Coverage]:
    """The coverage rows ``<label>/<metric>`` of the differences B - A of one pair of models (the loop:
    :func:`coverage_simulation.simulate`, seeded ``seed``). Replicate i draws both runs' data on the same units
    (``draw(rng)``: A's, B's), scores each run with the task's own code (``own(run, i)``: its metrics, one mapping
    per task the run scores) and computes ``compare``'s differences of ``metrics`` from each run's
    :class:`~fairness_evals.compare.problem.Problem` (``problem(run)``; ``n_resamples`` joint resamples seeded i).
    A difference counts as printed where every mapping of both runs prints its own interval
    (``own_interval_optional``: a metric without an interval of its own, such as a rate, counts as printed)."""

    def differences(runs: tuple[Any, Any], rep: int) -> dict[str, Scored]:
        mine = [values for run in runs for values in own(run, rep)]
        settings = engine.Options(n_resamples=n_resamples, seed=rep)
        found = engine.differences(*(problem(run) for run in runs), metrics, settings, task=task)
        out = {}
        for name in metrics:
            key = f"{name}_ci_low"
            printed = all(np.isfinite(o.get(key, 0.0) if own_interval_optional else o[key]) for o in mine)
            d = found[name]
            out[name] = Scored(d.difference, *((d.low, d.high) if printed else (np.nan, np.nan)))
        return out

    return simulate(
        {name: truths[1][name] - truths[0][name] for name in metrics},
        lambda rng, _: draw(rng),
        differences,
        metrics,
        replicates=replicates,
        seed=seed,
        label=lambda metric: f"{label}/{metric}",
        quiet=quiet,
    )
