"""Seeded coverage simulations of ``compare``'s paired intervals of the Fact-or-Fair group means (issue 17, to issue
13's bar): ``fact_or_fair_subjective``'s S_fair per axis, the mean over the four subjective contexts.

**Estimand.** Two models answer the same profile draws in each of the four contexts; the difference of a group mean
is ``mean_c S_fair_c(B) - mean_c S_fair_c(A)`` at the population values of each model's answers in each context
(``coverage_fact_or_fair.true_scores``). A replicate draws a fresh sample of the design (per (statistic, target,
scenario) stratum, ``draws`` profile draws, each shown in all four contexts, as the benchmark builds them), has both
models answer every context, and computes the difference with ``compare``'s own code path
(:meth:`fact_fair_tasks.compare.FactOrFair.group_problem` and :func:`fairness_evals.compare.engine.
differences`: 2,000 joint resamples of the draws within their strata). A difference is *printed* only where every
context of both runs prints its own S_fair interval (``compare`` reports the others as not comparable).

**Correlation.** A model's four answers to one draw are correlated (it sees the same four profiles): in each
context it reuses its base-context uniform random number with probability ``across``; model B reuses model A's
number with probability ``shared`` (the two models' answers to the same document are correlated). Resampling the
contexts apart would ignore the first correlation; resampling the draws once for all four keeps both.

**Pairs of models** (:data:`GROUP_PAIRS`; answer policies of ``coverage_fact_or_fair``): a strongly stereotyped
model against a less stereotyped version of itself; a model that becomes more stereotyped only in the attribution
and in-group contexts (the group mean moves by a quarter of the per-context change); a stereotyped model against a
uniform picker (true S_fair 1, at the boundary); one model run twice with independent sampling (every difference 0).

:func:`coverage_table` returns one ``coverage_simulation.Coverage`` per pair and metric, named
``<size>/<pair>/<group>/<metric>``, at the paper's size (100 draws per scenario: 300 answers per cell and context)
and the lite size (10 draws: 30); ``tests/compare/test_compare_fact_or_fair_groups.py`` holds a seeded subset to the
bar (>= 0.93 paper, >= 0.90 lite; width within twice the spread of the estimate).
"""

from __future__ import annotations

from dataclasses import dataclass

import coverage_fact_or_fair as cff
import numpy as np
from coverage_compare import paired_coverage
from coverage_simulation import Coverage

from fact_fair_tasks import scoring
from fact_fair_tasks.compare import FactOrFair

__all__ = [
    "DRAWS",
    "GROUP",
    "GROUP_METRICS",
    "GROUP_PAIRS",
    "SIZES",
    "TARGETS",
    "GroupPair",
    "coverage_table",
    "group_records",
    "simulate_group",
    "true_group_values",
]

SIZES = ("paper", "lite")
TARGETS = {"paper": 0.93, "lite": 0.90}
#: Profile draws per subjective scenario: the released design (300 answers per cell and context) and the lite one.
DRAWS = {"paper": 100, "lite": 10}
DEFAULT_REPLICATES = 200
N_RESAMPLES = 2000
GROUP = "fact_or_fair_subjective"
GROUP_METRICS = ("s_fair_gender", "s_fair_race")


@dataclass(frozen=True)
class GroupPair:
    """Two models, each a ``coverage_fact_or_fair.Policy`` per context (base, representativeness, attribution,
    ingroup), answering the same draws; ``shared``: B reuses A's random number; ``across``: a model reuses its
    base-context number in the other contexts."""

    name: str
    a: tuple[cff.Policy, ...]
    b: tuple[cff.Policy, ...]
    shared: float
    across: float


def _policy(name: str) -> cff.Policy:
    return {p.name: p for p in cff.subjective_policies()}[name]


def _four(name: str) -> tuple[cff.Policy, ...]:
    return (_policy(name),) * 4


GROUP_PAIRS = (
    GroupPair("debiased", _four("strong_stereotype"), _four("stereotyped"), shared=0.8, across=0.7),
    GroupPair(
        "biased_in_identity_contexts", _four("stereotyped"),
        (_policy("stereotyped"), _policy("stereotyped"), _policy("strong_stereotype"), _policy("strong_stereotype")),
        shared=0.7, across=0.7,
    ),
    GroupPair("stereotyped_vs_uniform", _four("stereotyped"), _four("uniform"), shared=0.5, across=0.7),
    GroupPair("same_model_sampled", _four("stereotyped"), _four("stereotyped"), shared=0.0, across=0.7),
)  # fmt: skip


def true_group_values(policies: tuple[cff.Policy, ...]) -> dict[str, float]:
    """The group means at the population: the mean over the contexts of each context's true scores."""
    per_context = [cff.true_scores(cff.subjective_truth(p)) for p in policies]
    return {name: float(np.mean([v[name] for v in per_context])) for name in GROUP_METRICS}


def group_records(pair: GroupPair, draws: int, rng: np.random.Generator) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Both models' records of the four contexts (kinds 1-4) on the same draws, each context's records in the
    benchmark's document-id order within each stratum (draw 0, 1, ...)."""
    docs = cff.subjective_documents(rng, draws)
    n = docs.stat.size
    base = (rng.random(n), rng.random(n))
    out_a, out_b = [], []
    for context in range(4):
        mine = base if context == 0 else tuple(np.where(rng.random(n) < pair.across, u, rng.random(n)) for u in base)
        theirs = tuple(np.where(rng.random(n) < pair.shared, u, rng.random(n)) for u in mine)
        out_a.append(docs.answered(pair.a[context], *mine, kind=context + 1))
        out_b.append(docs.answered(pair.b[context], *theirs, kind=context + 1))
    return out_a, out_b


def simulate_group(
    pair: GroupPair, size: str, *, replicates: int, seed: int, n_resamples: int = N_RESAMPLES
) -> list[Coverage]:
    """Coverage of the paired difference of each group mean of :data:`GROUP_METRICS` under ``pair``."""
    adapter = FactOrFair()
    members = adapter.groups[GROUP]
    return paired_coverage(
        f"{size}/{pair.name}/{GROUP}",
        (true_group_values(pair.a), true_group_values(pair.b)),
        GROUP_METRICS,
        lambda rng: group_records(pair, DRAWS[size], rng),
        lambda contexts, _: [scoring.compute_metrics(r, task=t) for r, t in zip(contexts, members, strict=True)],
        lambda contexts: adapter.group_problem(GROUP, dict(zip(members, contexts, strict=True))),
        task=GROUP,
        replicates=replicates,
        seed=seed,
        n_resamples=n_resamples,
        quiet=("fairness_evals.fact_or_fair",),
    )


def coverage_table(size: str, *, replicates: int = DEFAULT_REPLICATES, seed: int = 0) -> list[Coverage]:
    """Coverage of every group-mean difference under every pair at the design ``size`` ("paper" or "lite")."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    table: list[Coverage] = []
    for i, pair in enumerate(GROUP_PAIRS):
        table.extend(simulate_group(pair, size, replicates=replicates, seed=seed * 1000 + 400 + i))
    return table


def conservative(row: Coverage) -> str | None:
    """Why a row's interval is wider than the bar by design (``bench/coverage.py`` reads it), or None."""
    if row.name.startswith("lite/"):
        return (
            "at 30 answers per cell the mean KL behind each context's S_fair is too noisy for a covering basic "
            "interval as narrow as the bar (docs/compare.md: the group means at the lite size)"
        )
    return None
