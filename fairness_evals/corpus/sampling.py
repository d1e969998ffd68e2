"""Seeded stratified sampling's two generic steps, shared by the FairLens and IRIS corpora.

:func:`allocate` splits a sample of ``round(fraction * N)`` items over strata of the given sizes: each
stratum keeps ``floor(fraction * N_s)``, at least one when it is not empty, and the items still missing go
one each to the largest remainders (ties: stratum order). :func:`round_robin` orders the drawn strata so
that any prefix of the sample spreads over them. What a stratum is and how it is drawn stay with each
benchmark that samples a corpus.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypeVar

__all__ = ["allocate", "round_robin"]

T = TypeVar("T")


def allocate(sizes: Sequence[int], fraction: float) -> list[int]:
    """Items to draw from each stratum of the given sizes (largest remainders, at least one per stratum)."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must lie in (0, 1], got {fraction}")
    total_size = sum(sizes)
    quotas = [fraction * n for n in sizes]
    counts = [min(n, max(1, math.floor(q + 1e-9))) if n > 0 else 0 for n, q in zip(sizes, quotas, strict=True)]
    target = min(total_size, math.floor(fraction * total_size + 0.5))
    missing = target - sum(counts)
    if missing > 0:
        # Largest remainder first; a stratum lifted to one item is already above its quota (negative remainder).
        order = sorted(range(len(sizes)), key=lambda i: (-(quotas[i] - counts[i]), i))
        for i in order:
            if missing == 0:
                break
            if counts[i] < sizes[i]:
                counts[i] += 1
                missing -= 1
    return counts


def round_robin(groups: Sequence[Sequence[T]]) -> list[T]:
    """The first member of every group (in the order given), then the second, ..."""
    out: list[T] = []
    depth = max((len(g) for g in groups), default=0)
    for i in range(depth):
        out.extend(g[i] for g in groups if i < len(g))
    return out
