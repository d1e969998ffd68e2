"""BIS-Und's counterfactual pairs in the task's terms: the comparison order of the pair-sum columns, and the image
pairs per level.

The pairing itself (within one set and one question, every pair of images whose attribute triples differ, assigned
to the comparison named by the attributes that differ) is :func:`metrics.iris.counterfactual_pair_sums`; the task
reads AC_diff and DHR from its sums (:mod:`iris_tasks.bis_und`), and the pair counts below from its counts.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from metrics.iris import COMPARISONS, LEVELS, counterfactual_pair_sums

#: Comparison order of the columns: gender, age, skin, gender_age, gender_skin, age_skin, joint_all.
COMPARISON_NAMES: tuple[str, ...] = tuple(COMPARISONS)


def image_pairs_per_level(sets: ArrayLike, images: ArrayLike, triples: ArrayLike) -> dict[str, int]:
    """Distinct image pairs per level over all sets: ``pairs_single``, ``pairs_dual``, ``pairs_triple`` = the pairs of
    images of one set whose attribute triples differ in 1, 2 or 3 attributes (each image once, whatever its records:
    the pair counts of :func:`metrics.iris.counterfactual_pair_sums` over one record per (set, image))."""
    s = np.asarray(sets, dtype=np.int64)
    i = np.asarray(images, dtype=np.int64)
    t = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    if s.size == 0:
        return dict.fromkeys(LEVELS, 0)
    _, first = np.unique(np.column_stack([s, i]), axis=0, return_index=True)
    sets_of, codes = np.unique(s[first], return_inverse=True)
    _, counts = counterfactual_pair_sums(
        codes.ravel(), np.zeros(first.size), t[first], np.zeros(first.size), n_units=sets_of.size, kind="abs"
    )
    totals = counts.sum(axis=0)
    out, start = {}, 0
    for level, comparisons in LEVELS.items():
        out[level] = int(totals[start : start + len(comparisons)].sum())
        start += len(comparisons)
    return out
