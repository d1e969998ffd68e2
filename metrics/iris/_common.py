"""Shared constants and argument checks of the IRIS metrics (private)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Label sets of the three demographic attributes (repo ``metrics/dimensions.py``, ARES classes).
GENDERS: tuple[str, ...] = ("male", "female")
AGES: tuple[str, ...] = ("young", "middle", "older")
SKIN_TONES: tuple[str, ...] = ("light", "middle", "dark")
ATTRIBUTE_CATEGORIES: dict[str, tuple[str, ...]] = {
    "gender": GENDERS,
    "age": AGES,
    "skin_tone": SKIN_TONES,
}

#: The seven attribute combinations ("comparisons") and the attributes each one spans. The keys are
#: the suffixes of the granular metric names (``RD_gender_skin``, ``AD_dual_gender_skin``...).
COMPARISONS: dict[str, tuple[str, ...]] = {
    "gender": ("gender",),
    "age": ("age",),
    "skin": ("skin_tone",),
    "gender_age": ("gender", "age"),
    "gender_skin": ("gender", "skin_tone"),
    "age_skin": ("age", "skin_tone"),
    "joint_all": ("gender", "age", "skin_tone"),
}

#: Intersection levels: single (3 comparisons), dual (3), triple (1).
LEVELS: dict[str, tuple[str, ...]] = {
    "single": ("gender", "age", "skin"),
    "dual": ("gender_age", "gender_skin", "age_skin"),
    "triple": ("joint_all",),
}

#: The label the 3-stage answer mapper gives an answer it cannot map to one of the 52 occupations.
UNMAPPABLE = "unmappable"


def same_length(name_values: dict[str, Sequence[object]], *, allow_empty: bool = True) -> int:
    """Common length of several per-record inputs; ValueError naming the first that differs, or (``allow_empty``
    false) naming the first input when they are empty."""
    lengths = {name: len(values) for name, values in name_values.items()}
    first_name, first = next(iter(lengths.items()))
    for name, n in lengths.items():
        if n != first:
            raise ValueError(f"{name} must have the same length as {first_name} ({first}), got {n}")
    if first == 0 and not allow_empty:
        raise ValueError(f"{first_name} must not be empty")
    return first


def factorize(labels: Sequence[Hashable]) -> tuple[list[Hashable], NDArray[np.intp]]:
    """Distinct labels in order of first appearance, and each record's code."""
    index: dict[Hashable, int] = {}
    for label in labels:
        index.setdefault(label, len(index))
    codes = np.fromiter((index[label] for label in labels), dtype=np.intp, count=len(labels))
    return list(index), codes


def check_categories(labels: Sequence[Hashable], categories: Sequence[Hashable], name: str) -> None:
    allowed = set(categories)
    for i, label in enumerate(labels):
        if label not in allowed:
            raise ValueError(f"{name} has label {label!r} at position {i}; expected one of {list(categories)}")


def finite_1d(values: ArrayLike, name: str, *, allow_empty: bool = False) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def nonneg_counts(values: ArrayLike, name: str, *, min_ndim: int = 1) -> NDArray[np.float64]:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and non-negative")
    return arr
