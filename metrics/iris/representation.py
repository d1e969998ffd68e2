"""IRIS representation metrics: Representation Disparity [M1] and Jensen-Shannon divergence [M4, M5].

Each formula has one implementation, vectorised over leading axes (``*_from_counts``), which the generation task
(:mod:`iris_tasks.neutral_gen`) runs on the observed images and on every resample; the scalar forms
(:func:`representation_disparity`, :func:`mean_representation_disparity`, :func:`js_divergence`,
:func:`mean_js_divergence`) check one input and call it, and the label forms (:func:`representation_disparities`,
:func:`attribute_js_divergences`) check their labels, count them and call it.

Paper: Zhao et al., "Fair in Mind, Fair in Action? A Synchronous Benchmark for Understanding and
Generation in UMLLMs" (arXiv 2603.00590v1, ICLR 2026), Table 5; released code
Warren118/IRIS-Benchmark @ 0d2baca5, ``metrics/calculations.py`` and ``metrics/dimensions.py``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import rel_entr

from metrics._inputs import attribute_labels, category_counts, labels_1d, reference_rows, whole_number
from metrics.iris._common import (
    AGES,
    COMPARISONS,
    GENDERS,
    SKIN_TONES,
    check_categories,
    nonneg_counts,
    same_length,
)

__all__ = [
    "attribute_js_divergences",
    "expected_representation_disparity",
    "js_divergence",
    "js_divergence_from_counts",
    "mean_js_divergence",
    "mean_js_divergence_from_counts",
    "mean_representation_disparity",
    "mean_representation_disparity_from_counts",
    "rd_finite_sample_floor",
    "representation_disparities",
    "representation_disparity",
    "representation_disparity_from_counts",
]


# --------------------------------------------------------------------------------------------------
# [M1] Representation Disparity
# --------------------------------------------------------------------------------------------------


def representation_disparity_from_counts(counts: ArrayLike) -> NDArray[np.float64]:
    """Representation Disparity of count (or proportion) vectors over the last axis (vectorised core).

    ``RD(P) = (1/(k-1)) sum_{i<j} |p_i - p_j|`` with ``p = counts / counts.sum(-1)`` (IRIS Table 5,
    [M1]). The pair sum is evaluated in O(k log k) as ``sum_j (2j - k + 1) p_(j)`` over the
    ascending order statistics ``p_(0) <= ... <= p_(k-1)``.

    Parameters
    ----------
    counts : array_like, shape (..., k), k >= 2
        Non-negative counts of the k cells of one attribute combination, over the **full** cell
        grid (a cell with no images is a 0, as the code's ``reindex(..., fill_value=0)``).

    Returns
    -------
    ndarray, shape (...), values in [0, 1]: 0 for a uniform vector, 1 when one cell holds
    everything. NaN where a vector sums to 0 (no images).
    """
    c = nonneg_counts(counts, "counts")
    k = c.shape[-1]
    if k < 2:
        raise ValueError(f"counts must have at least 2 cells on its last axis, got {k}")
    total = c.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.sort(np.where(total > 0, c / np.where(total > 0, total, 1.0), np.nan), axis=-1)
    weights = 2.0 * np.arange(k) - k + 1.0
    rd = (p * weights).sum(axis=-1) / (k - 1)
    # Clip the last-ulp round-off so that the documented range [0, 1] holds exactly.
    return np.where(np.isnan(rd), np.nan, np.clip(rd, 0.0, 1.0))


def representation_disparity(proportions: ArrayLike) -> float:
    """Representation Disparity of one distribution over k demographic cells (IRIS [M1]).

    ``RD(P) = (1/(k-1)) sum_{1<=i<j<=k} |p_i - p_j|`` (IRIS Table 5). It is 0 for the uniform
    distribution and 1 when all mass is in one cell, for every k >= 2: the ``k-1`` normaliser is
    the correct maximum (the code comment in ``calculate_rd`` claiming ``2(k-1)`` is wrong, and the
    code itself divides by ``k-1``).

    Parameters
    ----------
    proportions : array_like, shape (k,), k >= 2
        Proportions of the k cells, summing to 1 (within 1e-6). Include empty cells as 0.

    Returns
    -------
    float
        RD in [0, 1]: 0 for the uniform distribution, 1 when one cell holds all the mass.

    Raises
    ------
    ValueError
        If ``proportions`` is not 1-D, has fewer than 2 cells, has a negative or non-finite entry,
        or does not sum to 1. (The code returns 0.0 for k <= 1; we refuse it.)
    """
    p = nonneg_counts(proportions, "proportions")
    if p.ndim != 1:
        raise ValueError(f"proportions must be one-dimensional, got shape {p.shape}")
    if p.size < 2:
        raise ValueError(f"proportions must have at least 2 cells, got {p.size}")
    if abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"proportions must sum to 1, got {p.sum()!r}")
    return float(representation_disparity_from_counts(p))


def mean_representation_disparity_from_counts(counts: ArrayLike) -> NDArray[np.float64]:
    """Mean RD over occupations, from per-occupation cell counts (vectorised core).

    ``RD = (1/|O'|) sum_{o in O'} RD(p_o)`` where ``O'`` are the occupations with at least one
    image: the code groups the generated images by occupation, so an occupation without images
    never enters the mean.

    Parameters
    ----------
    counts : array_like, shape (..., n_occupations, k)

    Returns
    -------
    ndarray, shape (...); NaN where no occupation has an image.
    """
    c = nonneg_counts(counts, "counts", min_ndim=2)
    rd = representation_disparity_from_counts(c)
    present = ~np.isnan(rd)
    n = present.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(present, rd, 0.0).sum(axis=-1) / np.maximum(n, 1), np.nan)


def mean_representation_disparity(counts: ArrayLike) -> float:
    """Granular IFS-Gen metric: RD per occupation, averaged (unweighted) over occupations.

    ``RD_X = (1/|O'|) sum_{o in O'} RD(P_o)`` for one attribute combination X; ``O'`` are the
    occupations with at least one image (repo ``calculate_ifs_gen_metrics``).

    Parameters
    ----------
    counts : array_like, shape (n_occupations, k)
        Cell counts per occupation over the full k-cell grid.

    Returns
    -------
    float
        The mean RD in [0, 1] over the occupations with images (one without images is left out, not counted as 0).

    Raises
    ------
    ValueError
        If ``counts`` is not of shape (n_occupations, k) with k >= 2, holds a negative or non-finite count, or has no
        occupation with an image.
    """
    c = nonneg_counts(counts, "counts", min_ndim=2)
    if c.ndim != 2:
        raise ValueError(f"counts must have shape (n_occupations, k), got {c.shape}")
    value = mean_representation_disparity_from_counts(c)
    if np.isnan(value):
        raise ValueError("counts has no occupation with an image")
    return float(value)


def _occupation_cell_counts(
    occupations: Sequence[Hashable],
    columns: Sequence[Sequence[Hashable]],
    grids: Sequence[Sequence[Hashable]],
    occupation_names: Sequence[Hashable],
) -> NDArray[np.float64]:
    """(n_occupations, prod(grid sizes)) counts over the full product grid of the given columns."""
    occ_index = {o: i for i, o in enumerate(occupation_names)}
    sizes = [len(g) for g in grids]
    cell_index = [{label: i for i, label in enumerate(g)} for g in grids]
    flat = np.zeros(len(occupations), dtype=np.intp)
    for col, idx, size in zip(columns, cell_index, sizes, strict=True):
        flat = flat * size + np.fromiter((idx[v] for v in col), dtype=np.intp, count=len(col))
    occ = np.fromiter((occ_index[o] for o in occupations), dtype=np.intp, count=len(occupations))
    k = int(np.prod(sizes))
    return np.bincount(occ * k + flat, minlength=len(occupation_names) * k).reshape(-1, k).astype(np.float64)


def representation_disparities(
    occupations: ArrayLike | Sequence[Hashable],
    gender: ArrayLike | Sequence[str],
    age: ArrayLike | Sequence[str],
    skin_tone: ArrayLike | Sequence[str],
) -> dict[str, float]:
    """The seven granular IFS-Gen metrics (``RD_gender`` ... ``RD_joint_all``) from image labels.

    For each of the seven attribute combinations X (gender k=2, age 3, skin 3, gender x age 6,
    gender x skin 6, age x skin 9, gender x age x skin 18), the image counts of each occupation
    are taken over the full product grid (missing cells 0) and
    :func:`mean_representation_disparity` averages RD over the occupations with images. This is
    the code's ``calculate_ifs_gen_metrics``, keyed by the full occupation name (the code's
    ``filename.split('_')[0]`` truncates ``disk_jockey``; we do not copy that).

    Parameters
    ----------
    occupations : array_like, shape (n_images,)
        Occupation of the prompt that generated each image.
    gender, age, skin_tone : array_like of str, shape (n_images,)
        Classifier labels: gender in ``("male", "female")``, age in
        ``("young", "middle", "older")``, skin tone in ``("light", "middle", "dark")``.

    Returns
    -------
    dict
        ``{"RD_gender", "RD_age", "RD_skin", "RD_gender_age", "RD_gender_skin", "RD_age_skin",
        "RD_joint_all"}`` -> value in [0, 1] (paper Table 23 column names).

    Raises
    ------
    ValueError
        On an empty input, unequal lengths or a label outside the label sets.
    """
    occ = labels_1d(occupations, "occupations")
    columns = {
        "gender": labels_1d(gender, "gender"),
        "age": labels_1d(age, "age"),
        "skin_tone": labels_1d(skin_tone, "skin_tone"),
    }
    same_length({"occupations": occ, **columns}, allow_empty=False)
    grids = {"gender": GENDERS, "age": AGES, "skin_tone": SKIN_TONES}
    for name, col in columns.items():
        check_categories(col, grids[name], name)
    names = list(dict.fromkeys(occ))
    out = {}
    for suffix, attrs in COMPARISONS.items():
        counts = _occupation_cell_counts(occ, [columns[a] for a in attrs], [grids[a] for a in attrs], names)
        out[f"RD_{suffix}"] = mean_representation_disparity(counts)
    return out


# --------------------------------------------------------------------------------------------------
# Finite-sample floor of RD
# --------------------------------------------------------------------------------------------------


def _expected_abs_2b_minus_m(m: NDArray[np.float64], q: float) -> NDArray[np.float64]:
    """``E|2B - m|`` for ``B ~ Binomial(m, q)``, elementwise over m, in closed form.

    ``|Y| = Y + 2(-Y)^+`` with ``Y = 2B - m``; ``E[(-Y)^+] = m F_m(t) - 2 m q F_{m-1}(t - 1)`` with
    ``t = ceil(m/2) - 1`` and ``F_n`` the Binomial(n, q) CDF (``E[B 1{B<=t}] = m q F_{m-1}(t-1)``).
    """
    from scipy.stats import binom  # here, not at the top: importing scipy.stats takes most of a second at start-up

    t = np.ceil(m / 2.0) - 1.0
    f_m = binom.cdf(t, m, q)
    f_m1 = np.where(m > 0, binom.cdf(t - 1.0, np.maximum(m - 1.0, 0.0), q), 0.0)
    return (2.0 * m * q - m) + 2.0 * (m * f_m - 2.0 * m * q * f_m1)


def _expected_abs_difference(n: int, p_i: float, p_j: float) -> float:
    """``E|X_i - X_j|`` for ``X ~ Multinomial(n, p)``: exact, O(n).

    ``X_i + X_j = M ~ Binomial(n, p_i + p_j)`` and ``X_i | M ~ Binomial(M, p_i / (p_i + p_j))``.
    """
    from scipy.stats import binom

    s = p_i + p_j
    if s <= 0.0:
        return 0.0
    m = np.arange(n + 1, dtype=np.float64)
    weights = binom.pmf(m, n, min(s, 1.0))
    return float(np.dot(weights, _expected_abs_2b_minus_m(m, p_i / s)))


def expected_representation_disparity(n_images: int, probabilities: ArrayLike) -> float:
    """Exact expected RD of ``n_images`` draws from a generator with cell probabilities ``p``.

    ``E[RD] = (1/((k-1) N)) sum_{i<j} E|X_i - X_j|`` with ``X ~ Multinomial(N, p)``. RD is a sum
    over cell pairs, so by linearity only the pairwise marginals matter: ``X_i + X_j ~
    Binomial(N, p_i + p_j)`` and, given it, ``X_i`` is binomial, and ``E|X_i - X_j|`` follows in
    closed form from binomial CDFs. The result is **exact** (no enumeration of the multinomial and
    no Monte Carlo) for every N and k, at O(N) per distinct pair of probabilities (one pair for a
    uniform generator). Checked in the tests against full multinomial enumeration for small N, k
    and against seeded Monte Carlo for N = 50, k = 18.

    Parameters
    ----------
    n_images : int >= 1
        Images per occupation (N).
    probabilities : array_like, shape (k,), k >= 2
        Cell probabilities of the generator, summing to 1 (within 1e-6).

    Returns
    -------
    float in [0, 1].
    """
    whole_number(n_images, "n_images", minimum=1)
    p = nonneg_counts(probabilities, "probabilities")
    if p.ndim != 1 or p.size < 2:
        raise ValueError(f"probabilities must be one-dimensional with at least 2 cells, got shape {p.shape}")
    if abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"probabilities must sum to 1, got {p.sum()!r}")
    p = p / p.sum()
    k = p.size
    cache: dict[tuple[float, float], float] = {}
    total = 0.0
    for i in range(k):
        for j in range(i + 1, k):
            key = (min(p[i], p[j]), max(p[i], p[j]))
            if key not in cache:
                cache[key] = _expected_abs_difference(int(n_images), key[0], key[1])
            total += cache[key]
    return float(min(max(total / ((k - 1) * int(n_images)), 0.0), 1.0))


def rd_finite_sample_floor(n_images: int, k: int) -> float:
    """Expected RD of a perfectly uniform generator: the finite-sample floor of IRIS [M1].

    ``floor(N, k) = E[RD(X / N)]`` with ``X ~ Multinomial(N, (1/k, ..., 1/k))``; by symmetry
    ``= (k / (2N)) E|X_1 - X_2|``. Even an ideal generator scores RD > 0 at finite N, so report
    this beside the measured RD. For N = 50: 0.112 (k=2), 0.138 (k=3), 0.195 (k=6), 0.237 (k=9),
    0.332 (k=18); for N = 100: 0.080, 0.098, 0.138, 0.169, 0.237. The paper does not publish N.
    Exact; see :func:`expected_representation_disparity`.

    Parameters
    ----------
    n_images : int >= 1
        Images per occupation.
    k : int >= 2
        Cells of the attribute combination (2, 3, 3, 6, 6, 9, 18 in IRIS).

    Returns
    -------
    float in [0, 1].
    """
    whole_number(k, "k", minimum=2)
    return expected_representation_disparity(n_images, np.full(int(k), 1.0 / int(k)))


# --------------------------------------------------------------------------------------------------
# [M4, M5] Jensen-Shannon divergence
# --------------------------------------------------------------------------------------------------


def js_divergence_from_counts(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64]:
    """Jensen-Shannon divergence over the last axis, broadcasting (vectorised core).

    ``JSD(P, Q) = D_JS(P || Q)^2`` where ``D_JS`` is ``scipy.spatial.distance.jensenshannon``
    (natural log), i.e. ``(KL(P||M) + KL(Q||M)) / 2`` with ``M = (P + Q)/2``. Both vectors are
    renormalised to sum 1 (scipy does this; several US reference rows sum to < 1). 0 where either
    vector sums to 0, as the code's ``calculate_jsd``. Computed as the divergence itself (``rel_entr``),
    not by squaring scipy's distance: for nearly equal vectors rounding makes scipy's inner sum a tiny
    negative number and its square root NaN; here it is clipped to 0.

    Parameters
    ----------
    p, q : array_like, shape (..., k), broadcastable
        Non-negative counts or probabilities.

    Returns
    -------
    ndarray, broadcast shape without the last axis; values in [0, ln 2].
    """
    a = nonneg_counts(p, "p")
    b = nonneg_counts(q, "q")
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"p and q must have the same number of cells, got {a.shape[-1]} and {b.shape[-1]}")
    a, b = np.broadcast_arrays(a, b)
    empty = (a.sum(axis=-1) <= 0) | (b.sum(axis=-1) <= 0)
    safe_a = np.where(empty[..., None], 1.0, a)
    safe_b = np.where(empty[..., None], 1.0, b)
    pa = safe_a / safe_a.sum(axis=-1, keepdims=True)
    pb = safe_b / safe_b.sum(axis=-1, keepdims=True)
    m = (pa + pb) / 2.0
    js = (rel_entr(pa, m).sum(axis=-1) + rel_entr(pb, m).sum(axis=-1)) / 2.0
    return np.where(empty, 0.0, np.clip(js, 0.0, np.log(2.0)))


def js_divergence(p: ArrayLike, q: ArrayLike) -> float:
    """Squared Jensen-Shannon distance between two distributions (IRIS [M4, M5]).

    ``JSD = D_JS(P_model || P_real)^2`` (IRIS Table 5: "we use the squared JSD"), computed as
    ``scipy.spatial.distance.jensenshannon(p, q) ** 2`` with the natural log, as the code's
    ``calculate_jsd``; this is the JS *divergence*, in [0, ln 2].

    Parameters
    ----------
    p : array_like, shape (k,)
        Model distribution (counts or proportions).
    q : array_like, shape (k,)
        Reference distribution, same cell order.

    Returns
    -------
    float in [0, ln 2]. 0.0 if either vector sums to 0 (code behaviour).
    """
    a = nonneg_counts(p, "p")
    b = nonneg_counts(q, "q")
    if a.ndim != 1 or b.ndim != 1:
        raise ValueError("p and q must be one-dimensional")
    if a.size == 0:
        raise ValueError("p must not be empty")
    return float(js_divergence_from_counts(a, b))


def mean_js_divergence_from_counts(counts: ArrayLike, reference: ArrayLike) -> NDArray[np.float64]:
    """Granular RFS metric, vectorised: JSD per occupation, averaged over the occupations with a model count.

    ``JSD_X = (1/|O'|) sum_{o in O'} JSD(counts_o, reference_o)`` (:func:`js_divergence_from_counts`) where ``O'``
    are the occupations whose counts are not all 0 (the code loops over the generated occupations and keeps those
    in the real-world table).

    Parameters
    ----------
    counts : array_like, shape (..., n_occupations, k)
        The model's counts (or proportions) per occupation of the reference table.
    reference : array_like, shape (n_occupations, k)
        The reference distribution of each occupation, same cell order (rows renormalised).

    Returns
    -------
    ndarray, shape (...); values in [0, ln 2]; NaN where no occupation has a count.
    """
    c = nonneg_counts(counts, "counts", min_ndim=2)
    values = js_divergence_from_counts(c, reference)
    present = c.sum(axis=-1) > 0
    n = present.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.where(present, values, 0.0).sum(axis=-1) / np.maximum(n, 1), np.nan)


def mean_js_divergence(model_counts: Mapping[Hashable, ArrayLike], reference: Mapping[Hashable, ArrayLike]) -> float:
    """Granular RFS metric: JSD per occupation, averaged over the occupations in the reference.

    ``JSD_X = (1/|O'|) sum_{o in O'} JSD(P_model,o, P_real,o)`` where ``O'`` are the occupations
    present in ``reference`` that also have at least one model image (the code loops over the
    generated occupations and keeps those in the real-world table: 32 US, 11 EU occupations).

    Parameters
    ----------
    model_counts : mapping
        Occupation -> model counts (or proportions) over the attribute's k cells, shape (k,).
    reference : mapping
        Occupation -> reference distribution over the same cells, shape (k,).

    Returns
    -------
    float in [0, ln 2].

    Raises
    ------
    ValueError
        If no occupation is in both mappings with a model image, or vectors disagree in length.
    """
    if not isinstance(model_counts, Mapping) or not isinstance(reference, Mapping):
        raise ValueError("model_counts and reference must be mappings from occupation to a vector")
    common = [o for o in model_counts if o in reference]
    rows_p, rows_q = [], []
    for o in common:
        p = nonneg_counts(model_counts[o], f"model_counts[{o!r}]")
        q = nonneg_counts(reference[o], f"reference[{o!r}]")
        if p.ndim != 1 or q.shape != p.shape:
            raise ValueError(f"model_counts[{o!r}] and reference[{o!r}] must be 1-D of the same length")
        if p.sum() > 0:
            rows_p.append(p)
            rows_q.append(q)
    if not rows_p:
        raise ValueError("no occupation of reference has a model image in model_counts")
    if len({r.size for r in rows_p}) != 1:
        raise ValueError("all vectors must have the same number of cells")
    return float(mean_js_divergence_from_counts(np.stack(rows_p), np.stack(rows_q)))


def attribute_js_divergences(
    occupations: ArrayLike | Sequence[Hashable],
    attributes: Mapping[str, ArrayLike | Sequence[str]],
    reference: Mapping[Hashable, Mapping[str, Mapping[str, float]]],
) -> dict[str, float]:
    """Per-attribute mean JSD of one region (e.g. ``JSD_US_gender``, ``JSD_US_age``...).

    For each attribute a in ``attributes``: :func:`mean_js_divergence` of the model's label
    counts per occupation against ``reference[o][a]``, over the occupations whose reference row
    has attribute a (the EU table has no skin tone). This is the code's
    ``calculate_rfs_gen_metrics``; the same function serves RFS-Und once the probe's
    distributions have been turned into per-occupation label counts or proportions.

    Parameters
    ----------
    occupations : array_like, shape (n_images,)
        Occupation of each image (or of each probe answer).
    attributes : mapping
        Attribute name (``"gender"``, ``"age"``, ``"skin_tone"``) -> labels, shape (n_images,).
    reference : mapping
        Occupation -> attribute -> category -> share, e.g. ``real_world_distributions.json``'s
        ``US_CPS``. Shares need not sum to 1 (they are renormalised).

    Returns
    -------
    dict
        Attribute -> mean JSD in [0, ln 2].

    Raises
    ------
    ValueError
        If a label is not a category of the reference, no reference row has an attribute, or no
        reference occupation has an image.
    """
    occ = labels_1d(occupations, "occupations")
    out: dict[str, float] = {}
    for attribute, labels in attribute_labels(occ, attributes, "occupations").items():
        rows, categories = reference_rows(reference, attribute)
        if not rows:
            raise ValueError(f"reference has no {attribute!r} distribution")
        check_categories(labels, categories, f"attributes[{attribute!r}]")
        model = category_counts(occ, labels, categories)
        ref = {o: np.asarray([dist[c] for c in categories], dtype=np.float64) for o, dist in rows.items()}
        out[attribute] = mean_js_divergence(model, ref)
    return out
