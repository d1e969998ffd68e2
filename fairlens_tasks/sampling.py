"""Seeded stratified sampling over gender x race x age band.

The paper samples 10% of the UTKFace adults aged 25-65 "using stratified sampling with a fixed random
seed", jointly over gender, race and age band (section 3, Appendix A); the seed and the call are not
published. Here:

Steps 1 and 2 are :func:`fairness_evals.corpus.sampling.allocate`, shared with IRIS.

1. Each stratum ``s`` (one of 2 x 5 x 3 = 30 cells) with ``N_s`` eligible images gets the quota
   ``q_s = f * N_s``; it keeps ``floor(q_s)`` images, **at least one** when ``N_s > 0`` (every stratum
   represented when possible).
2. The images still missing to reach ``round(f * N)`` go, one each, to the strata with the largest
   remainders ``q_s - n_s`` (ties: stratum order). The total is ``max(round(f * N), sum of step 1)``: the
   at-least-one rule can add at most one image per stratum whose quota is below one.
3. Within a stratum, ``random.Random("fairlens/sample/seed-<seed>/<gender>/<race>/<band>").sample``
   draws from the images sorted by id, so the draw does not depend on file-system order or on the
   other strata.

The sample is returned round-robin over the strata in an *interleaved* order (:data:`INTERLEAVED`: the i-th
stratum is gender ``i mod 2``, race ``i mod 5``, band ``i mod 3``, a bijection of 0..29 since 2, 3 and 5 are
coprime): first one image of every stratum, then a second, ... The documents follow this order, so a
``--limit`` prefix alternates the genders image by image, cycles the races every 5 images and the bands every 3,
and the first 30 images cover all 30 strata.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TypeVar

from fairlens_tasks.labels import AGE_BANDS, GENDERS, RACES, Demographics
from fairness_evals.corpus.sampling import allocate, round_robin

T = TypeVar("T")

STRATA: tuple[tuple[str, str, str], ...] = tuple((g, r, b) for g in GENDERS for r in RACES for b in AGE_BANDS)
INTERLEAVED: tuple[tuple[str, str, str], ...] = tuple(
    (GENDERS[i % len(GENDERS)], RACES[i % len(RACES)], AGE_BANDS[i % len(AGE_BANDS)]) for i in range(len(STRATA))
)


def stratum(demographics: Demographics) -> tuple[str, str, str]:
    return (demographics.gender, demographics.race, demographics.age_band)


def stratified_sample(
    items: Sequence[T],
    demographics: Callable[[T], Demographics],
    key: Callable[[T], str],
    fraction: float,
    seed: int,
) -> list[T]:
    """A seeded stratified sample of ``items``, round-robin over strata (see the module docstring)."""
    by_stratum: dict[tuple[str, str, str], list[T]] = {s: [] for s in STRATA}
    for item in items:
        by_stratum[stratum(demographics(item))].append(item)
    for members in by_stratum.values():
        members.sort(key=key)
    counts = allocate([len(by_stratum[s]) for s in STRATA], fraction)
    drawn: dict[tuple[str, str, str], list[T]] = {}
    for s, count in zip(STRATA, counts, strict=True):
        rng = random.Random(f"fairlens/sample/seed-{seed}/{'/'.join(s)}")
        drawn[s] = rng.sample(by_stratum[s], count) if count < len(by_stratum[s]) else list(by_stratum[s])
    return round_robin([drawn[s] for s in INTERLEAVED])
