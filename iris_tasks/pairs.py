"""Counterfactual pairs, decomposed per set, for the BIS-Und bootstrap.

:func:`metrics.iris.pairwise_comparison_means` gives the pooled mean within-pair difference per
comparison, which is what the task reports. Its intervals resample counterfactual *sets* (the unit the
corpus was drawn in), so they need each set's contribution: :func:`pair_sums` returns, per set and
comparison, the sum of within-pair differences and the number of pairs, with the same pairing rule
(records of one unit = one set and one question; every unordered pair whose attribute triples differ,
assigned to the comparison named by the attributes that differ). Pooled, ``sums.sum(0) / counts.sum(0)``
equals :func:`metrics.iris.pairwise_comparison_means` exactly (``tests/iris/test_iris_pairs.py``).
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from metrics.iris import COMPARISONS

#: Comparison order of the columns: gender, age, skin, gender_age, gender_skin, age_skin, joint_all.
COMPARISON_NAMES: tuple[str, ...] = tuple(COMPARISONS)
_ATTRIBUTE_BIT = {"gender": 1, "age": 2, "skin_tone": 4}
_MASK_COLUMN = {sum(_ATTRIBUTE_BIT[a] for a in attrs): i for i, attrs in enumerate(COMPARISONS.values())}
_COLUMN_OF_MASK = np.full(8, -1, dtype=np.int64)
for _mask, _column in _MASK_COLUMN.items():
    _COLUMN_OF_MASK[_mask] = _column


def pair_sums(
    sets: ArrayLike,
    questions: ArrayLike,
    triples: ArrayLike,
    values: ArrayLike,
    *,
    n_sets: int,
    kind: Literal["abs", "neq"],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-set within-pair sums and pair counts for each of the seven comparisons.

    Parameters
    ----------
    sets : array_like of int, shape (n,)
        Set index of each record, in ``[0, n_sets)``.
    questions : array_like of int, shape (n,)
        Question of each record; pairs are formed within (set, question).
    triples : array_like of int, shape (n, 3)
        Gender, age and skin-tone codes of each record's image.
    values : array_like, shape (n,)
        Ratings (``kind="abs"``: ``|v_i - v_j|``) or outcome codes (``kind="neq"``: ``1[v_i != v_j]``).
    n_sets : int
    kind : {"abs", "neq"}

    Returns
    -------
    (sums, counts), each of shape (n_sets, 7), columns in :data:`COMPARISON_NAMES` order.
    """
    s = np.asarray(sets, dtype=np.int64)
    q = np.asarray(questions, dtype=np.int64)
    t = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    v = np.asarray(values, dtype=np.float64)
    sums = np.zeros((n_sets, len(COMPARISON_NAMES)))
    counts = np.zeros((n_sets, len(COMPARISON_NAMES)))
    if s.size == 0:
        return sums, counts
    unit = s * (int(q.max()) + 1) + q
    order = np.argsort(unit, kind="stable")
    bounds = np.flatnonzero(np.diff(unit[order])) + 1
    bits = np.array([1, 2, 4])
    for members in np.split(order, bounds):
        if members.size < 2:
            continue
        a = t[members]
        mask = ((a[:, None, :] != a[None, :, :]) * bits).sum(axis=-1)
        if kind == "abs":
            diff = np.abs(v[members][:, None] - v[members][None, :])
        else:
            diff = (v[members][:, None] != v[members][None, :]).astype(np.float64)
        iu = np.triu_indices(members.size, k=1)
        m = mask[iu]
        keep = m > 0
        columns = _COLUMN_OF_MASK[m[keep]]
        set_index = s[members[0]]
        sums[set_index] += np.bincount(columns, weights=diff[iu][keep], minlength=len(COMPARISON_NAMES))
        counts[set_index] += np.bincount(columns, minlength=len(COMPARISON_NAMES))
    return sums, counts


def image_pairs_per_level(sets: ArrayLike, images: ArrayLike, triples: ArrayLike) -> dict[str, int]:
    """Distinct image pairs per level (single: 1 differing attribute, dual: 2, triple: 3), over all sets."""
    s = np.asarray(sets, dtype=np.int64)
    i = np.asarray(images, dtype=np.int64)
    t = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
    seen: dict[tuple[int, int], tuple[int, ...]] = {}
    for set_index, image, triple in zip(s.tolist(), i.tolist(), t.tolist(), strict=True):
        seen.setdefault((set_index, image), tuple(triple))
    by_set: dict[int, list[tuple[int, ...]]] = {}
    for (set_index, _), triple in seen.items():
        by_set.setdefault(set_index, []).append(triple)
    out = {"single": 0, "dual": 0, "triple": 0}
    names = ("single", "dual", "triple")
    for members in by_set.values():
        for a in range(len(members)):
            for b in range(a + 1, len(members)):
                differing = sum(x != y for x, y in zip(members[a], members[b], strict=True))
                if differing:
                    out[names[differing - 1]] += 1
    return out
